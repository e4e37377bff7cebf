"""Derivative rules for the `math` module (Python numbers in, a Python float out).

The functions numpy also has (sin, exp, log, sqrt, atan2, ...) have their derivative written once,
in cpsgrad/rules/elementary.py, and their rules made from it here (`register`); the rest are below.

Derivatives that are infinite where the function is finite (sqrt'(0)) are inf, as JAX's, not an error.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import math

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.rules import elementary  # noqa: F401  (declares the shared templates)
from cpsgrad.rules.module_templates import ELEMENTARY, register
from cpsgrad.rules.operators import log_for_power, power_slope, sign
from cpsgrad.rules.registry import rule

# ---- the functions numpy shares (sin, exp, log, sqrt, atan2, ...): cpsgrad/rules/elementary.py --

register(ELEMENTARY, globals(), "math")

# ---- the others -------------------------------------------------------------------------------


@rule(math.log)
def log_base(x, base):
    y = math.log(x, base)
    y_d = yield y
    x_d += y_d / (x * math.log(base))
    base_d += -y_d * y / (base * math.log(base))


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
