"""Derivative rules for numpy's differences, polynomials and sampled functions: `np.diff`,
`np.gradient`, `np.polyval`, `np.interp`, `np.cumprod` (and the method), `np.sinc`,
`np.nan_to_num`.

Conventions (JAX's): `np.interp` takes the slope of the segment to the right of a sample point
(the last segment's at the last point) and is flat outside the samples; `np.sinc`'(0) = 0;
`np.nan_to_num` passes the adjoint where `x` is finite and gives it to `nan`/`posinf`/`neginf`
where it replaced a value; `np.cumprod` is exact with zeros in the input.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad.errors import CpsgradError
from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import is_zero, item
from cpsgrad.runtime.broadcasting import unbroadcast

_NO_VALUE = np._NoValue  # np.diff's "not given" for prepend and append

# ---- differences ------------------------------------------------------------------------------


@rule(np.diff)
def diff(a, n=1, axis=-1, prepend=_NO_VALUE, append=_NO_VALUE):
    y = np.diff(a, n, axis, prepend, append)
    y_d = yield y
    a_d += diff_adjoint(y_d, a, n, axis, prepend, append, 1)
    prepend_d += diff_adjoint(y_d, a, n, axis, prepend, append, 0)
    append_d += diff_adjoint(y_d, a, n, axis, prepend, append, 2)


# `np.gradient(f, *varargs)`: four spacing slots (a template cannot read `*args`); a scalar
# spacing is differentiable, coordinate arrays are not (a differentiable one is refused).
@rule(np.gradient)
def gradient(f, s0=None, s1=None, s2=None, s3=None, *, axis=None, edge_order=1):
    y = np.gradient(f, s0, s1, s2, s3, axis=axis, edge_order=edge_order)
    y_d = yield y
    f_d += gradient_adjoint(y_d, f, (s0, s1, s2, s3), axis, edge_order)
    s0_d += spacing_adjoint(0, y_d, y, f, (s0, s1, s2, s3), axis)
    s1_d += spacing_adjoint(1, y_d, y, f, (s0, s1, s2, s3), axis)
    s2_d += spacing_adjoint(2, y_d, y, f, (s0, s1, s2, s3), axis)
    s3_d += spacing_adjoint(3, y_d, y, f, (s0, s1, s2, s3), axis)


@rule(np.ndarray.cumprod)
@rule(np.cumprod)
def cumprod(a, axis=None, *, dtype=None):
    y = np.cumprod(a, axis, dtype=dtype)
    y_d = yield y
    a_d += cumprod_adjoint(y_d, a, axis)


# ---- polynomials and samples ------------------------------------------------------------------


@rule(np.polyval)
def polyval(p, x):
    y = np.polyval(p, x)
    y_d = yield y
    p_d += polyval_coefficients_adjoint(y_d, p, x)
    x_d += polyval_point_adjoint(y_d, p, x)


@rule(np.interp)
def interp(x, xp, fp, left=None, right=None, period=None):
    y = np.interp(x, xp, fp, left, right, period)
    y_d = yield y
    x_d += interp_adjoint(y_d, x, xp, fp, left, right, period, "x")
    xp_d += interp_adjoint(y_d, x, xp, fp, left, right, period, "xp")
    fp_d += interp_adjoint(y_d, x, xp, fp, left, right, period, "fp")
    left_d += interp_adjoint(y_d, x, xp, fp, left, right, period, "left")
    right_d += interp_adjoint(y_d, x, xp, fp, left, right, period, "right")
    period_d += interp_adjoint(y_d, x, xp, fp, left, right, period, "period")


@rule(np.sinc)
def sinc(x):
    y = np.sinc(x)
    y_d = yield y
    x_d += sinc_adjoint(y_d, x)


@rule(np.nan_to_num)
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    y = np.nan_to_num(x, copy, nan, posinf, neginf)
    y_d = yield y
    x_d += nan_to_num_adjoint(y_d, x, x, "x")
    nan_d += nan_to_num_adjoint(y_d, x, nan, "nan")
    posinf_d += nan_to_num_adjoint(y_d, x, posinf, "posinf")
    neginf_d += nan_to_num_adjoint(y_d, x, neginf, "neginf")


# ---- helpers ----------------------------------------------------------------------------------


def _pieces(a, axis: int, prepend, append) -> list:
    """The arrays `np.diff` joins along `axis` before differencing (a 0-d prepend or append is
    broadcast to one slice), with None for those not given."""
    values = np.asarray(a)
    pieces = []
    for extra in (prepend, append):
        if extra is _NO_VALUE:
            pieces.append(None)
            continue
        extra = np.asarray(extra)
        if extra.ndim == 0:
            shape = list(values.shape)
            shape[axis] = 1
            extra = np.broadcast_to(extra, shape)
        pieces.append(extra)
    return [pieces[0], values, pieces[1]]


def diff_adjoint(adjoint, a, n, axis, prepend, append, which: int):
    """The adjoint of `prepend` (which 0), `a` (1) or `append` (2) in `np.diff`: each difference
    transposed (the adjoint of x[k] is g[k-1] - g[k]), `n` times, then cut into the pieces."""
    if is_zero(adjoint):
        return 0.0
    like = (prepend, a, append)[which]
    if int(n) == 0:  # np.diff returns `a` itself
        return unbroadcast(np.asarray(adjoint), a) if which == 1 else 0.0
    axis = int(axis) % np.ndim(a)
    pieces = _pieces(a, axis, prepend, append)
    dtype = np.result_type(*[p for p in pieces if p is not None], 1.0)
    g = np.moveaxis(np.asarray(adjoint, dtype), axis, 0)
    for _ in range(int(n)):
        widened = np.zeros((g.shape[0] + 1,) + g.shape[1:], dtype)
        widened[1:] += g
        widened[:-1] -= g
        g = widened
    lengths = [0 if p is None else p.shape[axis] for p in pieces]
    start = sum(lengths[:which])
    part = np.moveaxis(g[start : start + lengths[which]], 0, axis)
    return unbroadcast(part, like)


def _gradient_axes(f, axis) -> list[int]:
    ndim = np.ndim(f)
    if axis is None:
        return list(range(ndim))
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    return [int(a) % ndim for a in axes]


def _spacings(spacing: tuple, count: int) -> list:
    """`np.gradient`'s varargs as one spacing per axis differentiated (numpy's rules)."""
    given = [s for s in spacing if s is not None]
    if not given:
        return [1.0] * count
    if len(given) == 1 and np.ndim(given[0]) == 0:
        return given * count
    return given


def _transposed_along(adjoint, axis: int, spacing, edge_order: int, dtype):
    """The adjoint of `f` from that of `np.gradient(f, spacing, axis=axis)`. The 1-d operator
    has at most three coefficients a row, on the columns [lo, lo + 2] (lo = clip(i - 1, 0,
    n - 3)); numpy's own coefficients are read by differentiating three combs (the columns of
    each residue mod 3), so that every edge order and coordinate spacing is numpy's."""
    moved = np.moveaxis(np.asarray(adjoint, dtype), axis, 0)
    n = moved.shape[0]
    result = np.zeros(moved.shape, dtype)
    rows = np.arange(n)
    low = np.clip(rows - 1, 0, max(n - 3, 0))
    trailing = (1,) * (moved.ndim - 1)
    for residue in range(3):
        comb = (rows % 3 == residue).astype(dtype)
        coefficients = np.gradient(comb, spacing, edge_order=edge_order)
        columns = low + (residue - low) % 3
        keep = columns < n
        np.add.at(result, columns[keep], coefficients[keep].reshape((-1,) + trailing) * moved[keep])
    return np.moveaxis(result, 0, axis)


