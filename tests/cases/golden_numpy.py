"""The numpy functions whose generated programs are pinned by golden files in tests/golden/
(beside tests/cases/golden_functions.py, so that its line numbers, which its goldens show,
stay put)."""

import numpy as np


def numpy_program(W, x):
    """Array ops (a matrix product, broadcasting, tanh) and a reduction, over numpy arrays."""
    h = np.tanh(W @ x + 1.0)
    return np.sum(h * h) / x.shape[0]


def fused_softmax(z, w):
    """A softmax written out in numpy: the fusion pass gives its backward one helper,
    `softmax_adjoint`, instead of the chain rule through each statement."""
    e = np.exp(z - np.max(z))
    p = e / np.sum(e)
    return np.sum(p * w)
