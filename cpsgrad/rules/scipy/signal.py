"""Derivative rules for `scipy.signal.convolve` and `scipy.signal.correlate`: n-d arrays, modes
'full', 'same' and 'valid', any `method=` (the backward uses the forward's method). Each is
bilinear: an input's adjoint is the output's adjoint, put back in the full output's place,
correlated with (for `convolve`) or convolved with (for `correlate`) the other input.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np
import scipy.signal

from cpsgrad.rules.numpy.signals import full_adjoint
from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import unbroadcast

# ---- signals ----------------------------------------------------------------------------------


@rule(scipy.signal.convolve)
def convolve(in1, in2, mode="full", method="auto"):
    y = scipy.signal.convolve(in1, in2, mode, method)
    y_d = yield y
    in1_d += signal_adjoint(y_d, in1, in2, mode, method, False, 0)
    in2_d += signal_adjoint(y_d, in1, in2, mode, method, False, 1)


@rule(scipy.signal.correlate)
def correlate(in1, in2, mode="full", method="auto"):
    y = scipy.signal.correlate(in1, in2, mode, method)
    y_d = yield y
    in1_d += signal_adjoint(y_d, in1, in2, mode, method, True, 0)
    in2_d += signal_adjoint(y_d, in1, in2, mode, method, True, 1)


# ---- helpers ----------------------------------------------------------------------------------


def _starts(mode: str, first: tuple, second: tuple) -> tuple:
    """Where scipy's 'same' or 'valid' result begins in the 'full' one, along each axis: the
    centre (`scipy.signal`'s `_centered`)."""
    if mode == "same":
        return tuple((m - 1) // 2 for m in second)
    if mode == "valid":
        return tuple(min(n, m) - 1 for n, m in zip(first, second, strict=True))
    return (0,) * len(first)


def signal_adjoint(adjoint, in1, in2, mode, method, correlation: bool, which: int):
    """The adjoint of `in1` (which 0) or `in2` (which 1) in `scipy.signal.convolve` (or
    `correlate`, `correlation` true) of real arrays."""
    if is_zero(adjoint):
        return 0.0
    first, second = np.asarray(in1), np.asarray(in2)
    full_shape = tuple(n + m - 1 for n, m in zip(first.shape, second.shape, strict=True))
    dtype = np.result_type(first, second, 1.0)
    full = full_adjoint(adjoint, full_shape, _starts(mode, first.shape, second.shape), dtype)
    if which == 0:
        combine = scipy.signal.convolve if correlation else scipy.signal.correlate
        return unbroadcast(np.asarray(combine(full, second, "valid", method), dtype), in1)
    gradient = scipy.signal.correlate(full, first, "valid", method)
    if correlation:
        gradient = np.flip(gradient)
    return unbroadcast(np.asarray(gradient, dtype), in2)
