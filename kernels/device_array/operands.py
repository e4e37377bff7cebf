"""Operands and the arithmetic of DeviceArrays: numbers and arrays as kernel operands, numpy's
float promotion, casts, and the binary, unary, comparison and matmul operations (each one CUDA
kernel through the dispatch table)."""

from __future__ import annotations

import numpy as np

from cpsgrad.kernels.device_array.array import _MOVE, _NUMBERS, DeviceArray, _ndarray, _ops, wrap
from cpsgrad.kernels.table import DeviceMismatchError, dispatch


def _refuse_host(name: str, values) -> None:
    if any(isinstance(value, _ndarray) for value in values):
        _mixed(name)


def _mixed(name: str):
    raise DeviceMismatchError(f"{name}: a numpy (host) array mixed with a DeviceArray; {_MOVE}")


def _operand(name: str, value):
    """A raw device array or a Python float for a kernel operand; NotImplemented for a type
    that is not an array or a number; a host array raises."""
    kind = type(value)
    if kind is DeviceArray:
        return value._array
    if kind in _NUMBERS:
        return value
    if isinstance(value, np.generic) and value.dtype.kind in "fiub":
        return value.item()
    if isinstance(value, _ndarray):
        _mixed(name)
    if hasattr(value, "copy_to_host"):  # a raw device array
        return value
    return NotImplemented


def _promote(name: str, a, b):
    """Both operands in one float dtype (numpy's promotion for arrays; numbers are weak)."""
    first, second = getattr(a, "dtype", None), getattr(b, "dtype", None)
    if first is None and second is None:
        return a, b
    target = np.result_type(*(d for d in (first, second) if d is not None))
    if target.kind == "b":
        target = np.dtype(np.float64)  # a bool array with a number: numpy gives float64
    if target.kind != "f":
        return a, b  # the table words the dtype error
    if first is not None and first != target:
        a = _cast_raw(a, target)
    if second is not None and second != target:
        b = _cast_raw(b, target)
    return a, b


def _run(op: str, *raw, **params):
    return wrap(dispatch(op, *raw).forward(*raw, **params)[0])


def _binary(op: str, a, b):
    a, b = _operand(op, a), _operand(op, b)
    if a is NotImplemented or b is NotImplemented:
        return NotImplemented
    a, b = _promote(op, a, b)
    return _run(op, a, b)


def _unary(op: str, x):
    x = _operand(op, x)
    if x is NotImplemented:
        return NotImplemented
    if type(x) in _NUMBERS:
        raise TypeError(f"{op}: expected a DeviceArray, got a number")
    if x.dtype.kind == "b":
        x = _cast_raw(x, np.float64)
    return _run(op, x)


def _compare(name: str, a, b):
    a, b = _operand(name, a), _operand(name, b)
    if a is NotImplemented or b is NotImplemented:
        return NotImplemented
    a, b = _promote(name, a, b)
    from cpsgrad.kernels.cuda.compare import compare

    return wrap(compare(name, a, b))


def _logical_not(x):
    from cpsgrad.kernels.cuda.compare import logical_not

    return wrap(logical_not(_device_operand("logical_not", x)))


def _device_operand(name: str, value):
    raw = _operand(name, value)
    if raw is NotImplemented or type(raw) in _NUMBERS:
        raise TypeError(f"{name}: expected a DeviceArray, got {type(value).__name__}")
    return raw


def _cast_raw(raw, dtype):
    from cpsgrad.kernels.cuda.compare import cast

    dtype = np.dtype(dtype)
    if dtype.kind != "f" or raw.dtype.kind not in "bf":
        raise TypeError(f"astype: DeviceArrays cast between bool, float32 and float64 only, not {raw.dtype} to {dtype}")
    return cast(raw, dtype)


def _cast(x, dtype) -> DeviceArray:
    return wrap(_cast_raw(_device_operand("astype", x), dtype))


def _matmul(a, b):
    a, b = _operand("matmul", a), _operand("matmul", b)
    if a is NotImplemented or b is NotImplemented:
        return NotImplemented
    if type(a) in _NUMBERS or type(b) in _NUMBERS:
        raise ValueError("matmul: a number is not a matrix (operands must be at least 1-D)")
    a, b = _promote("matmul", a, b)
    return _run("matmul", a, b)


def _ndim(value) -> int:
    return value.ndim if isinstance(value, DeviceArray) else np.ndim(value)


def _dot(a, b):
    """``np.dot`` where it is a product (a 0-d operand) or a matmul (operands of at most 2-D)."""
    ndims = (_ndim(a), _ndim(b))
    if 0 in ndims:
        return _binary("mul", a, b)
    if max(ndims) > 2:
        raise TypeError(f"numpy.dot of {ndims[0]}-d and {ndims[1]}-d DeviceArrays is not supported; use np.matmul")
    return _matmul(a, b)


_ops.install(
    binary=_binary,
    unary=_unary,
    compare=_compare,
    matmul=_matmul,
    dot=_dot,
    cast=_cast,
    refuse_host=_refuse_host,
)