def gradient_adjoint(adjoint, f, spacing: tuple, axis, edge_order):
    """`np.gradient` backward: each axis's derivative transposed, summed (a list of results
    when there are several axes, one array for one)."""
    if is_zero(adjoint):
        return 0.0
    axes = _gradient_axes(f, axis)
    spacings = _spacings(spacing, len(axes))
    dtype = np.result_type(np.asarray(f), 1.0)
    total = np.zeros(np.shape(f), dtype)
    for position, (along, step) in enumerate(zip(axes, spacings, strict=True)):
        part = adjoint if len(axes) == 1 else item(adjoint, position)
        if not is_zero(part):
            total += _transposed_along(part, along, step, int(edge_order), dtype)
    return unbroadcast(total, f)


def spacing_adjoint(slot: int, adjoint, result, f, spacing: tuple, axis):
    """The adjoint of a scalar spacing of `np.gradient`: each result it divides is -result / h."""
    if is_zero(adjoint) or spacing[slot] is None:
        return 0.0
    h = spacing[slot]
    if np.ndim(h) != 0:
        raise CpsgradError(
            "np.gradient: a differentiable coordinate array as spacing is not supported; pass "
            "the coordinates as a constant, or a scalar spacing"
        )
    axes = _gradient_axes(f, axis)
    shared = sum(s is not None for s in spacing) == 1  # one spacing for every axis
    total = 0.0
    for position in range(len(axes)):
        if shared or position == slot:
            part = adjoint if len(axes) == 1 else item(adjoint, position)
            value = result if len(axes) == 1 else result[position]
            if not is_zero(part):
                total += float(np.sum(np.asarray(part, np.float64) * value)) / -float(h)
    return unbroadcast(total, h)


