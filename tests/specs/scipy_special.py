"""Specs of the scipy.special rules (cpsgrad/rules/scipy/special.py, special_bessel.py): finite
differences in the domains below, kinks and singular points against jax.scipy.special, and the
symbolic zero. Bessel orders and gammainc's `a` are constants here (they are refused when
differentiated: tests/test_rules_scipy.py)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special

from tests.specs import FLOAT, UNIT, Kink, M, P, S, unused, unused_pair, unused_with

sc = scipy.special

SPECS = [
    # the gamma family
    S("gamma", lambda x, w: np.sum(sc.gamma(x) * w), [M], (0.5, 3.0)),
    S("gamma float", lambda x, w: sc.gamma(x) * w, [FLOAT], (0.5, 3.0)),
    S("rgamma", lambda x, w: np.sum(sc.rgamma(x) * w), [M], (0.5, 3.0)),
    S("gammaln", lambda x, w: np.sum(sc.gammaln(x) * w), [M], (0.2, 4.0)),
    S("gammaln 0-d", lambda x, w: np.sum(sc.gammaln(x) * w), [()], (0.2, 4.0)),
    S("loggamma", lambda x, w: np.sum(sc.loggamma(x) * w), [M], (0.2, 4.0)),
    S("digamma", lambda x, w: np.sum(sc.digamma(x) * w), [M], (0.3, 3.0)),
    S("psi float", lambda x, w: sc.psi(x) * w, [FLOAT], (0.3, 3.0)),
    S("polygamma", lambda x, w: np.sum(sc.polygamma(2, x) * w), [M], (0.5, 3.0)),
    S("multigammaln", lambda a, w: np.sum(sc.multigammaln(a, 3) * w), [(4,)], (1.5, 4.0)),
    S("multigammaln float", lambda a, w: sc.multigammaln(a, 2) * w, [FLOAT], (1.0, 4.0)),
    S("beta", lambda a, b, w: np.sum(sc.beta(a, b) * w), [M, (4,)], P),
    S("betaln", lambda a, b, w: np.sum(sc.betaln(a, b) * w), [M, FLOAT], P),
    S("poch", lambda z, m, w: np.sum(sc.poch(z, m) * w), [M, (3, 1)], ((0.5, 2.0), (0.2, 1.5))),
    S("gammainc in x", lambda x, w: np.sum(sc.gammainc(2.5, x) * w), [M], (0.2, 3.0)),
    S("gammaincc in x", lambda x, w: np.sum(sc.gammaincc(0.7, x) * w), [M], (0.2, 3.0)),
    # error functions and the normal distribution
    S("erf", lambda x, w: np.sum(sc.erf(x) * w), [M]),
    S("erf float", lambda x, w: sc.erf(x) * w, [FLOAT]),
    S("erfc", lambda x, w: np.sum(sc.erfc(x) * w), [M]),
    S("erfcx", lambda x, w: np.sum(sc.erfcx(x) * w), [M], (-1.0, 2.0)),
    S("erfinv", lambda x, w: np.sum(sc.erfinv(x) * w), [M], UNIT),
    S("erfcinv", lambda x, w: np.sum(sc.erfcinv(x) * w), [M], (0.1, 1.9)),
    S("dawsn", lambda x, w: np.sum(sc.dawsn(x) * w), [M]),
    S("ndtr", lambda x, w: np.sum(sc.ndtr(x) * w), [M]),
    S("log_ndtr", lambda x, w: np.sum(sc.log_ndtr(x) * w), [M], (-6.0, 2.0)),
    S("ndtri", lambda x, w: np.sum(sc.ndtri(x) * w), [M], (0.05, 0.95)),
    # the logistic function
    S("expit", lambda x, w: np.sum(sc.expit(x) * w), [M]),
    S("logit", lambda x, w: np.sum(sc.logit(x) * w), [M], (0.05, 0.95)),
    S("log_expit", lambda x, w: np.sum(sc.log_expit(x) * w), [M], (-4.0, 4.0)),
    # x log y and entropies
    S("xlogy", lambda x, y, w: np.sum(sc.xlogy(x, y) * w), [M, (4,)], ((-2.0, 2.0), P)),
    S("xlog1py", lambda x, y, w: np.sum(sc.xlog1py(x, y) * w), [M, FLOAT], ((-2.0, 2.0), (-0.5, 2.0))),
    S("entr", lambda x, w: np.sum(sc.entr(x) * w), [M], P),
    S("rel_entr", lambda x, y, w: np.sum(sc.rel_entr(x, y) * w), [M, (3, 1)], P),
    S("kl_div", lambda x, y, w: np.sum(sc.kl_div(x, y) * w), [M, (4,)], P),
    # elementary functions
    S("exp2", lambda x, w: np.sum(sc.exp2(x) * w), [M]),
    S("exp10", lambda x, w: np.sum(sc.exp10(x) * w), [M], (-1.0, 1.0)),
    S("expm1", lambda x, w: np.sum(sc.expm1(x) * w), [M]),
    S("log1p", lambda x, w: np.sum(sc.log1p(x) * w), [M], (-0.5, 2.0)),
    S("cbrt", lambda x, w: np.sum(sc.cbrt(x) * w), [M], P),
    S("cosm1", lambda x, w: np.sum(sc.cosm1(x) * w), [M]),
    S("exp1", lambda x, w: np.sum(sc.exp1(x) * w), [M], P),
    S("expi", lambda x, w: np.sum(sc.expi(x) * w), [M], P),
    # log-sum-exp and softmax
    S("logsumexp", lambda x, w: sc.logsumexp(x) * w, [M]),
    S("logsumexp axis", lambda x, w: np.sum(sc.logsumexp(x, axis=1) * w), [M]),
    S("logsumexp axis tuple keepdims", lambda x, w: np.sum(sc.logsumexp(x, axis=(0, 2), keepdims=True) * w),
      [(2, 3, 4)]),
    S("logsumexp b", lambda x, b, w: np.sum(sc.logsumexp(x, axis=0, b=b) * w), [M, (4,)], ((-2.0, 2.0), P)),
    S("logsumexp return_sign", lambda x, b, w: np.sum(sc.logsumexp(x, -1, b, return_sign=True)[0] * w),
      [M, (3, 1)], ((-2.0, 2.0), P)),
    S("logsumexp float", lambda a, c, w: sc.logsumexp([a, c, 0.5]) * w, [FLOAT, FLOAT]),
    S("softmax", lambda x, w: np.sum(sc.softmax(x, axis=-1) * w), [M]),
    S("softmax all", lambda x, w: np.sum(sc.softmax(x) * w), [M]),
    S("log_softmax", lambda x, w: np.sum(sc.log_softmax(x, axis=0) * w), [M]),
    # Bessel functions, in x
    S("i0", lambda x, w: np.sum(sc.i0(x) * w), [M]),
    S("i0e", lambda x, w: np.sum(sc.i0e(x) * w), [M], P),
    S("i1", lambda x, w: np.sum(sc.i1(x) * w), [M]),
    S("i1e", lambda x, w: np.sum(sc.i1e(x) * w), [M], P),
    S("iv", lambda x, w: np.sum(sc.iv(2.0, x) * w), [M]),
    S("ive", lambda x, w: np.sum(sc.ive(1.5, x) * w), [M], P),
    S("j0", lambda x, w: np.sum(sc.j0(x) * w), [M]),
    S("j1", lambda x, w: np.sum(sc.j1(x) * w), [M]),
    S("jv", lambda x, w: np.sum(sc.jv(2.5, x) * w), [M], P),
    S("y0", lambda x, w: np.sum(sc.y0(x) * w), [M], (0.5, 3.0)),
    S("y1", lambda x, w: np.sum(sc.y1(x) * w), [M], (0.5, 3.0)),
    S("yn", lambda x, w: np.sum(sc.yn(2, x) * w), [M], (0.5, 3.0)),
    S("yv", lambda x, w: np.sum(sc.yv(1.5, x) * w), [M], (0.5, 3.0)),
    S("k0", lambda x, w: np.sum(sc.k0(x) * w), [M], (0.3, 3.0)),
    S("k0e", lambda x, w: np.sum(sc.k0e(x) * w), [M], (0.3, 3.0)),
    S("k1", lambda x, w: np.sum(sc.k1(x) * w), [M], (0.3, 3.0)),
    S("k1e", lambda x, w: np.sum(sc.k1e(x) * w), [M], (0.3, 3.0)),
    S("kv", lambda x, w: np.sum(sc.kv(1.5, x) * w), [M], (0.3, 3.0)),
    S("kve", lambda x, w: np.sum(sc.kve(0.5, x) * w), [M], (0.3, 3.0)),
]
if hasattr(sc, "softplus"):  # scipy >= 1.15
    SPECS.append(S("softplus", lambda x, w: np.sum(sc.softplus(x) * w), [M]))


def _jsp():
    return pytest.importorskip("jax.scipy.special")


def _jnp():
    return pytest.importorskip("jax.numpy")


A = np.array
W4 = np.array([1.0, -2.0, 0.5, 3.0])
K = Kink
KINKS = [
    K(
        "xlogy at x = 0",
        lambda x, y: np.sum(sc.xlogy(x, y) * W4),
        lambda x, y: _jnp().sum(_jsp().xlogy(x, y) * W4),
        (A([0.0, 0.0, 1.5, 0.0]), A([0.0, 2.0, 0.5, 1.0])), (0, 1)),
    K(
        "xlog1py at x = 0",
        lambda x, y: np.sum(sc.xlog1py(x, y) * W4),
        lambda x, y: _jnp().sum(_jsp().xlog1py(x, y) * W4),
        (A([0.0, 0.0, 1.5, 0.0]), A([-1.0, 2.0, 0.5, 0.0])), (0, 1)),
    K(
        "entr at 0 and below",
        lambda x: np.sum(sc.entr(x) * W4),
        lambda x: _jnp().sum(_jsp().entr(x) * W4),
        (A([0.0, -1.0, 0.5, 2.0]),)),
    K(
        "rel_entr at 0",
        lambda x, y: np.sum(sc.rel_entr(x, y) * W4),
        lambda x, y: _jnp().sum(_jsp().rel_entr(x, y) * W4),
        (A([0.0, 0.0, 0.5, -1.0]), A([1.0, 0.0, 2.0, 1.0])), (0, 1)),
    K(
        "kl_div at 0",
        lambda x, y: np.sum(sc.kl_div(x, y) * W4),
        lambda x, y: _jnp().sum(_jsp().kl_div(x, y) * W4),
        (A([0.0, 0.0, 0.5, 1.0]), A([1.0, 0.0, 2.0, 1.0])), (0, 1)),
    K(
        "i1 and i1e at 0",
        lambda x: np.sum((sc.i1(x) + sc.i1e(x) + sc.i0e(x)) * W4),
        lambda x: _jnp().sum((_jsp().i1(x) + _jsp().i1e(x) + _jsp().i0e(x)) * W4),
        (A([0.0, -0.0, 1.5, -2.0]),)),
    # (further out JAX's differs, by 1.6e-10 at x = -30, where this one is within 1e-13 of the
    # asymptotic series: tests/test_rules_scipy.py)
    K(
        "log_ndtr far in the tail",
        lambda x: np.sum(sc.log_ndtr(x) * W4),
        lambda x: _jnp().sum(_jsp().log_ndtr(x) * W4),
        (A([-12.0, -5.0, 0.0, 8.0]),)),
    K(
        "expit and log_expit saturated",
        lambda x: np.sum((sc.expit(x) + sc.log_expit(x)) * W4),
        lambda x: _jnp().sum((_jsp().expit(x) + pytest.importorskip("jax").nn.log_sigmoid(x)) * W4),
        (A([-40.0, 40.0, 0.0, -800.0]),)),
    K(
        "logsumexp with -inf",
        lambda x: sc.logsumexp(x),
        lambda x: _jsp().logsumexp(x),
        (A([-np.inf, 0.5, 1.0, -np.inf]),)),
    K(
        "gammaln and digamma at negative x",
        lambda x: np.sum((sc.gammaln(x) + sc.digamma(x)) * W4),
        lambda x: _jnp().sum((_jsp().gammaln(x) + _jsp().digamma(x)) * W4),
        (A([-0.5, -1.5, -2.25, 0.75]),)),
    # (at x = 0, gammainc(1, x)'s derivative is 1 here, its right derivative; JAX's is nan)
    K(
        "gammainc at x = 0",
        lambda x: np.sum((sc.gammainc(2.5, x) - sc.gammaincc(3.0, x)) * W4),
        lambda x: _jnp().sum((_jsp().gammainc(2.5, x) - _jsp().gammaincc(3.0, x)) * W4),
        (A([0.0, 0.5, 1.0, 3.0]),)),
]


def _unused_first_constant(op, constant):
    def f(x, flag):
        y = op(constant, x)
        if flag:
            return np.sum(y)
        return np.sum(x)

    return f


def _unused_logsumexp(x, z, flag):
    y = sc.logsumexp(x, axis=0, b=z, return_sign=True)
    if flag:
        return np.sum(y[0])
    return np.sum(x)


X = np.array([[0.0, 0.25, 1.0], [0.75, 0.5, 0.0]])  # zeros where some derivatives are infinite
_UNARY = [
    sc.gamma, sc.rgamma, sc.gammaln, sc.loggamma, sc.digamma, sc.erf, sc.erfc, sc.erfcx, sc.erfinv,
    sc.erfcinv, sc.dawsn, sc.ndtr, sc.log_ndtr, sc.ndtri, sc.expit, sc.logit, sc.log_expit, sc.entr,
    sc.exp2, sc.exp10, sc.expm1, sc.log1p, sc.cbrt, sc.cosm1, sc.exp1, sc.expi, sc.logsumexp,
    sc.softmax, sc.log_softmax, sc.i0, sc.i0e, sc.i1, sc.i1e, sc.j0, sc.j1, sc.y0, sc.y1, sc.k0,
    sc.k0e, sc.k1, sc.k1e, *([sc.softplus] if hasattr(sc, "softplus") else []),
]
_BINARY = [sc.beta, sc.betaln, sc.poch, sc.xlogy, sc.xlog1py, sc.rel_entr, sc.kl_div]
_ORDER_FIRST = [sc.polygamma, sc.gammainc, sc.gammaincc, sc.iv, sc.ive, sc.jv, sc.yn, sc.yv, sc.kv, sc.kve]
ZERO_CASES = (
    [(op, unused(op), (X,)) for op in _UNARY]
    + [(op, unused_pair(op), (X, X[::-1])) for op in _BINARY]
    + [(op, _unused_first_constant(op, 2), (X,)) for op in _ORDER_FIRST]
    + [(sc.multigammaln, unused_with(sc.multigammaln, 2), (X + 1.0,)), (sc.logsumexp, _unused_logsumexp, (X, X))]
)
