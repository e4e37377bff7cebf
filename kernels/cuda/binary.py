"""Broadcasting binary ops and ``where`` on the device.

One forward kernel reads both operands through broadcast strides (no broadcast copies); the
backward kernel writes both adjoints over the broadcast shape in one pass, then broadcast axes
are summed away by a block reduction. Both run the formulas of
``cpsgrad.kernels.formulas.catalog.BINARY``, chosen by the entry's code (a launch argument).
Ties in maximum/minimum give half to each side (JAX).
"""

import math

import numpy as np
from numba import cuda

from cpsgrad.kernels.cuda.arrays import adjoint, empty, flat, metadata, operand
from cpsgrad.kernels.cuda.jit import compile_formulas, device, kernel, launch
from cpsgrad.kernels.cuda.layout import broadcast_shape, strides_of, sum_to_shape
from cpsgrad.kernels.cuda.select import selector
from cpsgrad.kernels.formulas import binary
from cpsgrad.kernels.formulas.catalog import BINARY


@device
def _offsets(i, meta):
    """Offsets into the first and second operand of broadcast element ``i`` (meta rows:
    output shape, first strides, second strides)."""
    rest, first, second = i, 0, 0
    for axis in range(meta.shape[1] - 1, -1, -1):
        index = rest % meta[0, axis]
        rest //= meta[0, axis]
        first += index * meta[1, axis]
        second += index * meta[2, axis]
    return first, second


_formulas = compile_formulas(binary)


@device
def _no_op(*args):
    return math.nan


@device
def _no_adjoints(*args):
    return math.nan, math.nan


_value = selector(BINARY, lambda entry: getattr(_formulas, entry.value.__name__), _no_op)
_adjoints = selector(BINARY, lambda entry: getattr(_formulas, entry.adjoints.__name__), _no_adjoints)


@kernel("void({f}[::1], {f}[::1], {f}[::1], int64[:, ::1], int64)")
def _forward(a, b, out, meta, code):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        first, second = _offsets(i, meta)
        out[i] = _value(code, a[first], b[second])


@kernel("void({f}[::1], {f}[::1], {f}[::1], {f}[::1], {f}[::1], {f}[::1], int64[:, ::1], int64)")
def _backward(g, a, b, y, grad_a, grad_b, meta, code):
    for i in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        first, second = _offsets(i, meta)
        grad_a[i], grad_b[i] = _adjoints(code, g[i], a[first], b[second], y[i])


@kernel("void(boolean[::1], {f}[::1], {f}[::1], {f}[::1], int64[:, ::1])")
def _where(condition, a, b, out, meta):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        first, second = _offsets(i, meta)
        rest, offset = i, 0
        for axis in range(meta.shape[1] - 1, -1, -1):
            offset += (rest % meta[0, axis]) * meta[3, axis]
            rest //= meta[0, axis]
        out[i] = a[first] if condition[offset] else b[second]


@kernel("void(boolean[::1], {f}[::1], {f}[::1], {f}[::1], int64[:, ::1])")
def _where_backward(condition, g, grad_a, grad_b, meta):
    for i in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        rest, offset = i, 0
        for axis in range(meta.shape[1] - 1, -1, -1):
            offset += (rest % meta[0, axis]) * meta[3, axis]
            rest //= meta[0, axis]
        chosen = condition[offset]
        grad_a[i] = g[i] if chosen else 0
        grad_b[i] = 0 if chosen else g[i]


def _strides(shape, out_shape):
    extra = len(out_shape) - len(shape)
    own = strides_of(shape)
    return [0] * extra + [0 if size == 1 else own[a] for a, size in enumerate(shape)]


def _meta(out_shape, *shapes):
    rows = [list(out_shape)] + [_strides(s, out_shape) for s in shapes]
    return metadata(rows if out_shape else [[1]] + [[0]] * len(shapes))


def _operands(op, a, b):
    """Both operands as device arrays of one dtype: the array operand's; float64 (numpy's) when
    both are Python numbers (``where(condition, 1.0, 0.0)``)."""
    dtype = a.dtype if hasattr(a, "dtype") else b.dtype if hasattr(b, "dtype") else np.dtype(np.float64)
    return operand(op, a, dtype), operand(op, b, dtype)


def _binary(op, code, a, b):
    a, b = _operands(op, a, b)
    shape = broadcast_shape(op, a.shape, b.shape)
    y = empty(shape, a.dtype)
    launch(_forward, y.size, flat(a), flat(b), flat(y), _meta(shape, a.shape, b.shape), code)
    return y, (op, code, a, b, y)


def _binary_backward(grad, saved):
    op, code, a, b, y = saved
    grad = adjoint(op, grad, y.shape, y.dtype)
    grad_a, grad_b = empty(y.shape, y.dtype), empty(y.shape, y.dtype)
    meta = _meta(y.shape, a.shape, b.shape)
    launch(_backward, y.size, *(flat(v) for v in (grad, a, b, y, grad_a, grad_b)), meta, code)
    return sum_to_shape(grad_a, a.shape), sum_to_shape(grad_b, b.shape)


def _define(entry):
    def forward(a, b):
        return _binary(entry.name, entry.code, a, b)

    forward.__name__ = forward.__qualname__ = f"{entry.name}_forward"
    forward.__doc__ = f"{entry.name} of device arrays (broadcasting); returns ``(y, saved)``."
    return forward


for _entry in BINARY:
    globals()[f"{_entry.name}_forward"] = _define(_entry)
    globals()[f"{_entry.name}_backward"] = _binary_backward


def _condition(condition):
    if not hasattr(condition, "copy_to_host"):
        raise TypeError("where: the condition must be a device array with the operands")
    if condition.dtype.kind != "b":
        raise TypeError(f"where: the device condition must be a bool array, got {condition.dtype}")
    return condition


def where_forward(condition, a, b):
    condition = _condition(condition)
    a, b = _operands("where", a, b)
    shape = broadcast_shape("where", condition.shape, a.shape, b.shape)
    y = empty(shape, a.dtype)
    meta = _meta(shape, a.shape, b.shape, condition.shape)
    launch(_where, y.size, flat(condition), flat(a), flat(b), flat(y), meta)
    return y, (condition, a.shape, b.shape, y.shape, y.dtype)


def where_backward(grad, saved):
    """Adjoints of ``a`` and ``b`` (the condition is not differentiable)."""
    condition, shape_a, shape_b, shape, dtype = saved
    grad = adjoint("where", grad, shape, dtype)
    grad_a, grad_b = empty(shape, dtype), empty(shape, dtype)
    meta = _meta(shape, shape_a, shape_b, condition.shape)
    launch(_where_backward, grad.size, flat(condition), flat(grad), flat(grad_a), flat(grad_b), meta)
    return sum_to_shape(grad_a, shape_a), sum_to_shape(grad_b, shape_b)
