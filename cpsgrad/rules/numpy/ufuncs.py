"""Derivative rules for numpy's elementwise functions: unary and binary ufuncs, `np.where` and
`np.clip` (see this package's docstring for the conventions).
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import math

import numpy as np

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.rules.registry import rule

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
