"""gather (scatter-add backward with atomics), embedding, concatenate, stack and pad on the device.

gather reads ``x`` as ``(outer, count, inner)`` around the gathered axis: one thread an output
element, and the backward adds each adjoint element into its source row with ``cuda.atomic.add``
(repeated indices accumulate). Out-of-range indices set a device flag that the forward reads back
(one synchronising copy) to raise numpy's IndexError. concatenate, stack and pad are strided
copies (``layout.scatter_view`` / ``gather_view``) into and out of the larger array.
"""

import numpy as np
from numba import cuda

from cpsgrad.kernels.cuda.arrays import (
    adjoint,
    contiguous,
    empty,
    flat,
    full,
    raise_if_flagged,
    size_of,
    zeros,
)
from cpsgrad.kernels.cuda.jit import kernel, launch
from cpsgrad.kernels.cuda.layout import gather_view, scatter_view, strides_of


@kernel("void({f}[::1], int64[::1], {f}[::1], int64, int64, {f}[::1])")
def _gather(x, indices, y, count, inner, flag):
    n = indices.size
    for i in range(cuda.grid(1), y.size, cuda.gridsize(1)):
        r = i % inner
        k = (i // inner) % n
        outer = i // (inner * n)
        index = indices[k]
        if index < 0:
            index += count
        if 0 <= index < count:
            y[i] = x[(outer * count + index) * inner + r]
        else:
            flag[0] = 1
            y[i] = 0


@kernel("void({f}[::1], int64[::1], {f}[::1], int64, int64)")
def _scatter_add(g, indices, out, count, inner):
    n = indices.size
    for i in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        r = i % inner
        k = (i // inner) % n
        outer = i // (inner * n)
        index = indices[k]
        if index < 0:
            index += count
        cuda.atomic.add(out, (outer * count + index) * inner + r, g[i])


def _device_indices(indices):
    """Indices as a contiguous device array: device arrays pass, lists and ints are moved."""
    if hasattr(indices, "copy_to_host"):
        return contiguous("gather", indices)
    host = np.asarray(indices)
    if host.dtype.kind not in "iu" and host.size:
        raise TypeError(f"gather: indices must be integers, got {host.dtype}")
    host = host.astype(np.int64)
    return cuda.to_device(host.reshape(host.size)).reshape(host.shape)


def gather_forward(x, indices, axis=0):
    x = contiguous("gather", x)
    indices = _device_indices(indices)
    shape = tuple(x.shape)
    try:
        axis = np.lib.array_utils.normalize_axis_index(axis, x.ndim)
    except ValueError as error:
        raise type(error)(f"gather: {error} (shape {shape}, axis {axis})") from None
    count, inner = shape[axis], size_of(shape[axis + 1 :])
    y = empty(shape[:axis] + tuple(indices.shape) + shape[axis + 1 :], x.dtype)
    if y.size:
        flag = zeros((1,), x.dtype)
        launch(_gather, y.size, flat(x), flat(indices), flat(y), count, inner, flag)
        raise_if_flagged(
            flag,
            IndexError(f"gather: index out of bounds for axis {axis} with size {count} "
                       f"(shape {shape}, axis {axis})"),
        )
    return y, (shape, x.dtype, indices, axis, tuple(y.shape))


def gather_backward(grad, saved):
    """Adjoint of ``x`` (indices are not differentiable)."""
    shape, dtype, indices, axis, out_shape = saved
    grad = adjoint("gather", grad, out_shape, dtype)
    out = zeros(shape, dtype)
    if grad.size:
        launch(_scatter_add, grad.size, flat(grad), flat(indices), flat(out), shape[axis],
               size_of(shape[axis + 1 :]))
    return (out,)


def embedding_forward(table, ids):
    if table.ndim != 2:
        raise ValueError(f"embedding: table must be 2-D (vocabulary, features), got {table.shape}")
    return gather_forward(table, ids, axis=0)


embedding_backward = gather_backward


def _parts(op, arrays):
    if not arrays:
        raise ValueError(f"{op}: need at least one array")
    dtype = arrays[0].dtype
    for array in arrays:
        if array.dtype != dtype:
            raise TypeError(f"{op}: device operands must share one dtype, got {array.dtype} and {dtype}")
        contiguous(op, array)
    return [tuple(array.shape) for array in arrays], dtype


def _words(shapes):
    return " ".join(str(shape) for shape in shapes)


def concatenate_forward(*arrays, axis=0):
    shapes, dtype = _parts("concatenate", arrays)
    ndim = len(shapes[0])
    problem = None
    if ndim == 0:
        problem = "zero-dimensional arrays cannot be concatenated"
    else:
        try:
            axis = np.lib.array_utils.normalize_axis_index(axis, ndim)
        except ValueError as error:
            problem = str(error)
    for index, shape in enumerate(shapes):
        if problem is not None:
            break
        if len(shape) != ndim:
            problem = (
                "all the input array dimensions except for the concatenation axis must match "
                f"exactly, but the array at index 0 has {ndim} dimension(s) and the array at "
                f"index {index} has {len(shape)} dimension(s)"
            )
            break
        for a in range(ndim):
            if a != axis and shape[a] != shapes[0][a]:
                problem = (
                    "all the input array dimensions except for the concatenation axis must match "
                    f"exactly, but along dimension {a}, the array at index 0 has size "
                    f"{shapes[0][a]} and the array at index {index} has size {shape[a]}"
                )
                break
    if problem is not None:
        raise ValueError(f"concatenate: {problem} (shapes {_words(shapes)}, axis {axis})")
    out_shape = list(shapes[0])
    out_shape[axis] = sum(shape[axis] for shape in shapes)
    y = empty(out_shape, dtype)
    strides = strides_of(out_shape)
    offset = 0
    for array, shape in zip(arrays, shapes, strict=True):
        if array.size:
            scatter_view(array, y, strides, offset * strides[axis])
        offset += shape[axis]
    return y, (shapes, axis, tuple(out_shape), dtype)


def concatenate_backward(grad, saved):
    shapes, axis, out_shape, dtype = saved
    grad = adjoint("concatenate", grad, out_shape, dtype)
    strides = strides_of(out_shape)
    parts, offset = [], 0
    for shape in shapes:
        parts.append(gather_view(grad, shape, strides, offset * strides[axis]))
        offset += shape[axis]
    return tuple(parts)


def stack_forward(*arrays, axis=0):
    shapes, dtype = _parts("stack", arrays)
    if any(shape != shapes[0] for shape in shapes):
        raise ValueError(
            f"stack: all input arrays must have the same shape (shapes {_words(shapes)}, axis {axis})"
        )
    try:
        axis = np.lib.array_utils.normalize_axis_index(axis, len(shapes[0]) + 1)
    except ValueError as error:
        raise ValueError(f"stack: {error} (shapes {_words(shapes)}, axis {axis})") from None
    out_shape = shapes[0][:axis] + (len(arrays),) + shapes[0][axis:]
    y = empty(out_shape, dtype)
    strides = strides_of(out_shape)
    part_strides = strides[:axis] + strides[axis + 1 :]
    for k, array in enumerate(arrays):
        if array.size:
            scatter_view(array, y, part_strides, k * strides[axis])
    return y, (shapes[0], axis, out_shape, dtype)


def stack_backward(grad, saved):
    shape, axis, out_shape, dtype = saved
    grad = adjoint("stack", grad, out_shape, dtype)
    strides = strides_of(out_shape)
    part_strides = strides[:axis] + strides[axis + 1 :]
    return tuple(
        gather_view(grad, shape, part_strides, k * strides[axis]) for k in range(out_shape[axis])
    )


def pad_forward(x, pad_width, value=0.0):
    """Constant padding; ``pad_width`` as numpy's ``np.pad`` takes it (non-negative)."""
    x = contiguous("pad", x)
    try:
        widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2))
    except ValueError:
        raise ValueError(f"pad: pad_width {pad_width} does not fit shape {x.shape}") from None
    if (widths < 0).any():
        raise ValueError(f"pad: pad_width {pad_width} has negative entries")
    shape = tuple(int(size + lo + hi) for size, (lo, hi) in zip(x.shape, widths, strict=True))
    y = full(shape, x.dtype, value)
    strides = strides_of(shape)
    start = sum(int(lo) * stride for (lo, _), stride in zip(widths, strides, strict=True))
    if x.size:
        scatter_view(x, y, strides, start)
    return y, (tuple(x.shape), shape, strides, start, x.dtype)


def pad_backward(grad, saved):
    shape, out_shape, strides, start, dtype = saved
    grad = adjoint("pad", grad, out_shape, dtype)
    return (gather_view(grad, shape, strides, start),)
