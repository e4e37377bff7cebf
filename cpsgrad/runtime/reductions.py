"""The fused softmax and log-sum-exp backwards that generated code calls (transforms/fusion.py
writes one for a group of statements). The reductions' own adjoints (sums, means, extrema,
norms, ...) sit beside their templates in cpsgrad/rules/numpy/reductions.py.
"""

from __future__ import annotations

import numpy as np

from cpsgrad.runtime.indexing import index_adjoint

_ndarray = np.ndarray


def softmax_adjoint(adjoint, probabilities, axis):
    """The adjoint of `y` in a softmax written out in numpy, `p = exp(y - max(y)) / sum(...)`
    over `axis` (None: every axis), from `p`'s adjoint (one backward for the group of
    statements: transforms/fusion.py): `p * (p_d - sum(p_d * p))`. The shift has none."""
    if type(adjoint) is float and adjoint == 0.0:
        return 0.0
    if axis is None:
        if type(adjoint) is _ndarray and type(probabilities) is _ndarray and adjoint.shape == probabilities.shape:
            return probabilities * (adjoint - np.vdot(adjoint, probabilities))
        return probabilities * (adjoint - np.sum(adjoint * probabilities))
    return probabilities * (adjoint - np.sum(adjoint * probabilities, axis=axis, keepdims=True))


def logsumexp_adjoint(adjoint, exponentials, total):
    """The adjoint of `z` in `log(sum(exp(z)))` written out in numpy (transforms/fusion.py), from
    the exponentials `e` and their sum `s` the forward kept: `e * (l_d / s)`, which broadcasts
    back along the summed axes (no axis, `keepdims=True` or axis 0: fusion checks)."""
    if type(adjoint) is float and adjoint == 0.0:
        return 0.0
    return exponentials * (adjoint / total)


def picked_log_softmax_adjoint(adjoint, probabilities, index, axis):
    """The adjoint of `y` in `log(p[index])` with `p` a softmax of `y` over `axis` written out
    in numpy (transforms/fusion.py): the adjoint scattered to `index`, less `p` times its sum
    along `axis` (the log-likelihood's `onehot - p`, with no division by `p[index]`)."""
    if type(adjoint) is float and adjoint == 0.0:
        return 0.0
    one_row = axis is None and type(probabilities) is _ndarray and probabilities.ndim == 1
    if one_row and type(adjoint) is not _ndarray and (type(index) is int or isinstance(index, np.integer)):
        result = probabilities * -adjoint
        result[index] += adjoint
        return result
    scattered = index_adjoint(probabilities, index, adjoint)
    if axis is None:
        return scattered - probabilities * np.sum(scattered)
    return scattered - probabilities * np.sum(scattered, axis=axis, keepdims=True)
