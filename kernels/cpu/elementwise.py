"""Unary elementwise ops: fused one-pass numba loops over the flattened array.

Each forward saves what its backward reads (the input or the output), so the backward is one
more pass with no temporaries. Kinks follow JAX: abs'(0) = 1, relu'(0) = 0, leaky_relu'(0) = 1,
and clip at a bound gives 0.5.
"""

import math

import numpy as np

from cpsgrad.kernels.cpu.jit import serial
from cpsgrad.kernels.cpu.shapes import flat


def _apply(kernel, x, *params):
    source = flat(x)
    out = np.empty_like(source)
    kernel(source, out, *params)
    return out.reshape(np.shape(x))


def _adjoint(kernel, grad, saved, *params):
    if np.shape(grad) != saved.shape:
        raise ValueError(f"adjoint shape {np.shape(grad)} does not match output {saved.shape}")
    source = flat(saved)
    out = np.empty_like(source)
    kernel(flat(grad, source.dtype), source, out, *params)
    return (out.reshape(saved.shape),)


@serial
def _neg(x, out):
    for i in range(x.size):
        out[i] = -x[i]


@serial
def _neg_grad(g, x, out):
    for i in range(x.size):
        out[i] = -g[i]


@serial
def _abs(x, out):
    for i in range(x.size):
        out[i] = abs(x[i])


@serial
def _abs_grad(g, x, out):
    for i in range(x.size):
        out[i] = -g[i] if x[i] < 0 else g[i]


@serial
def _exp(x, out):
    for i in range(x.size):
        out[i] = math.exp(x[i])


@serial
def _times(g, y, out):
    for i in range(y.size):
        out[i] = g[i] * y[i]


@serial
def _log(x, out):
    for i in range(x.size):
        out[i] = np.log(x[i])


@serial
def _divide(g, x, out):
    for i in range(x.size):
        out[i] = g[i] / x[i]


@serial
def _log1p(x, out):
    for i in range(x.size):
        out[i] = np.log1p(x[i])


@serial
def _log1p_grad(g, x, out):
    for i in range(x.size):
        out[i] = g[i] / (1 + x[i])


@serial
def _sqrt(x, out):
    for i in range(x.size):
        out[i] = np.sqrt(x[i])


@serial
def _sqrt_grad(g, y, out):
    for i in range(y.size):
        out[i] = g[i] * 0.5 / y[i]


@serial
def _square(x, out):
    for i in range(x.size):
        out[i] = x[i] * x[i]


@serial
def _square_grad(g, x, out):
    for i in range(x.size):
        out[i] = 2 * x[i] * g[i]


@serial
def _sin(x, out):
    for i in range(x.size):
        out[i] = math.sin(x[i])


@serial
def _sin_grad(g, x, out):
    for i in range(x.size):
        out[i] = g[i] * math.cos(x[i])


@serial
def _cos(x, out):
    for i in range(x.size):
        out[i] = math.cos(x[i])


@serial
def _cos_grad(g, x, out):
    for i in range(x.size):
        out[i] = -g[i] * math.sin(x[i])


@serial
def _tanh(x, out):
    for i in range(x.size):
        out[i] = math.tanh(x[i])


@serial
def _tanh_grad(g, y, out):
    for i in range(y.size):
        out[i] = g[i] * (1 - y[i] * y[i])


@serial
def _sigmoid(x, out):
    for i in range(x.size):
        if x[i] >= 0:
            out[i] = 1 / (1 + math.exp(-x[i]))
        else:
            e = math.exp(x[i])
            out[i] = e / (1 + e)


@serial
def _sigmoid_grad(g, y, out):
    for i in range(y.size):
        out[i] = g[i] * y[i] * (1 - y[i])


@serial
def _leaky_relu(x, out, slope):
    for i in range(x.size):
        out[i] = x[i] if x[i] >= 0 else slope * x[i]


@serial
def _leaky_relu_grad(g, x, out, slope):
    for i in range(x.size):
        out[i] = g[i] if x[i] >= 0 else slope * g[i]


