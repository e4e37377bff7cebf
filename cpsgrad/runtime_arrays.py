"""Array helpers that generated programs and numpy rules call (through `cpsgrad_runtime`).

Conventions every helper keeps:
- an adjoint has its primal's shape and dtype (a Python float for a Python float); `0.0` is
  the symbolic zero and may stand for any shape;
- helpers never write into their arguments: generated code never updates an adjoint in place,
  so adjoints may alias each other freely.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "array_divide",
    "array_log_for_power",
    "array_power_slope",
    "array_sign",
    "index_adjoint",
    "is_zero",
    "matmul_left",
    "matmul_right",
    "unbroadcast",
]

_ndarray = np.ndarray


def unbroadcast(adjoint, like):
    """`adjoint` summed over the axes broadcasting added to `like`, in `like`'s shape and dtype.

    The one helper that undoes broadcasting for every rule: `x_d += unbroadcast(z_d, x)`. A
    Python float `like` gets a Python float; a numpy scalar or array keeps its dtype.
    """
    kind = type(like)
    if type(adjoint) is float and adjoint == 0.0:  # the symbolic zero
        return adjoint
    if kind is _ndarray:
        if type(adjoint) is _ndarray and adjoint.shape == like.shape:
            return adjoint if adjoint.dtype == like.dtype else adjoint.astype(like.dtype)
        return _reduce_to(adjoint, like.shape, like.dtype)
    if kind is float or kind is int or kind is bool:
        if type(adjoint) is float:
            return adjoint
        return float(adjoint.sum()) if type(adjoint) is _ndarray else float(adjoint)
    if isinstance(like, np.generic):
        return like.dtype.type(adjoint.sum() if type(adjoint) is _ndarray else adjoint)
    if isinstance(like, (list, tuple)):
        from cpsgrad.runtime import SequenceAdjoint

        if isinstance(adjoint, SequenceAdjoint) and len(adjoint) != len(like):
            raise TypeError(
                "an operator combined a differentiable tuple or list with another sequence "
                "(concatenation or repetition); that is not differentiable yet: build the "
                "sequence element by element"
            )
        return adjoint
    return adjoint


def _reduce_to(adjoint, shape: tuple, dtype):
    """Sum `adjoint` down to `shape` (numpy's broadcasting rules, run backwards)."""
    adjoint = np.asarray(adjoint)
    extra = adjoint.ndim - len(shape)
    if extra < 0:  # a scalar (symbolic) adjoint standing for a broadcast value
        return np.broadcast_to(adjoint, shape).astype(dtype)
    axes = tuple(range(extra)) + tuple(
        extra + axis for axis, size in enumerate(shape) if size == 1 and adjoint.shape[extra + axis] != 1
    )
    if axes:
        adjoint = adjoint.sum(axis=axes, keepdims=True)
    if extra:
        adjoint = adjoint.reshape(shape)
    if adjoint.shape != shape:
        adjoint = np.broadcast_to(adjoint, shape).copy()
    return adjoint.astype(dtype, copy=False)


def index_adjoint(container, index, adjoint):
    """The adjoint of `container` when only `container[index]` was read.

    Arrays take any numpy index (ints, slices, tuples, integer arrays, boolean masks); integer
    arrays that repeat a position add up, as the chain rule says. Tuples and lists take an int
    or a slice.
    """
    if type(container) is _ndarray:
        result = np.zeros(container.shape, container.dtype)
        if _is_basic(index):
            result[index] = adjoint
        else:
            np.add.at(result, index, adjoint)
        return result
    from cpsgrad.runtime import one_hot

    return one_hot(container, index, adjoint)


def _is_basic(index) -> bool:
    """Whether `index` is a basic index (views, no repeated positions)."""
    if isinstance(index, tuple):
        return all(_is_basic(part) for part in index)
    return index is None or index is Ellipsis or isinstance(index, (int, np.integer, slice))


def is_zero(adjoint) -> bool:
    """Whether `adjoint` is the symbolic zero (a Python `0.0` standing for any shape)."""
    return type(adjoint) is float and adjoint == 0.0


def matmul_left(z_d, x, y):
    """The adjoint of `x` in `z = x @ y` (vectors, matrices and stacks of them, broadcast)."""
    if is_zero(z_d):
        return 0.0
    x_ndim, y_ndim = np.ndim(x), np.ndim(y)
    if x_ndim == 1 and y_ndim == 1:
        return unbroadcast(z_d * y, x)
    if x_ndim == 1:  # (n,) @ (..., n, m) -> (..., m)
        return unbroadcast(np.matmul(y, z_d[..., None])[..., 0], x)
    if y_ndim == 1:  # (..., n, k) @ (k,) -> (..., n)
        return unbroadcast(z_d[..., None] * y, x)
    return unbroadcast(np.matmul(z_d, np.swapaxes(y, -1, -2)), x)


def matmul_right(z_d, x, y):
    """The adjoint of `y` in `z = x @ y`."""
    if is_zero(z_d):
        return 0.0
    x_ndim, y_ndim = np.ndim(x), np.ndim(y)
    if x_ndim == 1 and y_ndim == 1:
        return unbroadcast(z_d * x, y)
    if x_ndim == 1:  # (n,) @ (..., n, m) -> (..., m)
        return unbroadcast(x[:, None] * z_d[..., None, :], y)
    if y_ndim == 1:  # (..., n, k) @ (k,) -> (..., n)
        return unbroadcast(np.matmul(np.swapaxes(x, -1, -2), z_d[..., None])[..., 0], y)
    return unbroadcast(np.matmul(np.swapaxes(x, -1, -2), z_d), y)


def array_divide(numerator, denominator):
    """`numerator / denominator` elementwise with IEEE results (inf, nan) and no warnings."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.divide(numerator, denominator)


def array_power_slope(base, exponent):
    """d(b**e)/db elementwise: e * b**(e-1), 0 where e == 0, +-inf at b == 0 for 0 < e < 1."""
    base = np.asarray(base)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        slope = exponent * np.power(base, np.asarray(exponent, dtype=np.result_type(base, exponent, 1.0)) - 1)
        slope = np.where(np.asarray(exponent) == 0, 0.0, slope)
    return slope.astype(np.result_type(base, exponent, 1.0), copy=False)


def array_log_for_power(base):
    """d(b**e)/de / b**e elementwise: log(b), 0 at b == 0, NaN for b < 0."""
    base = np.asarray(base)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(base == 0, 0.0, np.log(np.where(base == 0, 1.0, base))).astype(np.result_type(base, 1.0), copy=False)


def array_sign(x):
    """abs' elementwise: 1 at x >= 0 (abs'(0) = 1, as JAX), -1 below, NaN at NaN."""
    x = np.asarray(x)
    return np.where(x >= 0, 1.0, np.where(x < 0, -1.0, np.nan)).astype(np.result_type(x, 1.0), copy=False)
