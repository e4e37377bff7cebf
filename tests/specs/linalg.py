"""Specs of the linear algebra rules (cpsgrad/rules/numpy/linalg*.py, cpsgrad/rules/scipy/linalg.py).

Inputs are made well conditioned inside each function, in the input's own dtype (`x @ x.T + 3 I`,
`x + 4 I`, `x + SPREAD`: a matrix of distinct singular values 6, 4, 2 with x small), so that
float32 stays within its tolerance and eigenvalues and singular values stay apart. A spec on a
raw `x + 4 I` whose function reads one triangle (cholesky, eigh, pinv(hermitian=True)) checks
that the adjoint lands on that triangle. Eigenvectors and singular vectors are squared: their
signs are LAPACK's choice, a product of two of them is not.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from tests.specs import SPREAD, Kink, S, unused, unused_pair, unused_with

D3 = np.diag([6.0, 4.0, 2.0])  # distinct eigenvalues, apart by more than what x moves them
DOMINANT = (-0.3, 0.3)
SMALL = (-0.5, 0.5)
TALL = SPREAD.T  # (4, 3), singular values 6, 4, 2
# QR's Householder signs jump where a column's part below the diagonal is exactly 0 (SPREAD's):
# a dense (4, 3) matrix of singular values 6, 4, 2 instead
_rotation = np.linalg.qr(np.arange(16.0).reshape(4, 4) % 7 + np.eye(4))[0]
DENSE = np.round(_rotation[:, :3] @ np.diag([6.0, 4.0, 2.0]) @ _rotation[:3, :3].T, 3)
_rotation3 = np.linalg.qr(np.arange(9.0).reshape(3, 3) % 5 + np.eye(3))[0]
# symmetric, eigenvalues near 6, 4, 2, dense vectors
H3 = np.round(_rotation3 @ np.diag([6.0, 4.0, 2.0]) @ _rotation3.T, 3)
RANK2 = np.array([[2.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
PIVOTED = np.array([[0.0, 1.0, 3.0], [3.0, 0.0, 1.0], [1.0, 3.0, 0.0]])  # lu_factor swaps rows, whatever x adds
ROWS = np.array([[1.0], [-2.0], [0.5]])  # weights of eigenvector components (eig's order is LAPACK's)
_NUMPY2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


def _u_vt(a):
    u, _, vt = np.linalg.svd(a, full_matrices=False)
    return u @ vt



SPECS = [
    # solve: b a vector, a matrix, stacked, broadcast
    S("solve vector", lambda a, b, w: np.sum(np.linalg.solve(a + 4 * np.eye(3, dtype=a.dtype), b) * w),
      [(3, 3), (3,)], (-1.0, 1.0)),
    S("solve matrix", lambda a, b, w: np.sum(np.linalg.solve(a + 4 * np.eye(3, dtype=a.dtype), b) * w),
      [(3, 3), (3, 2)], (-1.0, 1.0)),
    S("solve stacked", lambda a, b, w: np.sum(np.linalg.solve(a + 4 * np.eye(3, dtype=a.dtype), b) * w),
      [(2, 3, 3), (2, 3, 2)], (-1.0, 1.0)),
    S("solve broadcast", lambda a, b, w: np.sum(np.linalg.solve(a + 4 * np.eye(3, dtype=a.dtype), b) * w),
      [(3, 3), (2, 3, 1)], (-1.0, 1.0)),
    S("inv", lambda a, w: np.sum(np.linalg.inv(a + 4 * np.eye(3, dtype=a.dtype)) * w), [(3, 3)], (-1.0, 1.0)),
    S("inv stacked", lambda a, w: np.sum(np.linalg.inv(a + 4 * np.eye(3, dtype=a.dtype)) * w),
      [(2, 3, 3)], (-1.0, 1.0)),
    S("pinv wide", lambda a, w: np.sum(np.linalg.pinv(a + SPREAD.astype(a.dtype)) * w), [(3, 4)], SMALL),
    S("pinv tall stacked", lambda a, w: np.sum(np.linalg.pinv(a + TALL.astype(a.dtype)) * w), [(2, 4, 3)], SMALL),
    S("pinv low rank rcond",
      lambda a, w: np.sum(np.linalg.pinv((a + RANK2.astype(a.dtype)) @ (a + RANK2.astype(a.dtype)).T, 1e-4) * w),
      [(3, 2)], SMALL),
    S("pinv hermitian", lambda a, w: np.sum(np.linalg.pinv(a + 4 * np.eye(3, dtype=a.dtype), hermitian=True) * w),
      [(3, 3)], (-1.0, 1.0)),
    S("det", lambda a, w: np.linalg.det(a) * w, [(3, 3)]),
    S("det stacked", lambda a, w: np.sum(np.linalg.det(a) * w), [(2, 2, 2)]),
    S("slogdet", lambda a, w: np.linalg.slogdet(a + 4 * np.eye(3, dtype=a.dtype))[1] * w, [(3, 3)], (-1.0, 1.0)),
    S("slogdet stacked logabsdet", lambda a, w: np.sum(np.linalg.slogdet(a - 4 * np.eye(3, dtype=a.dtype))[1] * w),
      [(2, 3, 3)], (-1.0, 1.0)),
    S("matrix_power 3", lambda a, w: np.sum(np.linalg.matrix_power(a, 3) * w), [(3, 3)], (-1.0, 1.0)),
    S("matrix_power 1 stacked", lambda a, w: np.sum(np.linalg.matrix_power(a, 1) * w), [(2, 3, 3)]),
    S("matrix_power 0", lambda a, w: np.sum(np.linalg.matrix_power(a, 0) * w), [(3, 3)]),
    S("matrix_power -2", lambda a, w: np.sum(np.linalg.matrix_power(a + 4 * np.eye(3, dtype=a.dtype), -2) * w),
      [(2, 3, 3)], (-1.0, 1.0)),
    S("lstsq vector", lambda a, b, w: np.sum(np.linalg.lstsq(a + TALL.astype(a.dtype), b)[0] * w),
      [(4, 3), (4,)], SMALL),
    S("lstsq matrix residuals", lambda a, b, w: np.sum(np.linalg.lstsq(a + TALL.astype(a.dtype), b)[1] * w),
      [(4, 3), (4, 2)], SMALL),
    S("lstsq singular values", lambda a, b, w: np.sum(np.linalg.lstsq(a + TALL.astype(a.dtype), b, rcond=None)[3] * w),
      [(4, 3), (4,)], SMALL),
    S("lstsq low rank rcond", lambda a, b, w: np.sum(np.linalg.lstsq(a @ a.T, b, 1e-4)[0] * w),
      [(3, 2), (3, 2)], (0.5, 1.5)),
    S("lstsq wide", lambda a, b, w: np.sum(np.linalg.lstsq(a + SPREAD.astype(a.dtype), b)[0] * w),
      [(3, 4), (3,)], SMALL),
    S("cholesky", lambda a, w: np.sum(np.linalg.cholesky(a @ a.T + 3 * np.eye(3, dtype=a.dtype)) * w), [(3, 3)]),
    S("cholesky stacked",
      lambda a, w: np.sum(np.linalg.cholesky(a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3, dtype=a.dtype)) * w),
      [(2, 3, 3)]),
    S("cholesky reads the lower triangle",
      lambda a, w: np.sum(np.linalg.cholesky(a + 4 * np.eye(3, dtype=a.dtype)) * w),
      [(3, 3)], (-1.0, 1.0)),
    # decompositions
    S("eigh eigenvalues", lambda a, w: np.sum(np.linalg.eigh(a + a.T + D3.astype(a.dtype))[0] * w), [(3, 3)], DOMINANT),
    S("eigh eigenvectors", lambda a, w: np.sum(np.linalg.eigh(a + a.T + D3.astype(a.dtype))[1] ** 2 * w),
      [(3, 3)], DOMINANT),
    S("eigh lower triangle stacked", lambda a, w: np.sum(np.linalg.eigh(a + D3.astype(a.dtype))[1] ** 2 * w),
      [(2, 3, 3)], DOMINANT),
    S("eigh UPLO U", lambda a, w: np.sum(np.linalg.eigh(a + D3.astype(a.dtype), UPLO="U")[0] * w), [(3, 3)], DOMINANT),
    S("eigvalsh", lambda a, w: np.sum(np.linalg.eigvalsh(a + D3.astype(a.dtype)) * w), [(3, 3)], DOMINANT),
    S("eigvalsh U stacked", lambda a, w: np.sum(np.linalg.eigvalsh(a + D3.astype(a.dtype), "U") * w),
      [(2, 3, 3)], DOMINANT),
    # eig orders its eigenvalues as LAPACK finds them: functions symmetric in the eigenpairs
    S("eig eigenvalues", lambda a, w: np.sum(np.linalg.eig(a + D3.astype(a.dtype))[0] ** 3) * w, [(3, 3)], DOMINANT),
    S("eig eigenvectors",
      lambda a, w: np.sum(np.linalg.eig(a + D3.astype(a.dtype))[1] ** 2
                          * np.linalg.eig(a + D3.astype(a.dtype))[0] * ROWS) * w,
      [(3, 3)], DOMINANT),
    S("eig stacked", lambda a, w: np.sum(np.sum(np.linalg.eig(a + D3.astype(a.dtype))[1] ** 2 * ROWS, axis=(1, 2)) * w),
      [(2, 3, 3)], DOMINANT),
    S("eigvals", lambda a, w: np.sum(np.exp(np.linalg.eigvals(a + D3.astype(a.dtype)))) * w, [(3, 3)], DOMINANT),
    S("svd values", lambda a, w: np.sum(np.linalg.svd(a + SPREAD.astype(a.dtype), compute_uv=False) * w),
      [(3, 4)], SMALL),
    S("svd values of the tuple", lambda a, w: np.sum(np.linalg.svd(a + TALL.astype(a.dtype))[1] * w), [(4, 3)], SMALL),
    S("svd u wide", lambda a, w: np.sum(np.linalg.svd(a + SPREAD.astype(a.dtype), full_matrices=False)[0] ** 2 * w),
      [(3, 4)], SMALL),
    S("svd vt wide", lambda a, w: np.sum(np.linalg.svd(a + SPREAD.astype(a.dtype), full_matrices=False)[2] ** 2 * w),
      [(3, 4)], SMALL),
    S("svd u tall stacked", lambda a, w: np.sum(np.linalg.svd(a + TALL.astype(a.dtype), False)[0] ** 2 * w),
      [(2, 4, 3)], SMALL),
    S("svd vt tall", lambda a, w: np.sum(np.linalg.svd(a + TALL.astype(a.dtype), False)[2] ** 2 * w), [(4, 3)], SMALL),
    S("svd full_matrices first rows", lambda a, w: np.sum(np.linalg.svd(a + SPREAD.astype(a.dtype))[2][:3] ** 2 * w),
      [(3, 4)], SMALL),
    S("svd square", lambda a, w: np.sum(np.linalg.svd(a + D3.astype(a.dtype))[0] ** 2 * w), [(3, 3)], SMALL),
    # phase-free functions of the vectors: tests/test_complex.py runs these on complex matrices too
    # (dense vectors, no component near 0, where |.| has a kink)
    S("svd |u| wide",
      lambda a, w: np.sum(np.abs(np.linalg.svd(a + DENSE.T.astype(a.dtype), full_matrices=False)[0]) * w),
      [(3, 4)], SMALL),
    S("svd |vt| wide",
      lambda a, w: np.sum(np.abs(np.linalg.svd(a + DENSE.T.astype(a.dtype), full_matrices=False)[2]) * w),
      [(3, 4)], SMALL),
    S("svd u vt tall", lambda a, w: np.sum(_u_vt(a + DENSE.astype(a.dtype)) * w), [(4, 3)], SMALL),
    S("eigh |v|", lambda a, w: np.sum(np.abs(np.linalg.eigh(a + H3.astype(a.dtype))[1]) * w), [(3, 3)], DOMINANT),
    S("eig |v|",
      lambda a, w: np.sum(np.abs(np.linalg.eig(a + H3.astype(a.dtype))[1])
                          * np.linalg.eig(a + H3.astype(a.dtype))[0] * ROWS) * w,
      [(3, 3)], DOMINANT),
    S("norm nuc", lambda a, w: np.linalg.norm(a + SPREAD.astype(a.dtype), "nuc") * w, [(3, 4)], SMALL),
    S("norm 2 of matrices", lambda a, w: np.sum(np.linalg.norm(a + TALL.astype(a.dtype), 2, (1, 2)) * w),
      [(2, 4, 3)], SMALL),
    S("svd hermitian", lambda a, w: np.sum(np.linalg.svd(a + D3.astype(a.dtype), hermitian=True, compute_uv=False) * w),
      [(3, 3)], DOMINANT),
    S("qr q tall", lambda a, w: np.sum(np.linalg.qr(a + DENSE.astype(a.dtype))[0] * w), [(4, 3)], SMALL),
    S("qr r tall", lambda a, w: np.sum(np.linalg.qr(a + DENSE.astype(a.dtype))[1] * w), [(4, 3)], SMALL),
    S("qr square stacked", lambda a, w: np.sum(np.linalg.qr(a + DENSE[:3].astype(a.dtype))[0] * w), [(2, 3, 3)], SMALL),
    S("qr wide q", lambda a, w: np.sum(np.linalg.qr(a + DENSE.T.astype(a.dtype))[0] * w), [(3, 4)], SMALL),
    S("qr wide r", lambda a, w: np.sum(np.linalg.qr(a + DENSE.T.astype(a.dtype))[1] * w), [(3, 4)], SMALL),
    S("qr mode r", lambda a, w: np.sum(np.linalg.qr(a + DENSE.astype(a.dtype), mode="r") * w), [(4, 3)], SMALL),
    S("qr complete first columns",
      lambda a, w: np.sum(np.linalg.qr(a + DENSE.astype(a.dtype), "complete")[0][:, :3] * w),
      [(4, 3)], SMALL),
    S("qr complete r", lambda a, w: np.sum(np.linalg.qr(a + DENSE.astype(a.dtype), "complete")[1] * w),
      [(4, 3)], SMALL),
    # norm: the forms the reductions' specs leave out
    S("norm matrix 1", lambda x, w: np.linalg.norm(x, 1) * w, [(3, 4)], apart=True),
    S("norm matrix -1 axes", lambda x, w: np.sum(np.linalg.norm(x, -1, (2, 0)) * w), [(3, 2, 4)], apart=True),
    S("norm matrix inf keepdims", lambda x, w: np.sum(np.linalg.norm(x, np.inf, keepdims=True) * w),
      [(3, 4)], apart=True),
    S("norm matrix -inf axes", lambda x, w: np.sum(np.linalg.norm(x, -np.inf, (-1, -2)) * w), [(2, 3, 4)], apart=True),
    S("norm fro axes", lambda x, w: np.sum(np.linalg.norm(x, "fro", (0, 2)) * w), [(3, 2, 4)], apart=True),
    S("norm None axes", lambda x, w: np.sum(np.linalg.norm(x, None, (1, 2), True) * w), [(2, 3, 4)], apart=True),
    S("norm of a 3-d array", lambda x, w: np.linalg.norm(x) * w, [(2, 3, 2)], apart=True),
    S("norm axis one-tuple", lambda x, w: np.sum(np.linalg.norm(x, 3, axis=(-1,)) * w), [(3, 4)], apart=True),
    S("norm ord -1 vector", lambda x, w: np.linalg.norm(x, -1) * w, [(4,)], (0.5, 2.0), apart=True),
    S("norm ord -2 axis", lambda x, w: np.sum(np.linalg.norm(x, -2, 0) * w), [(3, 4)], (0.5, 2.0), apart=True),
    S("norm ord 0", lambda x, w: np.linalg.norm(x, 0) * w, [(4,)], apart=True),
    S("norm vector ord 1 axis None", lambda x, w: np.linalg.norm(x, 1) * w, [(4,)], apart=True),
    S("norm vector keepdims", lambda x, w: np.sum(np.linalg.norm(x, 2, keepdims=True) * w), [(4,)], apart=True),
]
if _NUMPY2:  # named results, cholesky(upper=), vector_norm, matrix_norm, svdvals
    SPECS += [
        S("slogdet .logabsdet", lambda a, w: np.linalg.slogdet(a + 4 * np.eye(3, dtype=a.dtype)).logabsdet * w,
          [(3, 3)], (-1.0, 1.0)),
        S("eigh .eigenvectors", lambda a, w: np.sum(np.linalg.eigh(a + D3.astype(a.dtype)).eigenvectors ** 2 * w),
          [(3, 3)], DOMINANT),
        S("svd .Vh", lambda a, w: np.sum(np.linalg.svd(a + TALL.astype(a.dtype), False).Vh ** 2 * w), [(4, 3)], SMALL),
        S("qr .Q", lambda a, w: np.sum(np.linalg.qr(a + DENSE.astype(a.dtype)).Q * w), [(4, 3)], SMALL),
        S("cholesky upper reads the upper triangle",
          lambda a, w: np.sum(np.linalg.cholesky(a + 4 * np.eye(3, dtype=a.dtype), upper=True) * w),
          [(3, 3)], (-1.0, 1.0)),
        S("vector_norm flattens", lambda x, w: np.linalg.vector_norm(x, ord=1) * w, [(3, 4)], apart=True),
        S("vector_norm axes keepdims", lambda x, w: np.sum(np.linalg.vector_norm(x, axis=(0, 2), keepdims=True) * w),
          [(2, 3, 2)], apart=True),
        S("vector_norm axis inf", lambda x, w: np.sum(np.linalg.vector_norm(x, axis=-1, ord=np.inf) * w),
          [(3, 4)], apart=True),
        S("matrix_norm", lambda x, w: np.sum(np.linalg.matrix_norm(x) * w), [(2, 3, 4)], apart=True),
        S("matrix_norm nuc keepdims",
          lambda x, w: np.sum(np.linalg.matrix_norm(x + SPREAD.astype(x.dtype), keepdims=True, ord="nuc") * w),
          [(2, 3, 4)], SMALL),
        S("matrix_norm 1", lambda x, w: np.sum(np.linalg.matrix_norm(x, ord=1) * w), [(2, 3, 4)], apart=True),
        S("svdvals stacked", lambda a, w: np.sum(np.linalg.svdvals(a + SPREAD.astype(a.dtype)) * w),
          [(2, 3, 4)], SMALL),
    ]

SL = scipy.linalg
SPECS += [
    S("scipy solve vector", lambda a, b, w: np.sum(SL.solve(a + 4 * np.eye(3, dtype=a.dtype), b) * w),
      [(3, 3), (3,)], (-1.0, 1.0)),
    S("scipy solve transposed",
      lambda a, b, w: np.sum(SL.solve(a + 4 * np.eye(3, dtype=a.dtype), b, transposed=True) * w),
      [(3, 3), (3, 2)], (-1.0, 1.0)),
    S("scipy solve sym lower",
      lambda a, b, w: np.sum(SL.solve(a + 4 * np.eye(3, dtype=a.dtype), b, lower=True, assume_a="sym") * w),
      [(3, 3), (3,)], (-1.0, 1.0)),
    S("scipy solve pos upper",
      lambda a, b, w: np.sum(SL.solve(a + 4 * np.eye(3, dtype=a.dtype), b, assume_a="pos") * w),
      [(3, 3), (3, 2)], (-1.0, 1.0)),
    S("scipy solve diagonal",
      lambda a, b, w: np.sum(SL.solve(a + 4 * np.eye(3, dtype=a.dtype), b, assume_a="diagonal") * w),
      [(3, 3), (3,)], (-1.0, 1.0)),
    S("scipy solve lower triangular",
      lambda a, b, w: np.sum(SL.solve(a + 4 * np.eye(3, dtype=a.dtype), b, assume_a="lower triangular") * w),
      [(3, 3), (3,)], (-1.0, 1.0)),
    S("scipy solve stacked", lambda a, b, w: np.sum(SL.solve(a + 4 * np.eye(3, dtype=a.dtype), b) * w),
      [(2, 3, 3), (2, 3, 2)], (-1.0, 1.0)),
    S("solve_triangular", lambda a, b, w: np.sum(SL.solve_triangular(a + 4 * np.eye(3, dtype=a.dtype), b) * w),
      [(3, 3), (3,)], (-1.0, 1.0)),
    S("solve_triangular lower trans",
      lambda a, b, w: np.sum(SL.solve_triangular(a + 4 * np.eye(3, dtype=a.dtype), b, trans=1, lower=True) * w),
      [(3, 3), (3, 2)], (-1.0, 1.0)),
    S("solve_triangular unit_diagonal T",
      lambda a, b, w: np.sum(SL.solve_triangular(a, b, "T", unit_diagonal=True) * w),
      [(3, 3), (3,)], (-1.0, 1.0)),
    S("solve_triangular C lower unit", lambda a, b, w: np.sum(SL.solve_triangular(a, b, 2, True, True) * w),
      [(3, 3), (3, 2)], (-1.0, 1.0)),
    S("scipy inv", lambda a, w: np.sum(SL.inv(a + 4 * np.eye(3, dtype=a.dtype)) * w), [(3, 3)], (-1.0, 1.0)),
    S("scipy det stacked", lambda a, w: np.sum(SL.det(a) * w), [(2, 3, 3)]),
    S("scipy cholesky upper", lambda a, w: np.sum(SL.cholesky(a + 4 * np.eye(3, dtype=a.dtype)) * w),
      [(3, 3)], (-1.0, 1.0)),
    S("scipy cholesky lower", lambda a, w: np.sum(SL.cholesky(a @ a.T + 3 * np.eye(3, dtype=a.dtype), lower=True) * w),
      [(3, 3)]),
    S("cho_factor", lambda a, w: np.sum(SL.cho_factor(a + 4 * np.eye(3, dtype=a.dtype))[0] * w), [(3, 3)], (-1.0, 1.0)),
    S("cho_factor lower", lambda a, w: np.sum(SL.cho_factor(a + 4 * np.eye(3, dtype=a.dtype), lower=True)[0] * w),
      [(3, 3)], (-1.0, 1.0)),
    S("cho_solve of cho_factor",
      lambda a, b, w: np.sum(SL.cho_solve(SL.cho_factor(a @ a.T + 3 * np.eye(3, dtype=a.dtype)), b) * w),
      [(3, 3), (3,)]),
    S("cho_solve lower matrix",
      lambda a, b, w: np.sum(SL.cho_solve(SL.cho_factor(a + 4 * np.eye(3, dtype=a.dtype), True), b) * w),
      [(3, 3), (3, 2)], (-1.0, 1.0)),
    S("lu_factor", lambda a, w: np.sum(SL.lu_factor(a + PIVOTED.astype(a.dtype))[0] * w), [(3, 3)], SMALL),
    S("lu_solve of lu_factor", lambda a, b, w: np.sum(SL.lu_solve(SL.lu_factor(a + PIVOTED.astype(a.dtype)), b) * w),
      [(3, 3), (3,)], SMALL),
    S("lu_solve trans", lambda a, b, w: np.sum(SL.lu_solve(SL.lu_factor(a + PIVOTED.astype(a.dtype)), b, trans=1) * w),
      [(3, 3), (3, 2)], SMALL),
    S("sqrtm", lambda a, w: np.sum(SL.sqrtm(a @ a.T + np.eye(3, dtype=a.dtype)) * w), [(3, 3)]),
    S("expm", lambda a, w: np.sum(SL.expm(a) * w), [(3, 3)], (-1.0, 1.0)),
    S("expm stacked", lambda a, w: np.sum(SL.expm(a) * w), [(2, 2, 2)], (-1.0, 1.0)),
]


# ---- symbolic zeros ---------------------------------------------------------------------------

SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 1.0], [0.5, 1.0, 2.0]])
DOMINANT3 = SPD + np.array([[0.0, 0.2, 0.0], [0.0, 0.0, 0.1], [0.3, 0.0, 0.0]]) + D3
V3 = np.array([0.25, 0.5, 0.75])


def _unused_cho_solve(x, z, flag):
    y = SL.cho_solve((x, False), z)
    if flag:
        return np.sum(y)
    return np.sum(x)


def _unused_lu_solve(x, z, flag):
    y = SL.lu_solve((x, np.array([0, 1, 2], dtype=np.int32)), z)
    if flag:
        return np.sum(y)
    return np.sum(x)


ZERO_CASES = (
    [(op, unused(op), (SPD,)) for op in (
        np.linalg.inv, np.linalg.pinv, np.linalg.det, np.linalg.slogdet, np.linalg.cholesky,
        np.linalg.eigh, np.linalg.eigvalsh, np.linalg.svd, np.linalg.qr, SL.inv, SL.det,
        SL.cholesky, SL.cho_factor, SL.lu_factor, SL.sqrtm, SL.expm,
    )]
    + [(op, unused(op), (DOMINANT3,)) for op in (np.linalg.eig, np.linalg.eigvals)]
    + [(op, unused_pair(op), (SPD, V3)) for op in (np.linalg.solve, SL.solve, SL.solve_triangular)]
    + [
        (np.linalg.matrix_power, unused_with(np.linalg.matrix_power, -2), (SPD,)),
        (np.linalg.lstsq, unused_pair(np.linalg.lstsq), (TALL, np.ones(4))),
        (SL.cho_solve, _unused_cho_solve, (np.linalg.cholesky(SPD).T, V3)),
        (SL.lu_solve, _unused_lu_solve, (SPD, V3)),
    ]
)
if _NUMPY2:
    ZERO_CASES += [(op, unused(op), (SPD,)) for op in (np.linalg.svdvals, np.linalg.vector_norm, np.linalg.matrix_norm)]


# ---- singular points, ties and conventions, against JAX ---------------------------------------
# JAX symmetrizes the argument of cholesky and eigh; numpy reads one triangle: the transcriptions
# read that triangle explicitly (jnp.tril(a) + jnp.tril(a, -1).T), so that the functions agree.


def _jnp():
    import pytest

    return pytest.importorskip("jax.numpy")


def _jsl():
    import pytest

    return pytest.importorskip("jax.scipy.linalg")


def _lower(a):
    return _jnp().tril(a) + _jnp().tril(a, -1).T


SINGULAR = np.arange(1.0, 10.0).reshape(3, 3)  # rank 2: its cofactors are not all 0
W2 = np.array([[1.0, -2.0], [0.5, 3.0]])
REFLECTION = np.eye(3) - 2.0 / 3.0 * np.ones((3, 3))  # orthogonal, dense
K = Kink
KINKS = [
    K("det at a singular matrix", lambda a: np.linalg.det(a), lambda m: _jnp().linalg.det(m), (SINGULAR,)),
    K("scipy det at a singular matrix", lambda a: SL.det(a), lambda m: _jnp().linalg.det(m), (SINGULAR,)),
    K("slogdet of a negative determinant", lambda a: np.linalg.slogdet(a)[1], lambda m: _jnp().linalg.slogdet(m)[1],
      (-SPD,)),
    K(
        "eigvalsh at a double eigenvalue, equal adjoints",
        lambda a: np.sum(np.linalg.eigvalsh(a) * np.array([1.0, 1.0, 2.0])),
        lambda m: _jnp().sum(_jnp().linalg.eigvalsh(_lower(m)) * np.array([1.0, 1.0, 2.0])),
        (np.ones((3, 3)) + np.eye(3),),
    ),
    K(
        "svd values all tied, equal adjoints",
        lambda a: np.sum(np.linalg.svd(a, compute_uv=False)),
        lambda m: _jnp().sum(_jnp().linalg.svd(m, compute_uv=False)),
        (2.0 * REFLECTION,),
    ),
    K("cholesky reads the lower triangle", lambda a: np.sum(np.linalg.cholesky(a) * SPD),
      lambda m: _jnp().sum(_jnp().linalg.cholesky(_lower(m)) * SPD),
      (SPD + np.triu(np.ones((3, 3)), 1),)),
    K("pinv of a rank-deficient matrix", lambda a: np.sum(np.linalg.pinv(a) * W2),
      lambda m: _jnp().sum(_jnp().linalg.pinv(m) * W2),
      (np.array([[1.0, 2.0], [2.0, 4.0]]),)),
    K("norm matrix 1, tied columns and zeros", lambda a: np.linalg.norm(a, 1),
      lambda m: _jnp().linalg.norm(m, 1),
      (np.array([[1.0, 0.0], [-1.0, 2.0]]),)),
    K("norm matrix inf, tied rows", lambda a: np.linalg.norm(a, np.inf),
      lambda m: _jnp().linalg.norm(m, np.inf),
      (np.array([[1.0, -1.0], [0.0, 2.0]]),)),
    K("norm vector inf ties, 1 at 0", lambda a: np.linalg.norm(a, np.inf) + np.linalg.norm(a, 1),
      lambda m: _jnp().linalg.norm(m, np.inf) + _jnp().linalg.norm(m, 1),
      (np.array([1.0, -3.0, 3.0, 0.0]),)),
    K("expm of a defective matrix", lambda a: np.sum(SL.expm(a) * SPD[:2, :2]),
      lambda m: _jnp().sum(_jsl().expm(m) * SPD[:2, :2]),
      (np.array([[1.0, 1.0], [0.0, 1.0]]),)),
    K("solve_triangular unit_diagonal",
      lambda a, b: np.sum(SL.solve_triangular(a, b, lower=True, unit_diagonal=True) * V3),
      lambda m, v: _jnp().sum(_jsl().solve_triangular(m, v, lower=True, unit_diagonal=True) * V3),
      (SPD, V3), (0, 1)),
]
