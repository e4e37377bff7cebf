"""Derivative rules for numpy's binary ufuncs (add, multiply, power, maximum, hypot, logaddexp, ...)
and the selections `np.where` and `np.clip` (see this package's docstring for the conventions).
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import math

import numpy as np

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.rules.module_templates import ELEMENTARY, register
from cpsgrad.rules.numpy.ufuncs import chain
from cpsgrad.rules.operators import array_log_for_power, power_slope
from cpsgrad.rules.registry import rule
from cpsgrad.runtime import device as _device
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import unbroadcast

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
    y_d += chain(z_d, -1.0, y)


@rule(np.multiply)
def multiply(x, y):
    z = np.multiply(x, y)
    z_d = yield z
    x_d += chain(z_d, y, x)
    y_d += chain(z_d, x, y)


@rule(np.divide)
def divide(x, y):
    z = np.divide(x, y)
    z_d = yield z
    x_d += chain(z_d, cpsgrad_runtime.array_divide(1.0, y), x)
    y_d += chain(z_d, -cpsgrad_runtime.array_divide(z, y), y)


@rule(np.mod)
def mod(x, y):
    z = np.mod(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.unbroadcast(z_d, x)
    y_d += chain(z_d, -np.floor_divide(x, y), y)


@rule(np.fmod)
def fmod(x, y):
    z = np.fmod(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.unbroadcast(z_d, x)
    y_d += chain(z_d, -np.trunc(cpsgrad_runtime.array_divide(x, y)), y)


@rule(np.power)
@rule(np.float_power)
def power(x, y):
    z = np.power(x, y)
    z_d = yield z
    x_d += chain(z_d, power_slope(x, y), x)
    y_d += chain(z_d, exponent_slope(x, z), y)


@rule(np.maximum)
def maximum(x, y):
    z = np.maximum(x, y)
    z_d = yield z
    x_d += chain(z_d, tie_share(x, y, z), x)
    y_d += chain(z_d, tie_share(y, x, z), y)


@rule(np.minimum)
def minimum(x, y):
    z = np.minimum(x, y)
    z_d = yield z
    x_d += chain(z_d, tie_share(x, y, z), x)
    y_d += chain(z_d, tie_share(y, x, z), y)


@rule(np.fmax)
def fmax(x, y):
    z = np.fmax(x, y)
    z_d = yield z
    x_d += select(z_d, np.greater(x, y) | np.isnan(y), x)
    y_d += select(z_d, np.logical_not(np.greater(x, y) | np.isnan(y)), y)


@rule(np.fmin)
def fmin(x, y):
    z = np.fmin(x, y)
    z_d = yield z
    x_d += select(z_d, np.less(x, y) | np.isnan(y), x)
    y_d += select(z_d, np.logical_not(np.less(x, y) | np.isnan(y)), y)


@rule(np.hypot)
def hypot(x, y):
    z = np.hypot(x, y)
    z_d = yield z
    x_d += chain(z_d, hypot_slope(x, z), x)
    y_d += chain(z_d, hypot_slope(y, z), y)


@rule(np.logaddexp)
def logaddexp(x, y):
    z = np.logaddexp(x, y)
    z_d = yield z
    x_d += chain(z_d, logaddexp_share(x, z), x)
    y_d += chain(z_d, logaddexp_share(y, z), y)


@rule(np.logaddexp2)
def logaddexp2(x, y):
    z = np.logaddexp2(x, y)
    z_d = yield z
    x_d += chain(z_d, logaddexp_share(x, z, 2), x)
    y_d += chain(z_d, logaddexp_share(y, z, 2), y)


# ---- selection --------------------------------------------------------------------------------


@rule(np.where)
def where_indices(condition):
    y = np.where(condition)


@rule(np.where)
def where(condition, x, y):
    z = np.where(condition, x, y)
    z_d = yield z
    x_d += select(z_d, condition, x)
    y_d += select(z_d, np.logical_not(condition), y)


@rule(np.clip)
def clip_bounds(a, min=None, max=None):
    y = np.clip(a, min=min, max=max)
    y_d = yield y
    a_d += clip_adjoint(y_d, a, min, max, "x")
    min_d += clip_adjoint(y_d, a, min, max, "low")
    max_d += clip_adjoint(y_d, a, min, max, "high")


@rule(np.clip)
def clip(a, a_min=None, a_max=None):
    y = np.clip(a, a_min, a_max)
    y_d = yield y
    a_d += clip_adjoint(y_d, a, a_min, a_max, "x")
    a_min_d += clip_adjoint(y_d, a, a_min, a_max, "low")
    a_max_d += clip_adjoint(y_d, a, a_min, a_max, "high")


@rule(np.ndarray.clip)
def ndarray_clip(a, min=None, max=None):
    y = a.clip(min, max)
    y_d = yield y
    a_d += clip_adjoint(y_d, a, min, max, "x")
    min_d += clip_adjoint(y_d, a, min, max, "low")
    max_d += clip_adjoint(y_d, a, min, max, "high")


# ---- helpers ----------------------------------------------------------------------------------


def select(adjoint, condition, x):
    """The adjoint of `x` where `condition` holds and exactly zero elsewhere (`np.where`)."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(np.where(condition, adjoint, 0.0), x)


def tie_share(x, other, result):
    """`np.maximum`/`np.minimum` backward: 1 where `x` was chosen, 0.5 on a tie (as JAX)."""
    if type(result) is DeviceArray:
        return _device.tie_share(x, other, result)
    return np.equal(x, result) * np.where(np.equal(other, result), 0.5, 1.0)


def clip_adjoint(adjoint, x, low, high, part: str):
    """`np.clip` backward for `part` ("x", "low" or "high"), as JAX's `minimum(maximum(x, low), high)`:
    a value at a bound shares the adjoint equally with that bound."""
    if is_zero(adjoint):
        return 0.0
    lower = x if low is None else np.maximum(x, low)
    result = lower if high is None else np.minimum(lower, high)
    if part == "high":
        return unbroadcast(adjoint * tie_share(high, lower, result), high)
    through = adjoint if high is None else adjoint * tie_share(lower, high, result)
    if part == "low":
        return unbroadcast(through * tie_share(low, x, lower), low)
    return unbroadcast(through if low is None else through * tie_share(x, low, lower), x)


def exponent_slope(base, result):
    """d(b**e)/de elementwise from the result b**e: log(b) * b**e, 0 at b == 0 with e > 0, NaN
    for b < 0 (as JAX), without warnings."""
    if type(result) is DeviceArray:
        return _device.array_log_for_power(base) * result
    with np.errstate(invalid="ignore", over="ignore"):
        return array_log_for_power(base) * result


def hypot_slope(x, z):
    """d hypot(x, y) / dx = x / z; 0.5 at the origin and 0 at infinity (as JAX)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(z == 0, 0.5, np.where(np.isinf(z), 0.0, np.divide(x, z)))


def logaddexp_share(x, result, base=math.e):
    """d logaddexp(x, y) / dx = exp(x - result) (`base` 2 for logaddexp2); NaN where both
    inputs are -inf (as JAX), without warnings."""
    with np.errstate(invalid="ignore"):
        return np.exp2(x - result) if base == 2 else np.exp(x - result)


# ---- the binary ufuncs math shares (arctan2): cpsgrad/rules/elementary.py --------------------

register([entry for entry in ELEMENTARY if entry.arity == 2], globals(), "numpy")
