"""Derivative rules for numpy's products, `np.matmul`, `np.dot`, `np.inner`, `np.vdot`, `np.outer`, and the
adjoints of the last three (`x @ y`'s are cpsgrad_runtime's `matmul_left`/`matmul_right`).
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.rules.registry import rule
from cpsgrad.runtime import device as _device
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import unbroadcast
from cpsgrad.runtime.linalg import matmul_left, matmul_right

# ---- products ---------------------------------------------------------------------------------


@rule(np.matmul)
def matmul(x, y):
    z = np.matmul(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.matmul_left(z_d, x, y)
    y_d += cpsgrad_runtime.matmul_right(z_d, x, y)


@rule(np.ndarray.dot)
@rule(np.dot)
def dot(a, b):
    y = np.dot(a, b)
    y_d = yield y
    a_d += dot_left(y_d, a, b)
    b_d += dot_right(y_d, a, b)


@rule(np.inner)
def inner(a, b):
    y = np.inner(a, b)
    y_d = yield y
    a_d += inner_left(y_d, a, b)
    b_d += inner_right(y_d, a, b)


@rule(np.vdot)
def vdot(a, b):
    y = np.vdot(a, b)
    y_d = yield y
    a_d += vdot_left(y_d, a, b)
    b_d += vdot_right(y_d, a, b)


@rule(np.outer)
def outer(a, b):
    y = np.outer(a, b)
    y_d = yield y
    a_d += outer_left(y_d, a, b)
    b_d += outer_right(y_d, a, b)


# ---- helpers ----------------------------------------------------------------------------------


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


def vdot_left(adjoint, a, b):
    """The adjoint of `a` in `np.vdot(a, b)` = sum(conj(a).ravel() * b.ravel()): the product's,
    through the conjugation (JAX's convention: its transpose conjugates), in `a`'s shape."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(np.conj(np.multiply(adjoint, np.reshape(b, np.shape(a)))), a)


def vdot_right(adjoint, a, b):
    """The adjoint of `b` in `np.vdot(a, b)`: conj(a)'s values in `b`'s shape."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(np.multiply(adjoint, np.conj(np.reshape(a, np.shape(b)))), b)


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
