"""Reductions over axes with ``keepdims`` on the device: sum, mean, max, min, logsumexp.

The reduced axes are moved last (a strided copy when needed) and each row is folded by one
block (``rows.py``); backwards spread the adjoint back the same way. Ties in max and min share
the adjoint equally (JAX's convention).
"""

from cpsgrad.kernels.cpu.shapes import reduction_axes
from cpsgrad.kernels.cuda.arrays import contiguous, operand
from cpsgrad.kernels.cuda.layout import from_rows, to_rows
from cpsgrad.kernels.cuda.rows import (
    EXP_SHIFTED,
    LOGSUMEXP,
    MAX,
    MIN,
    SPREAD,
    SUM,
    TIES,
    reduce_rows,
    spread_rows,
)


def _reduce(op, code, x, axis, keepdims):
    x = contiguous(op, x)
    axes = reduction_axes(op, tuple(x.shape), axis)
    if op in ("max", "min") and 0 in [x.shape[a] for a in axes]:
        raise ValueError(f"{op}: zero-size array to reduction operation (shape {x.shape}, axis {axis})")
    rows, _ = to_rows(x, axes)
    count = rows.shape[1]
    scale = 1.0 / max(count, 1) if op == "mean" else 1.0
    y = reduce_rows(rows, code, scale)
    kept = tuple(1 if a in axes else size for a, size in enumerate(x.shape))
    shape = kept if keepdims else tuple(s for a, s in enumerate(x.shape) if a not in axes)
    return y.reshape(shape), (op, x, y, axes, scale)


def _spread(grad, saved, code):
    op, x, y, axes, scale = saved
    grad = operand(op, grad, x.dtype)
    rows, layout = to_rows(x, axes)
    if grad.size != rows.shape[0]:
        raise ValueError(f"{op}: adjoint shape {grad.shape} does not match the reduced output")
    flat_y = y.reshape(y.size)
    return (from_rows(spread_rows(rows, flat_y, grad.reshape(grad.size), code, scale), layout),)


def sum_forward(x, axis=None, keepdims=False):
    return _reduce("sum", SUM, x, axis, keepdims)


def mean_forward(x, axis=None, keepdims=False):
    return _reduce("mean", SUM, x, axis, keepdims)


def max_forward(x, axis=None, keepdims=False):
    return _reduce("max", MAX, x, axis, keepdims)


def min_forward(x, axis=None, keepdims=False):
    return _reduce("min", MIN, x, axis, keepdims)


def logsumexp_forward(x, axis=None, keepdims=False):
    return _reduce("logsumexp", LOGSUMEXP, x, axis, keepdims)


def sum_backward(grad, saved):
    return _spread(grad, saved, SPREAD)


mean_backward = sum_backward


def max_backward(grad, saved):
    return _spread(grad, saved, TIES)


min_backward = max_backward


def logsumexp_backward(grad, saved):
    return _spread(grad, saved, EXP_SHIFTED)


def ties_backward(grad, x, y, axis):
    """The adjoint of ``x`` in ``y = max(x, axis)`` (or min) from ``x`` and ``y`` alone: ``grad``
    shared equally among the elements equal to their row's ``y`` (for callers that did not keep
    the forward's residuals)."""
    x = contiguous("max", x)
    saved = ("max", x, y, reduction_axes("max", tuple(x.shape), axis), 1.0)
    return _spread(grad, saved, TIES)[0]