@serial
def _relu(x, out):
    for i in range(x.size):
        out[i] = 0 if x[i] <= 0 else x[i]


@serial
def _relu_grad(g, x, out):
    for i in range(x.size):
        out[i] = g[i] if x[i] > 0 else 0


@serial
def _clip(x, out, low, high):
    for i in range(x.size):
        out[i] = low if x[i] < low else (high if x[i] > high else x[i])


@serial
def _clip_grad(g, x, out, low, high):
    # clip(x) = minimum(maximum(x, low), high): each tie passes half the adjoint.
    for i in range(x.size):
        lower = 1.0 if x[i] > low else (0.5 if x[i] == low else 0.0)
        raised = max(x[i], low)
        upper = 1.0 if raised < high else (0.5 if raised == high else 0.0)
        out[i] = g[i] * lower * upper


@serial
def _softplus(x, out):
    for i in range(x.size):
        out[i] = np.log1p(math.exp(-abs(x[i]))) + max(x[i], 0)


@serial
def _softplus_grad(g, x, out):
    for i in range(x.size):
        if x[i] >= 0:
            out[i] = g[i] / (1 + math.exp(-x[i]))
        else:
            e = math.exp(x[i])
            out[i] = g[i] * e / (1 + e)


def neg_forward(x):
    return _apply(_neg, x), (x,)


def neg_backward(grad, saved):
    return _adjoint(_neg_grad, grad, *saved)


def abs_forward(x):
    return _apply(_abs, x), (x,)


def abs_backward(grad, saved):
    return _adjoint(_abs_grad, grad, *saved)


def exp_forward(x):
    y = _apply(_exp, x)
    return y, (y,)


def exp_backward(grad, saved):
    return _adjoint(_times, grad, *saved)


def log_forward(x):
    return _apply(_log, x), (x,)


def log_backward(grad, saved):
    return _adjoint(_divide, grad, *saved)


def log1p_forward(x):
    return _apply(_log1p, x), (x,)


def log1p_backward(grad, saved):
    return _adjoint(_log1p_grad, grad, *saved)


def sqrt_forward(x):
    y = _apply(_sqrt, x)
    return y, (y,)


def sqrt_backward(grad, saved):
    return _adjoint(_sqrt_grad, grad, *saved)


def square_forward(x):
    return _apply(_square, x), (x,)


def square_backward(grad, saved):
    return _adjoint(_square_grad, grad, *saved)


def sin_forward(x):
    return _apply(_sin, x), (x,)


def sin_backward(grad, saved):
    return _adjoint(_sin_grad, grad, *saved)


def cos_forward(x):
    return _apply(_cos, x), (x,)


def cos_backward(grad, saved):
    return _adjoint(_cos_grad, grad, *saved)


def tanh_forward(x):
    y = _apply(_tanh, x)
    return y, (y,)


def tanh_backward(grad, saved):
    return _adjoint(_tanh_grad, grad, *saved)


def sigmoid_forward(x):
    y = _apply(_sigmoid, x)
    return y, (y,)


def sigmoid_backward(grad, saved):
    return _adjoint(_sigmoid_grad, grad, *saved)


def relu_forward(x):
    return _apply(_relu, x), (x,)


def relu_backward(grad, saved):
    return _adjoint(_relu_grad, grad, *saved)


def leaky_relu_forward(x, negative_slope=0.01):
    slope = float(negative_slope)
    return _apply(_leaky_relu, x, slope), (x, slope)


def leaky_relu_backward(grad, saved):
    return _adjoint(_leaky_relu_grad, grad, *saved)


def clip_forward(x, low, high):
    bounds = (float(low), float(high))
    return _apply(_clip, x, *bounds), (x, *bounds)


def clip_backward(grad, saved):
    return _adjoint(_clip_grad, grad, *saved)


def hardtanh_forward(x):
    return clip_forward(x, -1.0, 1.0)


hardtanh_backward = clip_backward


def softplus_forward(x):
    return _apply(_softplus, x), (x,)


def softplus_backward(grad, saved):
    return _adjoint(_softplus_grad, grad, *saved)
