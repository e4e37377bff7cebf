"""Device branches of the array helpers (`cpsgrad/runtime/`, and the rules' own helpers beside
their templates in cpsgrad/rules/) for `DeviceArray`s.

The numpy helpers keep its numpy fast paths first and calls these where an argument is a
`cpsgrad.kernels.DeviceArray` and the numpy formula would build host arrays (`np.zeros`,
`np.broadcast_to`, `np.asarray`, scipy's BLAS). Everything here runs the table's CUDA kernels
(and the few layout kernels beside them) on device data; nothing is copied to the host. The
conventions of the numpy helpers hold: an adjoint has its primal's shape and dtype, `0.0` is the
symbolic zero. Importing this module imports no numba.
"""

from __future__ import annotations

import math

import numpy as np

from cpsgrad.kernels.device_array import DeviceArray, full, index_adjoint, wrap, zeros

__all__ = [
    "add",
    "array_log_for_power",
    "array_power_slope",
    "array_sign",
    "as_gradient",
    "elementwise_adjoint",
    "extremum_adjoint",
    "index_adjoint",
    "matmul_left",
    "matmul_right",
    "outer_left",
    "outer_right",
    "pieces",
    "sum_adjoint",
    "tie_share",
    "unbroadcast",
]

_NUMBERS = (float, int, bool)


def _number(value) -> bool:
    return type(value) in _NUMBERS or isinstance(value, np.generic)


def _device(value, where: str) -> DeviceArray:
    if type(value) is not DeviceArray:
        from cpsgrad.kernels.table import DeviceMismatchError

        raise DeviceMismatchError(
            f"{where}: a {type(value).__name__} met a DeviceArray; a program on the device must keep "
            "its arrays there: move them with cpsgrad.to_device (or everything to the host with cpsgrad.to_host)"
        )
    return value


def unbroadcast(adjoint, like: DeviceArray):
    """`adjoint` summed over the axes broadcasting added to `like`, in `like`'s shape and dtype."""
    shape, dtype = like.shape, like.dtype
    if _number(adjoint):  # a scalar standing for a broadcast value
        return full(shape, dtype, float(adjoint))
    if isinstance(adjoint, tuple) and shape and len(adjoint) == shape[0]:
        # a SequenceAdjoint: one adjoint an element along the first axis (a loop over the array)
        return np.stack([unbroadcast(part, _Like(shape[1:], dtype)) for part in adjoint])
    adjoint = _device(adjoint, "unbroadcast")
    if adjoint.dtype != dtype:
        adjoint = adjoint.astype(dtype)
    if adjoint.shape == shape:
        return adjoint
    if adjoint.ndim < len(shape):
        return np.broadcast_to(adjoint, shape)
    from cpsgrad.kernels.cuda.layout import sum_to_shape

    return wrap(sum_to_shape(adjoint.raw, shape))


class _Like:
    """A stand-in with a shape and a dtype, for `unbroadcast` to conform an element's adjoint to."""

    __slots__ = ("dtype", "shape")

    def __init__(self, shape: tuple, dtype):
        self.shape, self.dtype = shape, dtype


def add(total, contribution):
    """`total + contribution` where one is a DeviceArray and the other may be a SequenceAdjoint
    (the adjoint of an array iterated over: one adjoint a row), stacked on the device first."""
    if isinstance(total, tuple) and type(contribution) is DeviceArray:
        total = unbroadcast(total, contribution)
    elif isinstance(contribution, tuple) and type(total) is DeviceArray:
        contribution = unbroadcast(contribution, total)
    return total + contribution


def _kept(adjoint: DeviceArray, shape: tuple, axis, keepdims: bool) -> DeviceArray:
    """A reduction's adjoint with the reduced axes put back as size 1."""
    from cpsgrad.kernels.cpu.shapes import reduction_axes

    axes = reduction_axes("sum", shape, axis)
    kept = tuple(1 if a in axes else size for a, size in enumerate(shape))
    return adjoint if adjoint.shape == kept else adjoint.reshape(kept)


