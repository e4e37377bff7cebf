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
RANK2 = np.array([[2.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
ROWS = np.array([[1.0], [-2.0], [0.5]])  # weights of eigenvector components (eig's order is LAPACK's)
_NUMPY2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


def eye(x, n=3):
    return np.eye(n, dtype=x.dtype)


SPECS = [
    # solve: b a vector, a matrix, stacked, broadcast
    S("solve vector", lambda a, b, w: np.sum(np.linalg.solve(a + 4 * np.eye(3, dtype=a.dtype), b) * w), [(3, 3), (3,)], (-1.0, 1.0)),
    S("solve matrix", lambda a, b, w: np.sum(np.linalg.solve(a + 4 * np.eye(3, dtype=a.dtype), b) * w), [(3, 3), (3, 2)], (-1.0, 1.0)),
    S("solve stacked", lambda a, b, w: np.sum(np.linalg.solve(a + 4 * np.eye(3, dtype=a.dtype), b) * w), [(2, 3, 3), (2, 3, 2)], (-1.0, 1.0)),
    S("solve broadcast", lambda a, b, w: np.sum(np.linalg.solve(a + 4 * np.eye(3, dtype=a.dtype), b) * w), [(3, 3), (2, 3, 1)], (-1.0, 1.0)),
    S("inv", lambda a, w: np.sum(np.linalg.inv(a + 4 * np.eye(3, dtype=a.dtype)) * w), [(3, 3)], (-1.0, 1.0)),
    S("inv stacked", lambda a, w: np.sum(np.linalg.inv(a + 4 * np.eye(3, dtype=a.dtype)) * w), [(2, 3, 3)], (-1.0, 1.0)),
    S("pinv wide", lambda a, w: np.sum(np.linalg.pinv(a + SPREAD.astype(a.dtype)) * w), [(3, 4)], SMALL),
    S("pinv tall stacked", lambda a, w: np.sum(np.linalg.pinv(a + TALL.astype(a.dtype)) * w), [(2, 4, 3)], SMALL),
    S("pinv low rank rcond", lambda a, w: np.sum(np.linalg.pinv((a + RANK2) @ (a + RANK2).T, 1e-4) * w), [(3, 2)], SMALL),
    S("pinv hermitian", lambda a, w: np.sum(np.linalg.pinv(a + 4 * np.eye(3, dtype=a.dtype), hermitian=True) * w), [(3, 3)], (-1.0, 1.0)),
    S("det", lambda a, w: np.linalg.det(a) * w, [(3, 3)]),
    S("det stacked", lambda a, w: np.sum(np.linalg.det(a) * w), [(2, 2, 2)]),
    S("slogdet", lambda a, w: np.linalg.slogdet(a + 4 * np.eye(3, dtype=a.dtype))[1] * w, [(3, 3)], (-1.0, 1.0)),
    S("slogdet stacked logabsdet", lambda a, w: np.sum(np.linalg.slogdet(a - 4 * np.eye(3, dtype=a.dtype)).logabsdet * w), [(2, 3, 3)], (-1.0, 1.0)),
    S("matrix_power 3", lambda a, w: np.sum(np.linalg.matrix_power(a, 3) * w), [(3, 3)], (-1.0, 1.0)),
    S("matrix_power 1 stacked", lambda a, w: np.sum(np.linalg.matrix_power(a, 1) * w), [(2, 3, 3)]),
    S("matrix_power 0", lambda a, w: np.sum(np.linalg.matrix_power(a, 0) * w), [(3, 3)]),
    S("matrix_power -2", lambda a, w: np.sum(np.linalg.matrix_power(a + 4 * np.eye(3, dtype=a.dtype), -2) * w), [(2, 3, 3)], (-1.0, 1.0)),
    S("lstsq vector", lambda a, b, w: np.sum(np.linalg.lstsq(a + TALL.astype(a.dtype), b)[0] * w), [(4, 3), (4,)], SMALL),
    S("lstsq matrix residuals", lambda a, b, w: np.sum(np.linalg.lstsq(a + TALL.astype(a.dtype), b)[1] * w), [(4, 3), (4, 2)], SMALL),
    S("lstsq singular values", lambda a, b, w: np.sum(np.linalg.lstsq(a + TALL.astype(a.dtype), b, rcond=None)[3] * w), [(4, 3), (4,)], SMALL),
    S("lstsq low rank rcond", lambda a, b, w: np.sum(np.linalg.lstsq(a @ a.T, b, 1e-4)[0] * w), [(3, 2), (3, 2)], (0.5, 1.5)),
    S("lstsq wide", lambda a, b, w: np.sum(np.linalg.lstsq(a + SPREAD.astype(a.dtype), b)[0] * w), [(3, 4), (3,)], SMALL),
    S("cholesky", lambda a, w: np.sum(np.linalg.cholesky(a @ a.T + 3 * np.eye(3, dtype=a.dtype)) * w), [(3, 3)]),
    S("cholesky stacked", lambda a, w: np.sum(np.linalg.cholesky(a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3, dtype=a.dtype)) * w), [(2, 3, 3)]),
    S("cholesky reads the lower triangle", lambda a, w: np.sum(np.linalg.cholesky(a + 4 * np.eye(3, dtype=a.dtype)) * w), [(3, 3)], (-1.0, 1.0)),
    # decompositions
    S("eigh eigenvalues", lambda a, w: np.sum(np.linalg.eigh(a + a.T + D3.astype(a.dtype))[0] * w), [(3, 3)], DOMINANT),
    S("eigh eigenvectors", lambda a, w: np.sum(np.linalg.eigh(a + a.T + D3.astype(a.dtype))[1] ** 2 * w), [(3, 3)], DOMINANT),
    S("eigh lower triangle stacked", lambda a, w: np.sum(np.linalg.eigh(a + D3.astype(a.dtype)).eigenvectors ** 2 * w), [(2, 3, 3)], DOMINANT),
    S("eigh UPLO U", lambda a, w: np.sum(np.linalg.eigh(a + D3.astype(a.dtype), UPLO="U")[0] * w), [(3, 3)], DOMINANT),
    S("eigvalsh", lambda a, w: np.sum(np.linalg.eigvalsh(a + D3.astype(a.dtype)) * w), [(3, 3)], DOMINANT),
    S("eigvalsh U stacked", lambda a, w: np.sum(np.linalg.eigvalsh(a + D3.astype(a.dtype), "U") * w), [(2, 3, 3)], DOMINANT),
    # eig orders its eigenvalues as LAPACK finds them: functions symmetric in the eigenpairs
    S("eig eigenvalues", lambda a, w: np.sum(np.linalg.eig(a + D3.astype(a.dtype))[0] ** 3) * w, [(3, 3)], DOMINANT),
    S("eig eigenvectors", lambda a, w: np.sum(np.linalg.eig(a + D3.astype(a.dtype))[1] ** 2 * np.linalg.eig(a + D3.astype(a.dtype))[0] * ROWS) * w,
      [(3, 3)], DOMINANT),
    S("eig stacked", lambda a, w: np.sum(np.sum(np.linalg.eig(a + D3.astype(a.dtype)).eigenvectors ** 2 * ROWS, axis=(1, 2)) * w), [(2, 3, 3)], DOMINANT),
    S("eigvals", lambda a, w: np.sum(np.exp(np.linalg.eigvals(a + D3.astype(a.dtype)))) * w, [(3, 3)], DOMINANT),
    S("svd values", lambda a, w: np.sum(np.linalg.svd(a + SPREAD.astype(a.dtype), compute_uv=False) * w), [(3, 4)], SMALL),
    S("svd values of the tuple", lambda a, w: np.sum(np.linalg.svd(a + TALL.astype(a.dtype))[1] * w), [(4, 3)], SMALL),
    S("svd u wide", lambda a, w: np.sum(np.linalg.svd(a + SPREAD.astype(a.dtype), full_matrices=False)[0] ** 2 * w), [(3, 4)], SMALL),
    S("svd vt wide", lambda a, w: np.sum(np.linalg.svd(a + SPREAD.astype(a.dtype), full_matrices=False)[2] ** 2 * w), [(3, 4)], SMALL),
    S("svd u tall stacked", lambda a, w: np.sum(np.linalg.svd(a + TALL.astype(a.dtype), False)[0] ** 2 * w), [(2, 4, 3)], SMALL),
    S("svd vt tall", lambda a, w: np.sum(np.linalg.svd(a + TALL.astype(a.dtype), False).Vh ** 2 * w), [(4, 3)], SMALL),
    S("svd full_matrices first rows", lambda a, w: np.sum(np.linalg.svd(a + SPREAD.astype(a.dtype))[2][:3] ** 2 * w), [(3, 4)], SMALL),
    S("svd square", lambda a, w: np.sum(np.linalg.svd(a + D3.astype(a.dtype))[0] ** 2 * w), [(3, 3)], SMALL),
    S("svd hermitian", lambda a, w: np.sum(np.linalg.svd(a + D3.astype(a.dtype), hermitian=True, compute_uv=False) * w), [(3, 3)], DOMINANT),
    S("qr q tall", lambda a, w: np.sum(np.linalg.qr(a + DENSE.astype(a.dtype))[0] * w), [(4, 3)], SMALL),
    S("qr r tall", lambda a, w: np.sum(np.linalg.qr(a + DENSE.astype(a.dtype))[1] * w), [(4, 3)], SMALL),
    S("qr square stacked", lambda a, w: np.sum(np.linalg.qr(a + DENSE[:3].astype(a.dtype)).Q * w), [(2, 3, 3)], SMALL),
    S("qr wide q", lambda a, w: np.sum(np.linalg.qr(a + DENSE.T.astype(a.dtype))[0] * w), [(3, 4)], SMALL),
    S("qr wide r", lambda a, w: np.sum(np.linalg.qr(a + DENSE.T.astype(a.dtype))[1] * w), [(3, 4)], SMALL),
    S("qr mode r", lambda a, w: np.sum(np.linalg.qr(a + DENSE.astype(a.dtype), mode="r") * w), [(4, 3)], SMALL),
    S("qr complete first columns", lambda a, w: np.sum(np.linalg.qr(a + DENSE.astype(a.dtype), "complete")[0][:, :3] * w), [(4, 3)], SMALL),
    S("qr complete r", lambda a, w: np.sum(np.linalg.qr(a + DENSE.astype(a.dtype), "complete")[1] * w), [(4, 3)], SMALL),
    # norm: the forms the reductions' specs leave out
    S("norm matrix 1", lambda x, w: np.linalg.norm(x, 1) * w, [(3, 4)], apart=True),
    S("norm matrix -1 axes", lambda x, w: np.sum(np.linalg.norm(x, -1, (2, 0)) * w), [(3, 2, 4)], apart=True),
    S("norm matrix inf keepdims", lambda x, w: np.sum(np.linalg.norm(x, np.inf, keepdims=True) * w), [(3, 4)], apart=True),
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
if _NUMPY2:
    SPECS += [
        S("cholesky upper reads the upper triangle", lambda a, w: np.sum(np.linalg.cholesky(a + 4 * np.eye(3, dtype=a.dtype), upper=True) * w), [(3, 3)], (-1.0, 1.0)),
        S("svdvals stacked", lambda a, w: np.sum(np.linalg.svdvals(a + SPREAD.astype(a.dtype)) * w), [(2, 3, 4)], SMALL),
    ]

ZERO_CASES = []
