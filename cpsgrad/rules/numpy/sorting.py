"""Derivative rules for numpy's sorting and selection by index: sort, partition, median,
nanmedian, take, take_along_axis, choose, select.

A sort or partition moves elements: the backward sends each output element's adjoint back to the
element it came from. Tied values are matched in their order of position (a stable sort of input
and output), so that of equal values the first gets the first sorted position, as JAX's sort.
`x.sort()` sorts in place and has no rule: the transform refuses it (use `np.sort(x)`).

`np.median` is the middle element of each sorted slice, or the mean of the two middle ones for an
even count: the adjoint goes to that element, or half to each of the two, found by the same
stable sort (of tied values, the first in position order: JAX's median, a sort, does the same); a
slice holding a NaN has a NaN median and NaN adjoints where its adjoint is not 0, as `np.max`'s
(JAX gives 0 there). `np.nanmedian` is the median of the slice's other elements. `overwrite_input=True` only lets numpy
reorder the input, whose contents are then undefined: the rule never uses it.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad.errors import UnsupportedError
from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import SequenceAdjoint, is_zero
from cpsgrad.runtime.broadcasting import unbroadcast

# ---- sorting ----------------------------------------------------------------------------------


@rule(np.sort)
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    y = np.sort(a, axis, kind, order, stable=stable)
    y_d = yield y
    a_d += permutation_adjoint(y_d, a, y, axis)


@rule(np.partition)
def partition(a, kth, axis=-1, kind="introselect", order=None):
    y = np.partition(a, kth, axis, kind, order)
    y_d = yield y
    a_d += permutation_adjoint(y_d, a, y, axis)


@rule(np.median)
def median(a, axis=None, *, overwrite_input=False, keepdims=False):
    y = np.median(a, axis, keepdims=keepdims)
    y_d = yield y
    a_d += median_adjoint(y_d, a, axis, keepdims)


@rule(np.nanmedian)
def nanmedian(a, axis=None, *, overwrite_input=False, keepdims=False):
    y = np.nanmedian(a, axis, keepdims=keepdims)
    y_d = yield y
    a_d += median_adjoint(y_d, a, axis, keepdims, True)


@rule(np.quantile)
def quantile(a, q, axis=None, *, overwrite_input=False, method="linear", keepdims=False):
    y = np.quantile(a, q, axis, method=method, keepdims=keepdims)
    y_d = yield y
    a_g, q_g = quantile_adjoints(y_d, a, q, axis, keepdims, method, 1.0)
    a_d += a_g
    q_d += unbroadcast(q_g, q)


@rule(np.percentile)
def percentile(a, q, axis=None, *, overwrite_input=False, method="linear", keepdims=False):
    y = np.percentile(a, q, axis, method=method, keepdims=keepdims)
    y_d = yield y
    a_g, q_g = quantile_adjoints(y_d, a, q, axis, keepdims, method, 100.0)
    a_d += a_g
    q_d += unbroadcast(q_g, q)


# ---- selection by index -----------------------------------------------------------------------


@rule(np.take)
@rule(np.ndarray.take)
def take(a, indices, axis=None, *, mode="raise"):
    y = np.take(a, indices, axis, mode=mode)
    y_d = yield y
    a_d += take_adjoint(y_d, a, indices, axis, mode)


@rule(np.take_along_axis)
def take_along_axis(arr, indices, axis=-1):
    y = np.take_along_axis(arr, indices, axis)
    y_d = yield y
    arr_d += take_along_axis_adjoint(y_d, arr, indices, axis)


@rule(np.choose)
def choose(a, choices, *, mode="raise"):
    y = np.choose(a, choices, mode=mode)
    y_d = yield y
    choices_d += choose_adjoint(y_d, a, choices, mode)


@rule(np.select)
def select(condlist, choicelist, default=0):
    y = np.select(condlist, choicelist, default)
    y_d = yield y
    choicelist_g, default_g = select_adjoint(y_d, condlist, choicelist, default)
    choicelist_d += choicelist_g
    default_d += default_g


# ---- helpers ----------------------------------------------------------------------------------


def permutation_adjoint(adjoint, x, result, axis):
    """The adjoint of `x` when `result` holds `x`'s elements rearranged along `axis` (None: the
    flat `x`'s), as `np.sort` and `np.partition` do: output and input matched by a stable sort
    of each, so tied values go back in their order of position."""
    if is_zero(adjoint):
        return 0.0
    values = np.asarray(x)
    if axis is None:
        values, result, adjoint, axis = np.ravel(values), np.ravel(result), np.ravel(adjoint), 0
    sources = np.argsort(values, axis=axis, kind="stable")
    targets = np.argsort(result, axis=axis, kind="stable")
    gathered = np.zeros(values.shape, np.asarray(adjoint).dtype)
    np.put_along_axis(gathered, sources, np.take_along_axis(np.asarray(adjoint), targets, axis), axis)
    return unbroadcast(np.reshape(gathered, np.shape(x)), x)


def median_adjoint(adjoint, x, axis, keepdims: bool, skip_nan: bool = False, quantile=None, method="linear"):
    """`np.median` backward: each slice's adjoint to its middle element of a stable sort, or half
    to each of its two middle ones (an even count); NaN throughout a slice holding a NaN. With
    `skip_nan` (`np.nanmedian`), the middle of the slice's other elements (a stable sort puts
    NaNs last); NaN throughout a slice of NaNs only. With `quantile` (a number in [0, 1]), that
    quantile's elements by `method` instead of the middle ones."""
    if is_zero(adjoint):
        return 0.0
    values = np.asarray(x)
    ndim = values.ndim
    if axis is None:
        axes = tuple(range(ndim))
    else:
        axes = tuple(int(a) % ndim for a in ((axis,) if isinstance(axis, (int, np.integer)) else axis))
    rest = tuple(a for a in range(ndim) if a not in axes)
    moved = np.transpose(values, rest + axes)
    batch = moved.shape[: len(rest)]
    count = int(np.prod(moved.shape[len(rest) :], dtype=int))
    flat = np.reshape(moved, batch + (count,))
    upstream = np.asarray(adjoint)
    if keepdims:  # the reduced axes kept as 1s: drop them
        kept = tuple(1 if a in axes else values.shape[a] for a in range(ndim))
        upstream = np.reshape(np.transpose(np.broadcast_to(upstream, kept), rest + axes), batch)
    upstream = np.broadcast_to(upstream, batch)
    missing = np.isnan(flat) if np.issubdtype(values.dtype, np.inexact) else np.zeros(flat.shape, bool)
    counted = np.sum(~missing, axis=-1, keepdims=True) if skip_nan else np.full(batch + (1,), count)
    position = np.arange(count)
    if quantile is None:
        weights = 0.5 * (position == (counted - 1) // 2) + 0.5 * (position == counted // 2)
    else:
        weights = _quantile_weights(quantile, method, count, position)
    broken = (counted[..., 0] == 0) if skip_nan else missing.any(axis=-1)
    dtype = np.result_type(values, upstream, 1.0)
    spread = upstream[..., None]
    with np.errstate(invalid="ignore"):  # NaN where a NaN median's adjoint is not 0 (JAX's median: 0)
        in_order = np.asarray(np.where(spread == 0, 0.0, np.where(broken[..., None], np.nan, weights) * spread), dtype)
    gathered = np.zeros(flat.shape, dtype)
    np.put_along_axis(gathered, np.argsort(flat, axis=-1, kind="stable"), in_order, -1)
    result = np.transpose(np.reshape(gathered, moved.shape), np.argsort(rest + axes))
    return unbroadcast(result, x)


_QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint")


def _quantile_bounds(q, count: int, method: str):
    """(lower index, upper index, the upper one's weight) of quantile q of `count` sorted values;
    at a knot both indices are the same (JAX's floor and ceil)."""
    virtual = (count - 1) * q
    low, high = int(np.floor(virtual)), int(np.ceil(virtual))
    weight = {"linear": virtual - low, "lower": 0.0, "higher": 1.0, "midpoint": 0.5}[method]
    return low, high, weight


def _quantile_weights(q, method, count, position):
    low, high, weight = _quantile_bounds(q, count, method)
    return (1.0 - weight) * (position == low) + weight * (position == high)


def quantile_adjoints(adjoint, x, q, axis, keepdims, method, scale: float):
    """`np.quantile` (`scale` 1) and `np.percentile` (`scale` 100) backward: (x's adjoint, q's).
    Each quantile's adjoint goes to its two neighbouring elements of a stable sort, weighted as
    `method` interpolates ('linear', 'lower', 'higher', 'midpoint'; the others are refused); q's
    is the slope (n - 1) (x_high - x_low) / scale of 'linear' (0 at a knot, as JAX's; 0 for the
    piecewise constant methods)."""
    if is_zero(adjoint):
        return 0.0, 0.0
    if method not in _QUANTILE_METHODS:
        raise UnsupportedError(
            None, f"np.quantile/np.percentile(method={method!r})",
            f"only the methods {', '.join(_QUANTILE_METHODS)} are differentiated (np.quantile's default is 'linear')",
        )
    levels = np.asarray(q, dtype=float) / scale
    values = np.asarray(x)
    upstream = np.asarray(adjoint)
    upstream = np.broadcast_to(upstream, np.shape(np.quantile(values, levels, axis=axis, keepdims=keepdims)))
    x_adjoint = 0.0
    q_adjoint = np.zeros(levels.shape)
    if axis is None:
        count = values.size
        ordered = np.sort(values, axis=None)
    else:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        count = int(np.prod([values.shape[a] for a in axes], dtype=int))
        ordered = None
    for index in np.ndindex(levels.shape):
        part = upstream[index]
        x_adjoint = x_adjoint + median_adjoint(part, x, axis, keepdims, False, float(levels[index]), method)
        if method == "linear" and count:
            low, high, _ = _quantile_bounds(float(levels[index]), count, method)
            if ordered is None:
                rest = tuple(a for a in range(values.ndim) if a not in tuple(int(a) % values.ndim for a in axes))
                moved = np.transpose(values, rest + tuple(int(a) % values.ndim for a in axes))
                flat = np.sort(np.reshape(moved, moved.shape[: len(rest)] + (count,)), axis=-1)
                slope = (count - 1) * (flat[..., high] - flat[..., low])
                part = np.reshape(part, slope.shape) if np.size(part) == slope.size else part
            else:
                slope = (count - 1) * (ordered[high] - ordered[low])
            q_adjoint[index] = np.sum(part * slope) / scale
    return x_adjoint, q_adjoint if np.ndim(q) else float(q_adjoint)


def _wrapped(indices, length: int, mode: str):
    """Indices as `np.take`/`np.choose` read them under `mode` ('raise', 'wrap' or 'clip')."""
    indices = np.asarray(indices)
    if mode == "wrap":
        return np.mod(indices, length)
    if mode == "clip":
        return np.clip(indices, 0, length - 1)
    return indices


def take_adjoint(adjoint, x, indices, axis, mode):
    """`np.take(x, indices, axis, mode=mode)` backward: the adjoint added at the positions taken
    (axis None: of the flat `x`); a position taken twice gets both."""
    if is_zero(adjoint):
        return 0.0
    adjoint = np.asarray(adjoint)
    shape = np.shape(x)
    if axis is None:
        summed = np.zeros(int(np.prod(shape)), adjoint.dtype)
        np.add.at(summed, _wrapped(indices, summed.size, mode), adjoint)
        return unbroadcast(summed.reshape(shape), x)
    along = axis % len(shape)
    summed = np.zeros(shape, adjoint.dtype)
    np.add.at(summed, (slice(None),) * along + (_wrapped(indices, shape[along], mode),), adjoint)
    return unbroadcast(summed, x)


def take_along_axis_adjoint(adjoint, x, indices, axis):
    """`np.take_along_axis` backward: the adjoint added at the positions taken."""
    if is_zero(adjoint):
        return 0.0
    adjoint = np.asarray(adjoint)
    values = np.asarray(x)
    if axis is None:
        values, axis = np.ravel(values), 0
    axis = axis % values.ndim
    position = [
        indices
        if dimension == axis
        else np.arange(size).reshape((1,) * dimension + (-1,) + (1,) * (values.ndim - dimension - 1))
        for dimension, size in enumerate(values.shape)
    ]
    summed = np.zeros(values.shape, adjoint.dtype)
    np.add.at(summed, tuple(position), adjoint)
    return unbroadcast(np.reshape(summed, np.shape(x)), x)


def choose_adjoint(adjoint, a, choices, mode):
    """`np.choose(a, choices)` backward: each choice gets the adjoint where `a` chose it."""
    if is_zero(adjoint):
        return 0.0
    index = _wrapped(a, len(choices), mode)
    parts = [unbroadcast(np.where(index == j, adjoint, 0), choice) for j, choice in enumerate(choices)]
    if isinstance(choices, np.ndarray):
        return unbroadcast(np.stack(parts), choices)
    return SequenceAdjoint(parts)


def select_adjoint(adjoint, condlist, choicelist, default):
    """`np.select` backward, (choices' adjoint, default's): each choice gets the adjoint where its
    condition is the first true one, the default where none is."""
    if is_zero(adjoint):
        return 0.0, 0.0
    count = len(choicelist)
    chosen = np.select(condlist, list(range(count)), count)
    parts = [unbroadcast(np.where(chosen == j, adjoint, 0), choice) for j, choice in enumerate(choicelist)]
    return SequenceAdjoint(parts), unbroadcast(np.where(chosen == count, adjoint, 0), default)
