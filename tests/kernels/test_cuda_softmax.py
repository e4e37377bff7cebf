"""CUDA softmax, log_softmax and fused cross-entropy against the CPU kernels."""

import numpy as np
import pytest
from cuda_checks import check_cuda

from cpsgrad.kernels import dispatch, to_device

RNG = np.random.default_rng(6)
LOGITS = RNG.standard_normal((4, 11)) * 3


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_matches_cpu(op, axis):
    check_cuda(op, [LOGITS], {"axis": axis})


def test_cross_entropy_matches_cpu_in_both_dtypes():
    labels = np.array([0, 10, 3, 3])
    for dtype in (np.float64, np.float32):
        check_cuda("softmax_cross_entropy", [LOGITS, labels], dtype=dtype)


def test_cross_entropy_rejects_labels_out_of_range():
    logits, labels = to_device(LOGITS), to_device(np.array([0, 11, 1, 1]))
    with pytest.raises(ValueError, match=r"softmax_cross_entropy: labels must lie in \[0, 11\)"):
        dispatch("softmax_cross_entropy", logits, labels).forward(logits, labels)
