"""Derivative rules for scipy, one module a family: `signal` (convolve, correlate), `linalg`
(scipy.linalg's solvers, factorizations and matrix functions), `linalg_decompositions` (eigh,
svd, qr), `linalg_equations` (solve_sylvester, solve_banded, lstsq, pinv, pinvh), `integrate`
(odeint, solve_ivp, by the adjoint method), `special`
and `special_bessel` (scipy.special), `stats` and `stats_multivariate` (scipy.stats'
distributions, called as `scipy.stats.norm.logpdf(x, loc, scale)`, and frozen distributions in x).

Each family is imported once its library is (`RuleTable.defer`): `import cpsgrad` does not
import scipy.stats, and a program that calls scipy.stats has imported it.
"""

from cpsgrad.rules.registry import TABLE

TABLE.defer("scipy.signal", "cpsgrad.rules.scipy.signal")
TABLE.defer(
    "scipy.linalg", "cpsgrad.rules.scipy.linalg", "cpsgrad.rules.scipy.linalg_decompositions",
    "cpsgrad.rules.scipy.linalg_equations",
)
TABLE.defer("scipy.special", "cpsgrad.rules.scipy.special", "cpsgrad.rules.scipy.special_bessel")
TABLE.defer("scipy.stats", "cpsgrad.rules.scipy.stats", "cpsgrad.rules.scipy.stats_multivariate")
TABLE.defer("scipy.integrate", "cpsgrad.rules.scipy.integrate")
