"""gather (scatter-add backward), embedding, concatenate, stack, pad."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from kernel_checks import check_op
from numpy.testing import assert_array_equal

from cpsgrad.kernels import dispatch


@settings(max_examples=15, deadline=None, derandomize=True)
@given(data=st.data())
def test_gather_with_repeated_and_negative_indices(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    size = shape[axis]
    index_shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    indices = data.draw(hnp.arrays(np.int64, index_shape, elements=st.integers(-size, size - 1)))
    x = np.random.default_rng(4).standard_normal(shape)
    check_op("gather", [x, indices], {"axis": axis}, lambda x, i, axis: np.take(x, i, axis=axis))


def test_embedding_accumulates_repeated_rows():
    table = np.arange(6.0).reshape(3, 2)
    ids = np.array([[2, 0], [2, 2]])
    check_op("embedding", [table, ids], {}, lambda t, i: t[i])
    kernel = dispatch("embedding", table, ids)
    (grad,) = kernel.backward(np.ones((2, 2, 2)), kernel.forward(table, ids)[1])
    assert_array_equal(grad, [[1, 1], [0, 0], [3, 3]])


def test_gather_out_of_range_is_an_index_error():
    with pytest.raises(IndexError, match="gather"):
        dispatch("gather", np.zeros(3), np.array([3])).forward(np.zeros(3), np.array([3]))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concatenate_and_stack(axis):
    rng = np.random.default_rng(5)
    parts = [rng.standard_normal((2, 3)), rng.standard_normal((2, 3)), rng.standard_normal((2, 3))]
    check_op("concatenate", parts, {"axis": axis}, lambda *p, axis: np.concatenate(p, axis=axis))
    check_op("stack", parts, {"axis": axis}, lambda *p, axis: np.stack(p, axis=axis))


def test_concatenate_mismatch_names_op_and_shapes():
    with pytest.raises(ValueError, match=r"concatenate: .*\(2, 3\) \(2, 4\)"):
        dispatch("concatenate", np.zeros(1)).forward(np.zeros((2, 3)), np.zeros((2, 4)))


@pytest.mark.parametrize("pad_width", [1, ((1, 0), (0, 2)), ((0, 0), (0, 0))])
def test_pad(pad_width):
    x = np.random.default_rng(6).standard_normal((2, 3))
    check_op("pad", [x], {"pad_width": pad_width, "value": 0.5},
             lambda x, pad_width, value: np.pad(x, pad_width, constant_values=value))


def test_pad_rejects_negative_widths():
    with pytest.raises(ValueError, match="pad: "):
        dispatch("pad", np.zeros(1)).forward(np.zeros((2, 2)), -1)
