"""CUDA block reductions (sum, mean, max, min, logsumexp) against the CPU kernels."""

import numpy as np
import pytest
from cuda_checks import check_cuda

X = np.random.default_rng(5).standard_normal((3, 4, 5))


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "logsumexp"])
def test_reduction_over_middle_axis_matches_cpu(op):
    check_cuda(op, [X], {"axis": 1, "keepdims": True})


@pytest.mark.parametrize(("op", "axis"), [("sum", None), ("logsumexp", (0, 2)), ("max", -1)])
def test_reductions_over_other_axes(op, axis):
    check_cuda(op, [X], {"axis": axis})


def test_max_ties_share_the_adjoint_and_float32():
    tied = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]])
    check_cuda("max", [tied], {"axis": 1})
    check_cuda("mean", [X], {"axis": (0, 1)}, dtype=np.float32)
