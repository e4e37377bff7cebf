"""Derivative rules for numpy.linalg's decompositions: `eigh`/`eigvalsh`, `eig`/`eigvals`, `svd`
(and `svdvals`), `qr`, on stacks of matrices; `eigh`, `eig` and `svd` on complex matrices too.

Where the derivative is not defined, the backward refuses with an error at the user's call
(JAX gives inf or NaN there): eigenvectors or singular vectors at a repeated eigenvalue or
singular value, the singular vectors beyond the k = min(m, n) that `full_matrices=True` adds
(any basis of the complement), the same columns of `qr(mode='complete')`, `qr(mode='raw')`, and
`svd(hermitian=True)` of a complex matrix (`qr` of complex matrices is refused by the complex
guard: cpsgrad/rules/complex_support.py). Eigenvalues and singular values alone are always differentiated: at a tie the
result is right
when the tied values' adjoints are equal (a symmetric function of them), as JAX's.

Complex matrices (and `eig`'s complex eigenpairs of a real matrix) follow JAX's convention
(docs/design.md, "Complex numbers"). A complex eigenvector or singular vector is defined only up
to a phase, e^{i t} (for `svd`, the same phase on u's column and v's): LAPACK picks one, and a loss
that changes with it has no derivative. Such a loss is refused, as PyTorch does (JAX returns the
derivative of one gauge, silently): the backward checks that the loss's derivative along the
phase, Im diag(v^H v_d) for `eigh`, Im diag(v^T v_d) for `eig`, Im diag(u^H u_d + v^H v_d) for
`svd` (cpsgrad's adjoints are JAX's, d/dx - i d/dy), vanishes. |v|, v v^H, u v^H, the values are
phase-free; v itself, v ** 2, v[0] are not.
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


def adjointed(x):
    """The matrices of a stack conjugate-transposed (transposed, for real ones)."""
    return np.conj(transposed(x)) if np.iscomplexobj(x) else transposed(x)


def _phase_free(projected, construct: str, vectors: str):
    """Refuse unless the loss's derivative along each vector's phase, Im of `projected`'s diagonal
    (v^H v_d or its like), vanishes: LAPACK chooses the phase, and a loss that changes with it has
    no derivative."""
    along = np.imag(np.diagonal(projected, axis1=-2, axis2=-1))
    scale = max(1.0, float(np.max(np.abs(projected), initial=0.0)))
    if np.any(np.abs(along) > np.finfo(along.dtype).eps ** 0.5 * scale):
        refuse(
            construct,
            f"complex {vectors} are defined only up to a phase (e^(i t) on each, LAPACK's choice) and this "
            "loss changes with it, so it has no derivative; differentiate a function the phase does not "
            "change: np.abs of the vectors, products such as v @ v.conj().T, or the values",
        )


def _hermitian_read(g, lower: bool):
    """`triangle_read` for a complex matrix read as the Hermitian matrix its lower (or upper)
    triangle stands for; `g` is the conjugate of the adjoint (d/dx + i d/dy) of that matrix. Its
    diagonal's imaginary part is not read. Returns the adjoint, in JAX's convention."""
    both = g + adjointed(g)
    eye = np.eye(np.shape(g)[-1], dtype=bool)
    off = np.tril(both, -1) if lower else np.triu(both, 1)
    return np.conj(off + np.where(eye, np.real(g), 0.0))


def _eigh_backward(w_d, v_d, w, v, construct):
    """The conjugate of the adjoint of the matrix (real matrices: the adjoint):
    v (diag(w_d) + F * (v^H conj(v_d))) v^H."""
    inner = np.asarray(w_d)[..., None, :] * np.eye(w.shape[-1])
    if not is_zero(v_d):
        projected = adjointed(v) @ np.conj(v_d)
        if np.iscomplexobj(projected):
            _phase_free(projected, construct, "eigenvectors")
        gaps = _reciprocal_gaps(w, "eigenvectors", f"{construct} at a repeated eigenvalue")
        inner = inner + gaps * projected
    return v @ inner @ adjointed(v)


def _eigh_read(g, a, v, UPLO):
    lower = UPLO.upper() == "L"
    return unbroadcast(_hermitian_read(g, lower) if np.iscomplexobj(v) else triangle_read(g, lower), a)


def eigh_adjoint(y_d, y, a, UPLO):
    """`eigh` backward: v (diag(w_d) + F * (v^H v_d)) v^H, F[i, j] = 1 / (w[j] - w[i]), on the
    triangle numpy reads (conjugated for a complex matrix, JAX's convention)."""
    if is_zero(y_d):
        return 0.0
    w, v = y
    w_d = np.real(given(item(y_d, 0), w))
    return _eigh_read(_eigh_backward(w_d, item(y_d, 1), w, v, "np.linalg.eigh's eigenvectors"), a, v, UPLO)


def eigvalsh_adjoint(y_d, a, UPLO):
    if is_zero(y_d):
        return 0.0
    w, v = np.linalg.eigh(a, UPLO)
    return _eigh_read(_eigh_backward(np.real(y_d), 0.0, w, v, ""), a, v, UPLO)


def eig_adjoint(y_d, y, a):
    """`eig` backward: with columns v of unit norm (numpy's), P = v^-1 da v, dw = diag(P),
    dv = v (F * P) - v Re diag(v^H v (F * P)) (the norm kept, as JAX's), so
    a_d = v^-T (diag(w_d) + F * (v^T v_d - v^T conj(v) diag(Re diag(v^T v_d)))) v^T,
    F[i, j] = 1 / (w[j] - w[i]). Complex eigenvectors: the loss must not depend on their phases."""
    if is_zero(y_d):
        return 0.0
    w, v = y
    inner = given(item(y_d, 0), w)[..., None, :] * np.eye(w.shape[-1])
    v_d = item(y_d, 1)
    if not is_zero(v_d):
        projected = transposed(v) @ v_d
        if np.iscomplexobj(v):
            _phase_free(projected, "np.linalg.eig's complex eigenvectors", "eigenvectors")
        gaps = _reciprocal_gaps(w, "eigenvectors", "np.linalg.eig's eigenvectors at a repeated eigenvalue")
        diagonal = np.real(np.diagonal(projected, axis1=-2, axis2=-1))
        inner = inner + gaps * (projected - (transposed(v) @ np.conj(v)) * diagonal[..., None, :])
    return unbroadcast(np.linalg.solve(transposed(v), inner @ transposed(v)), a)


def eigvals_adjoint(y_d, y, a):
    if is_zero(y_d):
        return 0.0
    w, v = np.linalg.eig(a)
    inner = np.asarray(y_d)[..., None, :] * np.eye(w.shape[-1])
    return unbroadcast(np.linalg.solve(transposed(v), inner @ transposed(v)), a)


def _svd_backward(u, s, vt, u_d, s_d, vt_d, name="np.linalg.svd"):
    """Townsend's (2016) adjoint of a = u diag(s) vt (k = min(m, n) columns of u, rows of vt).
    Complex: computed for the conjugates of the adjoints (d/dx + i d/dy; u_d becomes conj(u_d), vt_d's
    v^T is already it), with ^H for ^T, plus i Im diag(u^H u_d) / s on the diagonal, and conjugated
    back; the loss must not change with the phase of a pair of singular vectors."""
    m, n, k = u.shape[-2], vt.shape[-1], s.shape[-1]
    complex_ = np.iscomplexobj(u)
    v = adjointed(vt)
    inner = np.real(np.asarray(s_d))[..., None, :] * np.eye(k)
    if is_zero(u_d) and is_zero(vt_d):
        return np.conj(u @ inner @ vt) if complex_ else u @ inner @ vt
    construct = f"{name}'s singular vectors at a repeated singular value"
    gaps = _reciprocal_gaps(s * s, "singular vectors", construct)
    u_d, v_d = np.conj(given(u_d, u)), transposed(given(vt_d, vt))
    left, right = adjointed(u) @ u_d, adjointed(v) @ v_d
    if complex_:
        _phase_free(left + right, f"{name}'s complex singular vectors", "singular vectors")
    inner = inner + (gaps * (left - adjointed(left))) * s[..., None, :]
    inner = inner + s[..., :, None] * (gaps * (right - adjointed(right)))
    if complex_:
        with np.errstate(divide="ignore", invalid="ignore"):
            phase = 1j * np.imag(np.diagonal(left, axis1=-2, axis2=-1)) / s
        inner = inner + np.where(s == 0, 0.0, phase)[..., None, :] * np.eye(k)
    g = u @ inner @ vt
    if (m > k and not is_zero(u_d)) or (n > k and not is_zero(vt_d)):
        if np.any(s == 0):
            refuse(f"{name}'s singular vectors of a rank-deficient matrix that is not square",
                   "their derivative is not defined there; differentiate the singular values alone")
        if m > k:
            g = g + ((u_d - u @ left) / s[..., None, :]) @ vt
        if n > k:
            g = g + u @ (adjointed(v_d - v @ right) / s[..., :, None])
    return np.conj(g) if complex_ else g


def svd_adjoint(y_d, y, a, compute_uv, hermitian, name="np.linalg.svd"):
    if is_zero(y_d):
        return 0.0
    if hermitian and np.iscomplexobj(a):
        refuse(f"{name}(hermitian=True) of a complex matrix",
               "only real matrices are differentiated with hermitian=True; pass hermitian=False")
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
