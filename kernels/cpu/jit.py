"""The numba decorators every CPU kernel uses, so compile options live in one place."""

from numba import njit

serial = njit(cache=True, nogil=True, error_model="numpy")
"""A single-threaded kernel: elementwise and row-wise loops, cheap to call on small arrays.

error_model="numpy" makes x / 0 give inf or nan, as numpy does, instead of raising.
"""
