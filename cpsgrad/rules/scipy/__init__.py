"""Derivative rules for scipy, one module a subpackage: `signal` (convolve, correlate)."""

from cpsgrad.rules.scipy import signal  # noqa: F401  (registers them)
