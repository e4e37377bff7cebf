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


def _columns(x, w, layout, out, groups):
    """im2col of ``x`` as ``(N, groups, C/groups * KH * KW, OH * OW)`` in ``w``'s dtype."""
    x = np.ascontiguousarray(x, dtype=w.dtype)
    images, length = x.shape[0], out[0] * out[1]
    cols = np.empty((images, w[0].size * groups, length), w.dtype)
    _im2col(x, *layout, cols)
    return cols.reshape(images, groups, -1, length)


def _grouped_adjoint(grad, w, images, groups):
    """The output adjoint as ``(N, groups, F/groups, OH * OW)`` in ``w``'s dtype."""
    return np.asarray(grad, w.dtype).reshape(images, groups, w.shape[0] // groups, -1)


def _weight_grads(grad, w, grouped, has_bias):
    # Per-image products then a sum: several times faster here than one tensordot.
    grad_w = np.matmul(grad, np.swapaxes(grouped, -1, -2)).sum(axis=0).reshape(w.shape)
    grad_b = grad.sum(axis=(0, 3)).reshape(-1) if has_bias else None
    return grad_w, grad_b


def _input_grad(grad, w, x_shape, layout, groups):
    weights = w.reshape(groups, w.shape[0] // groups, -1)
    grad_cols = np.matmul(np.swapaxes(weights, -1, -2), grad).reshape(x_shape[0], -1, grad.shape[-1])
    grad_x = np.zeros(x_shape, w.dtype)
    _col2im(grad_cols, *layout, grad_x)
    return grad_x


def conv2d_forward(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Cross-correlation of ``x`` (N, C, H, W) with ``w`` (F, C/groups, KH, KW), plus ``b`` (F,)."""
    layout, (out_h, out_w) = _geometry(x, w, b, stride, padding, dilation, groups)
    grouped = _columns(x, w, layout, (out_h, out_w), groups)
    images, filters = x.shape[0], w.shape[0]
    weights = w.reshape(groups, filters // groups, -1)
    y = np.matmul(weights, grouped).reshape(images, filters, out_h, out_w)
    if b is not None:
        y += b.reshape(1, filters, 1, 1)
    return y, (x.shape, w, b is not None, grouped, layout)


def conv2d_backward(grad, saved):
    """Adjoints ``(x, w, b)``; the bias adjoint is None when there was no bias."""
    x_shape, w, has_bias, grouped, layout = saved
    images, groups = grouped.shape[:2]
    grad = _grouped_adjoint(grad, w, images, groups)
    grad_w, grad_b = _weight_grads(grad, w, grouped, has_bias)
    return _input_grad(grad, w, x_shape, layout, groups), grad_w, grad_b


def conv2d_input_backward(grad, x, w, stride=1, padding=0, dilation=1, groups=1):
    """The adjoint of ``x`` alone, from the weights and ``x``'s shape: no im2col, no forward
    product (``cpsgrad.nn_backward.conv2d_input``)."""
    layout, _ = _geometry(x, w, None, stride, padding, dilation, groups)
    grad = _grouped_adjoint(grad, w, x.shape[0], groups)
    return _input_grad(grad, w, x.shape, layout, groups)


def conv2d_weight_backward(grad, x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """The adjoints ``(w, b)`` (b's None without a bias): im2col of ``x`` again, no forward
    product (``cpsgrad.nn_backward.conv2d_weights``)."""
    layout, out = _geometry(x, w, b, stride, padding, dilation, groups)
    grouped = _columns(x, w, layout, out, groups)
    return _weight_grads(_grouped_adjoint(grad, w, x.shape[0], groups), w, grouped, b is not None)
