"""batch_norm (training with running statistics, and eval) and seeded dropout on the device.

batch_norm moves the channel axis first (``layout.to_rows``: a ``(C, N * H * W)`` matrix) and
runs one block a channel: the block reduces the mean and the (two-pass, biased) variance in
float64, normalises its row, and thread 0 writes the new running statistics (unbiased variance,
as PyTorch). The backward is one block a channel as well, with two block sums. The arithmetic
is ``cpsgrad.kernels.formulas.normalization``'s, which the CPU kernel applies to whole arrays.

dropout draws its keep mask on the host from ``numpy.random.default_rng(seed)`` exactly as the
CPU kernel does (so both devices give the same result for a seed), copies it once as bytes, and
applies and reuses it on the device.
"""

import math

import numpy as np
from numba import cuda, float64

from cpsgrad.kernels.cpu.normalization import _channel_axes
from cpsgrad.kernels.cuda.arrays import adjoint, contiguous, empty, flat, operand
from cpsgrad.kernels.cuda.jit import MAX_THREADS, compile_formulas, kernel, launch, launch_rows
from cpsgrad.kernels.cuda.layout import from_rows, to_rows
from cpsgrad.kernels.cuda.rows import SUM, block_combine, row_fold
from cpsgrad.kernels.formulas import normalization

_formulas = compile_formulas(normalization)
_normalize, _scale_shift, _unbiased = _formulas.normalize, _formulas.scale_shift, _formulas.unbiased
_running_statistic, _training_input_adjoint = _formulas.running_statistic, _formulas.training_input_adjoint

_ROWS = "{f}[:, ::1]"
_CHANNEL = "{f}[::1]"


@kernel(
    f"void({_ROWS}, {_CHANNEL}, {_CHANNEL}, {_CHANNEL}, {_CHANNEL}, boolean, float64, float64, "
    f"{_ROWS}, {_ROWS}, {_CHANNEL}, {_CHANNEL}, {_CHANNEL})"
)
def _batch_norm_rows(x, gamma, beta, running_mean, running_var, training, momentum, eps,
                     normalized, y, new_mean, new_var, inv_std):
    buffer = cuda.shared.array(MAX_THREADS, float64)
    count = x.shape[1]
    for row in range(cuda.blockIdx.x, x.shape[0], cuda.gridDim.x):
        if training:
            mean = row_fold(buffer, x, row, SUM) / count
            partial = 0.0
            for j in range(cuda.threadIdx.x, count, cuda.blockDim.x):
                deviation = x[row, j] - mean
                partial += deviation * deviation
            var = block_combine(buffer, partial, SUM) / count
        else:
            mean = float64(running_mean[row])
            var = float64(running_var[row])
        inverse = 1.0 / math.sqrt(var + eps)
        for j in range(cuda.threadIdx.x, count, cuda.blockDim.x):
            normalized[row, j] = _normalize(x[row, j], mean, inverse)
            y[row, j] = _scale_shift(normalized[row, j], gamma[row], beta[row])
        if cuda.threadIdx.x == 0:
            inv_std[row] = inverse
            if training:
                new_mean[row] = _running_statistic(running_mean[row], mean, momentum)
                new_var[row] = _running_statistic(running_var[row], _unbiased(var, count), momentum)


@kernel(f"void({_ROWS}, {_ROWS}, {_CHANNEL}, {_CHANNEL}, boolean, {_ROWS}, {_CHANNEL}, {_CHANNEL})")
def _batch_norm_grad_rows(g, normalized, gamma, inv_std, training, grad_x, grad_gamma, grad_beta):
    buffer = cuda.shared.array(MAX_THREADS, float64)
    count = g.shape[1]
    for row in range(cuda.blockIdx.x, g.shape[0], cuda.gridDim.x):
        partial_g, partial_gn = 0.0, 0.0
        for j in range(cuda.threadIdx.x, count, cuda.blockDim.x):
            partial_g += g[row, j]
            partial_gn += g[row, j] * normalized[row, j]
        sum_g = block_combine(buffer, partial_g, SUM)
        sum_gn = block_combine(buffer, partial_gn, SUM)
        scale = float64(gamma[row]) * inv_std[row]
        for j in range(cuda.threadIdx.x, count, cuda.blockDim.x):
            if training:
                grad_x[row, j] = _training_input_adjoint(g[row, j], normalized[row, j], scale, sum_g, sum_gn, count)
            else:
                grad_x[row, j] = g[row, j] * scale
        if cuda.threadIdx.x == 0:
            grad_gamma[row] = sum_gn
            grad_beta[row] = sum_g


