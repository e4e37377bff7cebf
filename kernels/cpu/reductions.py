"""Reductions over axes with ``keepdims``: sum, mean, max, min, logsumexp.

sum and mean use numpy (one pass); max/min backward and logsumexp forward/backward are numba
loops over a ``(rows, reduced)`` view with the reduced axes moved last. Ties in max and min
share the adjoint equally (JAX's convention).
"""

import math

import numpy as np

from cpsgrad.kernels.cpu.jit import serial
from cpsgrad.kernels.cpu.shapes import from_rows, reduction_axes, to_rows


def _kept_shape(shape, axes):
    return tuple(1 if axis in axes else size for axis, size in enumerate(shape))


def _spread(grad, shape, axes, scale=None):
    """Broadcast ``grad`` back over the reduced axes, as a fresh writable array."""
    out = np.empty(shape, grad.dtype)
    out[...] = np.reshape(grad, _kept_shape(shape, axes)) if scale is None else (
        np.reshape(grad, _kept_shape(shape, axes)) * scale
    )
    return out


def _reduce(op, function, x, axis, keepdims):
    axes = reduction_axes(op, np.shape(x), axis)
    try:
        return function(x, axis=axes, keepdims=keepdims), axes
    except ValueError as error:
        raise ValueError(f"{op}: {error} (shape {np.shape(x)}, axis {axis})") from None


def sum_forward(x, axis=None, keepdims=False):
    y, axes = _reduce("sum", np.sum, x, axis, keepdims)
    return y, (x.shape, axes)


def sum_backward(grad, saved):
    shape, axes = saved
    return (_spread(np.asarray(grad), shape, axes),)


def mean_forward(x, axis=None, keepdims=False):
    y, axes = _reduce("mean", np.mean, x, axis, keepdims)
    return y, (x.shape, axes)


def mean_backward(grad, saved):
    shape, axes = saved
    count = int(np.prod([shape[axis] for axis in axes], dtype=np.int64))
    grad = np.asarray(grad)
    return (_spread(grad, shape, axes, grad.dtype.type(1) / max(count, 1)),)


@serial
def _chooser_grad(x, y, g, out):
    for row in range(x.shape[0]):
        ties = 0
        for j in range(x.shape[1]):
            if x[row, j] == y[row]:
                ties += 1
        for j in range(x.shape[1]):
            out[row, j] = g[row] / ties if x[row, j] == y[row] else 0


def _chooser_backward(grad, saved):
    x, y, axes = saved
    rows, layout = to_rows(x, axes)
    out = np.empty_like(rows)
    _chooser_grad(rows, np.ravel(y), np.ravel(grad).astype(x.dtype, copy=False), out)
    return (from_rows(out, layout),)


def max_forward(x, axis=None, keepdims=False):
    y, axes = _reduce("max", np.max, x, axis, keepdims)
    return y, (x, y, axes)


def min_forward(x, axis=None, keepdims=False):
    y, axes = _reduce("min", np.min, x, axis, keepdims)
    return y, (x, y, axes)


max_backward = _chooser_backward
min_backward = _chooser_backward


@serial
def _logsumexp(x, out):
    for row in range(x.shape[0]):
        top = -np.inf
        for j in range(x.shape[1]):
            top = max(top, x[row, j])
        shift = top if math.isfinite(top) else 0.0
        total = 0.0
        for j in range(x.shape[1]):
            total += math.exp(x[row, j] - shift)
        out[row] = shift + math.log(total)


@serial
def _logsumexp_grad(x, y, g, out):
    for row in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[row, j] = g[row] * math.exp(x[row, j] - y[row])


def logsumexp_forward(x, axis=None, keepdims=False):
    axes = reduction_axes("logsumexp", x.shape, axis)
    rows, layout = to_rows(x, axes)
    y = np.empty(rows.shape[0], x.dtype)
    _logsumexp(rows, y)
    kept = _kept_shape(x.shape, axes)
    shape = kept if keepdims else tuple(s for a, s in enumerate(x.shape) if a not in axes)
    return y.reshape(shape), (x, y, axes)


def logsumexp_backward(grad, saved):
    x, y, axes = saved
    rows, layout = to_rows(x, axes)
    out = np.empty_like(rows)
    _logsumexp_grad(rows, y, np.ravel(grad).astype(x.dtype, copy=False), out)
    return (from_rows(out, layout),)
