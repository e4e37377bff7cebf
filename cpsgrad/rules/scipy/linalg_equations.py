"""Derivative rules for scipy.linalg's other equations: `solve_sylvester` (stacks too),
`solve_banded` (in the banded matrix and b), `lstsq` (one matrix; the solution, residues and
singular values), `pinv` and `pinvh` (`atol=`, `rtol=`, `return_rank=`).

The backwards are numpy.linalg's where they exist (cpsgrad/rules/numpy/linalg.py: pinv's and
lstsq's). A pseudo-inverse is differentiated where its rank is locally constant: a cutoff that
drops singular values that are not numerically zero (above 1e3 n eps times the largest, eps of
their dtype) is refused (numpy's `kept_rank_check`), since the truncated pseudo-inverse's
derivative then also depends on how the dropped part moves.
Refused with an UnsupportedError: complex matrices, stacked lstsq, `overwrite_a=True` /
`overwrite_ab=True` / `overwrite_b=True` where the backward reads that argument again, and
lstsq's 'gelsy' driver on a rank-deficient matrix (its solution is not the truncated SVD's).
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np
import scipy.linalg

from cpsgrad.rules.numpy.linalg import (
    kept_rank_check,
    lstsq_adjoint,
    pinv_backward,
    refuse,
    symmetric_from,
    transposed,
    triangle_read,
)
from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import SequenceAdjoint, is_zero, item
from cpsgrad.runtime.broadcasting import refuse_complex, unbroadcast

# ---- equations --------------------------------------------------------------------------------


@rule(scipy.linalg.solve_sylvester)
def solve_sylvester(a, b, q):
    x = scipy.linalg.solve_sylvester(a, b, q)
    x_d = yield x
    a_g, b_g, q_g = sylvester_adjoint(x_d, a, b, x)
    a_d += unbroadcast(a_g, a)
    b_d += unbroadcast(b_g, b)
    q_d += unbroadcast(q_g, q)


@rule(scipy.linalg.solve_banded)
def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    x = scipy.linalg.solve_banded(l_and_u, ab, b, overwrite_ab, overwrite_b, check_finite)
    x_d = yield x
    ab_g, b_g = banded_adjoint(x_d, l_and_u, ab, b, x, overwrite_ab)
    ab_d += unbroadcast(ab_g, ab)
    b_d += unbroadcast(b_g, b)


@rule(scipy.linalg.lstsq)
def lstsq(a, b, cond=None, overwrite_a=False, overwrite_b=False, check_finite=True, lapack_driver=None):
    y = scipy.linalg.lstsq(a, b, cond, overwrite_a, overwrite_b, check_finite, lapack_driver)
    y_d = yield y
    a_g, b_g = scipy_lstsq_adjoint(y_d, y, a, b, overwrite_a or overwrite_b, lapack_driver)
    a_d += unbroadcast(a_g, a)
    b_d += unbroadcast(b_g, b)


@rule(scipy.linalg.pinv)
def pinv(a, *, atol=None, rtol=None, return_rank=False, check_finite=True):
    y = scipy.linalg.pinv(a, atol=atol, rtol=rtol, return_rank=return_rank, check_finite=check_finite)
    y_d = yield y
    a_d += scipy_pinv_adjoint(y_d, y, a, return_rank, None, "scipy.linalg.pinv")


@rule(scipy.linalg.pinvh)
def pinvh(a, atol=None, rtol=None, lower=True, return_rank=False, check_finite=True):
    y = scipy.linalg.pinvh(a, atol, rtol, lower, return_rank, check_finite)
    y_d = yield y
    a_d += scipy_pinv_adjoint(y_d, y, a, return_rank, bool(lower), "scipy.linalg.pinvh")


# ---- helpers ----------------------------------------------------------------------------------


def _real(values, construct):
    for value in values:
        refuse_complex(value, construct)
        if np.iscomplexobj(value):  # array_like of complex numbers (a list)
            refuse_complex(np.asarray(value), construct)


def _read_again(flag, call, argument):
    if flag:
        refuse(
            f"{call}({argument}=True)",
            f"its backward reads {argument.removeprefix('overwrite_')} again, which scipy may have "
            f"overwritten; pass {argument}=False",
        )


def sylvester_adjoint(x_d, a, b, x):
    """a x + x b = q: q's adjoint y solves a^T y + y b^T = x_d; a's is -y x^T, b's -x^T y."""
    if is_zero(x_d):
        return 0.0, 0.0, 0.0
    _real((a, b, x), "scipy.linalg.solve_sylvester of complex matrices")
    y = scipy.linalg.solve_sylvester(transposed(np.asarray(a)), transposed(np.asarray(b)), np.asarray(x_d))
    return -y @ transposed(x), -transposed(x) @ y, y


