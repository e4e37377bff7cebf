"""2-D pooling over NCHW: max, average, global average.

Max and average pooling are single-threaded numba loops over (image, channel) planes. Average
pooling scans a window with ``cpsgrad.kernels.formulas.pooling``'s formula, shared with the CUDA
kernels; max pooling computes the same values without an arg-max (its data-dependent branches
cost 2-3x on real activations), and its backward finds the arg-max again from the input and
the output. Padding counts
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
_avg_window = _windows_of.avg_window


@serial
def _max_pool(x, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, y):
    """Each window's maximum, NaN when it holds one (the value ``_windows_of.max_window`` gives,
    without its arg-max: no data-dependent branch, several times faster on real activations)."""
    height, width = x.shape[2], x.shape[3]
    for image in range(x.shape[0]):
        for channel in range(x.shape[1]):
            plane = x[image, channel]
            for oy in range(y.shape[2]):
                for ox in range(y.shape[3]):
                    best = plane[max(oy * stride_h - pad_h, 0), max(ox * stride_w - pad_w, 0)]
                    nan = False
                    for i in range(kernel_h):
                        row = oy * stride_h - pad_h + i
                        if 0 <= row < height:
                            for j in range(kernel_w):
                                col = ox * stride_w - pad_w + j
                                if 0 <= col < width:
                                    value = plane[row, col]
                                    nan |= value != value
                                    best = max(best, value)
                    y[image, channel, oy, ox] = np.nan if nan else best


@serial
def _max_pool_unpadded(x, kernel_h, kernel_w, stride_h, stride_w, y):
    """``_max_pool`` without padding: every window lies inside ``x``, so no bounds tests (about
    2x faster on the CNN's 2x2 pooling)."""
    for image in range(x.shape[0]):
        for channel in range(x.shape[1]):
            plane, out = x[image, channel], y[image, channel]
            for oy in range(y.shape[2]):
                for ox in range(y.shape[3]):
                    top, left = oy * stride_h, ox * stride_w
                    best = plane[top, left]
                    nan = False
                    for i in range(kernel_h):
                        for j in range(kernel_w):
                            value = plane[top + i, left + j]
                            nan |= value != value
                            best = max(best, value)
                    out[oy, ox] = np.nan if nan else best


@serial
def _max_pool_grad_unpadded(grad, x, y, kernel_h, kernel_w, stride_h, stride_w, grad_x):
    """``_max_pool_grad`` without padding (no bounds tests): the same element gets each window's
    adjoint."""
    for image in range(x.shape[0]):
        for channel in range(x.shape[1]):
            plane, grad_plane = x[image, channel], grad_x[image, channel]
            for oy in range(y.shape[2]):
                for ox in range(y.shape[3]):
                    best = y[image, channel, oy, ox]
                    nan = best != best
                    top, left = oy * stride_h, ox * stride_w
                    at_row, at_col = -1, -1
                    for i in range(kernel_h - 1, -1, -1):
                        for j in range(kernel_w - 1, -1, -1):
                            value = plane[top + i, left + j]
                            hit = (value == best) | (nan & (value != value))
                            at_row = top + i if hit else at_row
                            at_col = left + j if hit else at_col
                    if at_row >= 0:
                        grad_plane[at_row, at_col] += grad[image, channel, oy, ox]


@serial
def _max_pool_grad(grad, x, y, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, grad_x):
    """Each window's adjoint to its first element equal to its maximum ``y`` (its first NaN when
    ``y`` is NaN): the element the arg-max of ``_windows_of.max_window`` names, found again by
    scanning the window backwards with selects instead of branches."""
    height, width = x.shape[2], x.shape[3]
    for image in range(x.shape[0]):
        for channel in range(x.shape[1]):
            plane, grad_plane = x[image, channel], grad_x[image, channel]
            for oy in range(y.shape[2]):
                for ox in range(y.shape[3]):
                    best = y[image, channel, oy, ox]
                    nan = best != best
                    at_row, at_col = -1, -1
                    for i in range(kernel_h - 1, -1, -1):
                        row = oy * stride_h - pad_h + i
                        if 0 <= row < height:
                            for j in range(kernel_w - 1, -1, -1):
                                col = ox * stride_w - pad_w + j
                                if 0 <= col < width:
                                    value = plane[row, col]
                                    hit = (value == best) | (nan & (value != value))
                                    at_row = row if hit else at_row
                                    at_col = col if hit else at_col
                    if at_row >= 0:
                        grad_plane[at_row, at_col] += grad[image, channel, oy, ox]


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
    if layout[4] == layout[5] == 0:
        _max_pool_unpadded(x, *layout[:4], y)
    else:
        _max_pool(x, *layout, y)
    return y, (x, y, layout)


def max_pool2d_backward(grad, saved):
    """The adjoint of ``x`` from ``x`` and the output ``y`` (no arg-max is kept)."""
    x, y, layout = saved
    grad_x = np.zeros(x.shape, x.dtype)
    grad = _plane_grad(grad, y.shape, x.dtype)
    if layout[4] == layout[5] == 0:
        _max_pool_grad_unpadded(grad, x, y, *layout[:4], grad_x)
    else:
        _max_pool_grad(grad, x, y, *layout, grad_x)
    return (grad_x,)


def max_pool2d_input_backward(grad, x, y, kernel_size, stride=None, padding=0):
    """The adjoint of ``x`` from ``x`` and the forward's output ``y``: the backward with no second
    forward (``cpsgrad.nn_backward.max_pool2d``)."""
    layout, out = _windows("max_pool2d", x, kernel_size, stride, padding)
    x = np.ascontiguousarray(x)
    y = np.ascontiguousarray(y, x.dtype)
    if y.shape != x.shape[:2] + out:
        raise ValueError(f"max_pool2d: output {y.shape} does not match input {x.shape} pooled to {out}")
    return max_pool2d_backward(grad, (x, y, layout))[0]


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
