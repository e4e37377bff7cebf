"""Derivative rules for numpy.linalg's solvers and inverses: `solve`, `inv`, `pinv`, `det`,
`slogdet`, `matrix_power`, `lstsq`, `cholesky`, numpy 2's `vector_norm` and `matrix_norm`
(the decompositions `eigh`, `eig`, `svd`, `qr` are
in `linalg_decompositions`; `norm` is a reduction). Every rule takes stacks of matrices where
numpy does (`lstsq` takes one matrix, as numpy).

A function that reads one triangle of its argument as a symmetric matrix (`cholesky`, `eigh`,
`pinv(hermitian=True)`) gets the derivative of what it computes: the adjoint lands on that
triangle only (an off-diagonal element counts for both places it stands for). JAX's functions
symmetrize their argument first (symmetrize_input=True) and give the symmetric adjoint instead;
the two agree on every symmetric perturbation.

`pinv` and `lstsq` are differentiated where the rank they keep is locally constant: a cutoff
(rcond, rtol) that drops singular values that are not numerically zero is refused
(`kept_rank_check`); an exactly rank-deficient matrix is differentiated.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad.errors import UnsupportedError
from cpsgrad.rules.numpy.reductions import _axes, norm_adjoint
from cpsgrad.rules.registry import not_differentiable, rule
from cpsgrad.runtime.adjoints import is_zero, item
from cpsgrad.runtime.broadcasting import refuse_complex, unbroadcast

# numpy 1 reads b as a stack of vectors when b.ndim == a.ndim - 1; numpy 2 only when b is 1-d
_VECTORS_BY_NDIM = np.lib.NumpyVersion(np.__version__) < "2.0.0"

not_differentiable(np.linalg.matrix_rank)

# ---- solvers and inverses ---------------------------------------------------------------------


@rule(np.linalg.solve)
def solve(a, b):
    x = np.linalg.solve(a, b)
    x_d = yield x
    a_g, b_g = solve_adjoint(x_d, a, x, is_vector_rhs(a, b))
    a_d += unbroadcast(a_g, a)
    b_d += unbroadcast(b_g, b)


@rule(np.linalg.inv)
def inv(a):
    y = np.linalg.inv(a)
    y_d = yield y
    a_d += inverse_adjoint(y_d, y, a)


@rule(np.linalg.pinv)
def pinv(a, rcond=None, hermitian=False, *, rtol=None):
    y = np.linalg.pinv(a, rcond, hermitian, rtol=rtol)
    y_d = yield y
    a_d += pinv_adjoint(y_d, y, a, hermitian)


@rule(np.linalg.det)
def det(a):
    y = np.linalg.det(a)
    y_d = yield y
    a_d += det_adjoint(y_d, a)


@rule(np.linalg.slogdet)
def slogdet(a):
    y = np.linalg.slogdet(a)
    y_d = yield y
    a_d += slogdet_adjoint(y_d, a)


@rule(np.linalg.matrix_power)
def matrix_power(a, n):
    y = np.linalg.matrix_power(a, n)
    y_d = yield y
    a_d += matrix_power_adjoint(y_d, a, n)


@rule(np.linalg.lstsq)
def lstsq(a, b, rcond=None):
    y = np.linalg.lstsq(a, b, rcond)
    y_d = yield y
    a_g, b_g = lstsq_adjoint(y_d, y, a, b)
    a_d += unbroadcast(a_g, a)
    b_d += unbroadcast(b_g, b)


@rule(np.linalg.cholesky)
def cholesky(a, *, upper=False):
    y = np.linalg.cholesky(a, upper=upper)
    y_d = yield y
    a_d += unbroadcast(cholesky_adjoint(y_d, y, upper), a)


if hasattr(np.linalg, "vector_norm"):  # numpy 2's array API norms, through norm's backward

    @rule(np.linalg.vector_norm)
    def vector_norm(x, *, axis=None, keepdims=False, ord=2):
        y = np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
        y_d = yield y
        x_d += vector_norm_adjoint(y_d, x, y, axis, ord)

    @rule(np.linalg.matrix_norm)
    def matrix_norm(x, *, keepdims=False, ord="fro"):
        y = np.linalg.matrix_norm(x, keepdims=keepdims, ord=ord)
        y_d = yield y
        x_d += norm_adjoint(y_d, x, y, ord, (-2, -1), keepdims)


# ---- helpers ----------------------------------------------------------------------------------


def vector_norm_adjoint(y_d, x, y, axis, ord):
    """`vector_norm` backward: the axes it reduces (all for None, any number) merged into one."""
    if is_zero(y_d):
        return 0.0
    values = np.asarray(x)
    reduced = list(_axes(axis, values.ndim))
    order = [a for a in range(values.ndim) if a not in reduced] + reduced
    moved = np.transpose(values, order)
    merged = moved.reshape(moved.shape[: values.ndim - len(reduced)] + (-1,))
    kept = merged.shape[:-1]
    g = norm_adjoint(np.reshape(y_d, kept), merged, np.reshape(y, kept), ord, -1, False)
    return unbroadcast(np.transpose(np.reshape(g, moved.shape), np.argsort(order)), x)


def transposed(x):
    """The matrices of a stack transposed."""
    return np.swapaxes(x, -1, -2)


def given(adjoint, like):
    """An output's adjoint as an array: zeros of `like`'s shape for the symbolic zero."""
    if is_zero(adjoint):
        return np.zeros(np.shape(like), np.result_type(like, 1.0))
    return np.asarray(adjoint)


def refuse(construct: str, advice: str):
    """Refuse a derivative that is not defined at these inputs (located at the user's call)."""
    raise UnsupportedError(None, construct, advice)


def triangle_read(g, lower: bool):
    """The adjoint of a matrix that a function read as the symmetric matrix its `lower` (or
    upper) triangle stands for, from `g`, the adjoint of that symmetric matrix."""
    both = g + transposed(g)
    eye = np.eye(np.shape(g)[-1], dtype=bool)
    off = np.tril(both, -1) if lower else np.triu(both, 1)
    return off + np.where(eye, g, 0.0)


def symmetric_from(a, lower: bool):
    """The symmetric matrix that the lower (or upper) triangle of `a` stands for."""
    a = np.asarray(a)
    part = np.tril(a, -1) if lower else np.triu(a, 1)
    return part + transposed(part) + a * np.eye(a.shape[-1])


def is_vector_rhs(a, b) -> bool:
    """Whether np.linalg.solve reads `b` as (a stack of) vectors rather than matrices."""
    if _VECTORS_BY_NDIM:
        return np.ndim(b) == np.ndim(a) - 1
    return np.ndim(b) == 1


def solved_adjoints(x_d, x, solve_transposed, vector: bool):
    """(a's adjoint, b's adjoint) of `x = a^-1 b`, given `solve_transposed(g) = a^-T g` for a
    right side of b's kind: b's adjoint is a^-T x_d, a's is minus it times x^T."""
    if vector:
        b_g = solve_transposed(x_d[..., None])[..., 0]
        return -b_g[..., :, None] * np.asarray(x)[..., None, :], b_g
    b_g = solve_transposed(x_d)
    return -b_g @ transposed(x), b_g


def solve_adjoint(x_d, a, x, vector: bool):
    if is_zero(x_d):
        return 0.0, 0.0
    a_t = transposed(np.asarray(a))
    return solved_adjoints(np.asarray(x_d), x, lambda g: np.linalg.solve(a_t, g), vector)


def inverse_adjoint(y_d, y, a):
    """`inv` backward: -inv(a)^T y_d inv(a)^T."""
    if is_zero(y_d):
        return 0.0
    y_t = transposed(y)
    return unbroadcast(-y_t @ y_d @ y_t, a)


def pinv_backward(a, p, p_d):
    """The adjoint of `a` from that of its pseudo-inverse `p`, where the rank is locally constant
    (Golub and Pereyra's derivative, transposed)."""
    a, p_t, p_d_t = np.asarray(a), transposed(p), transposed(p_d)
    m, n = a.shape[-2], a.shape[-1]
    g = -p_t @ p_d @ p_t
    g = g + (np.eye(m) - a @ p) @ p_d_t @ (p @ p_t)
    return g + (p_t @ p) @ p_d_t @ (np.eye(n) - p @ a)


def kept_rank_check(a, p, construct, rank=None):
    """Refuse a pseudo-inverse `p` of `a` whose cutoff dropped singular values that are not
    numerically zero (above 1e3 n eps times the largest, eps of their dtype): there the truncated
    pseudo-inverse's derivative also depends on how the dropped part moves, which pinv_backward
    leaves out. The rank kept is trace(a p) (a p projects onto the kept singular vectors)."""
    a = np.asarray(a)
    s = np.linalg.svd(a, compute_uv=False)
    if s.shape[-1] == 0:
        return
    if rank is None:
        rank = np.rint(np.trace(a @ np.asarray(p), axis1=-2, axis2=-1)).astype(int)
    rank = np.broadcast_to(rank, s.shape[:-1])
    eps = np.finfo(s.dtype if s.dtype.kind == "f" else np.float64).eps
    tiny = 1e3 * s.shape[-1] * eps * s[..., 0]
    for index in np.ndindex(s.shape[:-1]):
        if np.any(s[index][int(rank[index]):] > tiny[index]):
            refuse(construct,
                   "its cutoff drops singular values that are not numerically zero, where the truncated "
                   "pseudo-inverse's derivative depends on how they move; lower the cutoff (rcond, rtol, "
                   "cond) or differentiate the matrix of the kept part")


def pinv_adjoint(y_d, y, a, hermitian):
    if is_zero(y_d):
        return 0.0
    if hermitian:  # numpy reads the lower triangle as the symmetric matrix
        matrix = symmetric_from(a, True)
        kept_rank_check(matrix, y, "np.linalg.pinv of a matrix whose cutoff drops singular values")
        return unbroadcast(triangle_read(pinv_backward(matrix, y, y_d), True), a)
    kept_rank_check(a, y, "np.linalg.pinv of a matrix whose cutoff drops singular values")
    return unbroadcast(pinv_backward(a, y, y_d), a)


def _others_product(s):
    """For each i, the product of s_j over j != i (along the last axis), without division."""
    ones = np.ones(s.shape[:-1] + (1,), s.dtype)
    before = np.cumprod(np.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = np.flip(np.cumprod(np.concatenate([ones, np.flip(s[..., 1:], -1)], axis=-1), axis=-1), -1)
    return before * after


def det_adjoint(y_d, a):
    """`det` backward: the adjoint times the cofactor matrix. For one real matrix far from
    singular (LAPACK's reciprocal condition estimate above `_WELL_CONDITIONED`) the cofactors are
    det(a) inv(a)^T from one LU factorisation; otherwise from an SVD, so that they are also right
    at singular matrices (the cofactors of a matrix of rank n-1 are not all zero, where det *
    inv^T is inf or nan; JAX's cofactor solve gives the same)."""
    if is_zero(y_d):
        return 0.0
    a = np.asarray(a)
    if a.shape[-1] == 0:
        return unbroadcast(np.zeros(a.shape), a)
    cofactors = _cofactors_by_lu(a)
    if cofactors is not None:
        return unbroadcast(cofactors * np.asarray(y_d), a)
    u, s, vt = np.linalg.svd(a)
    orientation = np.linalg.det(u) * np.linalg.det(vt)
    if a.dtype.kind == "c":  # unitary factors: det(a) a^-T = det(u) det(vt) conj(u) (prod s / s_i) conj(vt)
        u, vt = np.conj(u), np.conj(vt)
    cofactors = (u * _others_product(s)[..., None, :]) @ vt
    return unbroadcast(cofactors * (orientation * np.asarray(y_d))[..., None, None], a)


_WELL_CONDITIONED = 1e-6  # reciprocal condition number: inv's relative error about eps / rcond, 2e-10 here


def _cofactors_by_lu(a):
    """det(a) inv(a)^T of one float64 matrix from its LU factorisation (an SVD costs 3-6x as
    much), or None where the matrix is a stack, of another dtype, or not far from singular."""
    if a.ndim != 2 or a.dtype != np.float64:
        return None
    from scipy.linalg import lapack  # not at import: scipy.linalg is slow to import, and rarely needed

    getrf, gecon, getri = lapack.dgetrf, lapack.dgecon, lapack.dgetri
    lu, pivots, info = getrf(a)
    if info != 0:  # an exact zero pivot: singular
        return None
    rcond, info = gecon(lu, np.linalg.norm(a, 1), norm="1")
    if info != 0 or not rcond > _WELL_CONDITIONED:
        return None
    inverse, info = getri(lu, pivots)
    if info != 0:
        return None
    swaps = np.count_nonzero(pivots != np.arange(pivots.shape[0]))
    determinant = np.prod(np.diagonal(lu)) * (-1.0 if swaps % 2 else 1.0)
    return determinant * inverse.T


def slogdet_adjoint(y_d, a):
    """`slogdet` backward: log|det|'s adjoint times inv(a)^T; a real sign has no gradient. For a
    complex `a` log|det| is Re(log det), whose gradient is the real part of its cotangent times
    inv(a)^T (JAX's); the sign's phase is not differentiated: a cotangent reaching it is refused."""
    logdet_d = item(y_d, 1)
    if np.iscomplexobj(a):
        if not is_zero(item(y_d, 0)) and np.any(np.asarray(item(y_d, 0)) != 0):
            refuse_complex(a, "the sign of np.linalg.slogdet of a complex matrix")
        logdet_d = 0.0 if is_zero(logdet_d) else np.real(logdet_d)
    if is_zero(logdet_d):
        return 0.0
    inverse_t = transposed(np.linalg.inv(a))
    return unbroadcast(inverse_t * np.asarray(logdet_d)[..., None, None], a)


def power_adjoint(y_d, base, n: int):
    """The adjoint of `base` in base^n, n >= 1: the sum of (b^T)^j y_d (b^T)^(n-1-j)."""
    base_t = transposed(base)
    powers = [np.broadcast_to(np.eye(base.shape[-1]), base.shape)]
    for _ in range(n - 1):
        powers.append(powers[-1] @ base_t)
    return sum(powers[j] @ y_d @ powers[n - 1 - j] for j in range(n))


def matrix_power_adjoint(y_d, a, n):
    """`matrix_power` backward; a negative power is a power of inv(a)."""
    if is_zero(y_d):
        return 0.0
    a = np.asarray(a)
    if n == 0:
        return unbroadcast(np.zeros(a.shape), a)
    if n > 0:
        return unbroadcast(power_adjoint(np.asarray(y_d), a, n), a)
    inverse = np.linalg.inv(a)
    inverse_t = transposed(inverse)
    return unbroadcast(-inverse_t @ power_adjoint(np.asarray(y_d), inverse, -n) @ inverse_t, a)


def lstsq_adjoint(y_d, y, a, b):
    """`lstsq` backward: the solution is pinv(a) b with the rank lstsq found; the residuals'
    adjoint at the optimum (the solution's own change does not move them to first order); the
    singular values' as `svd`'s. The rank has no gradient."""
    x, residuals, rank, _ = y
    x_d, residuals_d, s_d = item(y_d, 0), item(y_d, 1), item(y_d, 3)
    a, b = np.asarray(a), np.asarray(b)
    a_g, b_g = 0.0, 0.0
    if not (is_zero(x_d) and is_zero(s_d)):
        u, s, vt = np.linalg.svd(a, full_matrices=False)
    if not is_zero(x_d):
        kept_rank_check(a, None, "np.linalg.lstsq of a matrix whose rcond drops singular values", rank)
        p = transposed(vt[:rank]) @ (transposed(u[:, :rank]) / s[:rank, None])
        b_g = p.T @ x_d
        p_d = np.outer(x_d, b) if b.ndim == 1 else x_d @ b.T
        a_g = pinv_backward(a, p, p_d)
    if not is_zero(residuals_d) and np.size(residuals):
        scaled = 2.0 * (b - a @ x) * residuals_d
        b_g = b_g + scaled
        a_g = a_g - (np.outer(scaled, x) if b.ndim == 1 else scaled @ x.T)
    if not is_zero(s_d):
        a_g = a_g + (u * s_d) @ vt
    return a_g, b_g


def cholesky_adjoint(factor_d, factor, upper):
    """`cholesky` backward (Murray, 2016): with P the lower triangle of f^T f_d, its diagonal
    halved, the symmetric matrix's adjoint is f^-T P f^-1 (f the lower factor); numpy reads one
    triangle."""
    if is_zero(factor_d):
        return 0.0
    if upper:
        factor, factor_d = transposed(factor), transposed(np.asarray(factor_d))
    inner = transposed(factor) @ factor_d
    inner = np.tril(inner) - 0.5 * inner * np.eye(inner.shape[-1])
    left = np.linalg.solve(transposed(factor), inner)  # f^-T P
    return triangle_read(transposed(np.linalg.solve(transposed(factor), transposed(left))), not upper)
