"""Derivative rules for the scipy API, one module a subpackage: `linalg` (scipy.linalg)."""

from cpsgrad.rules.scipy import linalg  # noqa: F401  (registers them)
