"""Derivative rules for Python's operators and numeric builtins (`abs`, `float`, `pow`, `max`, `min`,
`sum`, `divmod`, ...), on numbers and arrays alike.

Kinks follow JAX: abs'(0) = 1; a tie in max or min splits the adjoint equally.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import builtins
import cmath
import math
import operator

import numpy as np

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.rules.registry import not_differentiable, rule
from cpsgrad.runtime import device as _device
from cpsgrad.runtime.elementwise import ARRAY_TYPES

# ---- arithmetic operators ---------------------------------------------------------------------


@rule(operator.add)
def add(x, y):
    z = x + y
    z_d = yield z
    x_d += cpsgrad_runtime.unbroadcast(z_d, x)
    y_d += cpsgrad_runtime.unbroadcast(z_d, y)


@rule(operator.sub)
def sub(x, y):
    z = x - y
    z_d = yield z
    x_d += cpsgrad_runtime.unbroadcast(z_d, x)
    y_d += -cpsgrad_runtime.unbroadcast(z_d, y)


@rule(operator.mul)
def mul(x, y):
    z = x * y
    z_d = yield z
    x_d += cpsgrad_runtime.reduced_product(z_d, y, x)
    y_d += cpsgrad_runtime.reduced_product(z_d, x, y)


@rule(operator.truediv)
def truediv(x, y):
    z = x / y
    z_d = yield z
    x_d += cpsgrad_runtime.unbroadcast(cpsgrad_runtime.quotient(z_d, y), x)
    y_d += -cpsgrad_runtime.quotient(cpsgrad_runtime.reduced_product(z_d, z, y), y)


@rule(operator.mod)
def mod(x, y):
    z = x % y
    z_d = yield z
    x_d += cpsgrad_runtime.unbroadcast(z_d, x)
    y_d += cpsgrad_runtime.unbroadcast(-z_d * (x // y), y)


@rule(operator.pow)
def power(x, y):
    z = x**y
    z_d = yield z
    x_d += cpsgrad_runtime.unbroadcast(z_d * power_slope(x, y), x)
    y_d += cpsgrad_runtime.unbroadcast(z_d * log_for_power(x) * z, y)


@rule(operator.matmul)
def matmul(x, y):
    z = x @ y
    z_d = yield z
    x_d += cpsgrad_runtime.matmul_left(z_d, x, y)
    y_d += cpsgrad_runtime.matmul_right(z_d, x, y)


@rule(operator.neg)
def neg(x):
    y = -x
    y_d = yield y
    x_d += -y_d


@rule(operator.pos)
def pos(x):
    y = +x
    y_d = yield y
    x_d += y_d


@rule(operator.floordiv)
def floordiv(x, y):
    z = x // y


@rule(operator.not_)
def not_(x):
    y = not x


# ---- builtins ---------------------------------------------------------------------------------


@rule(abs)
def abs_(x):
    y = abs(x)
    y_d = yield y
    x_d += abs_adjoint(y_d, x)


@rule(float)
def float_(x):
    y = float(x)
    y_d = yield y
    x_d += y_d


@rule(complex)
def complex_(real):
    y = complex(real)
    y_d = yield y
    real_d += cpsgrad_runtime.unbroadcast(y_d, real)


@rule(complex)
def complex_parts(real, imag):
    y = complex(real, imag)
    y_d = yield y
    real_d += cpsgrad_runtime.unbroadcast(y_d, real)
    imag_d += cpsgrad_runtime.unbroadcast(y_d * 1j, imag)


@rule(pow)
def pow_(x, y):
    z = pow(x, y)
    z_d = yield z
    x_d += z_d * power_slope(x, y)
    y_d += z_d * log_for_power(x) * z


@rule(max)
def max_(xs):
    y = max(xs)
    y_d = yield y
    xs_d += cpsgrad_runtime.split_ties(xs, y, y_d)


@rule(min)
def min_(xs):
    y = min(xs)
    y_d = yield y
    xs_d += cpsgrad_runtime.split_ties(xs, y, y_d)


@rule(sum)
def sum_(xs):
    y = sum(xs)
    y_d = yield y
    xs_d += cpsgrad_runtime.repeated(len(xs), y_d)


@rule(sum)
def sum_start(xs, start):
    y = sum(xs, start)
    y_d = yield y
    xs_d += cpsgrad_runtime.repeated(len(xs), y_d)
    start_d += y_d


@rule(divmod)
def divmod_(x, y):
    z = divmod(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.item(z_d, 1)
    y_d += -cpsgrad_runtime.item(z_d, 1) * (x // y)


@rule(tuple)
def tuple_(xs):
    y = tuple(xs)
    y_d = yield y
    xs_d += cpsgrad_runtime.sequence_adjoint(xs, y_d)


@rule(cpsgrad_runtime.as_sequence)
def as_sequence(xs):
    y = cpsgrad_runtime.as_sequence(xs)
    y_d = yield y
    xs_d += cpsgrad_runtime.sequence_adjoint(xs, y_d)


@rule(reversed)
def reversed_(xs):
    y = reversed(xs)
    y_d = yield y
    xs_d += cpsgrad_runtime.reverse(y_d)


@rule(list)
def list_(xs):
    y = list(xs)
    y_d = yield y
    xs_d += cpsgrad_runtime.sequence_adjoint(xs, y_d)


# Builtins whose results carry no gradient: they take differentiable values and return
# integers, booleans, strings or nothing.
for _primitive in (
    int, bool, round, len, range, print, isinstance, str, repr, id, type, callable, hash, all, any,
    builtins.format, math.floor, math.ceil, math.trunc, math.isnan, math.isinf, math.isfinite,
    math.isclose,
):
    not_differentiable(_primitive)


# ---- bit operators: constants on integers, booleans and sets; `|` of two dicts merges them; the
# operator of anything else (a user class's `__or__`) is refused when its backward runs
# (runtime/bitwise.py), never taken as a zero gradient ----------------------------------------


@rule(operator.or_)
def or_(x, y):
    z = x | y
    z_d = yield z
    x_d += cpsgrad_runtime.bitwise_adjoint(z_d, x, y, False, "|")
    y_d += cpsgrad_runtime.bitwise_adjoint(z_d, x, y, True, "|")


@rule(operator.and_)
def and_(x, y):
    z = x & y
    z_d = yield z
    x_d += cpsgrad_runtime.bitwise_adjoint(z_d, x, y, False, "&")
    y_d += cpsgrad_runtime.bitwise_adjoint(z_d, x, y, True, "&")


@rule(operator.xor)
def xor(x, y):
    z = x ^ y
    z_d = yield z
    x_d += cpsgrad_runtime.bitwise_adjoint(z_d, x, y, False, "^")
    y_d += cpsgrad_runtime.bitwise_adjoint(z_d, x, y, True, "^")


@rule(operator.lshift)
def lshift(x, y):
    z = x << y
    z_d = yield z
    x_d += cpsgrad_runtime.bitwise_adjoint(z_d, x, y, False, "<<")
    y_d += cpsgrad_runtime.bitwise_adjoint(z_d, x, y, True, "<<")


@rule(operator.rshift)
def rshift(x, y):
    z = x >> y
    z_d = yield z
    x_d += cpsgrad_runtime.bitwise_adjoint(z_d, x, y, False, ">>")
    y_d += cpsgrad_runtime.bitwise_adjoint(z_d, x, y, True, ">>")


@rule(operator.invert)
def invert(x):
    z = ~x
    z_d = yield z
    x_d += cpsgrad_runtime.inverted_adjoint(z_d, x)


# ---- slopes at kinks and poles ----------------------------------------------------------------


def array_power_slope(base, exponent):
    """d(b**e)/db elementwise: e * b**(e-1), 0 where e == 0, +-inf at b == 0 for 0 < e < 1."""
    if type(base) is DeviceArray or type(exponent) is DeviceArray:
        return _device.array_power_slope(base, exponent)
    base = np.asarray(base)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        slope = exponent * np.power(base, np.asarray(exponent, dtype=np.result_type(base, exponent, 1.0)) - 1)
        slope = np.where(np.asarray(exponent) == 0, 0.0, slope)
    return slope.astype(np.result_type(base, exponent, 1.0), copy=False)


def array_log_for_power(base):
    """d(b**e)/de / b**e elementwise: log(b), 0 at b == 0, NaN for b < 0."""
    if type(base) is DeviceArray:
        return _device.array_log_for_power(base)
    base = np.asarray(base)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(base == 0, 0.0, np.log(np.where(base == 0, 1.0, base))).astype(np.result_type(base, 1.0),
                                                                                       copy=False)


def array_sign(x):
    """abs' elementwise: 1 at x >= 0 (abs'(0) = 1, as JAX), -1 below, NaN at NaN."""
    if type(x) is DeviceArray:
        return _device.array_sign(x)
    x = np.asarray(x)
    return np.where(x >= 0, 1.0, np.where(x < 0, -1.0, np.nan)).astype(np.result_type(x, 1.0), copy=False)


def power_slope(base, exponent):
    """d(b**e)/db = e * b**(e-1); 0 where e == 0, and +-inf at b == 0 for e < 1 (as JAX)."""
    if _numpy(base) or _numpy(exponent):
        return array_power_slope(base, exponent)
    if exponent == 0:
        return 0.0
    if base == 0 and type(exponent) is not complex and exponent < 1:
        return math.inf if exponent > 0 else -math.inf
    try:
        return exponent * base ** (exponent - 1)
    except OverflowError:  # |base| tiny and exponent - 1 negative, or |base| huge: infinite slope
        negative = base < 0 and float(exponent - 1).is_integer() and int(exponent - 1) % 2 == 1
        return math.copysign(math.inf, exponent) * (-1.0 if negative else 1.0)


def log_for_power(base) -> float:
    """d(b**e)/de = log(b) * b**e; 0 at b == 0 (the limit for e > 0), NaN for b < 0."""
    if _numpy(base):
        return array_log_for_power(base)
    if type(base) is complex:  # the principal log, as JAX's (0 at 0)
        return cmath.log(base) if base != 0 else 0.0
    if base > 0:
        return math.log(base)
    return 0.0 if base == 0 else math.nan


def sign(x) -> float:
    """The derivative of abs: 1.0 at x >= 0, -1.0 below (abs'(0) = 1, as JAX), NaN at NaN."""
    if _numpy(x):
        return array_sign(x)
    if x >= 0:
        return 1.0
    return -1.0 if x < 0 else math.nan


def abs_adjoint(adjoint, x):
    """The adjoint of `x` in `abs(x)` or `np.abs(x)`: `adjoint * sign(x)` for a real `x`; for a
    complex one JAX's Re(adjoint) * conj(x) / |x| (0 at x == 0), `abs` being real-valued."""
    if type(x) is float:
        return adjoint * (1.0 if x >= 0 else (-1.0 if x < 0 else math.nan))
    if type(x) is complex or (isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind == "c"):
        if type(adjoint) is float and adjoint == 0.0:
            return 0.0
        magnitude = np.abs(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.where(magnitude == 0, 0.0, np.conj(x) / np.where(magnitude == 0, 1.0, magnitude))
        contribution = np.real(adjoint) * slope
        return complex(contribution) if type(x) is complex else cpsgrad_runtime.unbroadcast(contribution, x)
    if _numpy(x):
        if type(adjoint) is float and adjoint == 0.0:
            return 0.0
        return cpsgrad_runtime.unbroadcast(adjoint * array_sign(x), x)
    return adjoint * sign(x)


def _numpy(value) -> bool:
    return isinstance(value, ARRAY_TYPES)