def cumprod_adjoint(adjoint, x, axis):
    """`np.cumprod` backward, exact with zeros: the adjoint of x[k] is the sum over i >= k of
    adjoint[i] times the product of x[:i + 1] but x[k]. Before a lane's first zero z that is
    the reversed cumulative sum of adjoint * y over x[k]; after z it is 0; at z it is
    prod(x[:z]) times the sum over i >= z of adjoint[i] prod(x[z + 1:i + 1])."""
    if is_zero(adjoint):
        return 0.0
    dtype = np.result_type(np.asarray(x), 1.0)
    along = -1
    if axis is None:
        values, upstream = np.ravel(x).astype(dtype), np.ravel(adjoint)
    else:
        values = np.moveaxis(np.asarray(x, dtype), int(axis), -1)
        upstream = np.moveaxis(np.asarray(adjoint), int(axis), -1)
    products = np.cumprod(values, along)
    zero = values == 0
    has_zero = zero.any(along, keepdims=True)
    first = np.argmax(zero, along)[..., None]
    positions = np.arange(values.shape[along])
    reversed_sums = np.flip(np.cumsum(np.flip(upstream * products, along), along), along)
    with np.errstate(divide="ignore", invalid="ignore"):
        gradient = np.where((positions < first) | ~has_zero, reversed_sums / np.where(zero, 1, values), 0)
    if has_zero.any():
        after = np.cumprod(np.where(positions <= first, 1, values), along)
        tail = np.sum(np.where(positions >= first, upstream * after, 0), along, keepdims=True)
        before = np.where(first > 0, np.take_along_axis(products, np.maximum(first - 1, 0), along), 1)
        at_zero = np.where(has_zero, before * tail, 0)
        gradient = np.where((positions == first) & has_zero, at_zero, gradient)
    if axis is None:
        return unbroadcast(np.reshape(gradient, np.shape(x)), x)
    return unbroadcast(np.moveaxis(gradient, -1, int(axis)), x)


def polyval_coefficients_adjoint(adjoint, p, x):
    """The adjoint of the coefficients in `np.polyval(p, x)`: p[i] multiplies x ** (N - 1 - i)."""
    if is_zero(adjoint):
        return 0.0
    coefficients = np.asarray(p)
    dtype = np.result_type(coefficients, np.asarray(x), 1.0)
    power = np.ones(np.shape(x), dtype)
    parts = [None] * len(coefficients)
    for index in reversed(range(len(coefficients))):
        parts[index] = unbroadcast(np.asarray(adjoint * power, dtype), coefficients[index].astype(dtype))
        power = power * x
    return unbroadcast(np.array(parts, dtype), p)


def polyval_point_adjoint(adjoint, p, x):
    """The adjoint of `x` in `np.polyval(p, x)`: the derivative p'(x), by Horner's rule."""
    if is_zero(adjoint):
        return 0.0
    value, slope = 0.0, 0.0
    for coefficient in np.asarray(p):
        slope = slope * x + value
        value = value * x + coefficient
    return unbroadcast(adjoint * slope, x)


