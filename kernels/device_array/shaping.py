"""Reductions, shape functions (reshape, transpose, broadcast_to, concatenate, ...), where,
clip and the constructors (``full``, ``zeros``, the ``*_like`` functions) of DeviceArrays."""

from __future__ import annotations

import math

import numpy as np

from cpsgrad.kernels.device_array.array import _MOVE, _NUMBERS, DeviceArray, _ops, wrap
from cpsgrad.kernels.device_array.operands import (
    _binary,
    _cast,
    _cast_raw,
    _device_operand,
    _operand,
    _promote,
    _run,
)


def _axis(axis):
    if axis is None or isinstance(axis, (int, np.integer)):
        return None if axis is None else int(axis)
    return tuple(int(a) for a in axis)


def _reduction(op: str, x, axis=None, keepdims=False, dtype=None, out=None):
    raw = _device_operand(op, x)
    if out is not None:
        raise TypeError(f"{op}: out= is not supported on a DeviceArray")
    if dtype is not None and np.dtype(dtype) != raw.dtype:
        raise TypeError(f"{op}: dtype= other than the array's is not supported on a DeviceArray")
    if raw.dtype.kind == "b":
        raw = _cast_raw(raw, np.float64)
    return _run(op, raw, axis=_axis(axis), keepdims=bool(keepdims))


def _sum(a, axis=None, dtype=None, out=None, keepdims=False, **unsupported):
    _no_keywords("sum", unsupported)
    return _reduction("sum", a, axis, keepdims, dtype, out)


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, **unsupported):
    _no_keywords("mean", unsupported)
    return _reduction("mean", a, axis, keepdims, dtype, out)


def _max(a, axis=None, out=None, keepdims=False, **unsupported):
    _no_keywords("max", unsupported)
    return _reduction("max", a, axis, keepdims, None, out)


def _min(a, axis=None, out=None, keepdims=False, **unsupported):
    _no_keywords("min", unsupported)
    return _reduction("min", a, axis, keepdims, None, out)


def _no_keywords(name: str, keywords: dict) -> None:
    if keywords:
        raise TypeError(f"numpy.{name}: keyword {', '.join(sorted(keywords))} is not supported on a DeviceArray")