def _transposed_band(ab, lower: int, upper: int):
    """The band storage of a^T (lower' = upper, upper' = lower) from a's: row r of it is row
    lower + upper - r of ab shifted by r - lower columns (entries outside the matrix are 0)."""
    n = ab.shape[-1]
    out = np.zeros_like(ab)
    for r in range(lower + upper + 1):
        shift = r - lower
        source = ab[lower + upper - r]
        if shift >= 0:
            out[r, : n - shift] = source[shift:]
        else:
            out[r, -shift:] = source[: n + shift]
    return out


def banded_adjoint(x_d, l_and_u, ab, b, x, overwrite_ab):
    """x = a^-1 b, a[i, j] = ab[upper + i - j, j]: b's adjoint g = a^-T x_d (a banded solve with
    the transposed band), a's -g x^T read on the band (elements outside the matrix get 0)."""
    if is_zero(x_d):
        return 0.0, 0.0
    _read_again(overwrite_ab, "scipy.linalg.solve_banded", "overwrite_ab")
    _real((ab, b, x), "scipy.linalg.solve_banded of complex values")
    lower, upper = (int(v) for v in l_and_u)
    ab = np.asarray(ab)
    if ab.ndim != 2:
        refuse(
            "scipy.linalg.solve_banded of a stack of banded matrices",
            "cpsgrad differentiates one banded matrix (ab of 2 dimensions)",
        )
    n = ab.shape[-1]
    x_d = np.broadcast_to(x_d, np.shape(x))
    g = scipy.linalg.solve_banded((upper, lower), _transposed_band(ab, lower, upper), x_d)
    rows, values = np.reshape(g, (n, -1)), np.reshape(x, (n, -1))
    ab_g = np.zeros(ab.shape, np.result_type(g, values))
    for r in range(lower + upper + 1):
        offset = r - upper  # i - j of the elements on this row of ab
        start, stop = max(0, -offset), min(n, n - offset)
        if start < stop:
            ab_g[r, start:stop] = -np.sum(rows[start + offset : stop + offset] * values[start:stop], axis=-1)
    return ab_g, g


def scipy_pinv_adjoint(y_d, y, a, return_rank, lower, name):
    p_d = item(y_d, 0) if return_rank else y_d
    if is_zero(p_d):
        return 0.0
    _real((a,), f"{name} of a complex matrix")
    p = y[0] if return_rank else y
    matrix = np.asarray(a) if lower is None else symmetric_from(a, lower)
    kept_rank_check(matrix, p, f"{name} of a matrix whose cutoff drops singular values")
    g = pinv_backward(matrix, p, np.asarray(p_d))
    return unbroadcast(g if lower is None else triangle_read(g, lower), a)


def scipy_lstsq_adjoint(y_d, y, a, b, overwritten, driver):
    if is_zero(y_d):
        return 0.0, 0.0
    _read_again(overwritten, "scipy.linalg.lstsq", "overwrite_a/overwrite_b")
    _real((a, b), "scipy.linalg.lstsq of complex values")
    if np.ndim(a) != 2:
        refuse("scipy.linalg.lstsq of a stack of matrices", "cpsgrad differentiates lstsq of one matrix")
    x, residues, rank, s = y
    k = min(np.shape(a))
    if rank < k:
        if driver == "gelsy":
            refuse(
                "scipy.linalg.lstsq(lapack_driver='gelsy') of a rank-deficient matrix",
                "its solution is not the truncated SVD's; use lapack_driver='gelsd' (the default)",
            )
        if not is_zero(item(y_d, 0)):  # the solution's derivative (the singular values' is fine)
            kept_rank_check(a, None, "scipy.linalg.lstsq of a matrix whose cond drops singular values", rank)
    adjoints = [item(y_d, i) for i in range(4)]
    if s is None:  # gelsy returns no singular values
        adjoints[3] = 0.0
    return lstsq_adjoint(SequenceAdjoint(adjoints), (x, residues, rank, s), a, b)
