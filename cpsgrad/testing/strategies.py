"""Hypothesis strategies for gradient property tests: well-conditioned floats, ints, lists,
numpy arrays, their shapes and dtypes, and well-conditioned matrices.

"Well-conditioned" means finite, no subnormals and no nonzero magnitude below 1e-6, so that
finite differences and the functions under test stay accurate. For example::

    from hypothesis import given
    from cpsgrad.testing import check_grad
    from cpsgrad.testing.strategies import arrays, floats, ints, shapes

    @given(floats(-3.0, 3.0, exclude_near=(0.0,)), ints(1, 5))
    def test_power(x, n):
        check_grad(power, x, n)

    @given(shapes().flatmap(lambda shape: arrays(shape, exclude_near=(0.0,))))
    def test_relu_sum(x):
        check_grad(relu_sum, x)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

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
    return st.floats(
        min_value, max_value, allow_nan=False, allow_infinity=False, allow_subnormal=False
    ).filter(_well_conditioned(exclude_near, margin))


def _well_conditioned(exclude_near: Iterable[float], margin: float) -> Callable[[float], bool]:
    """The test `floats` and `arrays` filter their values with."""
    excluded = tuple(exclude_near)

    def well_conditioned(value: float) -> bool:
        if value != 0.0 and abs(value) < MIN_MAGNITUDE:
            return False
        return all(abs(value - point) >= margin for point in excluded)

    return well_conditioned


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


# --- numpy arrays ----------------------------------------------------------------------------

FLOAT_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))
"""The dtypes of differentiable arrays."""

Shape = tuple[int, ...]


def float_dtypes() -> st.SearchStrategy[np.dtype]:
    """float64 or float32 (shrinking to float64)."""
    return st.sampled_from(FLOAT_DTYPES)


def arrays(
    shape: int | Shape | st.SearchStrategy[Shape],
    dtype: Any = np.float64,
    min_value: float = -3.0,
    max_value: float = 3.0,
    *,
    exclude_near: Iterable[float] = (),
    margin: float = 1e-3,
) -> st.SearchStrategy[np.ndarray]:
    """Arrays of `shape` (an int, a tuple, or a strategy such as `shapes()`) and a float dtype.

    Every element is well-conditioned as `floats` draws them: finite, in [min_value,
    max_value], no subnormals, none tinier than MIN_MAGNITUDE, and at least `margin` away from
    each point in `exclude_near`. For float32, bounds that float32 cannot hold are moved
    inward to the nearest float32.
    """
    dtype = _float_dtype(dtype)
    if not min_value <= max_value:
        raise ValueError(f"arrays needs min_value <= max_value, not {min_value!r} > {max_value!r}")
    if dtype == np.float32:
        low, high = np.float32(min_value), np.float32(max_value)
        if low < min_value:
            low = np.nextafter(low, np.float32(np.inf))
        if high > max_value:
            high = np.nextafter(high, np.float32(-np.inf))
        min_value, max_value = float(low), float(high)
    elements = st.floats(
        min_value,
        max_value,
        allow_nan=False,
        allow_infinity=False,
        allow_subnormal=False,
        width=dtype.itemsize * 8,
    ).filter(_well_conditioned(exclude_near, margin))
    return hnp.arrays(dtype, shape, elements=elements)


def positive_arrays(
    shape: int | Shape | st.SearchStrategy[Shape],
    dtype: Any = np.float64,
    min_value: float = 0.1,
    max_value: float = 10.0,
    *,
    exclude_near: Iterable[float] = (),
    margin: float = 1e-3,
) -> st.SearchStrategy[np.ndarray]:
    """`arrays` with min_value > 0: arguments of np.log, np.sqrt, 1 / x."""
    if not min_value > 0.0:
        raise ValueError(f"positive_arrays needs min_value > 0, not {min_value!r}")
    return arrays(shape, dtype, min_value, max_value, exclude_near=exclude_near, margin=margin)


def shapes(
    min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4
) -> st.SearchStrategy[Shape]:
    """Array shapes of min_dims to max_dims axes, each of min_side to max_side (`()` included
    when min_dims is 0); small by default, since each element costs finite differences."""
    return hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )


def broadcastable_shapes(
    shape: Shape,
    *,
    min_dims: int = 0,
    max_dims: int | None = None,
    min_side: int = 1,
    max_side: int = 4,
) -> st.SearchStrategy[Shape]:
    """Shapes that broadcast with `shape`: the other operand of a binary operation.

    Each drawn shape aligns with `shape` from the right, every aligned axis either `shape`'s
    side or 1 (any side where `shape` has 1), possibly with fewer axes (down to min_dims) or
    more (up to max_dims, by default one more than `shape` has); new axes have min_side to
    max_side elements. Shrinks towards `()`.
    """
    shape = tuple(shape)
    if max_dims is None:
        max_dims = max(len(shape), min_dims) + 1
    return hnp.broadcastable_shapes(
        shape, min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )


def well_conditioned_matrices(
    n: int, dtype: Any = np.float64, *, min_value: float = -1.0, max_value: float = 1.0
) -> st.SearchStrategy[np.ndarray]:
    """Square n x n matrices for solve-like operations: strictly diagonally dominant by rows.

    Off-diagonal elements come from `arrays(..., min_value, max_value)`; each diagonal element
    is the sum of its row's off-diagonal magnitudes plus 1 to 2 (with a drawn sign), so
    |a_ii| - sum_j!=i |a_ij| >= 1 and, with bound = max(|min_value|, |max_value|), the
    infinity-norm condition number is at most 2 + 2 * (n - 1) * bound.
    """
    dtype = _float_dtype(dtype)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"well_conditioned_matrices needs a positive int n, not {n!r}")

    def dominant(parts: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        matrix, diagonal = (part.astype(np.float64) for part in parts)
        off_diagonal = np.abs(matrix).sum(axis=1) - np.abs(np.diagonal(matrix))
        np.fill_diagonal(matrix, np.copysign(off_diagonal + 1.0 + np.abs(diagonal), diagonal))
        return matrix.astype(dtype)

    return st.tuples(arrays((n, n), dtype, min_value, max_value), arrays(n, dtype, -1.0, 1.0)).map(
        dominant
    )


def _float_dtype(dtype: Any) -> np.dtype:
    try:
        resolved = np.dtype(dtype)
    except TypeError:
        resolved = None
    if resolved not in FLOAT_DTYPES:
        raise ValueError(f"a differentiable array's dtype is float32 or float64, not {dtype!r}")
    return resolved
