"""Derivative rules for numpy.linalg's decompositions: `eigh`/`eigvalsh`, `eig`/`eigvals` (real
results), `svd` (and `svdvals`), `qr`, on stacks of matrices.

Where the derivative is not defined, the backward refuses with an error at the user's call
(JAX gives inf or NaN there): eigenvectors or singular vectors at a repeated eigenvalue or
singular value, the singular vectors beyond the k = min(m, n) that `full_matrices=True` adds
(any basis of the complement), the same columns of `qr(mode='complete')`, `qr(mode='raw')`, and
`eig` with complex eigenvalues (complex results are not differentiated yet). Eigenvalues and
singular values alone are always differentiated: at a tie the result is right when the tied
values' adjoints are equal (a symmetric function of them), as JAX's.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad.rules.numpy.linalg import given, refuse, symmetric_from, transposed, triangle_read
from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import is_zero, item
from cpsgrad.runtime.broadcasting import unbroadcast

# ---- decompositions ---------------------------------------------------------------------------


@rule(np.linalg.eigh)
def eigh(a, UPLO="L"):
    y = np.linalg.eigh(a, UPLO)
    y_d = yield y
    a_d += eigh_adjoint(y_d, y, a, UPLO)


@rule(np.linalg.eigvalsh)
def eigvalsh(a, UPLO="L"):
    y = np.linalg.eigvalsh(a, UPLO)
    y_d = yield y
    a_d += eigvalsh_adjoint(y_d, a, UPLO)


@rule(np.linalg.eig)
def eig(a):
    y = np.linalg.eig(a)
    y_d = yield y
    a_d += eig_adjoint(y_d, y, a)


@rule(np.linalg.eigvals)
def eigvals(a):
    y = np.linalg.eigvals(a)
    y_d = yield y
    a_d += eigvals_adjoint(y_d, y, a)


@rule(np.linalg.svd)
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    y = np.linalg.svd(a, full_matrices, compute_uv, hermitian)
    y_d = yield y
    a_d += svd_adjoint(y_d, y, a, compute_uv, hermitian)


@rule(np.linalg.qr)
def qr(a, mode="reduced"):
    y = np.linalg.qr(a, mode)
    y_d = yield y
    a_d += qr_adjoint(y_d, y, a, mode)


# ---- helpers ----------------------------------------------------------------------------------


def _reciprocal_gaps(values, what: str, construct: str):
    """F[i, j] = 1 / (values[j] - values[i]) off the diagonal, 0 on it; a refusal at a tie."""
    gaps = values[..., None, :] - values[..., :, None]
    eye = np.eye(values.shape[-1], dtype=bool)
    if np.any((gaps == 0) & ~eye):
        refuse(
            construct,
            f"the derivative of the {what} is not defined where two of the values they belong to "
            "are equal; differentiate a function of the values alone, or of a matrix the "
            "vectors of a repeated value span (it does not depend on which basis is returned)",
        )
    with np.errstate(divide="ignore"):
        return np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, gaps))


def _eigh_backward(w_d, v_d, w, v, construct):
    inner = np.asarray(w_d)[..., None, :] * np.eye(w.shape[-1])
    if not is_zero(v_d):
        inner = inner + _reciprocal_gaps(w, "eigenvectors", construct) * (transposed(v) @ v_d)
    return v @ inner @ transposed(v)


def eigh_adjoint(y_d, y, a, UPLO):
    """`eigh` backward: v (diag(w_d) + F * (v^T v_d)) v^T, F[i, j] = 1 / (w[j] - w[i]), on the
    triangle numpy reads."""
    if is_zero(y_d):
        return 0.0
    w, v = y
    w_d = given(item(y_d, 0), w)
    g = _eigh_backward(w_d, item(y_d, 1), w, v, "np.linalg.eigh's eigenvectors at a repeated eigenvalue")
    return unbroadcast(triangle_read(g, UPLO.upper() == "L"), a)


def eigvalsh_adjoint(y_d, a, UPLO):
    if is_zero(y_d):
        return 0.0
    w, v = np.linalg.eigh(a, UPLO)
    return unbroadcast(triangle_read(_eigh_backward(y_d, 0.0, w, v, ""), UPLO.upper() == "L"), a)


def _real_eigenvalues(w, construct):
    if np.iscomplexobj(w):
        refuse(
            construct,
            "these eigenvalues are complex, and cpsgrad does not differentiate complex results "
            "yet; for a symmetric matrix use np.linalg.eigh",
        )


def eig_adjoint(y_d, y, a):
    """`eig` backward for real eigenvalues: with columns v of unit norm (numpy's),
    v^-T (diag(w_d) + F * (v^T v_d - v^T v diag(v^T v_d))) v^T, F[i, j] = 1 / (w[j] - w[i])."""
    if is_zero(y_d):
        return 0.0
    w, v = y
    _real_eigenvalues(w, "np.linalg.eig of a matrix with complex eigenvalues")
    inner = given(item(y_d, 0), w)[..., None, :] * np.eye(w.shape[-1])
    v_d = item(y_d, 1)
    if not is_zero(v_d):
        gaps = _reciprocal_gaps(w, "eigenvectors", "np.linalg.eig's eigenvectors at a repeated eigenvalue")
        projected = transposed(v) @ v_d
        diagonal = np.diagonal(projected, axis1=-2, axis2=-1)
        inner = inner + gaps * (projected - (transposed(v) @ v) * diagonal[..., None, :])
    return unbroadcast(np.linalg.solve(transposed(v), inner @ transposed(v)), a)


def eigvals_adjoint(y_d, y, a):
    if is_zero(y_d):
        return 0.0
    _real_eigenvalues(y, "np.linalg.eigvals of a matrix with complex eigenvalues")
    w, v = np.linalg.eig(a)
    inner = np.asarray(y_d)[..., None, :] * np.eye(w.shape[-1])
    return unbroadcast(np.linalg.solve(transposed(v), inner @ transposed(v)), a)


def _svd_backward(u, s, vt, u_d, s_d, vt_d, name="np.linalg.svd"):
    """Townsend's (2016) adjoint of a = u diag(s) vt (k = min(m, n) columns of u, rows of vt)."""
    m, n, k = u.shape[-2], vt.shape[-1], s.shape[-1]
    v = transposed(vt)
    inner = np.asarray(s_d)[..., None, :] * np.eye(k)
    if is_zero(u_d) and is_zero(vt_d):
        return u @ inner @ vt
    construct = f"{name}'s singular vectors at a repeated singular value"
    gaps = _reciprocal_gaps(s * s, "singular vectors", construct)
    u_d, v_d = given(u_d, u), transposed(given(vt_d, vt))
    left, right = transposed(u) @ u_d, transposed(v) @ v_d
    inner = inner + (gaps * (left - transposed(left))) * s[..., None, :]
    inner = inner + s[..., :, None] * (gaps * (right - transposed(right)))
    g = u @ inner @ vt
    if (m > k and not is_zero(u_d)) or (n > k and not is_zero(vt_d)):
        if np.any(s == 0):
            refuse(f"{name}'s singular vectors of a rank-deficient matrix that is not square",
                   "their derivative is not defined there; differentiate the singular values alone")
        if m > k:
            g = g + ((u_d - u @ left) / s[..., None, :]) @ vt
        if n > k:
            g = g + u @ (transposed(v_d - v @ right) / s[..., :, None])
    return g


def svd_adjoint(y_d, y, a, compute_uv, hermitian, name="np.linalg.svd"):
    if is_zero(y_d):
        return 0.0
    matrix = symmetric_from(a, True) if hermitian else np.asarray(a)
    if not compute_uv:
        u, s, vt = np.linalg.svd(matrix, full_matrices=False, hermitian=hermitian)
        g = _svd_backward(u, s, vt, 0.0, y_d, 0.0, name)
    else:
        u, s, vt = y
        u_d, s_d, vt_d = item(y_d, 0), given(item(y_d, 1), s), item(y_d, 2)
        k = s.shape[-1]
        if u.shape[-1] > k or vt.shape[-2] > k:  # full_matrices=True on a matrix that is not square
            if (not is_zero(u_d) and np.any(u_d[..., k:])) or (not is_zero(vt_d) and np.any(vt_d[..., k:, :])):
                refuse(f"{name}'s singular vectors beyond min(m, n) (full_matrices=True)",
                       "they are any basis of the complement, without a derivative; use full_matrices=False")
            u, vt = u[..., :k], vt[..., :k, :]
            u_d = u_d if is_zero(u_d) else u_d[..., :k]
            vt_d = vt_d if is_zero(vt_d) else vt_d[..., :k, :]
        g = _svd_backward(u, s, vt, u_d, s_d, vt_d, name)
    return unbroadcast(triangle_read(g, True) if hermitian else g, a)


if hasattr(np.linalg, "svdvals"):  # numpy 2

    @rule(np.linalg.svdvals)
    def svdvals(x):
        y = np.linalg.svdvals(x)
        y_d = yield y
        x_d += svd_adjoint(y_d, y, x, False, False)


def _qr_tall(q, r, q_d, r_d):
    """The adjoint of a = q r, m >= n (Walter and Lehmann; Seeger et al.):
    (q_d + q copyltu(M)) r^-T, M = r r_d^T - q_d^T q, copyltu the lower triangle mirrored."""
    lower = np.tril(r @ transposed(r_d) - transposed(q_d) @ q)
    mirrored = lower + transposed(np.tril(lower, -1))
    return transposed(np.linalg.solve(r, transposed(q_d + q @ mirrored)))


def qr_adjoint(y_d, y, a, mode):
    """`qr` backward, modes 'reduced', 'complete' (its extra columns unused) and 'r'; a wide
    matrix [x | z] is q [r1 | q^T z], with x square."""
    if is_zero(y_d):
        return 0.0
    if mode not in ("reduced", "complete", "r"):
        refuse(f"np.linalg.qr(mode={mode!r})", "only modes 'reduced', 'complete' and 'r' are differentiated")
    a = np.asarray(a)
    if mode == "r":
        q, r = np.linalg.qr(a)
        q_d, r_d = np.zeros(q.shape), given(y_d, r)
    else:
        q, r = y
        q_d, r_d = given(item(y_d, 0), q), given(item(y_d, 1), r)
    return qr_backward(q, r, q_d, r_d, a)


def qr_backward(q, r, q_d, r_d, a, name="np.linalg.qr", complete="mode='complete'", reduced="mode='reduced'"):
    """The adjoint of `a = q r` from arrays `q_d`, `r_d`; q may have the m - n extra columns of a
    complete factorization of a tall matrix (their adjoint must be zero)."""
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    if q.shape[-1] > k:  # mode='complete' on a tall matrix
        if np.any(q_d[..., k:]):
            refuse(f"{name}'s columns of q beyond n ({complete})",
                   f"they are any basis of the complement, without a derivative; use {reduced}")
        q, q_d, r, r_d = q[..., :k], q_d[..., :k], r[..., :k, :], r_d[..., :k, :]
    if m >= n:
        return unbroadcast(_qr_tall(q, r, q_d, r_d), a)
    rest, rest_d = a[..., m:], r_d[..., m:]
    square = _qr_tall(q, r[..., :m], q_d + rest @ transposed(rest_d), r_d[..., :m])
    return unbroadcast(np.concatenate([square, q @ rest_d], axis=-1), a)
