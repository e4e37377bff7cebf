"""conv2d (NCHW; stride, padding, dilation, groups) on the device: im2col + the tiled matmul.

im2col writes the columns as ``(groups, C/groups * KH * KW, N * OH * OW)``, so every group is one
entry of a batched product with the weights ``(groups, F/groups, C/groups * KH * KW)`` and all
groups and images go through ``linalg.product`` in one launch; the weight gradient is likewise
one batched product (the sum over images is the inner dimension). col2im runs one thread an
input element that gathers from the columns it appears in (no atomics). A last kernel moves the
product's ``(F, N, OH * OW)`` layout to NCHW and adds the bias.
"""

from numba import cuda

from cpsgrad.kernels.cpu.conv import _geometry
from cpsgrad.kernels.cuda.arrays import adjoint, contiguous, empty, operand
from cpsgrad.kernels.cuda.jit import kernel, launch
from cpsgrad.kernels.cuda.layout import permute
from cpsgrad.kernels.cuda.linalg import product
from cpsgrad.kernels.cuda.rows import SUM, reduce_rows

_LAYOUT = "int64, int64, int64, int64, int64, int64, int64, int64"


@kernel(f"void({{f}}[:, :, :, ::1], {_LAYOUT}, int64, {{f}}[:, :, ::1])")
def _im2col(x, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, out_w, cols):
    images, height, width = x.shape[0], x.shape[2], x.shape[3]
    depth = cols.shape[1]
    group_channels = depth // (kernel_h * kernel_w)
    length = cols.shape[2] // images
    for i in range(cuda.grid(1), cols.size, cuda.gridsize(1)):
        column = i % cols.shape[2]
        row = (i // cols.shape[2]) % depth
        group = i // (cols.shape[2] * depth)
        image, place = column // length, column % length
        oy, ox = place // out_w, place % out_w
        b = row % kernel_w
        a = (row // kernel_w) % kernel_h
        channel = group * group_channels + row // (kernel_h * kernel_w)
        y = oy * stride_h - pad_h + a * dil_h
        x_ = ox * stride_w - pad_w + b * dil_w
        if 0 <= y < height and 0 <= x_ < width:
            cols[group, row, column] = x[image, channel, y, x_]
        else:
            cols[group, row, column] = 0


@kernel(f"void({{f}}[:, :, ::1], {_LAYOUT}, int64, int64, {{f}}[:, :, :, ::1])")
def _col2im(cols, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, out_h, out_w,
            grad_x):
    images, channels, height, width = grad_x.shape
    group_channels = cols.shape[1] // (kernel_h * kernel_w)
    length = out_h * out_w
    for i in range(cuda.grid(1), grad_x.size, cuda.gridsize(1)):
        col = i % width
        row = (i // width) % height
        channel = (i // (width * height)) % channels
        image = i // (width * height * channels)
        group, inner = channel // group_channels, channel % group_channels
        total = 0.0
        for a in range(kernel_h):
            t = row + pad_h - a * dil_h
            if t < 0 or t % stride_h != 0 or t // stride_h >= out_h:
                continue
            oy = t // stride_h
            for b in range(kernel_w):
                s = col + pad_w - b * dil_w
                if s < 0 or s % stride_w != 0 or s // stride_w >= out_w:
                    continue
                ox = s // stride_w
                depth_row = (inner * kernel_h + a) * kernel_w + b
                total += cols[group, depth_row, image * length + oy * out_w + ox]
        grad_x[image, channel, row, col] = total


@kernel("void({f}[:, :, ::1], {f}[::1], boolean, {f}[:, :, ::1])")
def _to_nchw(product_out, bias, has_bias, y):
    """``y[n, f, l] = product_out[f, n, l] (+ bias[f])``."""
    images, filters, length = y.shape
    for i in range(cuda.grid(1), y.size, cuda.gridsize(1)):
        place = i % length
        f = (i // length) % filters
        n = i // (length * filters)
        if has_bias:
            y[n, f, place] = product_out[f, n, place] + bias[f]
        else:
            y[n, f, place] = product_out[f, n, place]


def _columns(x, w, layout, out, groups):
    """``x`` on the device in ``w``'s dtype, and its im2col ``(groups, C/groups * KH * KW, N * OH * OW)``."""
    x = operand("conv2d", x, w.dtype)
    cols = empty((groups, w.size // w.shape[0], x.shape[0] * out[0] * out[1]), w.dtype)
    launch(_im2col, cols.size, x, *layout, out[1], cols)
    return x, cols


def _grouped_adjoint(grad, w, y_shape, groups):
    """The output adjoint moved to ``(F, N, OH * OW)`` and as ``(groups, F/groups, N * OH * OW)``."""
    grad = adjoint("conv2d", grad, y_shape, w.dtype)
    images, filters, out_h, out_w = y_shape
    moved = permute(grad.reshape(images, filters, out_h * out_w), (1, 0, 2))
    return moved, moved.reshape(groups, filters // groups, images * out_h * out_w)


def _weight_grads(moved, grouped, cols, w, has_bias):
    grad_w = product(grouped, cols, transpose_b=True).reshape(w.shape)
    grad_b = reduce_rows(moved.reshape(moved.shape[0], moved.shape[1] * moved.shape[2]), SUM) if has_bias else None
    return grad_w, grad_b


def _input_grad(grouped, w, x_shape, layout, y_shape, groups):
    weights = w.reshape(groups, w.shape[0] // groups, w.size // w.shape[0])
    grad_cols = product(weights, grouped, transpose_a=True)
    grad_x = empty(x_shape, w.dtype)
    launch(_col2im, grad_x.size, grad_cols, *layout, y_shape[2], y_shape[3], grad_x)
    return grad_x


def conv2d_forward(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Cross-correlation of ``x`` (N, C, H, W) with ``w`` (F, C/groups, KH, KW), plus ``b`` (F,)."""
    layout, (out_h, out_w) = _geometry(x, w, b, stride, padding, dilation, groups)
    w = contiguous("conv2d", w)
    x, cols = _columns(x, w, layout, (out_h, out_w), groups)
    has_bias = b is not None
    bias = operand("conv2d", b, w.dtype) if has_bias else empty((1,), w.dtype)
    images, filters = x.shape[0], w.shape[0]
    length = out_h * out_w
    weights = w.reshape(groups, filters // groups, w.size // filters)
    flat_y = product(weights, cols).reshape(filters, images, length)
    y = empty((images, filters, length), w.dtype)
    launch(_to_nchw, y.size, flat_y, bias, has_bias, y)
    y = y.reshape(images, filters, out_h, out_w)
    return y, (tuple(x.shape), w, has_bias, cols, layout, tuple(y.shape))


def conv2d_backward(grad, saved):
    """Adjoints ``(x, w, b)``; the bias adjoint is None when there was no bias."""
    x_shape, w, has_bias, cols, layout, y_shape = saved
    groups = cols.shape[0]
    moved, grouped = _grouped_adjoint(grad, w, y_shape, groups)
    grad_w, grad_b = _weight_grads(moved, grouped, cols, w, has_bias)
    return _input_grad(grouped, w, x_shape, layout, y_shape, groups), grad_w, grad_b


def _output_shape(x, w, out):
    return (x.shape[0], w.shape[0], *out)


def conv2d_input_backward(grad, x, w, stride=1, padding=0, dilation=1, groups=1):
    """The adjoint of ``x`` alone, from the weights and ``x``'s shape: no im2col, no forward
    product (``cpsgrad.nn_backward.conv2d_input``)."""
    layout, out = _geometry(x, w, None, stride, padding, dilation, groups)
    w = contiguous("conv2d", w)
    y_shape = _output_shape(x, w, out)
    _, grouped = _grouped_adjoint(grad, w, y_shape, groups)
    return _input_grad(grouped, w, tuple(x.shape), layout, y_shape, groups)


def conv2d_weight_backward(grad, x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """The adjoints ``(w, b)`` (b's None without a bias): im2col of ``x`` again, no forward
    product (``cpsgrad.nn_backward.conv2d_weights``)."""
    layout, out = _geometry(x, w, b, stride, padding, dilation, groups)
    w = contiguous("conv2d", w)
    x, cols = _columns(x, w, layout, out, groups)
    moved, grouped = _grouped_adjoint(grad, w, _output_shape(x, w, out), groups)
    return _weight_grads(moved, grouped, cols, w, b is not None)
