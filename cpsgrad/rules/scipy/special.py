"""Derivative rules for scipy.special: the gamma family, error functions, the logistic and normal
distribution functions, xlogy and entropies, elementary functions, and log-sum-exp and softmax.
Bessel functions are in `special_bessel`.

Conventions as numpy's rules (cpsgrad/rules/numpy/): `chain(y_d, slope, x)` sums an elementwise
adjoint back to `x`'s shape and dtype. At kinks and singular points the derivatives are JAX's
(jax.scipy.special). A parameter without a derivative here (gammainc's `a`, betainc's `a` and `b`, polygamma's order) is
refused when it is differentiated (`refuse`): its contribution is not silently zero.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import math

import numpy as np
import scipy.special

from cpsgrad.errors import NoRuleError
from cpsgrad.rules.numpy import ufuncs
from cpsgrad.rules.numpy.ufuncs import chain
from cpsgrad.rules.registry import not_differentiable, rule
from cpsgrad.runtime.adjoints import is_zero, item
from cpsgrad.runtime.broadcasting import unbroadcast
from cpsgrad.runtime.elementwise import array_divide

sc = scipy.special
_TWO_OVER_ROOT_PI = 2.0 / math.sqrt(math.pi)
_ROOT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0
_ROOT_TWO_PI = math.sqrt(2.0 * math.pi)


def refuse(function: str, parameter: str, why: str = ""):
    """The backward of a parameter that has no derivative rule, when it is differentiated: a
    NoRuleError (located at the user's call by the caller of the program)."""
    raise NoRuleError(
        None, f"derivative of {function} in {parameter}",
        f"cpsgrad has no derivative of {function} in {parameter}{why}; pass {parameter} as a "
        "constant (a value not computed from the differentiated arguments)",
    )


# ---- the gamma family ---------------------------------------------------------------------------


@rule(sc.gamma)
def gamma(x):
    y = sc.gamma(x)
    y_d = yield y
    x_d += chain(y_d, y * sc.digamma(x), x)


@rule(sc.rgamma)
def rgamma(x):
    y = sc.rgamma(x)
    y_d = yield y
    x_d += chain(y_d, -y * sc.digamma(x), x)


@rule(sc.gammaln)
def gammaln(x):
    y = sc.gammaln(x)
    y_d = yield y
    x_d += chain(y_d, sc.digamma(x), x)


@rule(sc.loggamma)
def loggamma(x):
    y = sc.loggamma(x)
    y_d = yield y
    x_d += chain(y_d, sc.digamma(x), x)


@rule(sc.digamma)
def digamma(x):
    y = sc.digamma(x)
    y_d = yield y
    x_d += chain(y_d, sc.polygamma(1, x), x)


@rule(sc.polygamma)
def polygamma(n, x):
    y = sc.polygamma(n, x)
    y_d = yield y
    n_d += refuse("scipy.special.polygamma", "its order n", " (an integer)")
    x_d += chain(y_d, sc.polygamma(np.add(n, 1), x), x)


@rule(sc.multigammaln)
def multigammaln(a, d):
    y = sc.multigammaln(a, d)
    y_d = yield y
    d_d += refuse("scipy.special.multigammaln", "its dimension d", " (an integer)")
    a_d += chain(y_d, multigammaln_slope(a, d), a)


@rule(sc.beta)
def beta(a, b):
    y = sc.beta(a, b)
    y_d = yield y
    both = sc.digamma(np.add(a, b))
    a_d += chain(y_d, y * (sc.digamma(a) - both), a)
    b_d += chain(y_d, y * (sc.digamma(b) - both), b)


@rule(sc.betaln)
def betaln(a, b):
    y = sc.betaln(a, b)
    y_d = yield y
    both = sc.digamma(np.add(a, b))
    a_d += chain(y_d, sc.digamma(a) - both, a)
    b_d += chain(y_d, sc.digamma(b) - both, b)


@rule(sc.poch)
def poch(z, m):
    y = sc.poch(z, m)
    y_d = yield y
    both = sc.digamma(np.add(z, m))
    z_d += chain(y_d, y * (both - sc.digamma(z)), z)
    m_d += chain(y_d, y * both, m)


@rule(sc.gammainc)
def gammainc(a, x):
    y = sc.gammainc(a, x)
    y_d = yield y
    a_d += refuse("scipy.special.gammainc", "its parameter a", "; it differentiates it in x only")
    x_d += chain(y_d, gamma_density(a, x), x)


@rule(sc.gammaincc)
def gammaincc(a, x):
    y = sc.gammaincc(a, x)
    y_d = yield y
    a_d += refuse("scipy.special.gammaincc", "its parameter a", "; it differentiates it in x only")
    x_d += chain(y_d, -gamma_density(a, x), x)


@rule(sc.betainc)
def betainc(a, b, x):
    y = sc.betainc(a, b, x)
    y_d = yield y
    a_d += refuse("scipy.special.betainc", "its parameter a", "; it differentiates it in x only")
    b_d += refuse("scipy.special.betainc", "its parameter b", "; it differentiates it in x only")
    x_d += chain(y_d, beta_density(a, b, x), x)


not_differentiable(sc.gammasgn)

# ---- error functions and the normal distribution ----------------------------------------------


@rule(sc.erf)
def erf(x):
    y = sc.erf(x)
    y_d = yield y
    x_d += chain(y_d, _TWO_OVER_ROOT_PI * np.exp(-np.square(x)), x)


@rule(sc.erfc)
def erfc(x):
    y = sc.erfc(x)
    y_d = yield y
    x_d += chain(y_d, -_TWO_OVER_ROOT_PI * np.exp(-np.square(x)), x)


@rule(sc.erfcx)
def erfcx(x):
    y = sc.erfcx(x)
    y_d = yield y
    x_d += chain(y_d, 2.0 * np.multiply(x, y) - _TWO_OVER_ROOT_PI, x)


@rule(sc.erfinv)
def erfinv(x):
    y = sc.erfinv(x)
    y_d = yield y
    x_d += chain(y_d, _ROOT_PI_OVER_TWO * np.exp(np.square(y)), x)


@rule(sc.erfcinv)
def erfcinv(x):
    y = sc.erfcinv(x)
    y_d = yield y
    x_d += chain(y_d, -_ROOT_PI_OVER_TWO * np.exp(np.square(y)), x)


@rule(sc.dawsn)
def dawsn(x):
    y = sc.dawsn(x)
    y_d = yield y
    x_d += chain(y_d, 1.0 - 2.0 * np.multiply(x, y), x)


@rule(sc.ndtr)
def ndtr(x):
    y = sc.ndtr(x)
    y_d = yield y
    x_d += chain(y_d, np.exp(-0.5 * np.square(x)) / _ROOT_TWO_PI, x)


@rule(sc.log_ndtr)
def log_ndtr(x):
    y = sc.log_ndtr(x)
    y_d = yield y
    x_d += chain(y_d, np.exp(-0.5 * np.square(x) - y) / _ROOT_TWO_PI, x)


@rule(sc.ndtri)
def ndtri(x):
    y = sc.ndtri(x)
    y_d = yield y
    x_d += chain(y_d, _ROOT_TWO_PI * np.exp(0.5 * np.square(y)), x)


# ---- the logistic function ----------------------------------------------------------------------


@rule(sc.expit)
def expit(x):
    y = sc.expit(x)
    y_d = yield y
    x_d += chain(y_d, y * (1.0 - y), x)


@rule(sc.logit)
def logit(x):
    y = sc.logit(x)
    y_d = yield y
    x_d += chain(y_d, array_divide(1.0, np.multiply(x, np.subtract(1.0, x))), x)


@rule(sc.log_expit)
def log_expit(x):
    y = sc.log_expit(x)
    y_d = yield y
    x_d += chain(y_d, sc.expit(np.negative(x)), x)


if hasattr(sc, "softplus"):  # scipy >= 1.15

    @rule(sc.softplus)
    def softplus(x):
        y = sc.softplus(x)
        y_d = yield y
        x_d += chain(y_d, sc.expit(x), x)


# ---- x log y and entropies ----------------------------------------------------------------------


@rule(sc.xlogy)
def xlogy(x, y):
    z = sc.xlogy(x, y)
    z_d = yield z
    x_d += chain(z_d, np.log(y), x)
    y_d += chain(z_d, array_divide(x, y), y)


@rule(sc.xlog1py)
def xlog1py(x, y):
    z = sc.xlog1py(x, y)
    z_d = yield z
    x_d += chain(z_d, np.log1p(y), x)
    y_d += chain(z_d, array_divide(x, np.add(y, 1.0)), y)


@rule(sc.entr)
def entr(x):
    y = sc.entr(x)
    y_d = yield y
    x_d += chain(y_d, entr_slope(x), x)


@rule(sc.rel_entr)
def rel_entr(x, y):
    z = sc.rel_entr(x, y)
    z_d = yield z
    x_s, y_s = rel_entr_slopes(x, y)
    x_d += chain(z_d, x_s, x)
    y_d += chain(z_d, y_s, y)


@rule(sc.kl_div)
def kl_div(x, y):
    z = sc.kl_div(x, y)
    z_d = yield z
    x_s, y_s = rel_entr_slopes(x, y)
    x_d += chain(z_d, x_s - 1.0, x)
    y_d += chain(z_d, y_s + 1.0, y)


# ---- elementary functions -----------------------------------------------------------------------


# scipy's exp2, expm1, log1p and cbrt are numpy's functions: numpy's rules serve them
for _numpy_rule, _scipy_function in (
    (ufuncs.exp2, sc.exp2), (ufuncs.expm1, sc.expm1), (ufuncs.log1p, sc.log1p), (ufuncs.cbrt, sc.cbrt)
):
    rule(_scipy_function)(_numpy_rule)


@rule(sc.exp10)
def exp10(x):
    y = sc.exp10(x)
    y_d = yield y
    x_d += chain(y_d, y * math.log(10.0), x)


@rule(sc.cosm1)
def cosm1(x):
    y = sc.cosm1(x)
    y_d = yield y
    x_d += chain(y_d, -np.sin(x), x)


@rule(sc.exp1)
def exp1(x):
    y = sc.exp1(x)
    y_d = yield y
    x_d += chain(y_d, -array_divide(np.exp(np.negative(x)), x), x)


@rule(sc.expi)
def expi(x):
    y = sc.expi(x)
    y_d = yield y
    x_d += chain(y_d, array_divide(np.exp(x), x), x)


# ---- log-sum-exp and softmax --------------------------------------------------------------------


@rule(sc.logsumexp)
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    y = sc.logsumexp(a, axis, b, keepdims, return_sign)
    y_d = yield y
    a_g, b_g = logsumexp_adjoints(y_d, y, a, axis, b, keepdims, return_sign)
    a_d += a_g
    b_d += b_g


@rule(sc.softmax)
def softmax(x, axis=None):
    y = sc.softmax(x, axis)
    y_d = yield y
    x_d += softmax_adjoint(y_d, y, x, axis)


@rule(sc.log_softmax)
def log_softmax(x, axis=None):
    y = sc.log_softmax(x, axis)
    y_d = yield y
    x_d += log_softmax_adjoint(y_d, y, x, axis)


# ---- helpers ------------------------------------------------------------------------------------


def gamma_density(a, x):
    """d gammainc(a, x) / dx: x^(a-1) e^(-x) / Gamma(a) (at x = 0: 0 for a > 1, 1 for a = 1)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.exp(sc.xlogy(np.subtract(a, 1.0), x) - x - sc.gammaln(a))


def beta_density(a, b, x):
    """d betainc(a, b, x) / dx: x^(a-1) (1-x)^(b-1) / B(a, b) (at x = 0 for a = 1 and at x = 1 for
    b = 1: 1 / B(a, b), the one-sided derivative)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.exp(
            sc.xlogy(np.subtract(a, 1.0), x) + sc.xlog1py(np.subtract(b, 1.0), np.negative(x)) - sc.betaln(a, b)
        )


def rel_entr_slopes(x, y):
    """The slopes of rel_entr(x, y) = x log(x / y) in x and y where both are positive, 0
    elsewhere, where it is constant (0 or inf: JAX's)."""
    inside = np.logical_and(np.greater(x, 0.0), np.greater(y, 0.0))
    x, y = np.where(inside, x, 1.0), np.where(inside, y, 1.0)
    return np.where(inside, np.log(x) + 1.0 - np.log(y), 0.0), np.where(inside, -x / y, 0.0)


def multigammaln_slope(a, d):
    """d multigammaln(a, d) / da: the sum of digamma(a - j/2) over j < d."""
    return sum(sc.digamma(np.subtract(a, 0.5 * j)) for j in range(int(d)))


def entr_slope(x):
    """d entr(x) / dx = -(log x + 1): inf at 0, nan below (where entr is -inf), as JAX's."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return -(np.log(x) + 1.0)


def _kept(value, shape_ndim: int, axis):
    """`value` reduced over `axis` without keepdims, with its reduced axes put back (size 1)."""
    if axis is None:
        return value
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return np.expand_dims(value, tuple(a % shape_ndim for a in axes))


def logsumexp_adjoints(adjoint, result, a, axis, b, keepdims, return_sign):
    """(a's adjoint, b's adjoint) of `logsumexp(a, axis, b, keepdims, return_sign)`."""
    if return_sign:  # (log|sum|, sign): the sign's adjoint carries nothing
        adjoint, value, sign = item(adjoint, 0), result[0], result[1]
    else:
        value, sign = result, 1.0
    if is_zero(adjoint):
        return 0.0, 0.0
    ndim = np.ndim(a) if b is None else max(np.ndim(a), np.ndim(b))
    if not keepdims:
        adjoint, value, sign = (_kept(v, ndim, axis) if np.ndim(v) else v for v in (adjoint, value, sign))
    with np.errstate(invalid="ignore", over="ignore"):
        shares = np.exp(np.subtract(a, value))
        weighted = adjoint * sign * shares
        a_g = unbroadcast(weighted if b is None else weighted * b, a)
        b_g = 0.0 if b is None else unbroadcast(weighted, b)
    return a_g, b_g


def softmax_adjoint(adjoint, y, x, axis):
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(y * (adjoint - np.sum(adjoint * y, axis=axis, keepdims=True)), x)


def log_softmax_adjoint(adjoint, y, x, axis):
    if is_zero(adjoint):
        return 0.0
    adjoint = np.broadcast_to(adjoint, np.shape(y))
    return unbroadcast(adjoint - np.exp(y) * np.sum(adjoint, axis=axis, keepdims=True), x)
