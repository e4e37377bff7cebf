"""CUDA gather (atomic scatter-add backward), embedding, concatenate, stack and pad against the CPU."""

import numpy as np
import pytest
from cuda_checks import check_cuda

from cpsgrad.kernels import dispatch, to_device, to_host

RNG = np.random.default_rng(11)
X = RNG.standard_normal((3, 4, 2))


@pytest.mark.parametrize(
    ("axis", "indices"),
    [(1, np.array([[0, -1], [2, 2]])), (0, np.array([2, 0, 2, -3])), (-1, np.array(1))],
)
def test_gather_with_repeated_and_negative_indices(axis, indices):
    check_cuda("gather", [X, indices], {"axis": axis})


def test_embedding_accumulates_repeated_rows_float32():
    table = RNG.standard_normal((5, 3))
    check_cuda("embedding", [table, np.array([[4, 0, 4], [4, 1, 0]])], dtype=np.float32)


def test_gather_takes_list_indices_and_rejects_out_of_range():
    x = to_device(X)
    y, _ = dispatch("gather", x).forward(x, [2, 0], axis=0)
    np.testing.assert_array_equal(to_host(y), X[[2, 0]])
    indices = to_device(np.array([4]))
    with pytest.raises(IndexError, match="gather: index out of bounds for axis 1 with size 4"):
        dispatch("gather", x, indices).forward(x, indices, axis=1)


@pytest.mark.parametrize("axis", [0, -1])
def test_concatenate_and_stack(axis):
    parts = [RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))]
    check_cuda("concatenate", parts, {"axis": axis})
    check_cuda("stack", parts, {"axis": axis}, dtype=np.float32)
    check_cuda("concatenate", [RNG.standard_normal((2, 1)), RNG.standard_normal((2, 4))], {"axis": 1})
    check_cuda("stack", parts[:2], {"axis": 1})


def test_concatenate_mismatch_names_op_and_shapes():
    a, b = to_device(np.zeros((2, 3))), to_device(np.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"concatenate: .*\(2, 3\) \(2, 4\)"):
        dispatch("concatenate", a, b).forward(a, b)


@pytest.mark.parametrize("pad_width", [1, ((1, 0), (0, 2)), ((0, 0), (0, 0))])
def test_pad(pad_width):
    check_cuda("pad", [RNG.standard_normal((2, 3))], {"pad_width": pad_width, "value": 0.5})


def test_pad_float32_3d_and_negative_widths():
    check_cuda("pad", [RNG.standard_normal((2, 1, 3))], {"pad_width": ((0, 1), (2, 1), (1, 0))},
               dtype=np.float32)
    x = to_device(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="pad: "):
        dispatch("pad", x).forward(x, -1)
