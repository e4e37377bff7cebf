"""Derivative rules for scipy.stats' distributions, called as `scipy.stats.norm.logpdf(x, loc,
scale)`: norm t beta gamma chi2 laplace logistic expon cauchy (pdf logpdf cdf logcdf sf logsf),
poisson (pmf logpmf cdf logcdf sf logsf, in mu), and in `stats_multivariate` dirichlet and
multivariate_normal (pdf logpdf). The rules are registered on the bound methods
(`scipy.stats.norm.logpdf`), which the rule table files under the distribution and the method.

x, loc, scale and the shape parameters (t's df, beta's a and b, ...) are differentiable where the
derivative is known: in a density everywhere; in a distribution function (cdf, sf, ...) in x, loc
and scale, not in a shape parameter (that is refused when differentiated: `special.refuse`).

The templates are alike but for the distribution, its shape parameters and the method, so they
are made from one text (`_TEMPLATE`), each `def` carrying its text (`__rule_source__`, which
the transform reads as any template's source; in linecache too, for tracebacks); `cpsgrad show` prints what they inline.
Their backwards call
`density_adjoint` / `count_adjoint` here: one call per differentiated parameter.
"""

from __future__ import annotations

import linecache

import numpy as np
import scipy.special
import scipy.stats

from cpsgrad.rules.operators import array_sign
from cpsgrad.rules.registry import rule
from cpsgrad.rules.scipy.special import refuse
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import unbroadcast

sc = scipy.special
DENSITIES = ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf")
COUNTS = ("pmf", "logpmf", "cdf", "logcdf", "sf", "logsf")


# ---- the standardized log-densities: d log f(z; shapes) / dz, and / d shape -------------------


def _norm(wrt, z):
    return -z


def _logistic(wrt, z):
    return -np.tanh(0.5 * z)


def _laplace(wrt, z):
    return -array_sign(z)  # abs'(0) = 1, as JAX's


def _cauchy(wrt, z):
    return -2.0 * z / (1.0 + z * z)


def _expon(wrt, z):
    return np.where(z < 0.0, 0.0, -1.0)  # constant (-inf) outside the support


def _t(wrt, z, df):
    if wrt == "z":
        return -(df + 1.0) * z / (df + z * z)
    return 0.5 * (sc.digamma(0.5 * (df + 1.0)) - sc.digamma(0.5 * df) - 1.0 / df
                  - np.log1p(z * z / df) + (df + 1.0) * z * z / (df * (df + z * z)))


def _gamma(wrt, z, a):
    inside = z > 0.0
    safe = np.where(inside, z, 1.0)
    slope = (a - 1.0) / safe - 1.0 if wrt == "z" else np.log(safe) - sc.digamma(a)
    return np.where(inside, slope, 0.0)


def _chi2(wrt, z, df):
    inside = z > 0.0
    safe = np.where(inside, z, 1.0)
    slope = (0.5 * df - 1.0) / safe - 0.5 if wrt == "z" else 0.5 * (np.log(0.5 * safe) - sc.digamma(0.5 * df))
    return np.where(inside, slope, 0.0)


def _beta(wrt, z, a, b):
    inside = (z > 0.0) & (z < 1.0)
    safe = np.where(inside, z, 0.5)
    if wrt == "z":
        slope = (a - 1.0) / safe - (b - 1.0) / (1.0 - safe)
    elif wrt == "a":
        slope = np.log(safe) - sc.digamma(a) + sc.digamma(np.add(a, b))
    else:
        slope = np.log1p(-safe) - sc.digamma(b) + sc.digamma(np.add(a, b))
    return np.where(inside, slope, 0.0)


#: distribution -> (its shape parameters, its standardized log-density's slopes)
CONTINUOUS = {
    "norm": ((), _norm), "logistic": ((), _logistic), "laplace": ((), _laplace), "cauchy": ((), _cauchy),
    "expon": ((), _expon), "t": (("df",), _t), "gamma": (("a",), _gamma), "chi2": (("df",), _chi2),
    "beta": (("a", "b"), _beta),
}


