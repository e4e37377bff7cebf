"""Device-array helpers for the CUDA kernels: allocation, fill, reshape, operand checks.

Nothing here calls numpy on a device array (under the simulator that silently returns host
arrays); numpy only builds small host-side metadata.
"""

import math

import numpy as np
from numba import cuda

from cpsgrad.kernels.cuda.jit import kernel, launch


@kernel("void({f}[::1], float64)")
def _fill(out, value):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = value


def empty(shape, dtype):
    """An uninitialised C-contiguous device array."""
    return cuda.device_array(tuple(shape), np.dtype(dtype))


def full(shape, dtype, value: float):
    """A device array of ``shape`` filled with ``value``."""
    out = empty(shape, dtype)
    launch(_fill, out.size, out.reshape(out.size), float(value))
    return out


def zeros(shape, dtype):
    return full(shape, dtype, 0.0)


def size_of(shape) -> int:
    return math.prod(shape)


def metadata(rows) -> object:
    """Small integer metadata (shapes, strides) as an int64 device matrix."""
    return cuda.to_device(np.ascontiguousarray(rows, dtype=np.int64))


def flat(array):
    """The C-contiguous device array as 1-D."""
    return array.reshape(array.size)


def contiguous(op: str, array):
    """Check that ``array`` is a C-contiguous device array (views must be copied by the caller)."""
    if not array.is_c_contiguous():
        raise ValueError(f"{op}: device arrays must be C-contiguous, got strides {array.strides}")
    return array


def operand(op: str, value, dtype):
    """A device operand of ``dtype``: device arrays pass (same dtype), Python numbers are moved."""
    if hasattr(value, "copy_to_host"):
        if value.dtype != dtype:
            raise TypeError(f"{op}: device operands must share one dtype, got {value.dtype} and {dtype}")
        return contiguous(op, value)
    if isinstance(value, np.ndarray):
        raise TypeError(f"{op}: host array mixed with device arrays; move it with cpsgrad.kernels.to_device")
    return cuda.to_device(np.full(1, value, dtype)).reshape(())


def adjoint(op: str, grad, shape, dtype):
    """Check an output adjoint: a device array of the output's shape and dtype."""
    grad = operand(op, grad, dtype)
    if tuple(grad.shape) != tuple(shape):
        raise ValueError(f"{op}: adjoint shape {grad.shape} does not match output {tuple(shape)}")
    return grad


def raise_if_flagged(flag, error: Exception) -> None:
    """Read a one-element device flag (a synchronising copy) and raise ``error`` if it is set."""
    if flag.copy_to_host()[0]:
        raise error
