"""Indexing DeviceArrays: basic indices as strided views copied by one kernel, integer arrays
through the gather kernel, and the adjoint of an indexed read."""

from __future__ import annotations

import operator

import numpy as np

from cpsgrad.kernels.device_array.array import _MOVE, _NUMBERS, DeviceArray, _ndarray, _ops, wrap
from cpsgrad.kernels.device_array.operands import _cast_raw, _operand, _run
from cpsgrad.kernels.device_array.shaping import _broadcast_to, full, zeros
from cpsgrad.kernels.table import dispatch


def basic_view(shape: tuple, index) -> tuple[tuple, list, int] | None:
    """``(shape, element strides, start offset)`` of ``x[index]`` in a C-contiguous ``x`` of
    ``shape`` for a basic index (ints, slices, None, Ellipsis); None for any other index."""
    parts = index if type(index) is tuple else (index,)
    if any(not _basic(part) for part in parts):
        return None
    if sum(part is Ellipsis for part in parts) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(part is not None and part is not Ellipsis for part in parts)
    if used > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but {used} were indexed")
    if Ellipsis in parts:
        at = next(i for i, part in enumerate(parts) if part is Ellipsis)
        parts = parts[:at] + (slice(None),) * (len(shape) - used) + parts[at + 1 :]
    else:
        parts = parts + (slice(None),) * (len(shape) - used)
    strides, step = [0] * len(shape), 1
    for axis in range(len(shape) - 1, -1, -1):
        strides[axis] = step
        step *= shape[axis]
    out_shape, out_strides, start, axis = [], [], 0, 0
    for part in parts:
        if part is None:
            out_shape.append(1)
            out_strides.append(0)
            continue
        size = shape[axis]
        if isinstance(part, slice):
            first, stop, stride = part.indices(size)
            length = len(range(first, stop, stride))
            if length:
                start += first * strides[axis]
            out_shape.append(length)
            out_strides.append(stride * strides[axis])
        else:
            position = operator.index(part)
            if not -size <= position < size:
                raise IndexError(f"index {position} is out of bounds for axis {axis} with size {size}")
            start += (position % size) * strides[axis]
        axis += 1
    return tuple(out_shape), out_strides, start


def _basic(part) -> bool:
    if part is None or part is Ellipsis or isinstance(part, slice):
        return True
    return isinstance(part, (int, np.integer)) and not isinstance(part, (bool, np.bool_))


def _getitem(x: DeviceArray, index):
    raw = x._array
    view = basic_view(tuple(raw.shape), index)
    if view is not None:
        shape, strides, start = view
        from cpsgrad.kernels.cuda.layout import gather_view

        if raw.dtype.kind == "b":
            raise TypeError("indexing a bool DeviceArray is not supported")
        return wrap(gather_view(raw, shape, strides, start))
    indices = _indices(index)
    return _run("gather", raw, indices, axis=0)


def _indices(index):
    """An integer index array on the device for the gather kernel: a DeviceArray's, or a numpy
    array or list of ints copied there (indices are small metadata, as the kernel takes them)."""
    if type(index) is DeviceArray:
        index = index._array
    elif isinstance(index, list):
        index = np.asarray(index)
    dtype = getattr(index, "dtype", None)
    if dtype is None or dtype.kind not in "iu":
        kind = "a boolean mask" if dtype is not None and dtype.kind == "b" else f"the index {index!r}"
        raise TypeError(
            f"DeviceArray indexing takes ints, slices, None, ... and integer arrays (on the first "
            f"axis); {kind} is not supported on the device; {_MOVE}"
        )
    if isinstance(index, _ndarray):
        from cpsgrad.kernels.cuda.transfer import to_device as move

        index = move(index.astype(np.int64, copy=False))
    return index


def index_adjoint(container: DeviceArray, index, adjoint) -> DeviceArray:
    """The adjoint of ``container`` when only ``container[index]`` was read: zeros with the
    adjoint written (basic index) or scatter-added (integer arrays: repeats add up) in place."""
    raw = container._array
    view = basic_view(tuple(raw.shape), index)
    if view is None:
        indices = _indices(index)
        kernel = dispatch("gather", raw, indices)
        output, saved = kernel.forward(raw, indices, axis=0)
        return wrap(kernel.backward(_conformed(adjoint, tuple(output.shape), raw.dtype), saved)[0])
    from cpsgrad.kernels.cuda.layout import scatter_view

    shape, strides, start = view
    result = zeros(raw.shape, raw.dtype)
    scatter_view(_conformed(adjoint, shape, raw.dtype), result._array.reshape(result.size), strides, start)
    return result


def conformed(value, shape, dtype) -> DeviceArray:
    """``value`` (a number or a device array) as a DeviceArray of ``shape`` and ``dtype``."""
    return wrap(_conformed(value, tuple(shape), np.dtype(dtype)))


def _conformed(value, shape, dtype):
    """``value`` (a number or a DeviceArray) as a raw device array of ``shape`` and ``dtype``."""
    raw = _operand("adjoint", value)
    if raw is NotImplemented:
        raise TypeError(f"expected a DeviceArray or a number, got {type(value).__name__}")
    if type(raw) in _NUMBERS:
        return full(shape, dtype, raw)._array
    if raw.dtype != dtype:
        raw = _cast_raw(raw, dtype)
    if tuple(raw.shape) != tuple(shape):
        return _broadcast_to(wrap(raw), shape)._array
    return raw


_ops.install(getitem=_getitem)
