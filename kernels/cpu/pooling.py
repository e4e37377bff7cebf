"""2-D pooling over NCHW: max (saving the arg-max for the backward), average, global average.

Max and average pooling are single-threaded numba loops over (image, channel) planes; the scan
of one window is ``cpsgrad.kernels.formulas.pooling``'s, shared with the CUDA kernels. Padding counts
as -inf for max and as zeros in the average (PyTorch's ``count_include_pad=True``).
"""

import numpy as np

from cpsgrad.kernels.cpu.jit import compile_formulas, serial
from cpsgrad.kernels.cpu.shapes import pair
from cpsgrad.kernels.formulas import pooling


def _windows(op, x, kernel_size, stride, padding):
    if x.ndim != 4:
        raise ValueError(f"{op}: expected x (N, C, H, W), got {x.shape}")
    kernel = pair(op, "kernel_size", kernel_size)
    steps = kernel if stride is None else pair(op, "stride", stride)
    pads = pair(op, "padding", padding)
    if 0 in kernel or 0 in steps or any(p > k // 2 for p, k in zip(pads, kernel, strict=True)):
        raise ValueError(
            f"{op}: need positive kernel_size {kernel_size} and stride {stride}, "
            f"and padding {padding} at most half the kernel"
        )
    out = tuple(
        (size + 2 * p - k) // s + 1 for size, p, k, s in zip(x.shape[2:], pads, kernel, steps, strict=True)
    )
    if min(out) < 1:
        raise ValueError(f"{op}: kernel {kernel} does not fit input {x.shape}")
    return (*kernel, *steps, *pads), out


_windows_of = compile_formulas(pooling)
_max_window, _avg_window = _windows_of.max_window, _windows_of.avg_window


@serial
def _max_pool(x, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, y, argmax):
    channels = x.shape[1]
    for plane in range(x.shape[0] * channels):
        image, channel = plane // channels, plane % channels
        for oy in range(y.shape[2]):
            for ox in range(y.shape[3]):
                best, where = _max_window(
                    x, image, channel, oy, ox, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w
                )
                y[image, channel, oy, ox] = best
                argmax[image, channel, oy, ox] = where


@serial
def _max_pool_grad(grad, argmax, grad_x):
    images, channels, height, width = grad_x.shape
    for plane in range(images * channels):
        image, channel = plane // channels, plane % channels
        for oy in range(grad.shape[2]):
            for ox in range(grad.shape[3]):
                where = argmax[image, channel, oy, ox]
                grad_x[image, channel, where // width, where % width] += grad[image, channel, oy, ox]


@serial
def _avg_pool(x, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, y):
    channels = x.shape[1]
    for plane in range(x.shape[0] * channels):
        image, channel = plane // channels, plane % channels
        for oy in range(y.shape[2]):
            for ox in range(y.shape[3]):
                y[image, channel, oy, ox] = _avg_window(
                    x, image, channel, oy, ox, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w
                )


@serial
def _avg_pool_grad(grad, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, grad_x):
    images, channels, height, width = grad_x.shape
    scale = 1.0 / (kernel_h * kernel_w)
    for plane in range(images * channels):
        image, channel = plane // channels, plane % channels
        for oy in range(grad.shape[2]):
            for ox in range(grad.shape[3]):
                share = grad[image, channel, oy, ox] * scale
                for i in range(kernel_h):
                    row = oy * stride_h - pad_h + i
                    for j in range(kernel_w):
                        col = ox * stride_w - pad_w + j
                        if 0 <= row < height and 0 <= col < width:
                            grad_x[image, channel, row, col] += share


def _plane_grad(grad, shape, dtype):
    if np.shape(grad) != shape:
        raise ValueError(f"adjoint shape {np.shape(grad)} does not match output {shape}")
    return np.ascontiguousarray(grad, dtype=dtype)


def max_pool2d_forward(x, kernel_size, stride=None, padding=0):
    layout, out = _windows("max_pool2d", x, kernel_size, stride, padding)
    x = np.ascontiguousarray(x)
    y = np.empty(x.shape[:2] + out, x.dtype)
    argmax = np.empty(y.shape, np.int64)
    _max_pool(x, *layout, y, argmax)
    return y, (x.shape, x.dtype, argmax)


def max_pool2d_backward(grad, saved):
    shape, dtype, argmax = saved
    grad_x = np.zeros(shape, dtype)
    _max_pool_grad(_plane_grad(grad, argmax.shape, dtype), argmax, grad_x)
    return (grad_x,)


def avg_pool2d_forward(x, kernel_size, stride=None, padding=0):
    layout, out = _windows("avg_pool2d", x, kernel_size, stride, padding)
    x = np.ascontiguousarray(x)
    y = np.empty(x.shape[:2] + out, x.dtype)
    _avg_pool(x, *layout, y)
    return y, (x.shape, x.dtype, y.shape, layout)


def avg_pool2d_backward(grad, saved):
    shape, dtype, out_shape, layout = saved
    grad_x = np.zeros(shape, dtype)
    _avg_pool_grad(_plane_grad(grad, out_shape, dtype), *layout, grad_x)
    return (grad_x,)


def global_avg_pool2d_forward(x):
    """Mean over the spatial axes: (N, C, H, W) -> (N, C)."""
    if x.ndim != 4:
        raise ValueError(f"global_avg_pool2d: expected x (N, C, H, W), got {x.shape}")
    return x.mean(axis=(2, 3)), (x.shape,)


def global_avg_pool2d_backward(grad, saved):
    (shape,) = saved
    grad = np.asarray(grad)
    grad_x = np.empty(shape, grad.dtype)
    grad_x[...] = grad[:, :, None, None] / (shape[2] * shape[3])
    return (grad_x,)