def _new_shape(name: str, size: int, shape) -> tuple[int, ...]:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise ValueError(f"{name}: can only specify one unknown dimension")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or size % known:
            raise ValueError(f"{name}: cannot reshape array of size {size} into shape {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if math.prod(shape) != size:
        raise ValueError(f"{name}: cannot reshape array of size {size} into shape {shape}")
    return shape


def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    raw = _device_operand("reshape", a)
    if order != "C":
        raise TypeError(f"reshape: order={order!r} is not supported on a DeviceArray (C order only)")
    shape = newshape if shape is None else shape
    return wrap(raw.reshape(_new_shape("reshape", math.prod(raw.shape), shape)))


def _ravel(a, order="C"):
    return _reshape(a, (a.size,), order)


def _squeeze(a, axis=None):
    shape = a.shape
    if axis is None:
        dropped = {i for i, s in enumerate(shape) if s == 1}
    else:
        dropped = {int(x) % len(shape) for x in ((axis,) if isinstance(axis, (int, np.integer)) else axis)}
        if any(shape[i] != 1 for i in dropped):
            raise ValueError("squeeze: cannot select an axis to squeeze out which has size not equal to one")
    return _reshape(a, tuple(s for i, s in enumerate(shape) if i not in dropped))


def _expand_dims(a, axis):
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    ndim = a.ndim + len(axes)
    placed = {int(x) % ndim for x in axes}
    sizes = iter(a.shape)
    return _reshape(a, tuple(1 if i in placed else next(sizes) for i in range(ndim)))


def _transpose(a, axes=None):
    raw = _device_operand("transpose", a)
    if axes is not None:
        axes = tuple(int(x) for x in axes)
    if raw.dtype.kind == "b":
        raise TypeError("transpose: bool DeviceArrays are not supported")
    if len(raw.shape) < 2 and axes in (None, (0,), (-1,), ()):
        return wrap(raw)
    return _run("transpose", raw, axes=axes)


def _swapaxes(a, axis1, axis2):
    order = list(range(a.ndim))
    first, second = int(axis1) % a.ndim, int(axis2) % a.ndim
    order[first], order[second] = order[second], order[first]
    return _transpose(a, order)


def _moveaxis(a, source, destination):
    sources = [int(s) % a.ndim for s in ((source,) if isinstance(source, (int, np.integer)) else source)]
    targets = [int(d) % a.ndim for d in ((destination,) if isinstance(destination, (int, np.integer)) else destination)]
    order = [axis for axis in range(a.ndim) if axis not in sources]
    for target, axis in sorted(zip(targets, sources, strict=True)):
        order.insert(target, axis)
    return _transpose(a, order)


def _broadcast_to(array, shape, subok=False):
    raw = _device_operand("broadcast_to", array)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    from cpsgrad.kernels.cuda.layout import broadcast, broadcast_shape

    if broadcast_shape("broadcast_to", raw.shape, shape) != shape:
        raise ValueError(f"broadcast_to: cannot broadcast shape {tuple(raw.shape)} to {shape}")
    if tuple(raw.shape) == shape:
        return wrap(raw)
    return wrap(broadcast(raw, shape))


def _outer(a, b, out=None):
    a, b = _device_operand("outer", a), _device_operand("outer", b)
    a, b = _promote("outer", a, b)
    return _run("outer", a, b)


def _sequence(name: str, arrays) -> list:
    raws = [_operand(name, array) for array in arrays]
    if any(raw is NotImplemented or type(raw) in _NUMBERS for raw in raws):
        raise TypeError(f"{name}: every array must be a DeviceArray")
    dtype = np.result_type(*(raw.dtype for raw in raws))
    return [raw if raw.dtype == dtype else _cast_raw(raw, dtype) for raw in raws]


def _concatenate(arrays, axis=0, out=None, **unsupported):
    _no_keywords("concatenate", unsupported)
    raws = _sequence("concatenate", arrays)
    if axis is None:
        raws = [raw.reshape(math.prod(raw.shape)) for raw in raws]
        axis = 0
    return _run("concatenate", *raws, axis=int(axis))


def _stack(arrays, axis=0, out=None, **unsupported):
    _no_keywords("stack", unsupported)
    return _run("stack", *_sequence("stack", arrays), axis=int(axis))


def _where(condition, x=None, y=None):
    if x is None or y is None:
        raise TypeError(f"numpy.where(condition) (the indices) is not supported on a DeviceArray; {_MOVE}")
    condition = _device_operand("where", condition)
    if condition.dtype.kind != "b":
        from cpsgrad.kernels.cuda.compare import compare

        condition = compare("not_equal", condition, 0.0)
    x, y = _operand("where", x), _operand("where", y)
    if x is NotImplemented or y is NotImplemented:
        raise TypeError("numpy.where: the choices must be DeviceArrays or numbers")
    # a number takes the other choice's dtype, two numbers float64 (the kernel's operands)
    x, y = _promote("where", x, y)
    return _run("where", condition, x, y)


def _clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None, **unsupported):
    _no_keywords("clip", unsupported)
    if out is not None:
        raise TypeError("clip: out= is not supported on a DeviceArray")
    low = min if a_min is None else a_min
    high = max if a_max is None else a_max
    if low is None and high is None:
        raise ValueError("clip: one of max or min must be given")
    raw = _device_operand("clip", a)
    if all(bound is None or type(bound) in _NUMBERS or isinstance(bound, np.generic) for bound in (low, high)):
        low = -math.inf if low is None else float(low)
        high = math.inf if high is None else float(high)
        return _run("clip", raw, low, high)
    result = wrap(raw)
    if low is not None:
        result = _binary("maximum", result, low)
    if high is not None:
        result = _binary("minimum", result, high)
    return result


def _like(name: str, a, value, dtype=None, shape=None):
    raw = _device_operand(name, a)
    dtype = np.dtype(raw.dtype if dtype is None else dtype)
    return full(raw.shape if shape is None else shape, dtype, value)


def _zeros_like(a, dtype=None, order="K", subok=True, shape=None, **unsupported):
    _no_keywords("zeros_like", unsupported)
    return _like("zeros_like", a, 0.0, dtype, shape)


def _ones_like(a, dtype=None, order="K", subok=True, shape=None, **unsupported):
    _no_keywords("ones_like", unsupported)
    return _like("ones_like", a, 1.0, dtype, shape)


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **unsupported):
    _no_keywords("full_like", unsupported)
    fill = _operand("full_like", fill_value)
    if type(fill) not in _NUMBERS:
        raise TypeError("numpy.full_like: the fill value must be a number on a DeviceArray")
    return _like("full_like", a, float(fill), dtype, shape)


def _copy(a, order="K", subok=False):
    return _cast(a, a.dtype)


def _size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


def full(shape, dtype, value: float) -> DeviceArray:
    """A DeviceArray of ``shape`` and ``dtype`` (float32, float64 or bool) filled with ``value``."""
    from cpsgrad.kernels.cuda.arrays import full as fill

    dtype = np.dtype(dtype)
    shape = tuple(shape)
    if dtype.kind == "b":
        from cpsgrad.kernels.cuda.compare import compare

        return wrap(compare("not_equal", fill(shape, np.float64, float(value)), 0.0))
    return wrap(fill(shape, dtype, float(value)))


def zeros(shape, dtype) -> DeviceArray:
    return full(shape, dtype, 0.0)


_ops.install(reduction=_reduction, reshape=_reshape, squeeze=_squeeze, transpose=_transpose, clip=_clip)
