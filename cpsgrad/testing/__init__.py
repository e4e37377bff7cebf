"""Testing utilities for cpsgrad users: gradient checks against finite differences.

`check_grad` compares a gradient with finite differences of the original function, for float
arguments and for float32/float64 numpy arrays element by element, and skips inputs where
those cannot be trusted. `cpsgrad.testing.strategies` (which needs hypothesis) has input
strategies for property tests: floats, arrays, shapes, well-conditioned matrices. See
docs/testing.md.
"""

from cpsgrad.testing.check import (
    DEFAULT_ATOL,
    DEFAULT_MAX_ELEMENTS,
    DEFAULT_RTOL,
    FLOAT32_ATOL,
    FLOAT32_RTOL,
    GradCheck,
    check_grad,
)

__all__ = [
    "DEFAULT_ATOL",
    "DEFAULT_MAX_ELEMENTS",
    "DEFAULT_RTOL",
    "FLOAT32_ATOL",
    "FLOAT32_RTOL",
    "GradCheck",
    "check_grad",
]
