"""Unary elementwise ops on the device: one forward and one backward kernel for all of them.

The op is a launch argument (uniform across the grid, so no divergence); each forward saves
what its backward reads (input or output) and the JAX kink conventions of the CPU kernels hold.
"""

import math

from numba import cuda

from cpsgrad.kernels.cuda.arrays import adjoint, contiguous, empty, flat
from cpsgrad.kernels.cuda.jit import device, kernel, launch

NAMES = (
    "neg abs exp log log1p sqrt square sin cos tanh sigmoid relu leaky_relu clip softplus".split()
)
CODE = {name: code for code, name in enumerate(NAMES)}
_SAVES_OUTPUT = {"exp", "sqrt", "tanh", "sigmoid"}


@device
def _sigmoid(x):
    if x >= 0:
        return 1 / (1 + math.exp(-x))
    e = math.exp(x)
    return e / (1 + e)


@device
def _log_or_limit(x):
    # CUDA's log gives -inf at 0 and nan below; spelled out so the simulator agrees.
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


@device
def _value(code, x, p, q):
    if code == 0:
        return -x
    if code == 1:
        return abs(x)
    if code == 2:
        return math.exp(x)
    if code == 3:
        return _log_or_limit(x)
    if code == 4:
        return math.log1p(x) if x > -1 else _log_or_limit(1 + x)
    if code == 5:
        return math.sqrt(x) if x >= 0 else math.nan
    if code == 6:
        return x * x
    if code == 7:
        return math.sin(x)
    if code == 8:
        return math.cos(x)
    if code == 9:
        return math.tanh(x)
    if code == 10:
        return _sigmoid(x)
    if code == 11:
        return 0.0 if x <= 0 else x
    if code == 12:
        return x if x >= 0 else p * x
    if code == 13:
        return p if x < p else (q if x > q else x)
    return math.log1p(math.exp(-abs(x))) + max(x, 0.0)


@device
def _slope(code, s, p, q):
    """d(output)/d(input) from the saved value ``s`` (the input, or the output where saved)."""
    if code == 0:
        return -1.0
    if code == 1:
        return -1.0 if s < 0 else 1.0
    if code == 2:
        return s
    if code == 3:
        return 1 / s
    if code == 4:
        return 1 / (1 + s)
    if code == 5:
        return 0.5 / s
    if code == 6:
        return 2 * s
    if code == 7:
        return math.cos(s)
    if code == 8:
        return -math.sin(s)
    if code == 9:
        return 1 - s * s
    if code == 10:
        return s * (1 - s)
    if code == 11:
        return 1.0 if s > 0 else 0.0
    if code == 12:
        return 1.0 if s >= 0 else p
    if code == 13:
        # clip = minimum(maximum(x, low), high): each tie passes half.
        lower = 1.0 if s > p else (0.5 if s == p else 0.0)
        raised = max(s, p)
        return lower * (1.0 if raised < q else (0.5 if raised == q else 0.0))
    return _sigmoid(s)


@kernel("void({f}[::1], {f}[::1], int64, float64, float64)")
def _forward(x, out, code, p, q):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        out[i] = _value(code, x[i], p, q)


@kernel("void({f}[::1], {f}[::1], {f}[::1], int64, float64, float64)")
def _backward(g, saved, out, code, p, q):
    for i in range(cuda.grid(1), saved.size, cuda.gridsize(1)):
        out[i] = g[i] * _slope(code, saved[i], p, q)


def _unary(name, x, p=0.0, q=0.0):
    x = contiguous(name, x)
    y = empty(x.shape, x.dtype)
    launch(_forward, x.size, flat(x), flat(y), CODE[name], p, q)
    return y, (name, y if name in _SAVES_OUTPUT else x, p, q)


def _unary_backward(grad, saved):
    name, value, p, q = saved
    grad = adjoint(name, grad, value.shape, value.dtype)
    out = empty(value.shape, value.dtype)
    launch(_backward, value.size, flat(grad), flat(value), flat(out), CODE[name], p, q)
    return (out,)


def _define(name):
    def forward(x):
        return _unary(name, x)

    forward.__name__ = f"{name}_forward"
    forward.__doc__ = f"{name} on the device; returns ``(y, saved)``."
    return forward


for _name in "neg abs exp log log1p sqrt square sin cos tanh sigmoid relu softplus".split():
    globals()[f"{_name}_forward"] = _define(_name)
    globals()[f"{_name}_backward"] = _unary_backward


def leaky_relu_forward(x, negative_slope=0.01):
    return _unary("leaky_relu", x, float(negative_slope))


def clip_forward(x, low, high):
    return _unary("clip", x, float(low), float(high))


def hardtanh_forward(x):
    return _unary("clip", x, -1.0, 1.0)


leaky_relu_backward = clip_backward = hardtanh_backward = _unary_backward


def backward_from(name, grad, saved):
    """``name``'s backward from the array its forward saves (the output for exp, sqrt, tanh and
    sigmoid, the input otherwise), for callers that did not keep the forward's residuals."""
    return _unary_backward(grad, (name, saved, 0.0, 0.0))[0]