@kernel("void({f}[::1], uint8[::1], float64, {f}[::1])")
def _apply_mask(x, keep, scale, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = x[i] * (scale if keep[i] else 0.0)


def batch_norm_forward(
    x, gamma, beta, running_mean, running_var, training=True, momentum=0.1, eps=1e-5
):
    """Returns ``((y, new_running_mean, new_running_var), saved)``; see the CPU kernel."""
    axes = _channel_axes("batch_norm", x, gamma, beta, running_mean, running_var)
    x = contiguous("batch_norm", x)
    gamma, beta, running_mean, running_var = (
        operand("batch_norm", a, x.dtype) for a in (gamma, beta, running_mean, running_var)
    )
    channels = x.shape[1]
    rows, layout = to_rows(x, axes)
    if training and rows.shape[1] < 2:
        raise ValueError(f"batch_norm: training needs more than one value a channel, got {x.shape}")
    normalized = empty(rows.shape, x.dtype)
    y_rows = empty(rows.shape, x.dtype)
    inv_std = empty((channels,), x.dtype)
    new_mean = empty((channels,), x.dtype) if training else running_mean
    new_var = empty((channels,), x.dtype) if training else running_var
    launch_rows(
        _batch_norm_rows, channels, rows, gamma, beta, running_mean, running_var, bool(training),
        float(momentum), float(eps), normalized, y_rows, new_mean, new_var, inv_std,
    )
    y = from_rows(y_rows, layout)
    return (y, new_mean, new_var), (normalized, gamma, inv_std, axes, bool(training), layout)


def batch_norm_backward(grad, saved):
    """Adjoints ``(x, gamma, beta)`` from the adjoint of ``y``."""
    normalized, gamma, inv_std, axes, training, layout = saved
    order, moved_shape = layout
    shape = tuple(moved_shape[order.index(a)] for a in range(len(order)))
    grad = adjoint("batch_norm", grad, shape, normalized.dtype)
    g_rows, _ = to_rows(grad, axes)
    grad_rows = empty(normalized.shape, normalized.dtype)
    channels = normalized.shape[0]
    grad_gamma = empty((channels,), normalized.dtype)
    grad_beta = empty((channels,), normalized.dtype)
    launch_rows(
        _batch_norm_grad_rows, channels, g_rows, normalized, gamma, inv_std, training, grad_rows,
        grad_gamma, grad_beta,
    )
    return from_rows(grad_rows, layout), grad_gamma, grad_beta


def dropout_forward(x, rate=0.5, seed=0, training=True):
    """Zero each element with probability ``rate`` and scale the rest by ``1 / (1 - rate)``.

    The mask is ``numpy.random.default_rng(seed)``'s, drawn on the host as on the CPU.
    """
    if not 0 <= rate < 1:
        raise ValueError(f"dropout: rate must lie in [0, 1), got {rate}")
    x = contiguous("dropout", x)
    if not training or rate == 0:
        return x, (None,)
    keep = np.random.default_rng(seed).random(tuple(x.shape)) >= rate
    scale = float(x.dtype.type(1 / (1 - rate)))
    mask = cuda.to_device(keep.reshape(keep.size).view(np.uint8))
    y = empty(x.shape, x.dtype)
    launch(_apply_mask, y.size, flat(x), mask, scale, flat(y))
    return y, ((mask, scale, tuple(x.shape), x.dtype),)


def dropout_backward(grad, saved):
    (mask,) = saved
    if mask is None:
        return (grad,)
    keep, scale, shape, dtype = mask
    grad = adjoint("dropout", grad, shape, dtype)
    out = empty(shape, dtype)
    launch(_apply_mask, out.size, flat(grad), keep, scale, flat(out))
    return (out,)