def sum_adjoint(adjoint, x: DeviceArray, axis, keepdims: bool, count: int = 1):
    """`np.sum` backward (`np.mean`'s with `count` the number of elements averaged): the
    adjoint (over `count`) repeated over the reduced axes."""
    if _number(adjoint):
        return full(x.shape, x.dtype, float(adjoint) / count)
    adjoint = _device(adjoint, "sum_adjoint")
    if adjoint.dtype != x.dtype:
        adjoint = adjoint.astype(x.dtype)
    if count != 1:
        adjoint = adjoint / count
    from cpsgrad.kernels.cuda.layout import broadcast

    return wrap(broadcast(_kept(adjoint, x.shape, axis, keepdims).raw, x.shape))


def extremum_adjoint(adjoint, x: DeviceArray, result, axis):
    """`np.max`/`np.min` backward: the adjoint shared equally among the elements equal to the
    result (the CUDA max backward, from `x` and the result)."""
    from cpsgrad.kernels.cuda.reductions import ties_backward

    result = _device(result, "extremum_adjoint")
    if not _number(adjoint):
        adjoint = _device(adjoint, "extremum_adjoint")
        adjoint = (adjoint if adjoint.dtype == x.dtype else adjoint.astype(x.dtype)).raw
    return wrap(ties_backward(adjoint, x.raw, result.raw, axis))


def elementwise_adjoint(op: str, adjoint, saved: DeviceArray, x):
    """The adjoint of `x` in `y = np.<op>(x)` by the fused CUDA backward kernel of `op`."""
    from cpsgrad.kernels.cuda.elementwise import backward_from

    if _number(adjoint):
        adjoint = full(saved.shape, saved.dtype, float(adjoint))
    adjoint = _device(adjoint, op)
    if adjoint.shape != saved.shape:
        adjoint = np.broadcast_to(adjoint, saved.shape)
    if adjoint.dtype != saved.dtype:
        adjoint = adjoint.astype(saved.dtype)
    result = wrap(backward_from(op, adjoint.raw, saved.raw))
    return unbroadcast(result, x) if type(x) is DeviceArray else result


# ---- matrix products -----------------------------------------------------------------------------


def _product(a: DeviceArray, b: DeviceArray, shape: tuple, transpose_a=False, transpose_b=False) -> DeviceArray:
    """`op(a) @ op(b)` of two matrices by the tiled CUDA product, reshaped to `shape`."""
    from cpsgrad.kernels.cuda.linalg import product

    a3, b3 = a.raw.reshape(1, *a.shape), b.raw.reshape(1, *b.shape)
    return wrap(product(a3, b3, transpose_a, transpose_b).reshape(shape))


def _operands(z_d, x, y):
    """`z_d`, `x`, `y` as DeviceArrays of one dtype (`z_d` a number: filled to `x @ y`'s shape)."""
    x, y = _device(x, "matmul"), _device(y, "matmul")
    if _number(z_d):
        z_d = full(_matmul_shape(x.shape, y.shape), x.dtype, float(z_d))
    z_d = _device(z_d, "matmul")
    if z_d.dtype != x.dtype:
        z_d = z_d.astype(x.dtype)
    return z_d, x, y


def _matmul_shape(a: tuple, b: tuple) -> tuple:
    """The shape of `x @ y` for operands of shapes `a` and `b` (numpy's rules)."""
    batch = np.broadcast_shapes(a[:-2], b[:-2])
    rows = a[-2:-1] if len(a) > 1 else ()
    columns = b[-1:] if len(b) > 1 else ()
    return batch + rows + columns


def matmul_left(z_d, x, y):
    """The adjoint of `x` in `z = x @ y`: transposed products, no transposed copies."""
    z_d, x, y = _operands(z_d, x, y)
    if x.ndim == 2 and y.ndim == 2:  # z_d @ y.T
        return _product(z_d, y, x.shape, transpose_b=True)
    if x.ndim == 2 and y.ndim == 1:  # the outer product z_d y
        return _product(z_d.reshape(-1, 1), y.reshape(1, -1), x.shape)
    if x.ndim == 1 and y.ndim == 2:  # y @ z_d
        return _product(y, z_d.reshape(-1, 1), x.shape)
    if x.ndim == 1 and y.ndim == 1:
        return z_d * y
    return _batched_matmul(z_d, x, y)[0]


