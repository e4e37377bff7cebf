"""CUDA tiled matmul, outer and transpose against the CPU kernels."""

import numpy as np
import pytest
from cuda_checks import check_cuda

RNG = np.random.default_rng(8)


@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [((5, 6), (6, 7)), ((2, 1, 3, 5), (3, 5, 2)), ((5,), (5, 3)), ((4, 5), (5,)), ((3,), (3,))],
)
def test_matmul_matches_cpu(a_shape, b_shape):
    check_cuda("matmul", [RNG.standard_normal(a_shape), RNG.standard_normal(b_shape)])


def test_matmul_float32_outer_and_transpose():
    check_cuda("matmul", [RNG.standard_normal((6, 5)), RNG.standard_normal((5, 9))], dtype=np.float32)
    check_cuda("outer", [RNG.standard_normal(4), RNG.standard_normal(3)])
    check_cuda("transpose", [RNG.standard_normal((2, 3, 4))], {"axes": (1, 2, 0)})
    check_cuda("transpose", [RNG.standard_normal((2, 3))])
