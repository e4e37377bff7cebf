"""The adjoints of `x @ y`: `matmul_left` (which `accumulate_matmul_left` adds into a total in
place, so generated code names it) and `matmul_right`. The other products' adjoints sit beside
their templates in cpsgrad/rules/numpy/products.py.
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
