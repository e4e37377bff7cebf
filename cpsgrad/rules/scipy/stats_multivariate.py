"""Derivative rules for scipy.stats' multivariate distributions (dirichlet, multivariate_normal:
pdf and logpdf) and for the methods of frozen distributions (`scipy.stats.norm(0.0, 2.0).logpdf(x)`).

A frozen distribution's parameters were fixed when it was made: its methods are differentiated in
x only (a frozen poisson's pmf has no rule: its counts are integers). A distribution frozen from differentiable parameters is refused where it is made (see
`registry.advice`): write `scipy.stats.norm.logpdf(x, loc, scale)` instead.

multivariate_normal's backward solves with the covariance directly (numpy.linalg), and gives the
covariance the symmetric gradient (autograd's): -(C^-1 - C^-1 r r^T C^-1) / 2 per point.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np
import scipy.special
import scipy.stats

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
    x_g, mean_g, cov_g = normal_adjoints(y_d, y, x, mean, cov, False)
    x_d += x_g
    mean_d += mean_g
    cov_d += cov_g


@rule(scipy.stats.multivariate_normal.pdf)
def multivariate_normal_pdf(x, mean=None, cov=1, allow_singular=False):
    y = scipy.stats.multivariate_normal.pdf(x, mean, cov, allow_singular)
    y_d = yield y
    x_g, mean_g, cov_g = normal_adjoints(y_d, y, x, mean, cov, True)
    x_d += x_g
    mean_d += mean_g
    cov_d += cov_g


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
    x_d += normal_adjoints(y_d, y, x, self.mean, self.cov, False)[0]


@rule(multivariate_normal_frozen.pdf)
def frozen_normal_pdf(self, x):
    y = self.pdf(x)
    y_d = yield y
    x_d += normal_adjoints(y_d, y, x, self.mean, self.cov, True)[0]


# ---- helpers --------------------------------------------------------------------------------------


def frozen_adjoint(frozen, method: str, adjoint, y, x):
    """The adjoint of x in `frozen.method(x)`, by the rule of `frozen.dist.method`."""
    from cpsgrad.rules.scipy.special import refuse

    name = frozen.dist.name
    if name not in CONTINUOUS and name != "poisson":
        refuse(f"scipy.stats.{name}(...).{method}", "x", f" (cpsgrad has rules for {', '.join(sorted(CONTINUOUS))} and poisson)")
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


def normal_adjoints(adjoint, y, x, mean, cov, density: bool):
    """(x's, mean's, cov's adjoints) in multivariate_normal.logpdf(x, mean, cov) (`density`: in
    pdf). x holds points along its last axis (or, in one dimension, one point per element)."""
    if is_zero(adjoint):
        return 0.0, 0.0, 0.0
    covariance = cov.covariance if hasattr(cov, "covariance") else np.asarray(cov, dtype=np.float64)
    mean_ = np.zeros(()) if mean is None else np.asarray(mean, dtype=np.float64)
    dimension = max(mean_.size, covariance.shape[0] if covariance.ndim else 1)
    if covariance.ndim < 2:  # a variance, or the diagonal
        covariance = np.diag(np.broadcast_to(covariance, (dimension,)))
    points = np.asarray(x, dtype=np.float64).reshape(-1, dimension)
    g = np.broadcast_to(adjoint * y if density else adjoint, np.shape(y)).reshape(-1)
    residuals = points - np.broadcast_to(mean_, (dimension,))
    solved = np.linalg.solve(covariance, residuals.T).T  # C^-1 r, one row per point
    x_g = unbroadcast((-g[:, None] * solved).reshape(np.shape(x)), x)
    mean_g = 0.0 if mean is None else unbroadcast(np.sum(g[:, None] * solved, axis=0), mean)
    cov_full = 0.5 * (solved.T @ (g[:, None] * solved) - np.sum(g) * np.linalg.inv(covariance))
    if hasattr(cov, "covariance") or np.ndim(cov) == 2:
        cov_g = cov_full if hasattr(cov, "covariance") else unbroadcast(cov_full, cov)
    elif np.ndim(cov) == 1:
        cov_g = unbroadcast(np.diag(cov_full), cov)
    else:
        cov_g = unbroadcast(np.trace(cov_full), cov)
    return x_g, mean_g, cov_g
