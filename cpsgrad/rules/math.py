"""Derivative rules for the `math` module (Python numbers in, a Python float out).

Derivatives that are infinite where the function is finite (sqrt'(0)) are inf, as JAX's, not an error.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import math

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.rules.operators import log_for_power, power_slope, sign
from cpsgrad.rules.registry import rule

# ---- math -------------------------------------------------------------------------------------


@rule(math.sin)
def sin(x):
    y = math.sin(x)
    y_d = yield y
    x_d += y_d * math.cos(x)


@rule(math.cos)
def cos(x):
    y = math.cos(x)
    y_d = yield y
    x_d += -y_d * math.sin(x)


@rule(math.tan)
def tan(x):
    y = math.tan(x)
    y_d = yield y
    x_d += y_d * (1.0 + y * y)


@rule(math.asin)
def asin(x):
    y = math.asin(x)
    y_d = yield y
    x_d += cpsgrad_runtime.divide(y_d, math.sqrt(1.0 - x * x))


@rule(math.acos)
def acos(x):
    y = math.acos(x)
    y_d = yield y
    x_d += cpsgrad_runtime.divide(-y_d, math.sqrt(1.0 - x * x))


@rule(math.atan)
def atan(x):
    y = math.atan(x)
    y_d = yield y
    x_d += y_d / (1.0 + x * x)


@rule(math.atan2)
def atan2(y, x):
    z = math.atan2(y, x)
    z_d = yield z
    y_d += cpsgrad_runtime.divide(z_d * x, x * x + y * y)
    x_d += cpsgrad_runtime.divide(-z_d * y, x * x + y * y)


@rule(math.sinh)
def sinh(x):
    y = math.sinh(x)
    y_d = yield y
    x_d += y_d * math.cosh(x)


@rule(math.cosh)
def cosh(x):
    y = math.cosh(x)
    y_d = yield y
    x_d += y_d * math.sinh(x)


@rule(math.tanh)
def tanh(x):
    y = math.tanh(x)
    y_d = yield y
    x_d += y_d * (1.0 - y * y)


@rule(math.asinh)
def asinh(x):
    y = math.asinh(x)
    y_d = yield y
    x_d += y_d / math.sqrt(x * x + 1.0)


@rule(math.acosh)
def acosh(x):
    y = math.acosh(x)
    y_d = yield y
    x_d += cpsgrad_runtime.divide(y_d, math.sqrt(x * x - 1.0))


@rule(math.atanh)
def atanh(x):
    y = math.atanh(x)
    y_d = yield y
    x_d += y_d / (1.0 - x * x)


@rule(math.exp)
def exp(x):
    y = math.exp(x)
    y_d = yield y
    x_d += y_d * y


@rule(math.exp2)
def exp2(x):
    y = math.exp2(x)
    y_d = yield y
    x_d += y_d * y * math.log(2.0)


@rule(math.expm1)
def expm1(x):
    y = math.expm1(x)
    y_d = yield y
    x_d += y_d * (y + 1.0)


@rule(math.log)
def log(x):
    y = math.log(x)
    y_d = yield y
    x_d += y_d / x


@rule(math.log)
def log_base(x, base):
    y = math.log(x, base)
    y_d = yield y
    x_d += y_d / (x * math.log(base))
    base_d += -y_d * y / (base * math.log(base))


@rule(math.log2)
def log2(x):
    y = math.log2(x)
    y_d = yield y
    x_d += y_d / (x * math.log(2.0))


@rule(math.log10)
def log10(x):
    y = math.log10(x)
    y_d = yield y
    x_d += y_d / (x * math.log(10.0))


@rule(math.log1p)
def log1p(x):
    y = math.log1p(x)
    y_d = yield y
    x_d += y_d / (1.0 + x)


@rule(math.sqrt)
def sqrt(x):
    y = math.sqrt(x)
    y_d = yield y
    x_d += cpsgrad_runtime.divide(y_d * 0.5, y)


@rule(math.cbrt)
def cbrt(x):
    y = math.cbrt(x)
    y_d = yield y
    x_d += cpsgrad_runtime.divide(y_d, 3.0 * y * y)


@rule(math.pow)
def math_pow(x, y):
    z = math.pow(x, y)
    z_d = yield z
    x_d += z_d * power_slope(float(x), y)
    y_d += z_d * log_for_power(x) * z


@rule(math.hypot)
def hypot(x, y):
    z = math.hypot(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.divide(z_d * x, z)
    y_d += cpsgrad_runtime.divide(z_d * y, z)


@rule(math.fabs)
def fabs(x):
    y = math.fabs(x)
    y_d = yield y
    x_d += y_d * sign(x)


@rule(math.erf)
def erf(x):
    y = math.erf(x)
    y_d = yield y
    x_d += y_d * 2.0 / math.sqrt(math.pi) * math.exp(-x * x)


@rule(math.erfc)
def erfc(x):
    y = math.erfc(x)
    y_d = yield y
    x_d += -y_d * 2.0 / math.sqrt(math.pi) * math.exp(-x * x)


@rule(math.lgamma)
def lgamma(x):
    y = math.lgamma(x)
    y_d = yield y
    x_d += y_d * digamma(x)


@rule(math.gamma)
def gamma(x):
    y = math.gamma(x)
    y_d = yield y
    x_d += y_d * y * digamma(x)


@rule(math.degrees)
def degrees(x):
    y = math.degrees(x)
    y_d = yield y
    x_d += y_d * (180.0 / math.pi)


@rule(math.radians)
def radians(x):
    y = math.radians(x)
    y_d = yield y
    x_d += y_d * (math.pi / 180.0)


@rule(math.copysign)
def copysign(x, y):
    z = math.copysign(x, y)
    z_d = yield z
    x_d += z_d * sign(x) * math.copysign(1.0, y)


@rule(math.fsum)
def fsum(xs):
    y = math.fsum(xs)
    y_d = yield y
    xs_d += cpsgrad_runtime.repeated(len(xs), y_d)


@rule(math.fmod)
def fmod(x, y):
    z = math.fmod(x, y)
    z_d = yield z
    x_d += z_d
    y_d += -z_d * math.trunc(x / y)


@rule(math.prod)
def prod(xs):
    y = math.prod(xs)
    y_d = yield y
    xs_d += cpsgrad_runtime.product_adjoint(xs, y_d)


@rule(math.dist)
def dist(p, q):
    z = math.dist(p, q)
    z_d = yield z
    p_d += cpsgrad_runtime.distance_adjoint(p, q, z, z_d)
    q_d += cpsgrad_runtime.distance_adjoint(q, p, z, z_d)


# ---- helpers ----------------------------------------------------------------------------------


def digamma(x) -> float:
    """The derivative of lgamma (scipy's digamma, imported on first use)."""
    from scipy.special import digamma as scipy_digamma

    return float(scipy_digamma(x))
