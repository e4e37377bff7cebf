"""Derivative rules for numpy's NaN-ignoring reductions: `np.nansum`, `np.nanmean`, `np.nanvar`,
`np.nanstd`, `np.nanmax`, `np.nanmin`, `np.nanprod`, `np.nancumsum`, `np.nancumprod`.

Each is its plain reduction over the elements that are not NaN (NaN read as 0 by the sums, as 1
by the products): NaN positions get a zero gradient, and so does a slice that is all NaN. Ties in
`np.nanmax`/`np.nanmin` share the adjoint equally, as `np.max` does.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad.rules.numpy.differences import cumprod_adjoint
from cpsgrad.rules.numpy.reductions import (
    _axes,
    _kept,
    _spread,
    array_product_adjoint,
    cumsum_adjoint,
)
from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import unbroadcast

# ---- reductions -------------------------------------------------------------------------------


@rule(np.nansum)
def nansum(a, axis=None, *, dtype=None, keepdims=False):
    y = np.nansum(a, axis, dtype=dtype, keepdims=keepdims)
    y_d = yield y
    a_d += nan_sum_adjoint(y_d, a, axis, keepdims, False)


@rule(np.nanmean)
def nanmean(a, axis=None, *, dtype=None, keepdims=False):
    y = np.nanmean(a, axis, dtype=dtype, keepdims=keepdims)
    y_d = yield y
    a_d += nan_sum_adjoint(y_d, a, axis, keepdims, True)


@rule(np.nanvar)
def nanvar(a, axis=None, *, dtype=None, ddof=0, keepdims=False):
    y = np.nanvar(a, axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    y_d = yield y
    a_d += nan_var_adjoint(y_d, a, None, axis, ddof, keepdims)


@rule(np.nanstd)
def nanstd(a, axis=None, *, dtype=None, ddof=0, keepdims=False):
    y = np.nanstd(a, axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    y_d = yield y
    a_d += nan_var_adjoint(y_d, a, y, axis, ddof, keepdims)


@rule(np.nanmax)
@rule(np.nanmin)
def nanmax(a, axis=None, *, keepdims=False):
    y = np.nanmax(a, axis, keepdims=keepdims)
    y_d = yield y
    a_d += nan_extremum_adjoint(y_d, a, y, axis, keepdims)


@rule(np.nanprod)
def nanprod(a, axis=None, *, dtype=None, keepdims=False):
    y = np.nanprod(a, axis, dtype=dtype, keepdims=keepdims)
    y_d = yield y
    a_d += nan_product_adjoint(y_d, a, axis, keepdims)


@rule(np.nancumsum)
def nancumsum(a, axis=None, *, dtype=None):
    y = np.nancumsum(a, axis, dtype=dtype)
    y_d = yield y
    a_d += nan_cumulative_adjoint(y_d, a, axis, False)


@rule(np.nancumprod)
def nancumprod(a, axis=None, *, dtype=None):
    y = np.nancumprod(a, axis, dtype=dtype)
    y_d = yield y
    a_d += nan_cumulative_adjoint(y_d, a, axis, True)


# ---- helpers ----------------------------------------------------------------------------------


def _present(x):
    """(the values as an inexact array, where they are not NaN)."""
    values = np.asarray(x)
    values = values.astype(np.result_type(values, 1.0), copy=False)
    return values, ~np.isnan(values)


def nan_sum_adjoint(adjoint, x, axis, keepdims: bool, mean: bool):
    """`np.nansum` (or `np.nanmean`, over the count of values) backward: zero at NaN."""
    if is_zero(adjoint):
        return 0.0
    values, present = _present(x)
    upstream = _kept(adjoint, values.ndim, axis, keepdims)
    if mean:
        count = np.sum(present, axis=_axes(axis, values.ndim), keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            upstream = upstream / np.maximum(count, 1)
    return _spread(np.where(present, upstream, 0), x)


def nan_var_adjoint(adjoint, x, result, axis, ddof, keepdims: bool):
    """`np.nanvar` (result None) or `np.nanstd` backward over the values that are not NaN:
    2 (x - mean) / (n - ddof), or (x - mean) / ((n - ddof) std); zero at NaN, and for the std
    of one value (constant 0)."""
    if is_zero(adjoint):
        return 0.0
    values, present = _present(x)
    reduced = _axes(axis, values.ndim)
    count = np.sum(present, axis=reduced, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.sum(np.where(present, values, 0), axis=reduced, keepdims=True) / count
        centered = np.where(present, values - mean, 0)
        upstream = _kept(adjoint, values.ndim, axis, keepdims)
        if result is None:
            gradient = centered * (2.0 / (count - ddof)) * upstream
        else:
            gradient = centered * upstream / ((count - ddof) * _kept(result, values.ndim, axis, keepdims))
            if ddof == 0:
                gradient = np.where(count == 1, 0, gradient)
    return _spread(np.where(present, gradient, 0), x)


def nan_extremum_adjoint(adjoint, x, result, axis, keepdims: bool):
    """`np.nanmax`/`np.nanmin` backward: the adjoint shared among the values equal to the result;
    zero at NaN and throughout an all-NaN slice."""
    if is_zero(adjoint):
        return 0.0
    values, _ = _present(x)
    chosen = values == _kept(result, values.ndim, axis, keepdims)
    count = np.sum(chosen, axis=_axes(axis, values.ndim), keepdims=True)
    share = _kept(adjoint, values.ndim, axis, keepdims) / np.maximum(count, 1)
    return _spread(np.where(chosen, share, 0), x)


def nan_product_adjoint(adjoint, x, axis, keepdims: bool):
    """`np.nanprod` backward: `np.prod`'s with NaN read as 1, zero at NaN."""
    if is_zero(adjoint):
        return 0.0
    values, present = _present(x)
    gradient = array_product_adjoint(adjoint, np.where(present, values, 1), axis, keepdims)
    return unbroadcast(np.where(present, gradient, 0), x)


def nan_cumulative_adjoint(adjoint, x, axis, product: bool):
    """`np.nancumsum` (NaN read as 0) or `np.nancumprod` (as 1) backward, zero at NaN."""
    if is_zero(adjoint):
        return 0.0
    values, present = _present(x)
    if product:
        gradient = cumprod_adjoint(adjoint, np.where(present, values, 1), axis)
    else:
        gradient = cumsum_adjoint(adjoint, values, axis)
    return unbroadcast(np.where(present, gradient, 0), x)
