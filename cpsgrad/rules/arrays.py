"""Derivative rules for the numpy API: ufuncs, reductions, linear algebra, shapes and sequences.

Every gradient has its input's shape and dtype (float32 stays float32; a Python float gets a
Python float); broadcasting is undone by `cpsgrad_runtime.unbroadcast`, and every backward gives
zero for the symbolic zero adjoint `0.0`. Methods and attributes of arrays are the rules of
`np.ndarray.<name>`, called with the array first (`x.sum(axis=0)` is `np.ndarray.sum(x, axis=0)`).

Kinks follow JAX 0.10: abs'(0) = 1; a tie in `np.maximum`/`np.minimum` gives half to each side;
`np.clip` is `minimum(maximum(x, low), high)`, so a value at a bound shares the adjoint equally
with that bound; `np.max`/`np.min` split the adjoint equally among tied elements; derivatives
that are infinite where the function is finite (sqrt at 0, log at 0) are inf, not an error.
`np.power` keeps the operator `**` conventions (`cpsgrad_runtime.power_slope`).

The transform drops `cpsgrad_runtime.unbroadcast` from rules whose arguments are all Python
numbers, so the rules that can build an array from numbers (`np.full`, `np.arange`,
`np.broadcast_to`, copies and casts) go through `cpsgrad_runtime.array_adjoint` instead.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import math

import numpy as np

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.rules.registry import not_differentiable, rule

# ---- unary ufuncs -----------------------------------------------------------------------------


@rule(np.exp)
def exp(x):
    y = np.exp(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, y, x)


@rule(np.exp2)
def exp2(x):
    y = np.exp2(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, y * math.log(2.0), x)


@rule(np.expm1)
def expm1(x):
    y = np.expm1(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, y + 1.0, x)


@rule(np.log)
def log(x):
    y = np.log(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, cpsgrad_runtime.array_divide(1.0, x), x)


@rule(np.log2)
def log2(x):
    y = np.log2(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, cpsgrad_runtime.array_divide(1.0 / math.log(2.0), x), x)


@rule(np.log10)
def log10(x):
    y = np.log10(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, cpsgrad_runtime.array_divide(1.0 / math.log(10.0), x), x)


@rule(np.log1p)
def log1p(x):
    y = np.log1p(x)
    y_d = yield y
    x_d += cpsgrad_runtime.elementwise_adjoint("log1p", y_d, x, x)


@rule(np.sqrt)
def sqrt(x):
    y = np.sqrt(x)
    y_d = yield y
    x_d += cpsgrad_runtime.elementwise_adjoint("sqrt", y_d, y, x)


@rule(np.cbrt)
def cbrt(x):
    y = np.cbrt(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, cpsgrad_runtime.array_divide(1.0, 3.0 * y * y), x)


@rule(np.square)
def square(x):
    y = np.square(x)
    y_d = yield y
    x_d += cpsgrad_runtime.elementwise_adjoint("square", y_d, x, x)


@rule(np.reciprocal)
def reciprocal(x):
    y = np.reciprocal(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, -y * y, x)


@rule(np.sin)
def sin(x):
    y = np.sin(x)
    y_d = yield y
    x_d += cpsgrad_runtime.elementwise_adjoint("sin", y_d, x, x)


@rule(np.cos)
def cos(x):
    y = np.cos(x)
    y_d = yield y
    x_d += cpsgrad_runtime.elementwise_adjoint("cos", y_d, x, x)


@rule(np.tan)
def tan(x):
    y = np.tan(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, 1.0 + y * y, x)


@rule(np.arcsin)
def arcsin(x):
    y = np.arcsin(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, cpsgrad_runtime.array_divide(1.0, np.sqrt(1.0 - x * x)), x)


@rule(np.arccos)
def arccos(x):
    y = np.arccos(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, cpsgrad_runtime.array_divide(-1.0, np.sqrt(1.0 - x * x)), x)


@rule(np.arctan)
def arctan(x):
    y = np.arctan(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, 1.0 / (1.0 + x * x), x)


@rule(np.sinh)
def sinh(x):
    y = np.sinh(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, np.cosh(x), x)


@rule(np.cosh)
def cosh(x):
    y = np.cosh(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, np.sinh(x), x)


@rule(np.tanh)
def tanh(x):
    y = np.tanh(x)
    y_d = yield y
    x_d += cpsgrad_runtime.elementwise_adjoint("tanh", y_d, y, x)


@rule(np.arcsinh)
def arcsinh(x):
    y = np.arcsinh(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, 1.0 / np.sqrt(x * x + 1.0), x)


@rule(np.arccosh)
def arccosh(x):
    y = np.arccosh(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, cpsgrad_runtime.array_divide(1.0, np.sqrt(x * x - 1.0)), x)


@rule(np.arctanh)
def arctanh(x):
    y = np.arctanh(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, cpsgrad_runtime.array_divide(1.0, 1.0 - x * x), x)


@rule(np.degrees)
@rule(np.rad2deg)
def degrees(x):
    y = np.degrees(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, 180.0 / math.pi, x)


@rule(np.radians)
@rule(np.deg2rad)
def radians(x):
    y = np.radians(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, math.pi / 180.0, x)


@rule(np.abs)
def abs_(x):
    y = np.abs(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, cpsgrad_runtime.array_sign(x), x)


@rule(np.fabs)
def fabs(x):
    y = np.fabs(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, cpsgrad_runtime.array_sign(x), x)


@rule(np.negative)
def negative(x):
    y = np.negative(x)
    y_d = yield y
    x_d += cpsgrad_runtime.chain(y_d, -1.0, x)


@rule(np.positive)
def positive(x):
    y = np.positive(x)
    y_d = yield y
    x_d += cpsgrad_runtime.unbroadcast(y_d, x)


# ---- binary ufuncs ----------------------------------------------------------------------------


@rule(np.add)
def add(x, y):
    z = np.add(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.unbroadcast(z_d, x)
    y_d += cpsgrad_runtime.unbroadcast(z_d, y)


@rule(np.subtract)
def subtract(x, y):
    z = np.subtract(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.unbroadcast(z_d, x)
    y_d += cpsgrad_runtime.chain(z_d, -1.0, y)


@rule(np.multiply)
def multiply(x, y):
    z = np.multiply(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.chain(z_d, y, x)
    y_d += cpsgrad_runtime.chain(z_d, x, y)


@rule(np.divide)
def divide(x, y):
    z = np.divide(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.chain(z_d, cpsgrad_runtime.array_divide(1.0, y), x)
    y_d += cpsgrad_runtime.chain(z_d, -cpsgrad_runtime.array_divide(z, y), y)


@rule(np.mod)
def mod(x, y):
    z = np.mod(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.unbroadcast(z_d, x)
    y_d += cpsgrad_runtime.chain(z_d, -np.floor_divide(x, y), y)


@rule(np.fmod)
def fmod(x, y):
    z = np.fmod(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.unbroadcast(z_d, x)
    y_d += cpsgrad_runtime.chain(z_d, -np.trunc(cpsgrad_runtime.array_divide(x, y)), y)


@rule(np.power)
@rule(np.float_power)
def power(x, y):
    z = np.power(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.chain(z_d, cpsgrad_runtime.power_slope(x, y), x)
    y_d += cpsgrad_runtime.chain(z_d, cpsgrad_runtime.exponent_slope(x, z), y)


@rule(np.maximum)
def maximum(x, y):
    z = np.maximum(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.chain(z_d, cpsgrad_runtime.tie_share(x, y, z), x)
    y_d += cpsgrad_runtime.chain(z_d, cpsgrad_runtime.tie_share(y, x, z), y)


@rule(np.minimum)
def minimum(x, y):
    z = np.minimum(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.chain(z_d, cpsgrad_runtime.tie_share(x, y, z), x)
    y_d += cpsgrad_runtime.chain(z_d, cpsgrad_runtime.tie_share(y, x, z), y)


@rule(np.fmax)
def fmax(x, y):
    z = np.fmax(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.select(z_d, np.greater(x, y) | np.isnan(y), x)
    y_d += cpsgrad_runtime.select(z_d, np.logical_not(np.greater(x, y) | np.isnan(y)), y)


@rule(np.fmin)
def fmin(x, y):
    z = np.fmin(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.select(z_d, np.less(x, y) | np.isnan(y), x)
    y_d += cpsgrad_runtime.select(z_d, np.logical_not(np.less(x, y) | np.isnan(y)), y)


@rule(np.arctan2)
def arctan2(y, x):
    z = np.arctan2(y, x)
    z_d = yield z
    y_d += cpsgrad_runtime.chain(z_d, cpsgrad_runtime.array_divide(x, x * x + y * y), y)
    x_d += cpsgrad_runtime.chain(z_d, cpsgrad_runtime.array_divide(-y, x * x + y * y), x)


@rule(np.hypot)
def hypot(x, y):
    z = np.hypot(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.chain(z_d, cpsgrad_runtime.hypot_slope(x, z), x)
    y_d += cpsgrad_runtime.chain(z_d, cpsgrad_runtime.hypot_slope(y, z), y)


@rule(np.logaddexp)
def logaddexp(x, y):
    z = np.logaddexp(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.chain(z_d, cpsgrad_runtime.logaddexp_share(x, z), x)
    y_d += cpsgrad_runtime.chain(z_d, cpsgrad_runtime.logaddexp_share(y, z), y)


@rule(np.logaddexp2)
def logaddexp2(x, y):
    z = np.logaddexp2(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.chain(z_d, cpsgrad_runtime.logaddexp_share(x, z, 2), x)
    y_d += cpsgrad_runtime.chain(z_d, cpsgrad_runtime.logaddexp_share(y, z, 2), y)


# ---- selection --------------------------------------------------------------------------------


@rule(np.where)
def where_indices(condition):
    y = np.where(condition)


@rule(np.where)
def where(condition, x, y):
    z = np.where(condition, x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.select(z_d, condition, x)
    y_d += cpsgrad_runtime.select(z_d, np.logical_not(condition), y)


@rule(np.clip)
def clip_bounds(a, min=None, max=None):
    y = np.clip(a, min=min, max=max)
    y_d = yield y
    a_d += cpsgrad_runtime.clip_adjoint(y_d, a, min, max, "x")
    min_d += cpsgrad_runtime.clip_adjoint(y_d, a, min, max, "low")
    max_d += cpsgrad_runtime.clip_adjoint(y_d, a, min, max, "high")


@rule(np.clip)
def clip(a, a_min=None, a_max=None):
    y = np.clip(a, a_min, a_max)
    y_d = yield y
    a_d += cpsgrad_runtime.clip_adjoint(y_d, a, a_min, a_max, "x")
    a_min_d += cpsgrad_runtime.clip_adjoint(y_d, a, a_min, a_max, "low")
    a_max_d += cpsgrad_runtime.clip_adjoint(y_d, a, a_min, a_max, "high")


@rule(np.ndarray.clip)
def ndarray_clip(a, min=None, max=None):
    y = a.clip(min, max)
    y_d = yield y
    a_d += cpsgrad_runtime.clip_adjoint(y_d, a, min, max, "x")
    min_d += cpsgrad_runtime.clip_adjoint(y_d, a, min, max, "low")
    max_d += cpsgrad_runtime.clip_adjoint(y_d, a, min, max, "high")


# ---- reductions -------------------------------------------------------------------------------


@rule(np.ndarray.sum)
@rule(np.sum)
def sum_(a, axis=None, *, dtype=None, keepdims=False):
    y = np.sum(a, axis, dtype=dtype, keepdims=keepdims)
    y_d = yield y
    a_d += cpsgrad_runtime.sum_adjoint(y_d, a, axis, keepdims)


@rule(np.ndarray.mean)
@rule(np.mean)
def mean(a, axis=None, *, dtype=None, keepdims=False):
    y = np.mean(a, axis, dtype=dtype, keepdims=keepdims)
    y_d = yield y
    a_d += cpsgrad_runtime.mean_adjoint(y_d, a, axis, keepdims)


@rule(np.ndarray.max)
@rule(np.ndarray.min)
@rule(np.max)
@rule(np.min)
@rule(np.amax)
@rule(np.amin)
def extremum(a, axis=None, *, keepdims=False):
    y = np.max(a, axis, keepdims=keepdims)
    y_d = yield y
    a_d += cpsgrad_runtime.extremum_adjoint(y_d, a, y, axis, keepdims)


@rule(np.ndarray.prod)
@rule(np.prod)
def prod(a, axis=None, *, dtype=None, keepdims=False):
    y = np.prod(a, axis, dtype=dtype, keepdims=keepdims)
    y_d = yield y
    a_d += cpsgrad_runtime.array_product_adjoint(y_d, a, axis, keepdims)


@rule(np.ndarray.var)
@rule(np.var)
def var(a, axis=None, *, dtype=None, ddof=0, keepdims=False):
    y = np.var(a, axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    y_d = yield y
    a_d += cpsgrad_runtime.var_adjoint(y_d, a, axis, ddof, keepdims)


@rule(np.ndarray.std)
@rule(np.std)
def std(a, axis=None, *, dtype=None, ddof=0, keepdims=False):
    y = np.std(a, axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    y_d = yield y
    a_d += cpsgrad_runtime.std_adjoint(y_d, a, y, axis, ddof, keepdims)


@rule(np.ndarray.cumsum)
@rule(np.cumsum)
def cumsum(a, axis=None, *, dtype=None):
    y = np.cumsum(a, axis, dtype=dtype)
    y_d = yield y
    a_d += cpsgrad_runtime.cumsum_adjoint(y_d, a, axis)


@rule(np.linalg.norm)
def norm(x, ord=None, axis=None, keepdims=False):
    y = np.linalg.norm(x, ord, axis, keepdims)
    y_d = yield y
    x_d += cpsgrad_runtime.norm_adjoint(y_d, x, y, ord, axis, keepdims)


@rule(np.trace)
def trace(a, offset=0, axis1=0, axis2=1):
    y = np.trace(a, offset, axis1, axis2)
    y_d = yield y
    a_d += cpsgrad_runtime.trace_adjoint(y_d, a, offset, axis1, axis2)


# ---- products ---------------------------------------------------------------------------------


@rule(np.matmul)
def matmul(x, y):
    z = np.matmul(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.matmul_left(z_d, x, y)
    y_d += cpsgrad_runtime.matmul_right(z_d, x, y)


@rule(np.ndarray.dot)
@rule(np.dot)
def dot(a, b):
    y = np.dot(a, b)
    y_d = yield y
    a_d += cpsgrad_runtime.dot_left(y_d, a, b)
    b_d += cpsgrad_runtime.dot_right(y_d, a, b)


@rule(np.inner)
def inner(a, b):
    y = np.inner(a, b)
    y_d = yield y
    a_d += cpsgrad_runtime.inner_left(y_d, a, b)
    b_d += cpsgrad_runtime.inner_right(y_d, a, b)


@rule(np.outer)
def outer(a, b):
    y = np.outer(a, b)
    y_d = yield y
    a_d += cpsgrad_runtime.outer_left(y_d, a, b)
    b_d += cpsgrad_runtime.outer_right(y_d, a, b)


# ---- shapes -----------------------------------------------------------------------------------


@rule(np.reshape)
def reshape(a, shape, order="C"):
    y = np.reshape(a, shape, order=order)
    y_d = yield y
    a_d += cpsgrad_runtime.reshape_adjoint(y_d, a, order)


@rule(np.ndarray.reshape)
def ndarray_reshape(a, *shape, order="C"):
    y = a.reshape(*shape, order=order)
    y_d = yield y
    a_d += cpsgrad_runtime.reshape_adjoint(y_d, a, order)


@rule(np.ravel)
@rule(np.ndarray.ravel)
@rule(np.ndarray.flatten)
def ravel(a, order="C"):
    y = np.ravel(a, order)
    y_d = yield y
    a_d += cpsgrad_runtime.reshape_adjoint(y_d, a, order)


@rule(np.squeeze)
@rule(np.ndarray.squeeze)
def squeeze(a, axis=None):
    y = np.squeeze(a, axis)
    y_d = yield y
    a_d += cpsgrad_runtime.reshape_adjoint(y_d, a)


@rule(np.expand_dims)
def expand_dims(a, axis):
    y = np.expand_dims(a, axis)
    y_d = yield y
    a_d += cpsgrad_runtime.reshape_adjoint(y_d, a)


@rule(np.broadcast_to)
def broadcast_to(array, shape):
    y = np.broadcast_to(array, shape)
    y_d = yield y
    array_d += cpsgrad_runtime.array_adjoint(y_d, array, y)


@rule(np.transpose)
def transpose(a, axes=None):
    y = np.transpose(a, axes)
    y_d = yield y
    a_d += cpsgrad_runtime.transpose_adjoint(y_d, a, axes)


@rule(np.ndarray.transpose)
def ndarray_transpose(a, axes=None):
    y = a.transpose(axes)
    y_d = yield y
    a_d += cpsgrad_runtime.transpose_adjoint(y_d, a, axes)


# `x.transpose(1, 0)` and `x.item(i, j)` name one template parameter per axis (up to six): the
# backward of a template cannot read a `*args` parameter.
@rule(np.ndarray.transpose)
def ndarray_transpose_axes(a, first, second, third=None, fourth=None, fifth=None, sixth=None):
    y = a.transpose(first, second, third, fourth, fifth, sixth)
    y_d = yield y
    a_d += cpsgrad_runtime.transpose_adjoint(y_d, a, (first, second, third, fourth, fifth, sixth)[: np.ndim(a)])


@rule(np.ndarray.T)
def ndarray_T(a):
    y = a.T
    y_d = yield y
    a_d += cpsgrad_runtime.transpose_adjoint(y_d, a, None)


@rule(np.swapaxes)
@rule(np.ndarray.swapaxes)
def swapaxes(a, axis1, axis2):
    y = np.swapaxes(a, axis1, axis2)
    y_d = yield y
    a_d += cpsgrad_runtime.swapaxes_adjoint(y_d, a, axis1, axis2)


@rule(np.moveaxis)
def moveaxis(a, source, destination):
    y = np.moveaxis(a, source, destination)
    y_d = yield y
    a_d += cpsgrad_runtime.moveaxis_adjoint(y_d, a, source, destination)


# ---- arrays from values, copies and casts -----------------------------------------------------


@rule(np.array)
def array(object, dtype=None, *, copy=True, order="K", ndmin=0):
    y = np.array(object, dtype, copy=copy, order=order, ndmin=ndmin)
    y_d = yield y
    object_d += cpsgrad_runtime.array_adjoint(y_d, object, y)


@rule(np.asarray)
def asarray(a, dtype=None, order=None):
    y = np.asarray(a, dtype, order)
    y_d = yield y
    a_d += cpsgrad_runtime.array_adjoint(y_d, a, y)


@rule(np.copy)
@rule(np.ndarray.copy)
def copy(a, order="K"):
    y = np.copy(a, order)
    y_d = yield y
    a_d += cpsgrad_runtime.array_adjoint(y_d, a, y)


@rule(np.ndarray.astype)
def astype(a, dtype, *, order="K", casting="unsafe", subok=True, copy=True):
    y = a.astype(dtype, order=order, casting=casting, subok=subok, copy=copy)
    y_d = yield y
    a_d += cpsgrad_runtime.array_adjoint(y_d, a, y)


@rule(np.float64)
@rule(np.float32)
def float_scalar(x):
    y = np.float64(x)
    y_d = yield y
    x_d += cpsgrad_runtime.array_adjoint(y_d, x, y)


@rule(np.ndarray.item)
def item(a, index=None):
    y = a.item(index)
    y_d = yield y
    a_d += cpsgrad_runtime.item_adjoint(y_d, a, index)


@rule(np.ndarray.item)
def item_at(a, first, second, third=None, fourth=None, fifth=None, sixth=None):
    y = a.item(first, second, third, fourth, fifth, sixth)
    y_d = yield y
    a_d += cpsgrad_runtime.item_adjoint(y_d, a, (first, second, third, fourth, fifth, sixth)[: np.ndim(a)])


@rule(np.full)
def full(shape, fill_value, dtype=None):
    y = np.full(shape, fill_value, dtype)
    y_d = yield y
    fill_value_d += cpsgrad_runtime.array_adjoint(y_d, fill_value, y)


@rule(np.full_like)
def full_like(a, fill_value, dtype=None):
    y = np.full_like(a, fill_value, dtype)
    y_d = yield y
    fill_value_d += cpsgrad_runtime.array_adjoint(y_d, fill_value, y)


@rule(np.linspace)
def linspace(start, stop, num=50, endpoint=True, *, dtype=None, axis=0):
    y = np.linspace(start, stop, num, endpoint, dtype=dtype, axis=axis)
    y_d = yield y
    start_d += cpsgrad_runtime.linspace_adjoint(y_d, start, stop, num, endpoint, axis, "start")
    stop_d += cpsgrad_runtime.linspace_adjoint(y_d, start, stop, num, endpoint, axis, "stop")


@rule(np.arange)
def arange(start, stop, step=1, *, dtype=None):
    y = np.arange(start, stop, step, dtype=dtype)
    y_d = yield y
    start_d += cpsgrad_runtime.array_adjoint(y_d, start, y)
    step_d += cpsgrad_runtime.chain(y_d, np.arange(len(y)), step)


@rule(np.arange)
def arange_stop(stop, *, dtype=None):
    y = np.arange(stop, dtype=dtype)


# ---- sequences of arrays ----------------------------------------------------------------------


@rule(np.concatenate)
def concatenate(arrays, axis=0):
    y = np.concatenate(arrays, axis)
    y_d = yield y
    arrays_d += cpsgrad_runtime.concatenate_adjoint(y_d, arrays, axis)


@rule(np.stack)
def stack(arrays, axis=0):
    y = np.stack(arrays, axis)
    y_d = yield y
    arrays_d += cpsgrad_runtime.stack_adjoint(y_d, arrays, axis)


@rule(np.hstack)
def hstack(tup):
    y = np.hstack(tup)
    y_d = yield y
    tup_d += cpsgrad_runtime.hstack_adjoint(y_d, tup)


@rule(np.vstack)
def vstack(tup):
    y = np.vstack(tup)
    y_d = yield y
    tup_d += cpsgrad_runtime.vstack_adjoint(y_d, tup)


@rule(np.split)
@rule(np.array_split)
def split(ary, indices_or_sections, axis=0):
    y = np.split(ary, indices_or_sections, axis)
    y_d = yield y
    ary_d += cpsgrad_runtime.split_adjoint(y_d, y, ary, axis)


# ---- results that carry no gradient -----------------------------------------------------------
# Integers, booleans, shapes, and arrays whose values do not depend on the values passed
# (`np.zeros_like(x)`); piecewise constant functions (`np.round`, `np.sign`) have derivative 0.


for _name in (
    "zeros", "ones", "empty", "zeros_like", "ones_like", "empty_like", "eye", "identity", "tri",
    "argmax", "argmin", "argsort", "nonzero", "flatnonzero", "count_nonzero", "searchsorted",
    "digitize", "any", "all", "shape", "ndim", "size",
    "sign", "signbit", "heaviside", "floor", "ceil", "round", "around", "rint", "trunc", "fix",
    "floor_divide", "isnan", "isinf", "isfinite", "isclose", "allclose", "array_equal",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor",
):
    not_differentiable(getattr(np, _name), _name)

for _name in ("shape", "ndim", "dtype", "size", "argmax", "argmin", "argsort", "nonzero", "any", "all"):
    not_differentiable(getattr(np.ndarray, _name), f"ndarray_{_name}")
