"""Derivative rules for numpy's reductions called with `where=` or `initial=`: `np.sum`, `np.prod`,
`np.max`/`np.min`/`np.amax`/`np.amin`, `np.mean`, `np.var`, `np.std`, their NaN-ignoring
versions (`np.nansum`, `np.nanprod`, `np.nanmax`, `np.nanmin`, `np.nanmean`, `np.nanvar`,
`np.nanstd`), the array methods (`x.sum(where=m)`, `x.max(initial=0.0)`) and the `reduce` of
add, multiply, maximum and minimum (`np.add.reduce(x, where=m)`; fmax/fmin's are refused).

Each primitive has a rule that requires `where` and one that requires `initial` (where numpy
takes it), so a call with neither keeps the plain rules (reductions.py, nan_reductions.py). A
reduction over the elements `where` selects (and, for the nan versions, that are not NaN): the
others get a zero gradient. `initial` is differentiable (a value computed from the arguments gets
its gradient): the sum's initial the sum of the adjoint, the product's the product of the
selected elements times the adjoint. For max/min, `initial` takes part in ties as JAX's
`op(initial, reduce(x))`: an initial that wins alone gets the whole adjoint and x none, a tie
between initial and the extremum of x gives half to initial and half shared equally among the tied
elements of x. A result that is NaN (a selected NaN in max/min) spreads NaN, as `np.max`'s rule.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad.errors import UnsupportedError
from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.rules.numpy.reductions import _axes, _kept, _spread, array_product_adjoint
from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import refuse_complex, unbroadcast

_SUMS = (np.sum, np.ndarray.sum)
_PRODUCTS = (np.prod, np.ndarray.prod)
_EXTREMA = (np.max, np.min, np.amax, np.amin, np.ndarray.max, np.ndarray.min)


def _on(*primitives):
    def register(template):
        for primitive in primitives:
            rule(primitive)(template)
        return template

    return register


# ---- sums and products ------------------------------------------------------------------------


@_on(*_SUMS)
def sum_where(a, axis=None, *, where, dtype=None, keepdims=False, initial=None):
    y = np.sum(a, axis, dtype=dtype, keepdims=keepdims, where=where)
    y_d = yield y
    a_g, initial_g = sum_where_adjoint(y_d, a, axis, keepdims, initial, where, False)
    a_d += a_g
    initial_d += initial_g


@_on(*_SUMS)
def sum_initial(a, axis=None, *, initial, dtype=None, keepdims=False):
    y = np.sum(a, axis, dtype=dtype, keepdims=keepdims, initial=initial)
    y_d = yield y
    a_g, initial_g = sum_where_adjoint(y_d, a, axis, keepdims, initial, True, False)
    a_d += a_g
    initial_d += initial_g


@_on(np.nansum)
def nansum_where(a, axis=None, *, where, dtype=None, keepdims=False, initial=None):
    y = np.nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where)
    y_d = yield y
    a_g, initial_g = sum_where_adjoint(y_d, a, axis, keepdims, initial, where, True)
    a_d += a_g
    initial_d += initial_g


@_on(np.nansum)
def nansum_initial(a, axis=None, *, initial, dtype=None, keepdims=False):
    y = np.nansum(a, axis, dtype=dtype, keepdims=keepdims, initial=initial)
    y_d = yield y
    a_g, initial_g = sum_where_adjoint(y_d, a, axis, keepdims, initial, True, True)
    a_d += a_g
    initial_d += initial_g


@_on(*_PRODUCTS)
def prod_where(a, axis=None, *, where, dtype=None, keepdims=False, initial=None):
    y = np.prod(a, axis, dtype=dtype, keepdims=keepdims, where=where)
    y_d = yield y
    a_g, initial_g = prod_where_adjoint(y_d, a, axis, keepdims, initial, where, False)
    a_d += a_g
    initial_d += initial_g


@_on(*_PRODUCTS)
def prod_initial(a, axis=None, *, initial, dtype=None, keepdims=False):
    y = np.prod(a, axis, dtype=dtype, keepdims=keepdims, initial=initial)
    y_d = yield y
    a_g, initial_g = prod_where_adjoint(y_d, a, axis, keepdims, initial, True, False)
    a_d += a_g
    initial_d += initial_g


@_on(np.nanprod)
def nanprod_where(a, axis=None, *, where, dtype=None, keepdims=False, initial=None):
    y = np.nanprod(a, axis, dtype=dtype, keepdims=keepdims, where=where)
    y_d = yield y
    a_g, initial_g = prod_where_adjoint(y_d, a, axis, keepdims, initial, where, True)
    a_d += a_g
    initial_d += initial_g


@_on(np.nanprod)
def nanprod_initial(a, axis=None, *, initial, dtype=None, keepdims=False):
    y = np.nanprod(a, axis, dtype=dtype, keepdims=keepdims, initial=initial)
    y_d = yield y
    a_g, initial_g = prod_where_adjoint(y_d, a, axis, keepdims, initial, True, True)
    a_d += a_g
    initial_d += initial_g


# ---- extrema ----------------------------------------------------------------------------------


@_on(*_EXTREMA)
def extremum_where(a, axis=None, *, where, keepdims=False, initial=None):
    y = np.max(a, axis, keepdims=keepdims, where=where)
    y_d = yield y
    a_g, initial_g = extremum_where_adjoint(y_d, a, y, axis, keepdims, initial, where, False)
    a_d += a_g
    initial_d += initial_g


@_on(*_EXTREMA)
def extremum_initial(a, axis=None, *, initial, keepdims=False):
    y = np.max(a, axis, keepdims=keepdims, initial=initial)
    y_d = yield y
    a_g, initial_g = extremum_where_adjoint(y_d, a, y, axis, keepdims, initial, True, False)
    a_d += a_g
    initial_d += initial_g


@_on(np.nanmax, np.nanmin)
def nanextremum_where(a, axis=None, *, where, keepdims=False, initial=None):
    y = np.nanmax(a, axis, keepdims=keepdims, where=where)
    y_d = yield y
    a_g, initial_g = extremum_where_adjoint(y_d, a, y, axis, keepdims, initial, where, True)
    a_d += a_g
    initial_d += initial_g


@_on(np.nanmax, np.nanmin)
def nanextremum_initial(a, axis=None, *, initial, keepdims=False):
    y = np.nanmax(a, axis, keepdims=keepdims, initial=initial)
    y_d = yield y
    a_g, initial_g = extremum_where_adjoint(y_d, a, y, axis, keepdims, initial, True, True)
    a_d += a_g
    initial_d += initial_g


# ---- ufunc.reduce (numpy's default axis 0) ----------------------------------------------------


@_on(np.add.reduce)
def add_reduce_where(array, axis=0, dtype=None, *, where, keepdims=False, initial=None):
    y = np.add.reduce(array, axis, dtype, keepdims=keepdims, where=where)
    y_d = yield y
    array_g, initial_g = sum_where_adjoint(y_d, array, axis, keepdims, initial, where, False)
    array_d += array_g
    initial_d += initial_g


@_on(np.add.reduce)
def add_reduce_initial(array, axis=0, dtype=None, *, initial, keepdims=False):
    y = np.add.reduce(array, axis, dtype, keepdims=keepdims, initial=initial)
    y_d = yield y
    array_g, initial_g = sum_where_adjoint(y_d, array, axis, keepdims, initial, True, False)
    array_d += array_g
    initial_d += initial_g


@_on(np.multiply.reduce)
def multiply_reduce_where(array, axis=0, dtype=None, *, where, keepdims=False, initial=None):
    y = np.multiply.reduce(array, axis, dtype, keepdims=keepdims, where=where)
    y_d = yield y
    array_g, initial_g = prod_where_adjoint(y_d, array, axis, keepdims, initial, where, False)
    array_d += array_g
    initial_d += initial_g


@_on(np.multiply.reduce)
def multiply_reduce_initial(array, axis=0, dtype=None, *, initial, keepdims=False):
    y = np.multiply.reduce(array, axis, dtype, keepdims=keepdims, initial=initial)
    y_d = yield y
    array_g, initial_g = prod_where_adjoint(y_d, array, axis, keepdims, initial, True, False)
    array_d += array_g
    initial_d += initial_g


@_on(np.maximum.reduce, np.minimum.reduce)
def maximum_reduce_where(array, axis=0, dtype=None, *, where, keepdims=False, initial=None):
    y = np.maximum.reduce(array, axis, dtype, keepdims=keepdims, where=where)
    y_d = yield y
    array_g, initial_g = extremum_where_adjoint(y_d, array, y, axis, keepdims, initial, where, False)
    array_d += array_g
    initial_d += initial_g


@_on(np.maximum.reduce, np.minimum.reduce)
def maximum_reduce_initial(array, axis=0, dtype=None, *, initial, keepdims=False):
    y = np.maximum.reduce(array, axis, dtype, keepdims=keepdims, initial=initial)
    y_d = yield y
    array_g, initial_g = extremum_where_adjoint(y_d, array, y, axis, keepdims, initial, True, False)
    array_d += array_g
    initial_d += initial_g


# ---- means and variances ----------------------------------------------------------------------


@_on(np.mean, np.ndarray.mean)
def mean_where(a, axis=None, *, where, dtype=None, keepdims=False):
    y = np.mean(a, axis, dtype=dtype, keepdims=keepdims, where=where)
    y_d = yield y
    a_d += mean_where_adjoint(y_d, a, axis, keepdims, where, False)


@_on(np.nanmean)
def nanmean_where(a, axis=None, *, where, dtype=None, keepdims=False):
    y = np.nanmean(a, axis, dtype=dtype, keepdims=keepdims, where=where)
    y_d = yield y
    a_d += mean_where_adjoint(y_d, a, axis, keepdims, where, True)


@_on(np.var, np.ndarray.var)
def var_where(a, axis=None, *, where, dtype=None, ddof=0, keepdims=False):
    y = np.var(a, axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where)
    y_d = yield y
    a_d += var_where_adjoint(y_d, a, None, axis, ddof, keepdims, where, False)


@_on(np.std, np.ndarray.std)
def std_where(a, axis=None, *, where, dtype=None, ddof=0, keepdims=False):
    y = np.std(a, axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where)
    y_d = yield y
    a_d += var_where_adjoint(y_d, a, y, axis, ddof, keepdims, where, False)


@_on(np.nanvar)
def nanvar_where(a, axis=None, *, where, dtype=None, ddof=0, keepdims=False):
    y = np.nanvar(a, axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where)
    y_d = yield y
    a_d += var_where_adjoint(y_d, a, None, axis, ddof, keepdims, where, True)


@_on(np.nanstd)
def nanstd_where(a, axis=None, *, where, dtype=None, ddof=0, keepdims=False):
    y = np.nanstd(a, axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where)
    y_d = yield y
    a_d += var_where_adjoint(y_d, a, y, axis, ddof, keepdims, where, True)


# ---- helpers ----------------------------------------------------------------------------------


def _selected(x, where, nan: bool):
    """(x as an inexact array, the mask of the elements the reduction reads)."""
    if type(x) is DeviceArray:
        raise UnsupportedError(
            None,
            "a reduction's where= or initial= on a DeviceArray",
            "cpsgrad's device kernels reduce whole axes only; copy the array to the host or "
            "write the mask as a product (np.sum(x * m))",
        )
    refuse_complex(x, "a reduction with where= or initial= of complex values")
    values = np.asarray(x)
    values = values.astype(np.result_type(values, 1.0), copy=False)
    mask = np.broadcast_to(np.asarray(where, dtype=bool), values.shape)
    if nan:
        mask = mask & ~np.isnan(values)
    return values, mask


def _initial_adjoint(contribution, initial):
    """The adjoint of a scalar `initial` from its per-output contribution (summed)."""
    if initial is None:
        return 0.0
    return unbroadcast(contribution, initial)


def sum_where_adjoint(adjoint, x, axis, keepdims: bool, initial, where, nan: bool):
    """(x's adjoint, initial's) of `sum(x, where=m, initial=c)` = c + the sum of the selected."""
    if is_zero(adjoint):
        return 0.0, 0.0
    values, mask = _selected(x, where, nan)
    upstream = _kept(adjoint, values.ndim, axis, keepdims)
    return _spread(np.where(mask, upstream, 0.0), x), _initial_adjoint(np.asarray(adjoint), initial)


def prod_where_adjoint(adjoint, x, axis, keepdims: bool, initial, where, nan: bool):
    """(x's adjoint, initial's) of `prod(x, where=m, initial=c)` = c times the selected's product:
    each selected element gets c times the product of the others (zeros allowed)."""
    if is_zero(adjoint):
        return 0.0, 0.0
    values, mask = _selected(x, where, nan)
    filled = np.where(mask, values, 1.0)
    others = array_product_adjoint(adjoint, filled, axis, keepdims)
    scale = 1.0 if initial is None else initial
    x_g = _spread(np.where(mask, others * scale, 0.0), x)
    if initial is None:
        return x_g, 0.0
    product = np.prod(filled, axis=_axes(axis, values.ndim), keepdims=True)
    return x_g, _initial_adjoint(_kept(adjoint, values.ndim, axis, keepdims) * product, initial)


def extremum_where_adjoint(adjoint, x, result, axis, keepdims: bool, initial, where, nan: bool):
    """(x's adjoint, initial's) of max/min(x, where=m, initial=c) = op(c, op of the selected)."""
    if is_zero(adjoint):
        return 0.0, 0.0
    values, mask = _selected(x, where, nan)
    reduced = _axes(axis, values.ndim)
    extreme = _kept(result, values.ndim, axis, keepdims)
    upstream = _kept(adjoint, values.ndim, axis, keepdims)
    chosen = mask & (values == extreme)
    count = np.sum(chosen, axis=reduced, keepdims=True)
    if initial is None:
        initial_share = np.zeros(count.shape)
    else:
        initial_share = np.where(extreme == initial, np.where(count > 0, 0.5, 1.0), 0.0)
    share = np.where(count > 0, (1.0 - initial_share) / np.maximum(count, 1), 0.0)
    x_g = np.where(chosen, upstream * share, 0.0)
    initial_g = upstream * initial_share
    if not nan:  # a selected NaN makes the result NaN: NaN throughout, as np.max's rule
        undefined = np.isnan(extreme)
        x_g = np.where(undefined, np.nan, x_g)
        initial_g = np.where(undefined, np.nan, initial_g)
    return _spread(x_g, x), _initial_adjoint(initial_g, initial)


def mean_where_adjoint(adjoint, x, axis, keepdims: bool, where, nan: bool):
    """`mean(x, where=m)` backward: the adjoint over the number of selected elements."""
    if is_zero(adjoint):
        return 0.0
    values, mask = _selected(x, where, nan)
    count = np.sum(mask, axis=_axes(axis, values.ndim), keepdims=True)
    upstream = _kept(adjoint, values.ndim, axis, keepdims) / np.maximum(count, 1)
    return _spread(np.where(mask, upstream, 0.0), x)


def var_where_adjoint(adjoint, x, result, axis, ddof, keepdims: bool, where, nan: bool):
    """`var(x, where=m)` (result None) or `std` backward over the selected elements: 2 (x - mean)
    / (n - ddof), or (x - mean) / ((n - ddof) std); zero for the std of one value (constant 0)."""
    if is_zero(adjoint):
        return 0.0
    values, mask = _selected(x, where, nan)
    reduced = _axes(axis, values.ndim)
    count = np.sum(mask, axis=reduced, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.sum(np.where(mask, values, 0.0), axis=reduced, keepdims=True) / count
        centered = np.where(mask, values - mean, 0.0)
        upstream = _kept(adjoint, values.ndim, axis, keepdims)
        if result is None:
            gradient = centered * (2.0 / (count - ddof)) * upstream
        else:
            gradient = centered * upstream / ((count - ddof) * _kept(result, values.ndim, axis, keepdims))
            if ddof == 0:
                gradient = np.where(count == 1, 0.0, gradient)
    return _spread(np.where(mask, gradient, 0.0), x)