def _slope(dist, method: str, wrt: str, y, x, shapes: tuple, loc, scale):
    """d method(x, *shapes, loc, scale) / d wrt, elementwise."""
    names, log_density = CONTINUOUS[dist.name]
    z = (np.asarray(x, dtype=np.float64) - loc) / scale
    if method in ("pdf", "logpdf"):
        if wrt in names:
            slope = log_density(wrt, z, *shapes)
        else:
            slope = log_density("z", z, *shapes)
            slope = {"x": slope / scale, "loc": -slope / scale, "scale": -(slope * z + 1.0) / scale}[wrt]
        return slope * y if method == "pdf" else slope
    if wrt in names:
        refuse(f"scipy.stats.{dist.name}.{method}", f"its shape parameter {wrt}",
               " (only the densities, pdf and logpdf, are differentiated in their shape parameters)")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if method in ("cdf", "sf"):
            density = dist.pdf(x, *shapes, loc, scale)
        else:  # d log F = f / F
            density = np.exp(dist.logpdf(x, *shapes, loc, scale) - y)
    if method in ("sf", "logsf"):
        density = -density
    return {"x": density, "loc": -density, "scale": -density * z}[wrt]


def density_adjoint(dist, method: str, wrt: str, adjoint, y, x, shapes: tuple, loc, scale):
    """The adjoint of the argument `wrt` (x, loc, scale or a shape parameter's name) of
    `dist.method(x, *shapes, loc, scale)`, from its result's adjoint."""
    if is_zero(adjoint):
        return 0.0
    like = {"x": x, "loc": loc, "scale": scale, **dict(zip(CONTINUOUS[dist.name][0], shapes, strict=True))}[wrt]
    with np.errstate(divide="ignore", invalid="ignore"):
        return unbroadcast(adjoint * _slope(dist, method, wrt, y, x, shapes, loc, scale), like)


def count_adjoint(method: str, adjoint, y, k, mu, loc):
    """The adjoint of mu in `scipy.stats.poisson.method(k, mu, loc)`."""
    if is_zero(adjoint):
        return 0.0
    k = np.subtract(k, loc)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if method in ("pmf", "logpmf"):
            counts = (k >= 0) & (k == np.floor(k))
            slope = np.where(counts, np.where(counts, k, 0.0) / mu - 1.0, 0.0)
            slope = slope * y if method == "pmf" else slope
        else:
            below = np.floor(k)
            mass = np.where(below >= 0, scipy.stats.poisson.pmf(below, mu), 0.0)  # d cdf / d mu = -pmf(floor k)
            if method in ("logcdf", "logsf"):
                mass = mass / np.exp(y)
            slope = -mass if method in ("cdf", "logcdf") else mass
    return unbroadcast(adjoint * slope, mu)


# ---- the templates ------------------------------------------------------------------------------

_TEMPLATE = '''\
def {name}_{method}(x, {shapes}loc=0.0, scale=1.0):
    y = scipy.stats.{name}.{method}(x, {shapes}loc, scale)
    y_d = yield y
{steps}'''
_STEP = '    {wrt}_d += density_adjoint(scipy.stats.{name}, "{method}", "{wrt}", y_d, y, x, ({tuple}), loc, scale)\n'

_COUNT_TEMPLATE = '''\
def poisson_{method}(k, mu, loc=0):
    y = scipy.stats.poisson.{method}(k, mu, loc)
    y_d = yield y
    k_d += refuse("scipy.stats.poisson.{method}", "its count k", " (an integer)")
    mu_d += count_adjoint("{method}", y_d, y, k, mu, loc)
    loc_d += refuse("scipy.stats.poisson.{method}", "its shift loc", " (an integer)")
'''


def _template(text: str, name: str):
    """The generator function `name` that `text` defines, compiled in this module's namespace
    with its source in linecache (the transform reads a template's source)."""
    filename = f"<cpsgrad rule template {name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    exec(compile(text, filename, "exec"), globals())  # noqa: S102 - a template written above
    template = globals()[name]
    template.__rule_source__ = text  # what the transform reads (linecache may be cleared)
    return template


for _name, (_shapes, _) in CONTINUOUS.items():
    _given = "".join(f"{s}, " for s in _shapes)
    for _method in DENSITIES:
        _steps = "".join(
            _STEP.format(wrt=wrt, name=_name, method=_method, tuple=_given) for wrt in ("x", *_shapes, "loc", "scale")
        )
        _text = _TEMPLATE.format(name=_name, method=_method, shapes=_given, steps=_steps)
        rule(getattr(getattr(scipy.stats, _name), _method))(_template(_text, f"{_name}_{_method}"))
for _method in COUNTS:
    rule(getattr(scipy.stats.poisson, _method))(_template(_COUNT_TEMPLATE.format(method=_method), f"poisson_{_method}"))
