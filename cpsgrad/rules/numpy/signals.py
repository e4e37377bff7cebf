"""Derivative rules for numpy's 1-d signal functions, `np.convolve` and `np.correlate` (modes
'full', 'same', 'valid'; both inputs differentiable). Each is bilinear: an input's adjoint is the
output's adjoint, put back in the full output's place, correlated with the other input.
`cpsgrad/rules/scipy/signal.py` does the same for n-d arrays.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import unbroadcast

# ---- signals ----------------------------------------------------------------------------------


@rule(np.convolve)
def convolve(a, v, mode="full"):
    y = np.convolve(a, v, mode)
    y_d = yield y
    a_d += convolve_adjoint(y_d, a, v, mode, 0)
    v_d += convolve_adjoint(y_d, a, v, mode, 1)


@rule(np.correlate)
def correlate(a, v, mode="valid"):
    y = np.correlate(a, v, mode)
    y_d = yield y
    a_d += correlate_adjoint(y_d, a, v, mode, 0)
    v_d += correlate_adjoint(y_d, a, v, mode, 1)


# ---- helpers ----------------------------------------------------------------------------------


def full_adjoint(adjoint, full_shape: tuple, starts: tuple, dtype):
    """The adjoint of a 'same' or 'valid' result as that of the 'full' result it is cut from
    (`starts`: where the cut begins along each axis), zero outside the cut."""
    adjoint = np.asarray(adjoint, dtype)
    if adjoint.shape == tuple(full_shape):
        return adjoint
    full = np.zeros(full_shape, dtype)
    full[tuple(slice(s, s + n) for s, n in zip(starts, adjoint.shape, strict=True))] = adjoint
    return full


def _starts(mode: str, n: int, m: int, correlation: bool) -> int:
    """Where numpy's 'same' or 'valid' result begins in the 'full' one (n = len(a), m = len(v)):
    numpy puts the longer input first, and `np.correlate` then reverses the result."""
    short = min(n, m)
    if mode == "valid":
        return short - 1
    if mode == "same":
        return short // 2 if correlation and n < m else (short - 1) // 2
    return 0


def _mode(mode) -> str:
    """numpy's mode as a name (it also takes 0, 1, 2)."""
    return mode if isinstance(mode, str) else {0: "valid", 1: "same", 2: "full"}[int(mode)]


def convolve_adjoint(adjoint, a, v, mode, which: int):
    """The adjoint of `a` (which 0) or `v` (which 1) in `np.convolve(a, v, mode)`."""
    if is_zero(adjoint):
        return 0.0
    first, second = np.ravel(a), np.ravel(v)
    n, m = len(first), len(second)
    dtype = np.result_type(first, second, 1.0)
    full = full_adjoint(adjoint, (n + m - 1,), (_starts(_mode(mode), n, m, False),), dtype)
    other = second if which == 0 else first
    return unbroadcast(np.reshape(np.correlate(full, other, "valid"), np.shape(a if which == 0 else v)),
                       a if which == 0 else v)


def correlate_adjoint(adjoint, a, v, mode, which: int):
    """The adjoint of `a` (which 0) or `v` (which 1) in `np.correlate(a, v, mode)` (real inputs:
    `np.correlate(a, v)` is `np.convolve(a, v[::-1])` in 'full' mode)."""
    if is_zero(adjoint):
        return 0.0
    first, second = np.ravel(a), np.ravel(v)
    n, m = len(first), len(second)
    dtype = np.result_type(first, second, 1.0)
    full = full_adjoint(adjoint, (n + m - 1,), (_starts(_mode(mode), n, m, True),), dtype)
    if which == 0:
        return unbroadcast(np.reshape(np.convolve(full, second, "valid"), np.shape(a)), a)
    return unbroadcast(np.reshape(np.correlate(full, first, "valid")[::-1], np.shape(v)), v)
