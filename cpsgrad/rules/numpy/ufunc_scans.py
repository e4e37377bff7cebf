"""Derivative rules for the running extrema and the segment reductions of numpy's ufuncs:
`np.maximum.accumulate`, `np.minimum.accumulate` (axis int or negative, dtype) and `reduceat`
of add, multiply, maximum and minimum (indices, axis, dtype).

`maximum.accumulate` is y[i] = max(x[:i+1]) (along the axis): its adjoint is shared equally
among the elements of that prefix equal to y[i], as `np.max`'s rule shares a tie. JAX's
(lax.cummax, jnp.maximum.accumulate, jnp.maximum.reduceat) differentiates the tree of pairwise
`lax.max` its scan evaluates, half to each side at each tie: the same where two elements tie,
an uneven split where three or more do (x = [1, 1, 1]: y[2]'s adjoint is 1/3 each here, 1/4,
1/4, 1/2 in JAX). A NaN in a prefix makes that output NaN, and the gradient of its prefix NaN.

`reduceat(x, indices)` reduces x[indices[i]:indices[i+1]] into output i (x[indices[i]] alone where
indices[i] >= indices[i+1]; the last one to the end), segments that may overlap: each output's
adjoint goes back through its segment's reduction (a sum's repeated, a product's the product of
the others, zeros allowed, an extremum's shared among ties). `out=` is not taken (refused).
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad.errors import UnsupportedError
from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.rules.numpy.reductions import array_product_adjoint, extremum_adjoint
from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import refuse_complex, unbroadcast

# ---- running extrema --------------------------------------------------------------------------


@rule(np.maximum.accumulate)
@rule(np.minimum.accumulate)
def maximum_accumulate(array, axis=0, dtype=None):
    y = np.maximum.accumulate(array, axis, dtype)
    y_d = yield y
    array_d += running_extremum_adjoint(y_d, array, y, axis)


# ---- reduceat ---------------------------------------------------------------------------------


@rule(np.add.reduceat)
def add_reduceat(array, indices, axis=0, dtype=None):
    y = np.add.reduceat(array, indices, axis, dtype)
    y_d = yield y
    array_d += reduceat_adjoint(y_d, array, y, indices, axis, "add")


@rule(np.multiply.reduceat)
def multiply_reduceat(array, indices, axis=0, dtype=None):
    y = np.multiply.reduceat(array, indices, axis, dtype)
    y_d = yield y
    array_d += reduceat_adjoint(y_d, array, y, indices, axis, "multiply")


@rule(np.maximum.reduceat)
@rule(np.minimum.reduceat)
def maximum_reduceat(array, indices, axis=0, dtype=None):
    y = np.maximum.reduceat(array, indices, axis, dtype)
    y_d = yield y
    array_d += reduceat_adjoint(y_d, array, y, indices, axis, "extremum")


# ---- helpers ----------------------------------------------------------------------------------


def _host(x, construct):
    if type(x) is DeviceArray:
        raise UnsupportedError(None, f"{construct} of a DeviceArray", "copy the array to the host first")
    refuse_complex(x, f"{construct} of complex values")


def running_extremum_adjoint(adjoint, x, result, axis):
    """`maximum.accumulate`/`minimum.accumulate` backward: y[i]'s adjoint shared equally among
    the j <= i with x[j] == y[i]. Those j all lie in the run of equal outputs that holds i (y is
    monotone), where x[j] == y[j]; so the share of y[i] is over the hits from its run's start to
    i, and x[j] gets the sum of the shares of the outputs from j to its run's end."""
    if is_zero(adjoint):
        return 0.0
    _host(x, "np.maximum.accumulate")
    values = np.moveaxis(np.asarray(x), axis, 0)
    y = np.moveaxis(np.asarray(result), axis, 0)
    upstream = np.moveaxis(np.broadcast_to(adjoint, np.shape(result)), axis, 0)
    n = values.shape[0]
    if n == 0:
        return unbroadcast(np.zeros(np.shape(x)), x)
    positions = np.arange(n).reshape((n,) + (1,) * (values.ndim - 1))
    starts = np.ones(values.shape, dtype=bool)
    starts[1:] = y[1:] != y[:-1]  # a run of equal outputs begins (NaN begins one everywhere)
    run_start = np.maximum.accumulate(np.where(starts, positions, 0), axis=0)
    ends = np.ones(values.shape, dtype=bool)
    ends[:-1] = starts[1:]
    run_end = np.flip(np.minimum.accumulate(np.flip(np.where(ends, positions, n - 1), 0), axis=0), 0)
    hit = values == y
    hits = np.cumsum(hit, axis=0)
    before = np.take_along_axis(hits - hit, run_start, axis=0)  # hits before the run
    count = hits - before
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(count > 0, upstream / np.maximum(count, 1), 0.0)
    tail = np.flip(np.cumsum(np.flip(share, 0), axis=0), 0)  # sum of shares from i to the end
    after = np.concatenate([tail[1:], np.zeros((1,) + tail.shape[1:], tail.dtype)])
    gradient = np.where(hit, tail - np.take_along_axis(after, run_end, axis=0), 0.0)
    undefined = np.flip(np.logical_or.accumulate(np.flip(np.isnan(y), 0), axis=0), 0)
    gradient = np.where(undefined, np.nan, gradient)
    return unbroadcast(np.moveaxis(gradient, 0, axis), x)


def _segments(indices, n: int):
    """Output i's slice of the axis, as numpy's reduceat reads it."""
    indices = [int(i) for i in np.ravel(indices)]
    for position, start in enumerate(indices):
        stop = indices[position + 1] if position + 1 < len(indices) else n
        yield position, slice(start, stop) if start < stop else slice(start, start + 1)


def reduceat_adjoint(adjoint, x, result, indices, axis, kind: str):
    if is_zero(adjoint):
        return 0.0
    _host(x, "a ufunc's reduceat")
    if np.ndim(indices) != 1:
        raise UnsupportedError(None, "reduceat with indices that are not 1-d", "numpy takes 1-d indices only")
    values = np.moveaxis(np.asarray(x), axis, 0)
    values = values.astype(np.result_type(values, 1.0), copy=False)
    y = np.moveaxis(np.asarray(result), axis, 0)
    upstream = np.moveaxis(np.broadcast_to(adjoint, np.shape(result)), axis, 0)
    gradient = np.zeros(values.shape, np.result_type(values, upstream))
    for position, part in _segments(indices, values.shape[0]):
        if kind == "add":
            gradient[part] += upstream[position]
        elif kind == "multiply":
            gradient[part] += array_product_adjoint(upstream[position], values[part], 0, False)
        else:
            gradient[part] += extremum_adjoint(upstream[position], values[part], y[position], 0, False)
    return unbroadcast(np.moveaxis(gradient, 0, axis), x)
