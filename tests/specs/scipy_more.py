"""Specs of scipy.special.betainc and scipy.linalg's solve_sylvester, solve_banded, eigh,
eigvalsh, svd, svdvals, qr, lstsq, pinv and pinvh (cpsgrad/rules/scipy/special.py,
linalg_decompositions.py, linalg_equations.py). Matrices are made well conditioned inside each
function as in tests/specs/linalg.py; eigenvectors and singular vectors are squared (their signs
are LAPACK's choice). What these rules refuse is tested in tests/test_rules_more.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.special

from tests.specs import FLOAT, SPREAD, Kink, M, S, unused, unused_pair
from tests.specs.linalg import D3, DENSE, DOMINANT, SMALL, SPD, TALL, V3

sc = scipy.special
SL = scipy.linalg
INTERIOR = (0.05, 0.95)
RANK2 = np.array([[2.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
# a dense (4, 3) matrix whose column norms (2.37, 4.34, 2.44) keep qr(pivoting=True)'s order
PIVOTED = DENSE


def _eye(x, n, scale):
    return scale * np.eye(n, dtype=x.dtype)


def _band(ab, upper, scale=4.0):
    """ab with `scale` added to the row that holds the diagonal (row `upper`): dominant."""
    boost = np.zeros(ab.shape, dtype=ab.dtype)
    boost[upper] = scale
    return ab + boost


SPECS = [
    S("betainc in x", lambda x, w: np.sum(sc.betainc(2.5, 1.5, x) * w), [M], INTERIOR),
    S("betainc float, array parameters", lambda x, w: np.sum(sc.betainc(np.array([0.5, 3.0]), 2.0, x) * w),
      [FLOAT], INTERIOR),
    # solve_sylvester: a x + x b = q, spectra of a and -b apart
    S("solve_sylvester", lambda a, b, q, w: np.sum(SL.solve_sylvester(a + _eye(a, 3, 4), b + _eye(b, 2, 3), q) * w),
      [(3, 3), (2, 2), (3, 2)], (-1.0, 1.0)),
    S("solve_sylvester stacked",
      lambda a, b, q, w: np.sum(SL.solve_sylvester(a + _eye(a, 2, 4), b + _eye(b, 2, 3), q) * w),
      [(2, 2, 2), (2, 2, 2), (2, 2, 2)], (-1.0, 1.0)),
    # solve_banded: (l, u) and the band storage, b a vector or a matrix
    S("solve_banded tridiagonal", lambda ab, b, w: np.sum(SL.solve_banded((1, 1), _band(ab, 1), b) * w),
      [(3, 5), (5,)], (-1.0, 1.0)),
    S("solve_banded (2, 1) matrix", lambda ab, b, w: np.sum(SL.solve_banded((2, 1), _band(ab, 1), b) * w),
      [(4, 5), (5, 2)], (-1.0, 1.0)),
    S("solve_banded (0, 2) upper",
      lambda ab, b, w: np.sum(SL.solve_banded((0, 2), _band(ab, 2), b, check_finite=False) * w),
      [(3, 4), (4,)], (-1.0, 1.0)),
    S("solve_banded (1, 0) lower", lambda ab, b, w: np.sum(SL.solve_banded((1, 0), _band(ab, 0), b) * w),
      [(2, 4), (4, 3)], (-1.0, 1.0)),
    # eigh
    S("scipy eigh eigenvalues", lambda a, w: np.sum(SL.eigh(a + a.T + D3.astype(a.dtype))[0] * w), [(3, 3)], DOMINANT),
    S("scipy eigh eigenvectors", lambda a, w: np.sum(SL.eigh(a + D3.astype(a.dtype))[1] ** 2 * w), [(3, 3)], DOMINANT),
    S("scipy eigh upper, driver evr",
      lambda a, w: np.sum(SL.eigh(a + D3.astype(a.dtype), lower=False, driver="evr")[1] ** 2 * w),
      [(3, 3)], DOMINANT),
    S("scipy eigh eigvals_only", lambda a, w: np.sum(SL.eigh(a + D3.astype(a.dtype), eigvals_only=True) * w),
      [(3, 3)], DOMINANT),
    S("scipy eigh stacked", lambda a, w: np.sum(SL.eigh(a + D3.astype(a.dtype))[1] ** 2 * w), [(2, 3, 3)], DOMINANT),
    S("scipy eigvalsh upper", lambda a, w: np.sum(SL.eigvalsh(a + D3.astype(a.dtype), lower=False) * w),
      [(3, 3)], DOMINANT),
    # svd
    S("scipy svd values", lambda a, w: np.sum(SL.svd(a + SPREAD.astype(a.dtype), compute_uv=False) * w),
      [(3, 4)], SMALL),
    S("scipy svd u economic", lambda a, w: np.sum(SL.svd(a + TALL.astype(a.dtype), full_matrices=False)[0] ** 2 * w),
      [(4, 3)], SMALL),
    S("scipy svd vt wide, gesvd",
      lambda a, w: np.sum(SL.svd(a + SPREAD.astype(a.dtype), False, lapack_driver="gesvd")[2] ** 2 * w),
      [(3, 4)], SMALL),
    S("scipy svd full first rows", lambda a, w: np.sum(SL.svd(a + SPREAD.astype(a.dtype))[2][:3] ** 2 * w),
      [(3, 4)], SMALL),
    S("scipy svd stacked values of the tuple", lambda a, w: np.sum(SL.svd(a + TALL.astype(a.dtype))[1] * w),
      [(2, 4, 3)], SMALL),
    S("scipy svdvals", lambda a, w: np.sum(SL.svdvals(a + SPREAD.astype(a.dtype)) * w), [(3, 4)], SMALL),
    # qr
    S("scipy qr full first columns", lambda a, w: np.sum(SL.qr(a + DENSE.astype(a.dtype))[0][:, :3] * w),
      [(4, 3)], SMALL),
    S("scipy qr full r", lambda a, w: np.sum(SL.qr(a + DENSE.astype(a.dtype))[1] * w), [(4, 3)], SMALL),
    S("scipy qr economic", lambda a, w: np.sum(SL.qr(a + DENSE.astype(a.dtype), mode="economic")[0] * w),
      [(4, 3)], SMALL),
    S("scipy qr economic wide r", lambda a, w: np.sum(SL.qr(a + DENSE.T.astype(a.dtype), mode="economic")[1] * w),
      [(3, 4)], SMALL),
    S("scipy qr mode r", lambda a, w: np.sum(SL.qr(a + DENSE.astype(a.dtype), mode="r")[0] * w), [(4, 3)], SMALL),
    S("scipy qr pivoting",
      lambda a, w: np.sum(SL.qr(a + PIVOTED.astype(a.dtype), mode="economic", pivoting=True)[0] * w),
      [(4, 3)], SMALL),
    S("scipy qr pivoting r", lambda a, w: np.sum(SL.qr(a + PIVOTED.astype(a.dtype), pivoting=True)[1] * w),
      [(4, 3)], SMALL),
    S("scipy qr pivoting mode r",
      lambda a, w: np.sum(SL.qr(a + PIVOTED.astype(a.dtype), mode="r", pivoting=True)[0] * w),
      [(4, 3)], SMALL),
    S("scipy qr stacked", lambda a, w: np.sum(SL.qr(a + DENSE.astype(a.dtype), mode="economic")[0] * w),
      [(2, 4, 3)], SMALL),
    # lstsq
    S("scipy lstsq vector", lambda a, b, w: np.sum(SL.lstsq(a + TALL.astype(a.dtype), b)[0] * w),
      [(4, 3), (4,)], SMALL),
    S("scipy lstsq residues vector", lambda a, b, w: SL.lstsq(a + TALL.astype(a.dtype), b)[1] * w,
      [(4, 3), (4,)], SMALL),
    S("scipy lstsq residues matrix", lambda a, b, w: np.sum(SL.lstsq(a + TALL.astype(a.dtype), b)[1] * w),
      [(4, 3), (4, 2)], SMALL),
    S("scipy lstsq singular values", lambda a, b, w: np.sum(SL.lstsq(a + TALL.astype(a.dtype), b)[3] * w),
      [(4, 3), (4,)], SMALL),
    S("scipy lstsq wide gelsy",
      lambda a, b, w: np.sum(SL.lstsq(a + SPREAD.astype(a.dtype), b, lapack_driver="gelsy")[0] * w),
      [(3, 4), (3, 2)], SMALL),
    S("scipy lstsq low rank cond", lambda a, b, w: np.sum(SL.lstsq(a @ a.T, b, cond=1e-4)[0] * w),
      [(3, 2), (3, 2)], (0.5, 1.5)),
    # pinv, pinvh
    S("scipy pinv wide", lambda a, w: np.sum(SL.pinv(a + SPREAD.astype(a.dtype)) * w), [(3, 4)], SMALL),
    S("scipy pinv return_rank", lambda a, w: np.sum(SL.pinv(a + TALL.astype(a.dtype), return_rank=True)[0] * w),
      [(2, 4, 3)], SMALL),
    S("scipy pinv exactly low rank rtol", lambda a, w: np.sum(SL.pinv(a @ a.T, rtol=1e-4) * w), [(3, 2)], (0.5, 1.5)),
    S("scipy pinvh lower", lambda a, w: np.sum(SL.pinvh(a + 4 * np.eye(3, dtype=a.dtype)) * w), [(3, 3)], (-1.0, 1.0)),
    S("scipy pinvh upper", lambda a, w: np.sum(SL.pinvh(a + 4 * np.eye(3, dtype=a.dtype), lower=False) * w),
      [(3, 3)], (-1.0, 1.0)),
]


# ---- symbolic zeros ---------------------------------------------------------------------------

X = np.array([[0.0, 0.25, 1.0], [0.75, 0.5, 0.0]])
BAND = np.array([[0.0, 1.0, 0.5], [4.0, 3.0, 5.0], [0.5, 1.0, 0.0]])


def _unused_betainc(x, flag):
    y = sc.betainc(2.0, 3.0, x)
    if flag:
        return np.sum(y)
    return np.sum(x)


def _unused_sylvester(x, z, flag):
    y = SL.solve_sylvester(x, x, z)
    if flag:
        return np.sum(y)
    return np.sum(x)


def _unused_banded(x, z, flag):
    y = SL.solve_banded((1, 1), x, z)
    if flag:
        return np.sum(y)
    return np.sum(x)


ZERO_CASES = (
    [(op, unused(op), (SPD,)) for op in (SL.eigh, SL.eigvalsh, SL.svd, SL.svdvals, SL.qr, SL.pinv, SL.pinvh)]
    + [(SL.lstsq, unused_pair(SL.lstsq), (TALL, np.ones(4)))]
    + [
        (sc.betainc, _unused_betainc, (X,)),
        (SL.solve_sylvester, _unused_sylvester, (SPD, SPD)),
        (SL.solve_banded, _unused_banded, (BAND, V3)),
    ]
)


# ---- ends, ties and singular points, against JAX ----------------------------------------------


def _jnp():
    return pytest.importorskip("jax.numpy")


def _jsp():
    return pytest.importorskip("jax.scipy.special")


W4 = np.array([1.0, -2.0, 0.5, 3.0])
ALPHA = np.array([1.5, 2.5, 0.7, 3.0])
K = Kink
KINKS = [
    # inside (0, 1), JAX's; (at x = 0 with a = 1, and at x = 1 with b = 1, this one is the
    # one-sided derivative 1 / B(a, b) where JAX's is nan: tests/test_rules_more.py)
    K("betainc in x", lambda x: np.sum(sc.betainc(ALPHA, 2.0, x) * W4),
      lambda t: _jnp().sum(_jsp().betainc(ALPHA, 2.0, t) * W4),
      (np.array([0.1, 0.5, 0.3, 0.9]),)),
    K("scipy eigh eigenvalues at a double eigenvalue, equal adjoints",
      lambda a: np.sum(SL.eigh(a, eigvals_only=True) * np.array([1.0, 1.0, 2.0])),
      lambda m: _jnp().sum(_jnp().linalg.eigvalsh(_jnp().tril(m) + _jnp().tril(m, -1).T) * np.array([1.0, 1.0, 2.0])),
      (np.ones((3, 3)) + np.eye(3),)),
    K("scipy pinv of an exactly rank-deficient matrix", lambda a: np.sum(SL.pinv(a) * SPD[:2, :2]),
      lambda m: _jnp().sum(_jnp().linalg.pinv(m) * SPD[:2, :2]),
      (np.array([[1.0, 2.0], [2.0, 4.0]]),)),
    # (jax.scipy.linalg.solve_sylvester has no derivative: its finite-difference specs only)
]
