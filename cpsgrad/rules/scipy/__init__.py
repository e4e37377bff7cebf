"""Derivative rules for scipy, one module a subpackage: `signal` (convolve, correlate), `linalg`
(scipy.linalg)."""

from cpsgrad.rules.scipy import linalg, signal  # noqa: F401  (registers them)
