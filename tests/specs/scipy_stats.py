"""Specs of the scipy.stats rules (cpsgrad/rules/scipy/stats.py, stats_multivariate.py): every
distribution's every method, called as `scipy.stats.norm.logpdf(x, loc, scale)`, in x, loc, scale
and (for the densities) its shape parameters; poisson in mu; dirichlet and multivariate_normal;
frozen distributions in x. Kinks against jax.scipy.stats, and the symbolic zero."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special
import scipy.stats

from tests.specs import FLOAT, Kink, M, S

st = scipy.stats
DENSITIES = ("pdf", "logpdf")
DISTRIBUTION_FUNCTIONS = ("cdf", "logcdf", "sf", "logsf")

LOCATION = (-1.0, 1.0)
SCALE = (0.5, 2.0)
#: distribution -> (x's domain, the shape parameters' domains, their constant values, loc's domain,
#: scale's domain); x stays inside the support for every loc and scale drawn
DISTRIBUTIONS = {
    "norm": ((-2.0, 2.0), (), (), LOCATION, SCALE),
    "logistic": ((-2.0, 2.0), (), (), LOCATION, SCALE),
    "cauchy": ((-2.0, 2.0), (), (), LOCATION, SCALE),
    "laplace": ((-2.0, 2.0), (), (), LOCATION, SCALE),  # drawn apart: x never at loc
    "expon": ((1.0, 3.0), (), (), (-1.0, 0.5), SCALE),
    "t": ((-2.0, 2.0), ((1.5, 5.0),), (3.0,), LOCATION, SCALE),
    "gamma": ((0.5, 3.0), ((1.5, 4.0),), (2.5,), (-0.4, 0.2), SCALE),
    "chi2": ((0.5, 3.0), ((2.5, 6.0),), (4.0,), (-0.4, 0.2), SCALE),
    "beta": ((0.3, 0.6), ((1.5, 3.0), (1.5, 3.0)), (2.0, 3.0), (-0.2, 0.1), (1.0, 1.5)),
}


def _density_spec(method, shapes: int):
    """`sum(method(x, *shapes, loc, scale) * w)`, every argument differentiated."""
    if shapes == 0:
        return lambda x, loc, scale, w: np.sum(method(x, loc, scale) * w)
    if shapes == 1:
        return lambda x, a, loc, scale, w: np.sum(method(x, a, loc, scale) * w)
    return lambda x, a, b, loc, scale, w: np.sum(method(x, a, b, loc, scale) * w)


def _function_spec(method, constants: tuple):
    """`sum(method(x, *constants, loc, scale) * w)`: the shape parameters constant."""
    if not constants:
        return lambda x, loc, scale, w: np.sum(method(x, loc, scale) * w)
    if len(constants) == 1:
        (a,) = constants
        return lambda x, loc, scale, w: np.sum(method(x, a, loc, scale) * w)
    a, b = constants
    return lambda x, loc, scale, w: np.sum(method(x, a, b, loc, scale) * w)


SPECS = []
for _name, (_x, _shapes, _constants, _loc, _scale) in DISTRIBUTIONS.items():
    _distribution = getattr(st, _name)
    for _method in DENSITIES:
        SPECS.append(S(f"{_name}.{_method}", _density_spec(getattr(_distribution, _method), len(_shapes)),
                       [M, *([FLOAT] * len(_shapes)), (4,), FLOAT], (_x, *_shapes, _loc, _scale),
                       apart=_name == "laplace"))
    for _method in DISTRIBUTION_FUNCTIONS:
        SPECS.append(S(f"{_name}.{_method}", _function_spec(getattr(_distribution, _method), _constants),
                       [M, FLOAT, (4,)], (_x, _loc, _scale), apart=_name == "laplace"))

COUNTS = np.array([[0, 1, 2, 5], [3, 0, 1, 4], [2, 2, 7, 1]])
SPECS += [
    S("poisson.pmf", lambda mu, w: np.sum(st.poisson.pmf(COUNTS, mu) * w), [(4,)], (0.5, 3.0)),
    S("poisson.logpmf", lambda mu, w: np.sum(st.poisson.logpmf(COUNTS, mu) * w), [(4,)], (0.5, 3.0)),
    S("poisson.logpmf float", lambda mu, w: np.sum(st.poisson.logpmf(COUNTS, mu, -1) * w), [FLOAT], (0.5, 3.0)),
    S("poisson.cdf", lambda mu, w: np.sum(st.poisson.cdf(COUNTS + 0.5, mu) * w), [(4,)], (0.5, 3.0)),
    S("poisson.logcdf", lambda mu, w: np.sum(st.poisson.logcdf(COUNTS, mu) * w), [FLOAT], (0.5, 3.0)),
    S("poisson.sf", lambda mu, w: np.sum(st.poisson.sf(COUNTS, mu) * w), [(4,)], (0.5, 3.0)),
    S("poisson.logsf", lambda mu, w: np.sum(st.poisson.logsf(COUNTS, mu) * w), [(4,)], (0.5, 3.0)),
    # dirichlet: points on the simplex made from the inputs (softmax over the components, axis 0;
    # in float64: scipy refuses a float32 softmax's sum 1 - 6e-8)
    S("dirichlet.logpdf", lambda u, alpha, w: st.dirichlet.logpdf(scipy.special.softmax(u), alpha) * w,
      [(3,), (3,)], ((-1.0, 1.0), (0.5, 3.0)), dtypes=("float64",)),
    S("dirichlet.logpdf points",
      lambda u, alpha, w: np.sum(st.dirichlet.logpdf(scipy.special.softmax(u, axis=0), alpha) * w),
      [(3, 4), (3,)], ((-1.0, 1.0), (0.5, 3.0)), dtypes=("float64",)),
    S("dirichlet.logpdf K - 1 components",
      lambda u, alpha, w: st.dirichlet.logpdf(scipy.special.softmax(u)[:2], alpha) * w,
      [(3,), (3,)], ((-1.0, 1.0), (0.5, 3.0)), dtypes=("float64",)),
    S("dirichlet.pdf", lambda u, alpha, w: st.dirichlet.pdf(scipy.special.softmax(u), alpha) * w,
      [(3,), (3,)], ((-1.0, 1.0), (0.5, 3.0)), dtypes=("float64",)),
    # multivariate_normal: covariances made positive definite from the inputs
    S("multivariate_normal.logpdf",
      lambda x, m, a, w: np.sum(st.multivariate_normal.logpdf(x, m, a @ a.T + np.eye(3)) * w),
      [(5, 3), (3,), (3, 3)], (-1.0, 1.0)),
    S("multivariate_normal.logpdf one point",
      lambda x, m, a, w: st.multivariate_normal.logpdf(x, m, a @ a.T + np.eye(2)) * w,
      [(2,), (2,), (2, 2)], (-1.0, 1.0)),
    S("multivariate_normal.logpdf diagonal", lambda x, m, v, w: np.sum(st.multivariate_normal.logpdf(x, m, v) * w),
      [(4, 3), (3,), (3,)], ((-1.0, 1.0), (-1.0, 1.0), (0.5, 2.0))),
    S("multivariate_normal.logpdf variance", lambda x, m, v, w: np.sum(st.multivariate_normal.logpdf(x, m, v) * w),
      [(4,), FLOAT, FLOAT], ((-1.0, 1.0), (-1.0, 1.0), (0.5, 2.0))),  # one dimension: 4 points
    S("multivariate_normal.pdf", lambda x, m, a, w: np.sum(st.multivariate_normal.pdf(x, m, a @ a.T + np.eye(2)) * w),
      [(3, 2), (2,), (2, 2)], (-1.0, 1.0)),
    S("multivariate_normal.entropy", lambda m, a, w: st.multivariate_normal.entropy(m, a @ a.T + np.eye(3)) * w,
      [(3,), (3, 3)], (-1.0, 1.0)),
    S("multivariate_normal.entropy diagonal", lambda v, w: st.multivariate_normal.entropy(np.zeros(3), v) * w,
      [(3,)], (0.5, 2.0)),
    S("multivariate_normal.entropy variance", lambda v, w: st.multivariate_normal.entropy(np.zeros(2), v) * w,
      [FLOAT], (0.5, 2.0)),
]

# frozen distributions, in x
FROZEN_NORM = st.norm(0.3, 1.5)
FROZEN_T = st.t(3.0, -0.2, 0.8)
FROZEN_NORMAL = st.multivariate_normal(np.array([0.1, -0.2]), np.array([[2.0, 0.3], [0.3, 1.0]]))
SPECS += [
    S("frozen norm.logpdf", lambda x, w: np.sum(FROZEN_NORM.logpdf(x) * w), [M]),
    S("frozen norm.pdf", lambda x, w: np.sum(FROZEN_NORM.pdf(x) * w), [M]),
    S("frozen t.cdf", lambda x, w: np.sum(FROZEN_T.cdf(x) * w), [M]),
    S("frozen t.logcdf", lambda x, w: np.sum(FROZEN_T.logcdf(x) * w), [FLOAT]),
    S("frozen norm.sf", lambda x, w: np.sum(FROZEN_NORM.sf(x) * w), [M]),
    S("frozen norm.logsf", lambda x, w: np.sum(FROZEN_NORM.logsf(x) * w), [M]),
    S("frozen multivariate_normal.logpdf", lambda x, w: np.sum(FROZEN_NORMAL.logpdf(x) * w), [(4, 2)]),
    S("frozen multivariate_normal.pdf", lambda x, w: np.sum(FROZEN_NORMAL.pdf(x) * w), [(4, 2)]),
]


def _jst():
    return pytest.importorskip("jax.scipy.stats")


def _jnp():
    return pytest.importorskip("jax.numpy")


A = np.array
W4 = np.array([1.0, -2.0, 0.5, 3.0])
KINKS = [
    Kink(
        "laplace at its location",
        lambda x: np.sum(st.laplace.logpdf(x, 0.5, 2.0) * W4),
        lambda x: _jnp().sum(_jst().laplace.logpdf(x, 0.5, 2.0) * W4),
        (A([0.5, 0.5, 1.5, -1.0]),),
    ),
    Kink(
        "expon outside its support",
        lambda x: np.sum(st.expon.logpdf(x, 0.0, 2.0) * W4),
        lambda x: _jnp().sum(_jst().expon.logpdf(x, 0.0, 2.0) * W4),
        (A([-1.0, -0.5, 1.5, 3.0]),),
    ),
    Kink(
        "norm logcdf and logsf in the tails",
        lambda x: np.sum((st.norm.logcdf(x) + st.norm.logsf(x)) * W4),
        lambda x: _jnp().sum((_jst().norm.logcdf(x) + _jst().norm.logsf(x)) * W4),
        (A([-12.0, -3.0, 4.0, 12.0]),),
    ),
]


def _unused_after(op, constants: tuple):
    """f(x, flag) computing op(x, *constants) and using it only when flag is true (one function
    per arity: the transform reads every branch's call)."""
    return [_unused0, _unused1, _unused2, _unused3, _unused4][len(constants)](op, *constants)


def _unused0(op):
    def f(x, flag):
        y = op(x)
        if flag:
            return np.sum(y)
        return np.sum(x)

    return f


def _unused1(op, a):
    def f(x, flag):
        y = op(x, a)
        if flag:
            return np.sum(y)
        return np.sum(x)

    return f


def _unused2(op, a, b):
    def f(x, flag):
        y = op(x, a, b)
        if flag:
            return np.sum(y)
        return np.sum(x)

    return f


def _unused3(op, a, b, c):
    def f(x, flag):
        y = op(x, a, b, c)
        if flag:
            return np.sum(y)
        return np.sum(x)

    return f


def _unused4(op, a, b, c, d):
    def f(x, flag):
        y = op(x, a, b, c, d)
        if flag:
            return np.sum(y)
        return np.sum(x)

    return f


def _unused_poisson(op):
    def f(mu, flag):
        y = op(COUNTS, mu)
        if flag:
            return np.sum(y)
        return np.sum(mu)

    return f


X = np.array([[0.2, 0.25, 1.0], [0.75, 0.5, 0.4]])
V = np.array([0.25, 0.5, 0.75])
ZERO_CASES = (
    [(getattr(getattr(st, name), method), _unused_after(getattr(getattr(st, name), method), (*spec[2], 0.0, 1.5)),
      (X / 2.0,))
     for name, spec in DISTRIBUTIONS.items() for method in DENSITIES + DISTRIBUTION_FUNCTIONS]
    + [(getattr(st.poisson, method), _unused_poisson(getattr(st.poisson, method)), (np.append(V, 1.0),))
       for method in ("pmf", "logpmf", "cdf", "logcdf", "sf", "logsf")]
    + [(op, _unused_after(op, (V + 0.5,)), (V / 1.5,)) for op in (st.dirichlet.logpdf, st.dirichlet.pdf)]
    + [(op, _unused_after(op, (V, np.eye(3))), (X,))
       for op in (st.multivariate_normal.logpdf, st.multivariate_normal.pdf)]
    + [(st.multivariate_normal.entropy, _unused_after(st.multivariate_normal.entropy, (np.eye(2),)), (V[:2],))]
    # a frozen distribution's rule is its class's function's (rv_continuous_frozen.logpdf)
    + [(getattr(type(FROZEN_NORM), method), _unused_after(getattr(FROZEN_NORM, method), ()), (X,))
       for method in DENSITIES + DISTRIBUTION_FUNCTIONS]
    + [(getattr(type(FROZEN_NORMAL), method), _unused_after(getattr(FROZEN_NORMAL, method), ()), (X[:, :2],))
       for method in DENSITIES]
)
