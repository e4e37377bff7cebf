"""Derivative rules for numpy's reductions (sum, mean, prod, max/min, var/std, norm, cumsum, ...)
and the matching `np.ndarray` methods.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import math

import numpy as np

from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.rules.operators import array_sign
from cpsgrad.rules.registry import rule
from cpsgrad.runtime import device as _device
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import unbroadcast

_ndarray = np.ndarray

# ---- reductions -------------------------------------------------------------------------------


@rule(np.ndarray.sum)
@rule(np.sum)
def sum_(a, axis=None, *, dtype=None, keepdims=False):
    y = np.sum(a, axis, dtype=dtype, keepdims=keepdims)
    y_d = yield y
    a_d += sum_adjoint(y_d, a, axis, keepdims)


@rule(np.ndarray.mean)
@rule(np.mean)
def mean(a, axis=None, *, dtype=None, keepdims=False):
    y = np.mean(a, axis, dtype=dtype, keepdims=keepdims)
    y_d = yield y
    a_d += mean_adjoint(y_d, a, axis, keepdims)


@rule(np.ndarray.max)
@rule(np.ndarray.min)
@rule(np.max)
@rule(np.min)
@rule(np.amax)
@rule(np.amin)
def extremum(a, axis=None, *, keepdims=False):
    y = np.max(a, axis, keepdims=keepdims)
    y_d = yield y
    a_d += extremum_adjoint(y_d, a, y, axis, keepdims)


@rule(np.ndarray.prod)
@rule(np.prod)
def prod(a, axis=None, *, dtype=None, keepdims=False):
    y = np.prod(a, axis, dtype=dtype, keepdims=keepdims)
    y_d = yield y
    a_d += array_product_adjoint(y_d, a, axis, keepdims)


@rule(np.ndarray.var)
@rule(np.var)
def var(a, axis=None, *, dtype=None, ddof=0, keepdims=False):
    y = np.var(a, axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    y_d = yield y
    a_d += var_adjoint(y_d, a, axis, ddof, keepdims)


@rule(np.ndarray.std)
@rule(np.std)
def std(a, axis=None, *, dtype=None, ddof=0, keepdims=False):
    y = np.std(a, axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    y_d = yield y
    a_d += std_adjoint(y_d, a, y, axis, ddof, keepdims)


@rule(np.ndarray.cumsum)
@rule(np.cumsum)
def cumsum(a, axis=None, *, dtype=None):
    y = np.cumsum(a, axis, dtype=dtype)
    y_d = yield y
    a_d += cumsum_adjoint(y_d, a, axis)


@rule(np.linalg.norm)
def norm(x, ord=None, axis=None, keepdims=False):
    y = np.linalg.norm(x, ord, axis, keepdims)
    y_d = yield y
    x_d += norm_adjoint(y_d, x, y, ord, axis, keepdims)


@rule(np.trace)
@rule(np.ndarray.trace)
def trace(a, offset=0, axis1=0, axis2=1):
    y = np.trace(a, offset, axis1, axis2)
    y_d = yield y
    a_d += trace_adjoint(y_d, a, offset, axis1, axis2)


# ---- helpers ----------------------------------------------------------------------------------


def trace_adjoint(adjoint, x, offset, axis1, axis2):
    """`np.trace` backward: the adjoint on the summed diagonal, zero elsewhere."""
    if is_zero(adjoint):
        return 0.0
    shape = np.shape(x)
    diagonal = np.eye(shape[axis1], shape[axis2], k=offset)
    spread = np.asarray(adjoint)[..., None, None] * diagonal
    return unbroadcast(np.moveaxis(spread, (-2, -1), (axis1 % len(shape), axis2 % len(shape))), x)


def _axes(axis, ndim: int) -> tuple[int, ...]:
    """A reduction's `axis` (None, an int or a tuple, negative allowed) as sorted axes >= 0."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else axis
    return tuple(sorted(int(a) % ndim for a in axes)) if ndim else ()


def _kept(value, ndim: int, axis, keepdims: bool):
    """A reduction's output (or its adjoint) with the reduced axes put back as size 1."""
    value = np.asarray(value)
    if keepdims or axis is None:
        return value.reshape((1,) * ndim) if axis is None and not keepdims else value
    return np.expand_dims(value, _axes(axis, ndim))


def _spread(adjoint, x):
    """`adjoint` broadcast to `x`'s shape, as a fresh array of `x`'s dtype (or `x`'s type)."""
    return unbroadcast(np.broadcast_to(adjoint, np.shape(x)).copy(), x)


def _everywhere(adjoint, x):
    """The adjoint of a reduction over all of `x` (a scalar) spread to `x`, or None when `x` is
    not a plain array or the adjoint is not a scalar."""
    if type(x) is _ndarray and (
        type(adjoint) is float or (isinstance(adjoint, np.generic) and adjoint.dtype.kind == "f")
    ):
        return np.full(x.shape, adjoint, x.dtype)
    return None


