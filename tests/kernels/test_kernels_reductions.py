"""Reductions over axes with keepdims, and matmul/outer/transpose."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from kernel_checks import check_op
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp

from cpsgrad.kernels import dispatch

# Distinct values a grid step apart keep max/min away from ties under finite differences.
GRID = st.integers(-30, 30).map(lambda v: v / 10)
REFERENCES = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "logsumexp": logsumexp}


@st.composite
def shapes_and_axes(draw, min_side):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=min_side, max_side=4))
    axes = draw(
        st.lists(st.integers(-len(shape), len(shape) - 1), unique_by=lambda a: a % max(len(shape), 1))
        if shape
        else st.just([])
    )
    axis = draw(st.sampled_from([None, tuple(axes)] + ([axes[0]] if axes else [])))
    return shape, axis, draw(st.booleans())


@pytest.mark.parametrize("op", sorted(REFERENCES))
@settings(max_examples=10, deadline=None, derandomize=True)
@given(case=shapes_and_axes(min_side=1), data=st.data())
def test_forward_and_backward(op, case, data):
    shape, axis, keepdims = case
    x = data.draw(hnp.arrays(np.float64, shape, elements=GRID, unique=True))
    check_op(op, [x], {"axis": axis, "keepdims": keepdims}, REFERENCES[op])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("op", ["sum", "mean", "logsumexp"])
def test_empty_axes_reduce_like_numpy(op):
    x = np.zeros((0, 3))
    with np.errstate(all="ignore"):
        assert_allclose(dispatch(op, x).forward(x, axis=0)[0], REFERENCES[op](x, axis=0))


@pytest.mark.parametrize("op", ["max", "min"])
def test_ties_share_the_adjoint_equally(op):
    x = np.array([[2.0, 2.0, 1.0, 2.0]]) * (1 if op == "max" else -1)
    kernel = dispatch(op, x)
    (grad,) = kernel.backward(np.array([3.0]), kernel.forward(x, axis=1)[1])
    assert_allclose(grad, [[1.0, 1.0, 0.0, 1.0]])


def test_max_of_empty_axis_names_the_op():
    with pytest.raises(ValueError, match="max: "):
        dispatch("max", np.zeros(1)).forward(np.zeros((0, 2)), axis=0)


def test_bad_axis_names_op_and_shape():
    with pytest.raises(ValueError, match=r"sum: axis 3 is invalid for shape \(2, 2\)"):
        dispatch("sum", np.zeros(1)).forward(np.zeros((2, 2)), axis=3)


def test_logsumexp_is_stable_and_propagates_infinities():
    x = np.array([[1000.0, 1000.0], [-np.inf, -np.inf], [np.inf, 0.0], [np.nan, 0.0]])
    y = dispatch("logsumexp", x).forward(x, axis=1)[0]
    assert_allclose(y, [1000 + np.log(2), -np.inf, np.inf, np.nan])


MATMUL_SHAPES = [((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)), ((2, 3), (3, 4)),
                 ((2, 1, 2, 3), (4, 3, 2)), ((3,), (2, 3, 1)), ((0, 3), (3, 2))]


@pytest.mark.parametrize(("shape_a", "shape_b"), MATMUL_SHAPES)
def test_matmul(shape_a, shape_b):
    rng = np.random.default_rng(2)
    check_op("matmul", [rng.standard_normal(shape_a), rng.standard_normal(shape_b)], {}, np.matmul, atol=1e-5)


def test_matmul_mismatch_names_op_and_shapes():
    with pytest.raises(ValueError, match=r"matmul: shapes \(2, 3\) and \(2, 3\)"):
        dispatch("matmul", np.zeros(1)).forward(np.zeros((2, 3)), np.zeros((2, 3)))


def test_outer_and_transpose():
    rng = np.random.default_rng(3)
    check_op("outer", [rng.standard_normal(3), rng.standard_normal((2, 2))], {}, np.outer)
    check_op("transpose", [rng.standard_normal((2, 3, 4))], {"axes": (1, 2, 0)}, np.transpose)
    check_op("transpose", [rng.standard_normal((2, 3))], {}, np.transpose)
    assert_array_equal(dispatch("transpose", np.zeros(1)).forward(np.zeros(()))[0], 0.0)
