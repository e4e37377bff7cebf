"""Indexing and assembly: gather (scatter-add backward), embedding lookup, concatenate, stack, pad.

The scatter-add of gather and embedding is a numba loop over rows (numpy's ``np.add.at`` is
an order of magnitude slower); the rest are numpy copies.
"""

import numpy as np

from cpsgrad.kernels.cpu.jit import serial


@serial
def _scatter_rows(grad_rows, indices, out):
    count = out.shape[0]
    for k in range(indices.size):
        row = indices[k] + count if indices[k] < 0 else indices[k]
        for j in range(out.shape[1]):
            out[row, j] += grad_rows[k, j]


def gather_forward(x, indices, axis=0):
    indices = np.asarray(indices)
    try:
        axis = np.lib.array_utils.normalize_axis_index(axis, x.ndim)
        y = np.take(x, indices, axis=axis)
    except (ValueError, IndexError) as error:
        raise type(error)(f"gather: {error} (shape {x.shape}, axis {axis})") from None
    return y, (x.shape, x.dtype, indices, axis)


def gather_backward(grad, saved):
    """Adjoint of ``x`` (indices are not differentiable)."""
    shape, dtype, indices, axis = saved
    index_axes = tuple(range(axis, axis + indices.ndim))
    rest = tuple(a for a in range(np.ndim(grad)) if a not in index_axes)
    moved = (shape[axis],) + shape[:axis] + shape[axis + 1 :]
    out = np.zeros((moved[0], int(np.prod(moved[1:], dtype=np.int64))), dtype)
    rows = np.asarray(np.transpose(grad, index_axes + rest), dtype=dtype, order="C")
    _scatter_rows(rows.reshape(indices.size, out.shape[1]), np.ravel(indices).astype(np.int64), out)
    return (np.asarray(np.moveaxis(out.reshape(moved), 0, axis), order="C"),)


def embedding_forward(table, ids):
    if table.ndim != 2:
        raise ValueError(f"embedding: table must be 2-D (vocabulary, features), got {table.shape}")
    return gather_forward(table, ids, axis=0)


embedding_backward = gather_backward


def _sizes(arrays, axis):
    return [array.shape[axis] for array in arrays]


def concatenate_forward(*arrays, axis=0):
    try:
        y = np.concatenate(arrays, axis=axis)
    except ValueError as error:
        shapes = " ".join(str(np.shape(array)) for array in arrays)
        raise ValueError(f"concatenate: {error} (shapes {shapes}, axis {axis})") from None
    axis = np.lib.array_utils.normalize_axis_index(axis, y.ndim)
    return y, (np.cumsum(_sizes(arrays, axis))[:-1], axis)


def concatenate_backward(grad, saved):
    offsets, axis = saved
    return tuple(np.asarray(part, order="C") for part in np.split(grad, offsets, axis=axis))


def stack_forward(*arrays, axis=0):
    try:
        y = np.stack(arrays, axis=axis)
    except ValueError as error:
        shapes = " ".join(str(np.shape(array)) for array in arrays)
        raise ValueError(f"stack: {error} (shapes {shapes}, axis {axis})") from None
    return y, (np.lib.array_utils.normalize_axis_index(axis, y.ndim),)


def stack_backward(grad, saved):
    (axis,) = saved
    return tuple(np.take(grad, i, axis=axis) for i in range(grad.shape[axis]))


def pad_forward(x, pad_width, value=0.0):
    """Constant padding; ``pad_width`` as numpy's ``np.pad`` takes it (non-negative)."""
    try:
        widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2))
    except ValueError:
        raise ValueError(f"pad: pad_width {pad_width} does not fit shape {x.shape}") from None
    if (widths < 0).any():
        raise ValueError(f"pad: pad_width {pad_width} has negative entries")
    y = np.pad(x, widths, mode="constant", constant_values=value)
    return y, (widths,)


def pad_backward(grad, saved):
    (widths,) = saved
    inner = tuple(slice(int(lo), grad.shape[a] - int(hi)) for a, (lo, hi) in enumerate(widths))
    return (np.asarray(grad[inner], order="C"),)
