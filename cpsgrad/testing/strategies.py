"""Hypothesis strategies for gradient property tests: well-conditioned floats, ints and lists.

"Well-conditioned" means finite, no subnormals and no nonzero magnitude below 1e-6, so that
finite differences and the functions under test stay accurate. For example::

    from hypothesis import given
    from cpsgrad.testing import check_grad
    from cpsgrad.testing.strategies import floats, ints

    @given(floats(-3.0, 3.0, exclude_near=(0.0,)), ints(1, 5))
    def test_power(x, n):
        check_grad(power, x, n)
"""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis import strategies as st

MIN_MAGNITUDE = 1e-6
"""Nonzero floats smaller than this in magnitude are never drawn."""


def floats(
    min_value: float = -10.0,
    max_value: float = 10.0,
    *,
    exclude_near: Iterable[float] = (),
    margin: float = 1e-3,
) -> st.SearchStrategy[float]:
    """Finite floats in [min_value, max_value], no subnormals, none tinier than MIN_MAGNITUDE.

    `exclude_near` lists points (kinks, branch thresholds) that drawn values stay at least
    `margin` away from, so fewer checks are skipped.
    """
    excluded = tuple(exclude_near)

    def well_conditioned(value: float) -> bool:
        if value != 0.0 and abs(value) < MIN_MAGNITUDE:
            return False
        return all(abs(value - point) >= margin for point in excluded)

    return st.floats(
        min_value, max_value, allow_nan=False, allow_infinity=False, allow_subnormal=False
    ).filter(well_conditioned)


def positive_floats(
    min_value: float = 0.1,
    max_value: float = 10.0,
    *,
    exclude_near: Iterable[float] = (),
    margin: float = 1e-3,
) -> st.SearchStrategy[float]:
    """Floats in [min_value, max_value] with min_value > 0: arguments of log, sqrt, 1/x."""
    if not min_value > 0.0:
        raise ValueError(f"positive_floats needs min_value > 0, not {min_value!r}")
    return floats(min_value, max_value, exclude_near=exclude_near, margin=margin)


def ints(min_value: int = 0, max_value: int = 10) -> st.SearchStrategy[int]:
    """Integers in [min_value, max_value]: trip counts, sizes, indices (never differentiated)."""
    return st.integers(min_value, max_value)


def float_lists(
    min_size: int = 0,
    max_size: int = 8,
    *,
    min_value: float = -10.0,
    max_value: float = 10.0,
) -> st.SearchStrategy[list[float]]:
    """Lists of well-conditioned floats (see `floats`), as non-differentiated data arguments."""
    return st.lists(floats(min_value, max_value), min_size=min_size, max_size=max_size)
