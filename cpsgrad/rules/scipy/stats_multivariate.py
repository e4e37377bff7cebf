"""Derivative rules for scipy.stats' multivariate distributions (dirichlet, multivariate_normal:
pdf and logpdf) and for the methods of frozen distributions (`scipy.stats.norm(0.0, 2.0).logpdf(x)`).

A frozen distribution's parameters were fixed when it was made: its methods are differentiated in
x only (a frozen poisson's pmf has no rule: its counts are integers). A distribution frozen from differentiable
parameters is refused where it is made (see
`registry.advice`): write `scipy.stats.norm.logpdf(x, loc, scale)` instead.

multivariate_normal's backward inverts the covariance (numpy.linalg), and gives the covariance the
symmetric gradient (autograd's): -(C^-1 - C^-1 r r^T C^-1) / 2 per point. With allow_singular=True
and a singular covariance, x and mean are differentiated with scipy's pseudo-inverse (the density is
constant off the covariance's range) and the covariance is refused (no derivative there).
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np
import scipy.special
import scipy.stats

from cpsgrad.errors import UnsupportedError
from cpsgrad.rules.registry import rule
from cpsgrad.rules.scipy.stats import CONTINUOUS, density_adjoint
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import unbroadcast

# the frozen distributions' classes (their methods are the rules' primitives)
rv_continuous_frozen = type(scipy.stats.norm())
rv_frozen = next(c for c in rv_continuous_frozen.__mro__ if "cdf" in c.__dict__)
multivariate_normal_frozen = type(scipy.stats.multivariate_normal())

# ---- dirichlet ------------------------------------------------------------------------------------


@rule(scipy.stats.dirichlet.logpdf)
def dirichlet_logpdf(x, alpha):
    y = scipy.stats.dirichlet.logpdf(x, alpha)
    y_d = yield y
    x_d += dirichlet_adjoint("x", y_d, y, x, alpha, False)
    alpha_d += dirichlet_adjoint("alpha", y_d, y, x, alpha, False)


@rule(scipy.stats.dirichlet.pdf)
def dirichlet_pdf(x, alpha):
    y = scipy.stats.dirichlet.pdf(x, alpha)
    y_d = yield y
    x_d += dirichlet_adjoint("x", y_d, y, x, alpha, True)
    alpha_d += dirichlet_adjoint("alpha", y_d, y, x, alpha, True)


# ---- multivariate_normal --------------------------------------------------------------------------


@rule(scipy.stats.multivariate_normal.logpdf)
def multivariate_normal_logpdf(x, mean=None, cov=1, allow_singular=False):
    y = scipy.stats.multivariate_normal.logpdf(x, mean, cov, allow_singular)
    y_d = yield y
    x_g, mean_g = normal_point_adjoints(y_d, y, x, mean, cov, allow_singular, False)
    x_d += x_g
    mean_d += mean_g
    cov_d += normal_covariance_adjoint(y_d, y, x, mean, cov, allow_singular, False)


@rule(scipy.stats.multivariate_normal.pdf)
def multivariate_normal_pdf(x, mean=None, cov=1, allow_singular=False):
    y = scipy.stats.multivariate_normal.pdf(x, mean, cov, allow_singular)
    y_d = yield y
    x_g, mean_g = normal_point_adjoints(y_d, y, x, mean, cov, allow_singular, True)
    x_d += x_g
    mean_d += mean_g
    cov_d += normal_covariance_adjoint(y_d, y, x, mean, cov, allow_singular, True)


@rule(scipy.stats.multivariate_normal.entropy)
def multivariate_normal_entropy(mean=None, cov=1):
    y = scipy.stats.multivariate_normal.entropy(mean, cov)
    y_d = yield y
    mean_d += 0.0  # the entropy does not depend on the mean
    cov_d += normal_entropy_adjoint(y_d, mean, cov)


# ---- frozen distributions: in x only -------------------------------------------------------------


@rule(rv_continuous_frozen.logpdf)
def frozen_logpdf(self, x):
    y = self.logpdf(x)
    y_d = yield y
    x_d += frozen_adjoint(self, "logpdf", y_d, y, x)


@rule(rv_continuous_frozen.pdf)
def frozen_pdf(self, x):
    y = self.pdf(x)
    y_d = yield y
    x_d += frozen_adjoint(self, "pdf", y_d, y, x)


@rule(rv_frozen.cdf)
def frozen_cdf(self, x):
    y = self.cdf(x)
    y_d = yield y
    x_d += frozen_adjoint(self, "cdf", y_d, y, x)


@rule(rv_frozen.logcdf)
def frozen_logcdf(self, x):
    y = self.logcdf(x)
    y_d = yield y
    x_d += frozen_adjoint(self, "logcdf", y_d, y, x)


@rule(rv_frozen.sf)
def frozen_sf(self, x):
    y = self.sf(x)
    y_d = yield y
    x_d += frozen_adjoint(self, "sf", y_d, y, x)


@rule(rv_frozen.logsf)
def frozen_logsf(self, x):
    y = self.logsf(x)
    y_d = yield y
    x_d += frozen_adjoint(self, "logsf", y_d, y, x)


@rule(multivariate_normal_frozen.logpdf)
def frozen_normal_logpdf(self, x):
    y = self.logpdf(x)
    y_d = yield y
    x_d += normal_point_adjoints(y_d, y, x, self.mean, self.cov, self.allow_singular, False)[0]


@rule(multivariate_normal_frozen.pdf)
def frozen_normal_pdf(self, x):
    y = self.pdf(x)
    y_d = yield y
    x_d += normal_point_adjoints(y_d, y, x, self.mean, self.cov, self.allow_singular, True)[0]


# ---- helpers --------------------------------------------------------------------------------------


def frozen_adjoint(frozen, method: str, adjoint, y, x):
    """The adjoint of x in `frozen.method(x)`, by the rule of `frozen.dist.method`."""
    from cpsgrad.rules.scipy.special import refuse

    name = frozen.dist.name
    if name not in CONTINUOUS and name != "poisson":
        refuse(f"scipy.stats.{name}(...).{method}", "x",
               f" (cpsgrad has rules for {', '.join(sorted(CONTINUOUS))} and poisson)")
    if name == "poisson":
        refuse(f"scipy.stats.poisson(...).{method}", "its count k", " (an integer)")
    shapes, loc, scale = frozen.dist._parse_args(*frozen.args, **frozen.kwds)
    return density_adjoint(frozen.dist, method, "x", adjoint, y, x, shapes, loc, scale)


def dirichlet_adjoint(wrt: str, adjoint, y, x, alpha, density: bool):
    """The adjoint of x or alpha in dirichlet.logpdf(x, alpha) (`density`: in pdf). x's first
    axis holds the components, all K of them or the first K - 1 (the last is 1 less their sum)."""
    if is_zero(adjoint):
        return 0.0
    alpha_ = np.asarray(alpha, dtype=np.float64)
    x_ = np.asarray(x, dtype=np.float64)
    short = x_.shape[0] == alpha_.shape[0] - 1
    full = np.concatenate([x_, 1.0 - np.sum(x_, axis=0, keepdims=True)]) if short else x_
    g = adjoint * y if density else adjoint  # per point: x's trailing axes
    extra = (1,) * (full.ndim - 1)
    if wrt == "x":
        slopes = (alpha_.reshape(-1, *extra) - 1.0) / full * g
        if short:  # the last component is 1 - sum(x): its slope counts against each x_i
            slopes = slopes[:-1] - slopes[-1:]
        return unbroadcast(slopes, x)
    total = scipy.special.digamma(np.sum(alpha_))
    slopes = (np.log(full) - scipy.special.digamma(alpha_).reshape(-1, *extra) + total) * g
    return unbroadcast(np.sum(slopes.reshape(full.shape[0], -1), axis=1), alpha)


def _normal_parts(adjoint, y, x, mean, cov, allow_singular: bool, density: bool):
    """(the covariance matrix, its (pseudo-)inverse, the points' residuals times it (one row per
    point), the per-point output adjoints, whether the covariance is singular)."""
    covariance = cov.covariance if hasattr(cov, "covariance") else np.asarray(cov, dtype=np.float64)
    mean_ = np.zeros(()) if mean is None else np.asarray(mean, dtype=np.float64)
    dimension = max(mean_.size, covariance.shape[0] if covariance.ndim else 1)
    if covariance.ndim < 2:  # a variance, or the diagonal
        covariance = np.diag(np.broadcast_to(covariance, (dimension,)))
    points = np.asarray(x, dtype=np.float64).reshape(-1, dimension)
    g = np.broadcast_to(adjoint * y if density else adjoint, np.shape(y)).reshape(-1)
    residuals = points - np.broadcast_to(mean_, (dimension,))
    inverse, singular = _precision(covariance, allow_singular and not hasattr(cov, "covariance"))
    return covariance, inverse, residuals @ inverse, g, singular  # the inverse is symmetric


def _precision(covariance, allow_singular: bool):
    """(C^-1, False); with `allow_singular`, scipy's pseudo-inverse (eigenvalues under its cutoff,
    1e6 * eps * the largest, dropped) and whether any was dropped."""
    if not allow_singular:
        return np.linalg.inv(covariance), False
    values, vectors = np.linalg.eigh(covariance)
    kept = values > 1e6 * np.finfo(np.float64).eps * np.max(np.abs(values))
    inverse = (vectors[:, kept] / values[kept]) @ vectors[:, kept].T
    return inverse, not kept.all()


def normal_point_adjoints(adjoint, y, x, mean, cov, allow_singular: bool, density: bool):
    """(x's, mean's adjoints) in multivariate_normal.logpdf(x, mean, cov) (`density`: in pdf). x
    holds points along its last axis (or, in one dimension, one point per element). With a
    singular covariance (`allow_singular`), scipy's density is constant off the covariance's range
    and the pseudo-inverse gives its exact slopes."""
    if is_zero(adjoint):
        return 0.0, 0.0
    _, _, solved, g, _ = _normal_parts(adjoint, y, x, mean, cov, allow_singular, density)
    x_g = unbroadcast((-g[:, None] * solved).reshape(np.shape(x)), x)
    mean_g = 0.0 if mean is None else unbroadcast(np.sum(g[:, None] * solved, axis=0), mean)
    return x_g, mean_g


def normal_entropy_adjoint(adjoint, mean, cov):
    """cov's adjoint in multivariate_normal.entropy(mean, cov) = (d (1 + log 2 pi) + log det C) / 2:
    C^-1 / 2 (a matrix), the sum of the inverse variances' halves (a diagonal or a variance)."""
    if is_zero(adjoint):
        return 0.0
    if hasattr(cov, "covariance"):
        raise UnsupportedError(None, "multivariate_normal.entropy of a Covariance object", "pass the covariance matrix")
    if np.ndim(cov) == 2:
        return unbroadcast(0.5 * adjoint * np.linalg.inv(cov), cov)
    if np.ndim(cov) == 1:  # the diagonal
        return unbroadcast(0.5 * adjoint / np.asarray(cov, dtype=np.float64), cov)
    dimension = 1 if mean is None else max(np.size(mean), 1)  # a variance, of every dimension
    return unbroadcast(0.5 * adjoint * dimension / np.float64(cov), cov)