def matmul_right(z_d, x, y):
    """The adjoint of `y` in `z = x @ y`."""
    z_d, x, y = _operands(z_d, x, y)
    if x.ndim == 2 and y.ndim == 2:  # x.T @ z_d
        return _product(x, z_d, y.shape, transpose_a=True)
    if x.ndim == 2 and y.ndim == 1:  # x.T @ z_d
        return _product(x, z_d.reshape(-1, 1), y.shape, transpose_a=True)
    if x.ndim == 1 and y.ndim == 2:  # the outer product x z_d
        return _product(x.reshape(-1, 1), z_d.reshape(1, -1), y.shape)
    if x.ndim == 1 and y.ndim == 1:
        return z_d * x
    return _batched_matmul(z_d, x, y)[1]


def _batched_matmul(z_d, x, y) -> tuple:
    """Both adjoints of a batched product by the table's matmul backward (one more forward)."""
    from cpsgrad.kernels.table import dispatch

    kernel = dispatch("matmul", x, y)
    _, saved = kernel.forward(x, y)
    return kernel.backward(z_d, saved)


def _outer_adjoint(adjoint, x, y) -> DeviceArray:
    if _number(adjoint):
        dtype = _dtype(x, y)
        return full((int(np.size(x)), int(np.size(y))), dtype, float(adjoint))
    return _device(adjoint, "outer")


def outer_left(adjoint, x, y):
    """The adjoint of `x` in `np.outer(x, y)`: `adjoint @ ravel(y)`."""
    adjoint = _outer_adjoint(adjoint, x, y)
    return unbroadcast((adjoint @ np.ravel(y)).reshape(np.shape(x)), x)


def outer_right(adjoint, x, y):
    """The adjoint of `y` in `np.outer(x, y)`: `ravel(x) @ adjoint`."""
    adjoint = _outer_adjoint(adjoint, x, y)
    return unbroadcast((np.ravel(x) @ adjoint).reshape(np.shape(y)), y)


# ---- slopes of the numpy rules -------------------------------------------------------------------


def _dtype(*values) -> np.dtype:
    return np.result_type(*(v.dtype for v in values if type(v) is DeviceArray))


def tie_share(x, other, result):
    """`np.maximum`/`np.minimum` backward: 1 where `x` was chosen, 0.5 on a tie (as JAX)."""
    dtype = _dtype(x, other, result)
    chosen = (x == result).astype(dtype)
    return chosen * np.where(other == result, full((), dtype, 0.5), full((), dtype, 1.0))


def array_sign(x: DeviceArray):
    """abs' elementwise: 1 at x >= 0 (abs'(0) = 1, as JAX), -1 below, NaN at NaN."""
    one, minus, nan = (full((), x.dtype, value) for value in (1.0, -1.0, math.nan))
    return np.where(x >= 0, one, np.where(x < 0, minus, nan))


def array_power_slope(base, exponent):
    """d(b**e)/db elementwise: e * b**(e-1), 0 where e == 0 (inf at b == 0 for 0 < e < 1)."""
    if _number(exponent):
        if exponent == 0:
            return zeros(np.shape(base), _dtype(base))
        return exponent * base ** (exponent - 1)
    slope = exponent * base ** (exponent - 1)
    return np.where(exponent == 0, full((), slope.dtype, 0.0), slope)


def array_log_for_power(base):
    """d(b**e)/de / b**e elementwise: log(b), 0 at b == 0, NaN for b < 0."""
    if _number(base):
        value = float(base)
        return math.log(value) if value > 0 else (0.0 if value == 0 else math.nan)
    at_zero = base == 0
    zero, one = full((), base.dtype, 0.0), full((), base.dtype, 1.0)
    return np.where(at_zero, zero, np.log(np.where(at_zero, one, base)))


# ---- sequences and results ---------------------------------------------------------------------


def pieces(adjoint: DeviceArray, sizes: list[int], axis: int) -> list:
    """`adjoint` cut along `axis` into consecutive pieces of `sizes` (`np.split`'s pieces)."""
    axis = axis % adjoint.ndim
    parts, start = [], 0
    for size in sizes:
        parts.append(adjoint[(slice(None),) * axis + (slice(start, start + size),)])
        start += size
    return parts


def as_gradient(argument: DeviceArray, adjoint):
    """The gradient of a DeviceArray argument: a DeviceArray of its shape and dtype (device
    zeros for the symbolic zero)."""
    if _number(adjoint):
        return full(argument.shape, argument.dtype, float(adjoint))
    return unbroadcast(adjoint, argument)