def _interp_samples(x, xp, fp, period):
    """(x, xp, fp, the index in the caller's fp of each sample) as numpy interpolates them: with
    `period`, x and xp reduced modulo it, xp sorted and extended by one period each way."""
    x = np.asarray(x, np.float64)
    xp = np.asarray(xp, np.float64)
    fp = np.asarray(fp)
    source = np.arange(len(xp))
    if period is not None:
        period = abs(float(period))
        x = x % period
        xp = xp % period
        order = np.argsort(xp)
        xp = np.concatenate([xp[order][-1:] - period, xp[order], xp[order][:1] + period])
        source = np.concatenate([order[-1:], order, order[:1]])
    return x, xp, source


def interp_adjoint(adjoint, x, xp, fp, left, right, period, which: str):
    """`np.interp` backward for `x`, `fp`, `left` or `right` (`xp` and `period` are refused)."""
    if which == "xp":
        raise CpsgradError("np.interp: the sample points xp are not differentiable; pass them as a constant")
    if which == "period":
        raise CpsgradError("np.interp: the period is not differentiable; pass it as a constant")
    if is_zero(adjoint):
        return 0.0
    points, samples, source = _interp_samples(x, xp, fp, period)
    values = np.asarray(fp, np.float64)[source]
    upstream = np.asarray(adjoint, np.float64)
    count = len(samples)
    below = points < samples[0]
    above = points > samples[-1]
    if period is not None:  # numpy ignores left and right
        left = right = None
    if which in ("left", "right"):
        outside = below if which == "left" else above
        return unbroadcast(np.sum(np.where(outside, upstream, 0.0)), left if which == "left" else right)
    if count == 1:
        slope, lower, weight = np.zeros_like(points), np.zeros(points.shape, int), np.zeros_like(points)
    else:
        upper = np.clip(np.searchsorted(samples, points, side="right"), 1, count - 1)
        lower = upper - 1
        width = samples[upper] - samples[lower]
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.where(width == 0, 0.0, (values[upper] - values[lower]) / width)
            weight = np.where(width == 0, 1.0, (points - samples[lower]) / width)
    inside = ~(below | above)
    if which == "x":
        return unbroadcast(upstream * np.where(inside, slope, 0.0), x)
    totals = np.bincount(np.ravel(lower), np.ravel(upstream * np.where(inside, 1.0 - weight, 0.0)), minlength=count)
    if count > 1:
        totals += np.bincount(np.ravel(lower + 1), np.ravel(upstream * np.where(inside, weight, 0.0)), minlength=count)
    if left is None:
        totals[0] += np.sum(np.where(below, upstream, 0.0))
    if right is None:
        totals[-1] += np.sum(np.where(above, upstream, 0.0))
    return unbroadcast(np.bincount(source, totals, minlength=len(np.asarray(xp))), fp)


def sinc_adjoint(adjoint, x):
    """`np.sinc` backward: pi (u cos u - sin u) / u**2 at u = pi x, by its series near 0 (0 at 0)."""
    if is_zero(adjoint):
        return 0.0
    values = np.asarray(x)
    u = np.pi * values
    small = np.abs(u) < 0.1
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = (u * np.cos(u) - np.sin(u)) / (u * u)
    u2 = u * u
    series = u * (-1.0 / 3.0 + u2 * (1.0 / 30.0 - u2 / 840.0))
    return unbroadcast(adjoint * (np.pi * np.where(small, series, direct)), x)


def nan_to_num_adjoint(adjoint, x, like, which: str):
    """`np.nan_to_num` backward: `x` where finite; `nan`, `posinf`, `neginf` where they stand in."""
    if is_zero(adjoint):
        return 0.0
    values = np.asarray(x)
    upstream = np.asarray(adjoint)
    if which == "x":
        return unbroadcast(np.where(np.isfinite(values), upstream, 0), x)
    chosen = {"nan": np.isnan(values), "posinf": np.isposinf(values), "neginf": np.isneginf(values)}[which]
    return unbroadcast(np.sum(np.where(chosen, upstream, 0)), like)

