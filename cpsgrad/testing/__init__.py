"""Testing utilities for cpsgrad users: gradient checks against finite differences.

`check_grad` compares a gradient with finite differences of the original function and skips
inputs where those cannot be trusted. `cpsgrad.testing.strategies` (which needs hypothesis)
has input strategies for property tests.
"""

from cpsgrad.testing.check import DEFAULT_ATOL, DEFAULT_RTOL, GradCheck, check_grad

__all__ = ["DEFAULT_ATOL", "DEFAULT_RTOL", "GradCheck", "check_grad"]
