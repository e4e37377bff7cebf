"""Broadcasting binary kernels and where: forwards, adjoints reduced to input shapes, ties."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from kernel_checks import check_op
from numpy.testing import assert_array_equal

from cpsgrad.kernels import dispatch

CASES = {
    "add": (np.add, (-3, 3)),
    "sub": (np.subtract, (-3, 3)),
    "mul": (np.multiply, (-3, 3)),
    "div": (np.divide, (1, 3)),
    "pow": (np.power, (1, 2)),
    "maximum": (np.maximum, (-3, 3)),
    "minimum": (np.minimum, (-3, 3)),
}


@pytest.mark.parametrize("op", sorted(CASES))
@settings(max_examples=8, deadline=None, derandomize=True)
@given(data=st.data())
def test_forward_and_backward_with_broadcasting(op, data):
    reference, (low, high) = CASES[op]
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    a, b = (
        data.draw(hnp.arrays(np.float64, shape, elements=st.integers(low * 10, high * 10).map(lambda v: v / 10)))
        for shape in shapes.input_shapes
    )
    if op in {"maximum", "minimum"}:
        b = np.asarray(b + 0.05)  # off the grid of a: ties are checked on their own below
    check_op(op, [a, b], {}, reference)


@settings(max_examples=8, deadline=None, derandomize=True)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
def test_where(shapes):
    rng = np.random.default_rng(1)
    condition = rng.random(shapes.input_shapes[0]) > 0.5
    a, b = (rng.standard_normal(shape) for shape in shapes.input_shapes[1:])
    check_op("where", [condition, a, b], {}, np.where, wrt=[1, 2])


def test_where_accepts_a_python_scalar_branch():
    kernel = dispatch("where", np.array([True, False]), np.ones(2))
    y, saved = kernel.forward(np.array([True, False]), np.array([1.0, 2.0]), 5.0)
    assert_array_equal(y, [1.0, 5.0])
    grad_a, grad_b = kernel.backward(np.array([3.0, 4.0]), saved)
    assert_array_equal(grad_a, [3.0, 0.0]) and grad_b.shape == () and grad_b == 4.0


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_ties_give_half_to_each_side(op):
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 0.0])
    kernel = dispatch(op, a, b)
    grad_a, grad_b = kernel.backward(np.full(3, 2.0), kernel.forward(a, b)[1])
    chosen_a = [1.0, 0.0, 2.0] if op == "maximum" else [1.0, 2.0, 0.0]
    assert_array_equal(grad_a, chosen_a)
    assert_array_equal(grad_b, 2.0 - np.array(chosen_a))


def test_pow_at_zero_follows_jax():
    a, b = np.array([0.0, 2.0]), np.array([2.0, 0.0])
    kernel = dispatch("pow", a, b)
    grad_a, grad_b = kernel.backward(np.ones(2), kernel.forward(a, b)[1])
    assert_array_equal(grad_a, [0.0, 0.0])
    assert_array_equal(grad_b, [0.0, np.log(2.0)])


def test_mixed_precision_promotes_and_adjoints_keep_input_dtypes():
    a, b = np.ones(3, np.float32), np.ones((2, 3))
    kernel = dispatch("div", a, b)
    y, saved = kernel.forward(a, b)
    assert y.dtype == np.float64
    grad_a, grad_b = kernel.backward(np.ones((2, 3)), saved)
    assert grad_a.dtype == np.float32 and grad_a.shape == (3,) and grad_b.dtype == np.float64


@pytest.mark.parametrize("op", sorted(CASES))
def test_shape_mismatch_names_op_and_shapes(op):
    with pytest.raises(ValueError, match=rf"{op}: .*\(2, 3\) \(4,\)"):
        dispatch(op, np.zeros(1)).forward(np.zeros((2, 3)), np.zeros(4))


def test_nan_propagates():
    a, b = np.array([np.nan, 1.0]), np.array([1.0, np.nan])
    y = dispatch("maximum", a, b).forward(a, b)[0]
    assert np.isnan(y).all()
