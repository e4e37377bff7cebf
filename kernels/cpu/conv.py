"""conv2d (NCHW; stride, padding, dilation, groups) as im2col + BLAS, with input and weight
gradients.

im2col and its adjoint col2im are single-threaded numba loops (numba's OpenMP layer cost a
constant ~8 ms a call on the 2-core machine, more than the work); the products run in BLAS.
"""

import numpy as np

from cpsgrad.kernels.cpu.jit import serial
from cpsgrad.kernels.cpu.shapes import pair


@serial
def _im2col(x, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, cols):
    images, channels, height, width = x.shape
    out_w = (width + 2 * pad_w - dil_w * (kernel_w - 1) - 1) // stride_w + 1
    out_h = cols.shape[2] // out_w
    for pair_index in range(images * channels):
        image, channel = pair_index // channels, pair_index % channels
        for i in range(kernel_h):
            for j in range(kernel_w):
                row = (channel * kernel_h + i) * kernel_w + j
                for oy in range(out_h):
                    y = oy * stride_h - pad_h + i * dil_h
                    for ox in range(out_w):
                        x_ = ox * stride_w - pad_w + j * dil_w
                        inside = 0 <= y < height and 0 <= x_ < width
                        cols[image, row, oy * out_w + ox] = x[image, channel, y, x_] if inside else 0


@serial
def _col2im(cols, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, grad_x):
    images, channels, height, width = grad_x.shape
    out_w = (width + 2 * pad_w - dil_w * (kernel_w - 1) - 1) // stride_w + 1
    out_h = cols.shape[2] // out_w
    for pair_index in range(images * channels):
        image, channel = pair_index // channels, pair_index % channels
        for i in range(kernel_h):
            for j in range(kernel_w):
                row = (channel * kernel_h + i) * kernel_w + j
                for oy in range(out_h):
                    y = oy * stride_h - pad_h + i * dil_h
                    if 0 <= y < height:
                        for ox in range(out_w):
                            x_ = ox * stride_w - pad_w + j * dil_w
                            if 0 <= x_ < width:
                                grad_x[image, channel, y, x_] += cols[image, row, oy * out_w + ox]


def _pointwise(layout: tuple) -> bool:
    """Whether ``layout`` (kernel, strides, padding, dilations) is a 1x1 kernel, stride 1 and no
    padding: im2col's columns are then the input's own values, in its order."""
    return layout[:6] == (1, 1, 1, 1, 0, 0)


def _geometry(x, w, b, stride, padding, dilation, groups):
    if x.ndim != 4 or w.ndim != 4:
        raise ValueError(f"conv2d: expected x (N, C, H, W) and w (F, C/groups, KH, KW), got {x.shape} and {w.shape}")
    filters, group_channels, kernel_h, kernel_w = w.shape
    if groups < 1 or x.shape[1] != group_channels * groups or filters % groups:
        raise ValueError(f"conv2d: x {x.shape} and w {w.shape} do not fit groups={groups}")
    if b is not None and np.shape(b) != (filters,):
        raise ValueError(f"conv2d: bias shape {np.shape(b)} does not match {filters} filters")
    steps = pair("conv2d", "stride", stride)
    pads = pair("conv2d", "padding", padding)
    dilations = pair("conv2d", "dilation", dilation)
    if 0 in steps or 0 in dilations:
        raise ValueError(f"conv2d: stride {stride} and dilation {dilation} must be positive")
    out = [
        (size + 2 * pad - dil * (k - 1) - 1) // step + 1
        for size, pad, dil, k, step in zip(x.shape[2:], pads, dilations, (kernel_h, kernel_w), steps, strict=True)
    ]
    if min(out) < 1:
        raise ValueError(f"conv2d: kernel {w.shape[2:]} does not fit input {x.shape} with padding {padding}")
    return (kernel_h, kernel_w, *steps, *pads, *dilations), tuple(out)


def conv2d_columns(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """What ``conv2d_backward`` needs, without the product: ``(output shape, saved)``. The
    backward of a rule, which sees the inputs but not the forward's columns, builds them again
    with this (the im2col pass alone, not the forward's matrix product)."""
    layout, (out_h, out_w) = _geometry(x, w, b, stride, padding, dilation, groups)
    x = np.ascontiguousarray(x, dtype=w.dtype)
    images = x.shape[0]
    if _pointwise(layout):  # a 1x1 kernel, stride 1, no padding: the columns are x itself
        cols = x.reshape(images, x.shape[1], out_h * out_w)
    else:
        cols = np.empty((images, w[0].size * groups, out_h * out_w), w.dtype)
        _im2col(x, *layout, cols)
    grouped = cols.reshape(images, groups, -1, out_h * out_w)
    return (images, w.shape[0], out_h, out_w), (x.shape, w, b is not None, grouped, layout)


def conv2d_forward(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Cross-correlation of ``x`` (N, C, H, W) with ``w`` (F, C/groups, KH, KW), plus ``b`` (F,)."""
    shape, saved = conv2d_columns(x, w, b, stride, padding, dilation, groups)
    grouped, filters = saved[3], w.shape[0]
    weights = w.reshape(grouped.shape[1], filters // grouped.shape[1], -1)
    y = np.matmul(weights, grouped).reshape(shape)
    if b is not None:
        y += b.reshape(1, filters, 1, 1)
    return y, saved


def conv2d_backward(grad, saved):
    """Adjoints ``(x, w, b)``; the bias adjoint is None when there was no bias."""
    x_shape, w, has_bias, grouped, layout = saved
    images, groups = grouped.shape[:2]
    grad = np.asarray(grad, w.dtype).reshape(images, groups, w.shape[0] // groups, -1)
    weights = w.reshape(groups, w.shape[0] // groups, -1)
    # Per-image products then a sum: several times faster here than one tensordot.
    grad_w = np.matmul(grad, np.swapaxes(grouped, -1, -2)).sum(axis=0).reshape(w.shape)
    grad_cols = np.matmul(np.swapaxes(weights, -1, -2), grad).reshape(images, -1, grad.shape[-1])
    if _pointwise(layout):
        grad_x = grad_cols.reshape(x_shape)
    else:
        grad_x = np.zeros(x_shape, w.dtype)
        _col2im(grad_cols, *layout, grad_x)
    grad_b = grad.sum(axis=(0, 3)).reshape(-1) if has_bias else None
    return grad_x, grad_w, grad_b
