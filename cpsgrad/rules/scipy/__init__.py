"""Derivative rules for scipy, one module a subpackage: `signal` (convolve, correlate), `linalg`
(scipy.linalg), `special` and `special_bessel` (scipy.special), `stats` and `stats_multivariate`
(scipy.stats' distributions, called as `scipy.stats.norm.logpdf(x, loc, scale)`, and frozen
distributions in x)."""

from cpsgrad.rules.scipy import linalg, signal, special, special_bessel, stats, stats_multivariate  # noqa: F401
