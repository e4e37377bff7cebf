"""Shape helpers shared by the CPU kernels: undoing broadcasting, axes, flattening to rows."""

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple


def unbroadcast(grad: np.ndarray, shape: tuple, dtype) -> np.ndarray:
    """Sum ``grad`` over the axes that broadcasting added or stretched, giving ``shape``."""
    if grad.shape != shape:
        extra = grad.ndim - len(shape)
        stretched = tuple(
            axis + extra
            for axis, size in enumerate(shape)
            if size == 1 and grad.shape[axis + extra] != 1
        )
        grad = grad.sum(axis=tuple(range(extra)) + stretched).reshape(shape)
    return np.asarray(grad, dtype=dtype)


def flat(array: np.ndarray, dtype=None) -> np.ndarray:
    """A C-contiguous 1-D view (or copy) of ``array``, optionally cast to ``dtype``."""
    return np.ravel(array).astype(dtype or array.dtype, copy=False)


def reduction_axes(op: str, shape: tuple, axis) -> tuple[int, ...]:
    """Normalise ``axis`` (None, int or tuple, negatives allowed) for an array of ``shape``."""
    if axis is None:
        return tuple(range(len(shape)))
    try:
        return normalize_axis_tuple(axis, len(shape))
    except ValueError as error:
        raise ValueError(f"{op}: axis {axis} is invalid for shape {shape} ({error})") from None


def to_rows(array: np.ndarray, axes: tuple[int, ...]):
    """Move ``axes`` last and flatten to a C-contiguous ``(rows, reduced)`` matrix.

    Returns the matrix and what ``from_rows`` needs to undo it.
    """
    kept = tuple(axis for axis in range(array.ndim) if axis not in axes)
    order = kept + axes
    moved = np.transpose(array, order)
    count = len(kept)
    rows = np.ascontiguousarray(moved).reshape(
        int(np.prod(moved.shape[:count], dtype=np.int64)),
        int(np.prod(moved.shape[count:], dtype=np.int64)),
    )
    return rows, (order, moved.shape)


def from_rows(rows: np.ndarray, layout) -> np.ndarray:
    """Undo ``to_rows``: reshape, move the axes back to their places, make C-contiguous."""
    order, moved_shape = layout
    return np.asarray(np.transpose(rows.reshape(moved_shape), np.argsort(order)), order="C")


def pair(op: str, name: str, value) -> tuple[int, int]:
    """An int or a pair of ints as ``(height, width)``; rejects negative values."""
    if type(value) is int and value >= 0:  # the common case, without numpy (per-call overhead)
        return value, value
    result = (value, value) if np.ndim(value) == 0 else tuple(value)
    if len(result) != 2 or any(int(v) != v or v < 0 for v in result):
        raise ValueError(f"{op}: {name} must be a non-negative int or a pair of them, got {value}")
    return int(result[0]), int(result[1])
