"""The adjoints of products: `@`, `np.dot`, `np.inner`, `np.outer`, `np.trace`.
"""

from __future__ import annotations

import numpy as np

from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.runtime import device as _device
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import unbroadcast

_ndarray = np.ndarray


def matmul_left(z_d, x, y):
    """The adjoint of `x` in `z = x @ y` (vectors, matrices and stacks of them, broadcast)."""
    if type(x) is _ndarray and type(y) is _ndarray and type(z_d) is _ndarray and x.dtype is y.dtype is z_d.dtype:
        if x.ndim == 2 and y.ndim == 1:  # matrix @ vector: an outer product (BLAS beats broadcasting)
            return np.dot(z_d[:, None], y[None, :])
        if x.ndim == 2 and y.ndim == 2:
            return z_d @ y.T
    if is_zero(z_d):
        return 0.0
    if type(x) is DeviceArray or type(y) is DeviceArray:
        return unbroadcast(_device.matmul_left(z_d, x, y), x)
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
    if type(x) is _ndarray and type(y) is _ndarray and type(z_d) is _ndarray and x.dtype is y.dtype is z_d.dtype:
        if x.ndim == 2 and y.ndim == 1:  # matrix @ vector
            return z_d @ x
        if x.ndim == 2 and y.ndim == 2:
            return x.T @ z_d
    if is_zero(z_d):
        return 0.0
    if type(x) is DeviceArray or type(y) is DeviceArray:
        return unbroadcast(_device.matmul_right(z_d, x, y), y)
    x_ndim, y_ndim = np.ndim(x), np.ndim(y)
    if x_ndim == 1 and y_ndim == 1:
        return unbroadcast(z_d * x, y)
    if x_ndim == 1:  # (n,) @ (..., n, m) -> (..., m)
        return unbroadcast(x[:, None] * z_d[..., None, :], y)
    if y_ndim == 1:  # (..., n, k) @ (k,) -> (..., n)
        return unbroadcast(np.matmul(np.swapaxes(x, -1, -2), z_d[..., None])[..., 0], y)
    return unbroadcast(np.matmul(np.swapaxes(x, -1, -2), z_d), y)


def trace_adjoint(adjoint, x, offset, axis1, axis2):
    """`np.trace` backward: the adjoint on the summed diagonal, zero elsewhere."""
    if is_zero(adjoint):
        return 0.0
    shape = np.shape(x)
    diagonal = np.eye(shape[axis1], shape[axis2], k=offset)
    spread = np.asarray(adjoint)[..., None, None] * diagonal
    return unbroadcast(np.moveaxis(spread, (-2, -1), (axis1 % len(shape), axis2 % len(shape))), x)


def dot_left(adjoint, x, y):
    """The adjoint of `x` in `np.dot(x, y)`: x's last axis meets y's second to last (its only
    axis when 1-d); a scalar factor is an elementwise product."""
    if is_zero(adjoint):
        return 0.0
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(np.multiply(adjoint, y), x)
    if type(x) is DeviceArray or type(y) is DeviceArray:  # at most 2-D: the matmul's
        return matmul_left(adjoint, x, y)
    contracted = max(np.ndim(y) - 2, 0)
    y_free = [a for a in range(np.ndim(y)) if a != contracted]
    return unbroadcast(np.tensordot(adjoint, y, axes=(list(range(np.ndim(x) - 1, np.ndim(adjoint))), y_free)), x)


def dot_right(adjoint, x, y):
    """The adjoint of `y` in `np.dot(x, y)`."""
    if is_zero(adjoint):
        return 0.0
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(np.multiply(adjoint, x), y)
    if type(x) is DeviceArray or type(y) is DeviceArray:  # at most 2-D: the matmul's
        return matmul_right(adjoint, x, y)
    x_free = list(range(np.ndim(x) - 1))
    summed = np.tensordot(x, adjoint, axes=(x_free, x_free))
    return unbroadcast(np.moveaxis(summed, 0, max(np.ndim(y) - 2, 0)), y)


def inner_left(adjoint, x, y):
    """The adjoint of `x` in `np.inner(x, y)`: the last axes of x and y meet."""
    if is_zero(adjoint):
        return 0.0
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(np.multiply(adjoint, y), x)
    y_free = list(range(np.ndim(y) - 1))
    return unbroadcast(np.tensordot(adjoint, y, axes=(list(range(np.ndim(x) - 1, np.ndim(adjoint))), y_free)), x)


def inner_right(adjoint, x, y):
    """The adjoint of `y` in `np.inner(x, y)`."""
    if is_zero(adjoint):
        return 0.0
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(np.multiply(adjoint, x), y)
    x_free = list(range(np.ndim(x) - 1))
    return unbroadcast(np.tensordot(adjoint, x, axes=(x_free, x_free)), y)


def outer_left(adjoint, x, y):
    """The adjoint of `x` in `np.outer(x, y)` (both flattened)."""
    if is_zero(adjoint):
        return 0.0
    if type(x) is DeviceArray or type(y) is DeviceArray:
        return _device.outer_left(adjoint, x, y)
    return unbroadcast(np.reshape(np.asarray(adjoint) @ np.ravel(y), np.shape(x)), x)


def outer_right(adjoint, x, y):
    """The adjoint of `y` in `np.outer(x, y)`."""
    if is_zero(adjoint):
        return 0.0
    if type(x) is DeviceArray or type(y) is DeviceArray:
        return _device.outer_right(adjoint, x, y)
    return unbroadcast(np.reshape(np.ravel(x) @ np.asarray(adjoint), np.shape(y)), y)
