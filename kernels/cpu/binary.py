"""Broadcasting binary ops and ``where``.

Forwards are numpy ufuncs (already one pass, with numpy's broadcasting and promotion); the
backwards of div, pow, maximum and minimum are fused numba loops that produce both adjoints in
one pass over the broadcast shape, then sum broadcast axes away. Ties in maximum and minimum
give half the adjoint to each side (JAX's convention).
"""

import math

import numpy as np

from cpsgrad.kernels.cpu.jit import serial
from cpsgrad.kernels.cpu.shapes import flat, unbroadcast


def _call(op, ufunc, a, b):
    try:
        return ufunc(a, b)
    except ValueError:
        raise ValueError(
            f"{op}: operands could not be broadcast together with shapes "
            f"{np.shape(a)} {np.shape(b)}"
        ) from None


def _meta(a):
    return np.shape(a), np.result_type(a)


def _full(a, shape, dtype):
    return flat(np.broadcast_to(a, shape), dtype)


def _fused(kernel, grad, a, b, y):
    """Run a two-adjoint kernel over the broadcast shape; return adjoints shaped like a and b."""
    shape, dtype = y.shape, y.dtype
    if np.shape(grad) != shape:
        raise ValueError(f"adjoint shape {np.shape(grad)} does not match output {shape}")
    grad_a = np.empty(y.size, dtype)
    grad_b = np.empty(y.size, dtype)
    kernel(flat(grad, dtype), _full(a, shape, dtype), _full(b, shape, dtype), flat(y), grad_a, grad_b)
    return (
        unbroadcast(grad_a.reshape(shape), np.shape(a), np.result_type(a)),
        unbroadcast(grad_b.reshape(shape), np.shape(b), np.result_type(b)),
    )


@serial
def _div_grad(g, a, b, y, grad_a, grad_b):
    for i in range(y.size):
        grad_a[i] = g[i] / b[i]
        grad_b[i] = -g[i] * y[i] / b[i]


@serial
def _pow_grad(g, a, b, y, grad_a, grad_b):
    # JAX: d/da is 0 where b == 0; d/db uses log(1) where a == 0.
    for i in range(y.size):
        grad_a[i] = 0 if b[i] == 0 else g[i] * b[i] * a[i] ** (b[i] - 1)
        grad_b[i] = g[i] * y[i] * (0 if a[i] == 0 else math.log(a[i]))


@serial
def _chooser_grad(g, a, b, y, grad_a, grad_b):
    for i in range(y.size):
        if a[i] == b[i]:
            grad_a[i] = grad_b[i] = 0.5 * g[i]
        elif a[i] == y[i]:
            grad_a[i] = g[i]
            grad_b[i] = 0
        else:
            grad_a[i] = 0
            grad_b[i] = g[i]


def add_forward(a, b):
    return _call("add", np.add, a, b), (_meta(a), _meta(b))


def add_backward(grad, saved):
    (shape_a, dtype_a), (shape_b, dtype_b) = saved
    return unbroadcast(grad, shape_a, dtype_a), unbroadcast(grad, shape_b, dtype_b)


def sub_forward(a, b):
    return _call("sub", np.subtract, a, b), (_meta(a), _meta(b))


def sub_backward(grad, saved):
    (shape_a, dtype_a), (shape_b, dtype_b) = saved
    return unbroadcast(grad, shape_a, dtype_a), unbroadcast(-grad, shape_b, dtype_b)


def mul_forward(a, b):
    return _call("mul", np.multiply, a, b), (a, b)


def mul_backward(grad, saved):
    a, b = saved
    return (
        unbroadcast(grad * b, np.shape(a), np.result_type(a)),
        unbroadcast(grad * a, np.shape(b), np.result_type(b)),
    )


def div_forward(a, b):
    y = _call("div", np.divide, a, b)
    return y, (a, b, y)


def div_backward(grad, saved):
    return _fused(_div_grad, grad, *saved)


def pow_forward(a, b):
    y = _call("pow", np.power, a, b)
    return y, (a, b, y)


def pow_backward(grad, saved):
    return _fused(_pow_grad, grad, *saved)


def maximum_forward(a, b):
    y = _call("maximum", np.maximum, a, b)
    return y, (a, b, y)


def maximum_backward(grad, saved):
    return _fused(_chooser_grad, grad, *saved)


def minimum_forward(a, b):
    y = _call("minimum", np.minimum, a, b)
    return y, (a, b, y)


def minimum_backward(grad, saved):
    return _fused(_chooser_grad, grad, *saved)


def where_forward(condition, a, b):
    try:
        y = np.where(condition, a, b)
    except ValueError:
        shapes = " ".join(str(np.shape(v)) for v in (condition, a, b))
        raise ValueError(f"where: operands could not be broadcast together with shapes {shapes}") from None
    return y, (condition, _meta(a), _meta(b))


def where_backward(grad, saved):
    """Adjoints of ``a`` and ``b`` (the condition is not differentiable)."""
    condition, (shape_a, dtype_a), (shape_b, dtype_b) = saved
    zero = np.zeros((), grad.dtype)
    return (
        unbroadcast(np.where(condition, grad, zero), shape_a, dtype_a),
        unbroadcast(np.where(condition, zero, grad), shape_b, dtype_b),
    )