def normal_covariance_adjoint(adjoint, y, x, mean, cov, allow_singular: bool, density: bool):
    """cov's adjoint in multivariate_normal.logpdf(x, mean, cov): the symmetric gradient
    -(C^-1 - C^-1 r r^T C^-1) / 2 per point; refused for a singular covariance (its rank, and so
    scipy's pseudo-determinant, changes under a perturbation: there is no derivative)."""
    if is_zero(adjoint):
        return 0.0
    _, inverse, solved, g, singular = _normal_parts(adjoint, y, x, mean, cov, allow_singular, density)
    if singular:
        raise UnsupportedError(
            None, "multivariate_normal.logpdf and pdf with allow_singular=True",
            "the covariance is singular, and the density has no derivative in it there (its rank changes under a "
            "perturbation); differentiate in x and mean only, or pass a positive definite covariance",
        )
    cov_full = 0.5 * (solved.T @ (g[:, None] * solved) - np.sum(g) * inverse)
    if hasattr(cov, "covariance") or np.ndim(cov) == 2:
        return cov_full if hasattr(cov, "covariance") else unbroadcast(cov_full, cov)
    if np.ndim(cov) == 1:
        return unbroadcast(np.diag(cov_full), cov)
    return unbroadcast(np.trace(cov_full), cov)
