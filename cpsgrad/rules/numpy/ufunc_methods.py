"""Derivative rules for the methods of numpy's differentiable ufuncs: `reduce` (add, multiply,
maximum, minimum, fmax, fmin), `accumulate` (add, multiply) and `outer` (add, subtract,
multiply, divide, maximum, minimum).

`np.add.reduce` is a new bound method at each attribute read; the table files it under its
ufunc and its name (`registry._key`), so each read finds the rule. The reductions are those of
`np.sum`, `np.prod`, `np.max`/`np.min` (ties share equally) and `np.nanmax`/`np.nanmin`, with
numpy's default `axis=0`; `x.outer` is the elementwise op of `a` over every element of `b`, with
that op's conventions (a tie in `np.maximum.outer` gives half to each side). `where=` and
`initial=` of reduce are masked_reductions.py's; `out=` is not taken (refused). `np.add.at`,
`np.subtract.at` and `np.multiply.at` write in place: they are writes (transforms/ufunc_writes.py),
not rules; the other ufuncs' `at` is refused there.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad.rules.numpy.binary import tie_share
from cpsgrad.rules.numpy.differences import cumprod_adjoint
from cpsgrad.rules.numpy.nan_reductions import nan_extremum_adjoint
from cpsgrad.rules.numpy.reductions import (
    array_product_adjoint,
    cumsum_adjoint,
    extremum_adjoint,
    sum_adjoint,
)
from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import unbroadcast

# ---- reduce -----------------------------------------------------------------------------------


@rule(np.add.reduce)
def add_reduce(array, axis=0, dtype=None, *, keepdims=False):
    y = np.add.reduce(array, axis, dtype, keepdims=keepdims)
    y_d = yield y
    array_d += sum_adjoint(y_d, array, axis, keepdims)


@rule(np.multiply.reduce)
def multiply_reduce(array, axis=0, dtype=None, *, keepdims=False):
    y = np.multiply.reduce(array, axis, dtype, keepdims=keepdims)
    y_d = yield y
    array_d += array_product_adjoint(y_d, array, axis, keepdims)


@rule(np.maximum.reduce)
@rule(np.minimum.reduce)
def maximum_reduce(array, axis=0, dtype=None, *, keepdims=False):
    y = np.maximum.reduce(array, axis, dtype, keepdims=keepdims)
    y_d = yield y
    array_d += extremum_adjoint(y_d, array, y, axis, keepdims)


@rule(np.fmax.reduce)
@rule(np.fmin.reduce)
def fmax_reduce(array, axis=0, dtype=None, *, keepdims=False):
    y = np.fmax.reduce(array, axis, dtype, keepdims=keepdims)
    y_d = yield y
    array_d += nan_extremum_adjoint(y_d, array, y, axis, keepdims)


# ---- accumulate -------------------------------------------------------------------------------


@rule(np.add.accumulate)
def add_accumulate(array, axis=0, dtype=None):
    y = np.add.accumulate(array, axis, dtype)
    y_d = yield y
    array_d += cumsum_adjoint(y_d, array, axis)


@rule(np.multiply.accumulate)
def multiply_accumulate(array, axis=0, dtype=None):
    y = np.multiply.accumulate(array, axis, dtype)
    y_d = yield y
    array_d += cumprod_adjoint(y_d, array, axis)


# ---- outer ------------------------------------------------------------------------------------


@rule(np.add.outer)
def add_outer(a, b):
    y = np.add.outer(a, b)
    y_d = yield y
    a_d += outer_adjoint(y_d, a, b, "add", 0)
    b_d += outer_adjoint(y_d, a, b, "add", 1)


@rule(np.subtract.outer)
def subtract_outer(a, b):
    y = np.subtract.outer(a, b)
    y_d = yield y
    a_d += outer_adjoint(y_d, a, b, "subtract", 0)
    b_d += outer_adjoint(y_d, a, b, "subtract", 1)


@rule(np.multiply.outer)
def multiply_outer(a, b):
    y = np.multiply.outer(a, b)
    y_d = yield y
    a_d += outer_adjoint(y_d, a, b, "multiply", 0)
    b_d += outer_adjoint(y_d, a, b, "multiply", 1)


@rule(np.divide.outer)
def divide_outer(a, b):
    y = np.divide.outer(a, b)
    y_d = yield y
    a_d += outer_adjoint(y_d, a, b, "divide", 0)
    b_d += outer_adjoint(y_d, a, b, "divide", 1)


@rule(np.maximum.outer)
def maximum_outer(a, b):
    y = np.maximum.outer(a, b)
    y_d = yield y
    a_d += outer_adjoint(y_d, a, b, "maximum", 0)
    b_d += outer_adjoint(y_d, a, b, "maximum", 1)


@rule(np.minimum.outer)
def minimum_outer(a, b):
    y = np.minimum.outer(a, b)
    y_d = yield y
    a_d += outer_adjoint(y_d, a, b, "minimum", 0)
    b_d += outer_adjoint(y_d, a, b, "minimum", 1)


# ---- helpers ----------------------------------------------------------------------------------


def _slopes(operation: str, left, right):
    """d op / d left and d op / d right of the elementwise op, at broadcast operands."""
    if operation == "add":
        return 1.0, 1.0
    if operation == "subtract":
        return 1.0, -1.0
    if operation == "multiply":
        return right, left
    if operation == "divide":
        with np.errstate(divide="ignore", invalid="ignore"):
            return 1.0 / right, -left / (right * right)
    result = np.maximum(left, right) if operation == "maximum" else np.minimum(left, right)
    return tie_share(left, right, result), tie_share(right, left, result)


def outer_adjoint(adjoint, a, b, operation: str, which: int):
    """The adjoint of `a` (which 0) or `b` (which 1) in `np.<operation>.outer(a, b)`: the
    elementwise op's, with `a` given one size-1 axis for each of `b`'s."""
    if is_zero(adjoint):
        return 0.0
    left = np.reshape(np.asarray(a), np.shape(a) + (1,) * np.ndim(b))
    right = np.asarray(b)
    slope = _slopes(operation, left, right)[which]
    upstream = np.asarray(adjoint) * slope
    if which == 0:
        shape = left.shape
        summed = (
            np.sum(upstream, axis=tuple(range(np.ndim(a), upstream.ndim)), keepdims=True) if np.ndim(b) else upstream
        )
        return unbroadcast(np.reshape(np.broadcast_to(summed, shape), np.shape(a)), a)
    return unbroadcast(np.broadcast_to(upstream, np.shape(adjoint)), b)
