"""2-D pooling over NCHW on the device: max (saving the arg-max), average, global average.

The forwards run one thread an output element, scanning its window with the formulas of
``cpsgrad.kernels.formulas.pooling`` (shared with the CPU loops). The backwards run one thread an *input* element,
which gathers from every window that covers it (no atomics, deterministic): max pooling adds the
adjoint of each window whose saved arg-max is this element, average pooling the window's share.
Padding counts as -inf for max and as zeros in the average (``count_include_pad=True``), and the
first maximum of a window wins (NaN beats numbers), as in the CPU kernels.
"""

import numpy as np
from numba import cuda

from cpsgrad.kernels.cpu.pooling import _windows
from cpsgrad.kernels.cuda.arrays import adjoint, contiguous, empty, flat
from cpsgrad.kernels.cuda.jit import compile_formulas, device, kernel, launch
from cpsgrad.kernels.cuda.rows import SUM, reduce_rows
from cpsgrad.kernels.formulas import pooling

_POOL = "int64, int64, int64, int64, int64, int64"

_windows_of = compile_formulas(pooling)
_max_window, _avg_window = _windows_of.max_window, _windows_of.avg_window


@device
def _covering(position, pad, size, step, count):
    """First and last window (``lo``, ``hi``, inclusive) of ``count`` that cover ``position``."""
    first = position + pad - size + 1
    lo = 0 if first <= 0 else (first + step - 1) // step
    hi = min(count - 1, (position + pad) // step)
    return lo, hi


@kernel(f"void({{f}}[:, :, :, ::1], {_POOL}, {{f}}[:, :, :, ::1], int64[:, :, :, ::1])")
def _max_pool(x, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, y, argmax):
    channels, out_h, out_w = x.shape[1], y.shape[2], y.shape[3]
    for i in range(cuda.grid(1), y.size, cuda.gridsize(1)):
        ox, oy, plane = i % out_w, (i // out_w) % out_h, i // (out_w * out_h)
        image, channel = plane // channels, plane % channels
        best, where = _max_window(x, image, channel, oy, ox, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w)
        y[image, channel, oy, ox] = best
        argmax[image, channel, oy, ox] = where


@kernel(f"void({{f}}[:, :, :, ::1], int64[:, :, :, ::1], {_POOL}, {{f}}[:, :, :, ::1])")
def _max_pool_grad(grad, argmax, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, grad_x):
    channels, height, width = grad_x.shape[1], grad_x.shape[2], grad_x.shape[3]
    out_h, out_w = grad.shape[2], grad.shape[3]
    for i in range(cuda.grid(1), grad_x.size, cuda.gridsize(1)):
        col, row, plane = i % width, (i // width) % height, i // (width * height)
        image, channel = plane // channels, plane % channels
        low_y, high_y = _covering(row, pad_h, kernel_h, stride_h, out_h)
        low_x, high_x = _covering(col, pad_w, kernel_w, stride_w, out_w)
        here = row * width + col
        total = 0.0
        for oy in range(low_y, high_y + 1):
            for ox in range(low_x, high_x + 1):
                if argmax[image, channel, oy, ox] == here:
                    total += grad[image, channel, oy, ox]
        grad_x[image, channel, row, col] = total


@kernel(f"void({{f}}[:, :, :, ::1], {_POOL}, {{f}}[:, :, :, ::1])")
def _avg_pool(x, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, y):
    channels, out_h, out_w = x.shape[1], y.shape[2], y.shape[3]
    for i in range(cuda.grid(1), y.size, cuda.gridsize(1)):
        ox, oy, plane = i % out_w, (i // out_w) % out_h, i // (out_w * out_h)
        image, channel = plane // channels, plane % channels
        y[image, channel, oy, ox] = _avg_window(
            x, image, channel, oy, ox, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w
        )


@kernel(f"void({{f}}[:, :, :, ::1], {_POOL}, {{f}}[:, :, :, ::1])")
def _avg_pool_grad(grad, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, grad_x):
    channels, height, width = grad_x.shape[1], grad_x.shape[2], grad_x.shape[3]
    out_h, out_w = grad.shape[2], grad.shape[3]
    scale = 1.0 / (kernel_h * kernel_w)
    for i in range(cuda.grid(1), grad_x.size, cuda.gridsize(1)):
        col, row, plane = i % width, (i // width) % height, i // (width * height)
        image, channel = plane // channels, plane % channels
        low_y, high_y = _covering(row, pad_h, kernel_h, stride_h, out_h)
        low_x, high_x = _covering(col, pad_w, kernel_w, stride_w, out_w)
        total = 0.0
        for oy in range(low_y, high_y + 1):
            for ox in range(low_x, high_x + 1):
                total += grad[image, channel, oy, ox] * scale
        grad_x[image, channel, row, col] = total


@kernel("void({f}[::1], int64, {f}[::1])")
def _spread_planes(g, area, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = g[i // area] / area


def max_pool2d_forward(x, kernel_size, stride=None, padding=0):
    layout, out = _windows("max_pool2d", x, kernel_size, stride, padding)
    x = contiguous("max_pool2d", x)
    y = empty(tuple(x.shape[:2]) + out, x.dtype)
    argmax = empty(y.shape, np.int64)
    launch(_max_pool, y.size, x, *layout, y, argmax)
    return y, (tuple(x.shape), x.dtype, argmax, layout)


def max_pool2d_backward(grad, saved):
    shape, dtype, argmax, layout = saved
    grad = adjoint("max_pool2d", grad, argmax.shape, dtype)
    grad_x = empty(shape, dtype)
    launch(_max_pool_grad, grad_x.size, grad, argmax, *layout, grad_x)
    return (grad_x,)


def avg_pool2d_forward(x, kernel_size, stride=None, padding=0):
    layout, out = _windows("avg_pool2d", x, kernel_size, stride, padding)
    x = contiguous("avg_pool2d", x)
    y = empty(tuple(x.shape[:2]) + out, x.dtype)
    launch(_avg_pool, y.size, x, *layout, y)
    return y, (tuple(x.shape), x.dtype, tuple(y.shape), layout)


def avg_pool2d_backward(grad, saved):
    shape, dtype, out_shape, layout = saved
    grad = adjoint("avg_pool2d", grad, out_shape, dtype)
    grad_x = empty(shape, dtype)
    launch(_avg_pool_grad, grad_x.size, grad, *layout, grad_x)
    return (grad_x,)


def global_avg_pool2d_forward(x):
    """Mean over the spatial axes: (N, C, H, W) -> (N, C), one block a plane."""
    if x.ndim != 4:
        raise ValueError(f"global_avg_pool2d: expected x (N, C, H, W), got {x.shape}")
    x = contiguous("global_avg_pool2d", x)
    images, channels, height, width = x.shape
    planes = x.reshape(images * channels, height * width)
    y = reduce_rows(planes, SUM, 1.0 / max(height * width, 1))
    return y.reshape(images, channels), (tuple(x.shape), x.dtype)


def global_avg_pool2d_backward(grad, saved):
    shape, dtype = saved
    grad = adjoint("global_avg_pool2d", grad, shape[:2], dtype)
    grad_x = empty(shape, dtype)
    launch(_spread_planes, grad_x.size, flat(grad), shape[2] * shape[3], flat(grad_x))
    return (grad_x,)