def sum_adjoint(adjoint, x, axis, keepdims: bool):
    """`np.sum(x, axis, keepdims=keepdims)` backward: the adjoint repeated over the reduced axes."""
    if is_zero(adjoint):
        return 0.0
    if axis is None and not keepdims:
        spread = _everywhere(adjoint, x)
        if spread is not None:
            return spread
    if type(x) is DeviceArray:
        return _device.sum_adjoint(adjoint, x, axis, keepdims)
    return _spread(_kept(adjoint, np.ndim(x), axis, keepdims), x)


def mean_adjoint(adjoint, x, axis, keepdims: bool):
    """`np.mean` backward: the adjoint over the number of elements averaged."""
    if is_zero(adjoint):
        return 0.0
    shape = np.shape(x)
    count = math.prod(shape[a] for a in _axes(axis, len(shape)))
    if type(x) is DeviceArray:
        return _device.sum_adjoint(adjoint, x, axis, keepdims, count)
    return _spread(_kept(adjoint, len(shape), axis, keepdims) / count, x)


def extremum_adjoint(adjoint, x, result, axis, keepdims: bool):
    """`np.max`/`np.min` backward: the adjoint split equally among the elements equal to the
    result (as JAX); NaN throughout a reduction whose result is NaN."""
    if is_zero(adjoint):
        return 0.0
    if axis is None and not keepdims and type(x) is _ndarray and x.size and not isinstance(adjoint, _ndarray):
        chosen = x == result
        count = np.count_nonzero(chosen)
        if count:  # else the result is NaN: the general path below spreads NaN
            return chosen * x.dtype.type(adjoint / count)
    if type(x) is DeviceArray:
        return _device.extremum_adjoint(adjoint, x, result, axis)
    ndim = np.ndim(x)
    chosen = np.asarray(x) == _kept(result, ndim, axis, keepdims)
    count = chosen.sum(axis=_axes(axis, ndim), keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _spread(chosen * (_kept(adjoint, ndim, axis, keepdims) / count), x)


def array_product_adjoint(adjoint, x, axis, keepdims: bool):
    """`np.prod` backward: each element gets the product of the others (zeros allowed, no division)."""
    if is_zero(adjoint):
        return 0.0
    values = np.asarray(x)
    reduced = _axes(axis, values.ndim)
    kept = [a for a in range(values.ndim) if a not in reduced]
    moved = np.transpose(values, [*kept, *reduced])
    rows = moved.reshape(moved.shape[: len(kept)] + (-1,))
    count = rows.shape[-1]
    ones = np.ones(rows.shape[:-1] + (1,), rows.dtype)
    before = np.cumprod(np.concatenate([ones, rows[..., :-1]], axis=-1), axis=-1)[..., :count]
    after = np.cumprod(np.concatenate([ones, rows[..., :0:-1]], axis=-1), axis=-1)[..., count - 1 :: -1]
    others = np.transpose((before * after).reshape(moved.shape), np.argsort([*kept, *reduced]))
    return _spread(others * _kept(adjoint, values.ndim, axis, keepdims), x)


def var_adjoint(adjoint, x, axis, ddof, keepdims: bool):
    """`np.var` backward: 2 (x - mean) / (n - ddof), times the adjoint (conj(x - mean) times its real
    part for a complex `x`)."""
    if is_zero(adjoint):
        return 0.0
    values = np.asarray(x)
    count = math.prod(values.shape[a] for a in _axes(axis, values.ndim))
    centered = values - values.mean(axis=axis, keepdims=True)
    if values.dtype.kind == "c":  # the mean of |x - mean|**2: JAX's conj(x - mean) of the real part
        centered, adjoint = np.conj(centered), np.real(adjoint)
    return _spread(centered * (2.0 / (count - ddof)) * _kept(adjoint, values.ndim, axis, keepdims), x)


def std_adjoint(adjoint, x, result, axis, ddof, keepdims: bool):
    """`np.std` backward: (x - mean) / ((n - ddof) std), times the adjoint (NaN where std is 0,
    except the std of single values, constant 0, whose derivative is 0)."""
    if is_zero(adjoint):
        return 0.0
    values = np.asarray(x)
    count = math.prod(values.shape[a] for a in _axes(axis, values.ndim))
    if count == 1 and ddof == 0:  # the std of one value is 0 whatever it is: its derivative is 0, not 0 / 0
        return _spread(np.zeros_like(values, dtype=np.result_type(values, float)), x)
    centered = values - values.mean(axis=axis, keepdims=True)
    if values.dtype.kind == "c":  # as var's
        centered, adjoint = np.conj(centered), np.real(adjoint)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = _kept(adjoint, values.ndim, axis, keepdims) / (
            (count - ddof) * _kept(result, values.ndim, axis, keepdims)
        )
        return _spread(centered * scale, x)


def cumsum_adjoint(adjoint, x, axis):
    """`np.cumsum` backward: the adjoint summed from the end (over the flattened `x` for axis None)."""
    if is_zero(adjoint):
        return 0.0
    along = 0 if axis is None else axis
    reversed_sums = np.flip(np.cumsum(np.flip(adjoint, along), along), along)
    return unbroadcast(np.reshape(reversed_sums, np.shape(x)), x)


def norm_adjoint(adjoint, x, result, ord, axis, keepdims: bool):
    """`np.linalg.norm` backward, every order numpy computes. Vectors: the 2-norm x / norm (NaN
    at the zero vector, as JAX), a p-norm sign(x) |x|^(p-1) / norm^(p-1), inf / -inf the sign at
    the largest / smallest |x| (ties share), ord 0 (a count) none. Matrices (two axes, in
    numpy's order): Frobenius as the 2-norm, 'nuc' U V^T, 2 / -2 the outer product of the
    singular vectors of the largest / smallest singular value, 1 / -1 and inf / -inf the sign in
    the column / row of largest or smallest absolute sum (ties share)."""
    if is_zero(adjoint):
        return 0.0
    values = np.asarray(x)
    if axis is None:
        pair = (0, 1) if ord is not None and values.ndim == 2 else None
    elif isinstance(axis, (int, np.integer)):
        pair = None
    else:
        pair = tuple(int(a) % values.ndim for a in axis) if len(axis) == 2 else None
    if values.dtype.kind == "c":
        return _complex_norm_adjoint(adjoint, x, values, result, ord, axis, keepdims, pair)
    upstream = _kept(adjoint, values.ndim, axis, keepdims)
    with np.errstate(divide="ignore", invalid="ignore"):
        norm = _kept(result, values.ndim, axis, keepdims)
        if ord is None or ord == "fro" or (ord == 2 and pair is None):
            slope = values / norm
        elif pair is None:
            single = _axes(axis, values.ndim)
            slope = _vector_norm_slope(values, norm, ord, single[0] if single else None)
        else:
            slope = _matrix_norm_slope(values, ord, pair)
        return _spread(slope * upstream, x)


def _complex_norm_adjoint(adjoint, x, values, result, ord, axis, keepdims: bool, pair):
    """The norms of `|x|` (every order but the singular-value ones): the real backward at |x|,
    of the real part of `adjoint` (the norm is real), times d|x| = conj(x) / |x| (0 at 0, as
    JAX's abs): JAX's convention, docs/design.md "Complex numbers"."""
    if pair is not None and ord in ("nuc", 2, -2):  # sums of singular values: d s_i = Re(u_i^H da v_i)
        upstream = _kept(np.real(adjoint), values.ndim, axis, keepdims)
        return _spread(np.conj(_matrix_norm_slope(values, ord, pair)) * upstream, x)
    magnitude = np.abs(values)
    slope = norm_adjoint(np.real(adjoint), magnitude, result, ord, axis, keepdims)
    with np.errstate(divide="ignore", invalid="ignore"):
        phase = np.where(magnitude == 0, 0.0, np.conj(values) / np.where(magnitude == 0, 1.0, magnitude))
    return unbroadcast(slope * phase, x)


def _shares(hit, axis):
    """Where the extremum is, each of the tied places an equal share."""
    hit = hit.astype(float)
    return hit / np.sum(hit, axis=axis, keepdims=True)


def _vector_norm_slope(values, norm, ord, axis):
    magnitude = np.abs(values)
    if ord == np.inf or ord == -np.inf:
        extreme = (
            np.max(magnitude, axis=axis, keepdims=True) if ord > 0 else np.min(magnitude, axis=axis, keepdims=True)
        )
        return array_sign(values) * _shares(magnitude == extreme, axis)
    if ord == 0:
        return np.zeros_like(values, dtype=np.result_type(values, 1.0))
    p = float(ord)
    return array_sign(values) * magnitude ** (p - 1.0) / norm ** (p - 1.0)


def _matrix_norm_slope(values, ord, pair):
    rows, columns = pair
    matrices = np.moveaxis(values, (rows, columns), (-2, -1))
    if ord == "nuc" or ord == 2 or ord == -2:
        u, _, vt = np.linalg.svd(matrices, full_matrices=False)
        if ord == "nuc":
            slope = u @ vt
        else:
            pick = slice(0, 1) if ord == 2 else slice(-1, None)  # the largest or the smallest
            slope = u[..., :, pick] @ vt[..., pick, :]
    elif ord in (1, -1, np.inf, -np.inf):
        along = -2 if ord in (1, -1) else -1  # 1: sums down each column; inf: along each row
        sums = np.sum(np.abs(matrices), axis=along, keepdims=True)
        across = -1 if along == -2 else -2
        extreme = np.max(sums, axis=across, keepdims=True) if ord > 0 else np.min(sums, axis=across, keepdims=True)
        slope = array_sign(matrices) * _shares(sums == extreme, across)
    else:
        raise ValueError(f"invalid norm order {ord!r} for matrices")
    return np.moveaxis(slope, (-2, -1), (rows, columns))
