"""CUDA broadcasting binary ops and ``where`` against the CPU kernels."""

import numpy as np
import pytest
from cuda_checks import check_cuda

from cpsgrad.kernels import dispatch, to_device

RNG = np.random.default_rng(4)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4,))
COLUMN = RNG.standard_normal((3, 1))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum"])
def test_binary_with_broadcasting_matches_cpu(op):
    check_cuda(op, [A, B])


def test_pow_and_ties_and_float32():
    check_cuda("pow", [np.abs(A) + 0.5, COLUMN])
    tied = A.copy()
    tied[0] = 0.25
    check_cuda("maximum", [tied, np.full((3, 1), 0.25)])
    check_cuda("div", [A, COLUMN + 3], dtype=np.float32)


def test_where_matches_cpu():
    condition = RNG.standard_normal((3, 1)) > 0
    check_cuda("where", [condition, A, B])


def test_broadcast_mismatch_names_op_and_shapes():
    with pytest.raises(ValueError, match=r"add: operands could not be broadcast .*\(3, 4\) \(3,\)"):
        dispatch("add", to_device(A), to_device(A[0, :3])).forward(to_device(A), to_device(A[0, :3]))


def test_where_with_two_numbers_is_float64_as_numpy():
    condition = RNG.standard_normal((3, 4)) > 0
    moved = to_device(condition)
    output, _ = dispatch("where", moved, 1.5, -2.0).forward(moved, 1.5, -2.0)
    result = output.copy_to_host()
    assert result.dtype == np.float64
    np.testing.assert_array_equal(result, np.where(condition, 1.5, -2.0))
