"""Derivative rules for scipy.linalg: `solve` (assume_a, lower, transposed), `solve_triangular`
(trans, lower, unit_diagonal), `inv`, `det`, `cholesky`, `cho_factor` + `cho_solve`,
`lu_factor` + `lu_solve`, `sqrtm`, `expm`; on stacks of matrices where scipy takes them.

As in numpy's rules (cpsgrad/rules/numpy/linalg.py), what scipy reads of a matrix is what gets
an adjoint: one triangle for assume_a='sym'/'pos' and for `cholesky`, the diagonal for
'diagonal', the triangle (without its diagonal for unit_diagonal=True) for `solve_triangular`.
`cho_factor`'s other triangle holds a's own elements (scipy calls them arbitrary; they are
copies) and passes their adjoints back unchanged. The factorizations' adjoints are tuples
(factor, flag), so `cho_solve(cho_factor(a), b)` and `lu_solve(lu_factor(a), b)` differentiate
through both calls. `solve(overwrite_a=True)` and `det(overwrite_a=True)` are refused when
differentiated: their backwards read a again, which scipy may have overwritten.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np
import scipy.linalg

from cpsgrad.rules.numpy.linalg import (
    cholesky_adjoint,
    det_adjoint,
    given,
    refuse,
    solved_adjoints,
    symmetric_from,
    transposed,
    triangle_read,
)
from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import SequenceAdjoint, is_zero, item
from cpsgrad.runtime.broadcasting import unbroadcast

# ---- solvers and inverses ---------------------------------------------------------------------


@rule(scipy.linalg.solve)
def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None, transposed=False):
    x = scipy.linalg.solve(a, b, lower, overwrite_a, overwrite_b, check_finite, assume_a, transposed)
    x_d = yield x
    a_g, b_g = solve_adjoint(x_d, a, b, x, lower, assume_a, transposed, overwrite_a)
    a_d += unbroadcast(a_g, a)
    b_d += unbroadcast(b_g, b)


@rule(scipy.linalg.solve_triangular)
def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True):
    x = scipy.linalg.solve_triangular(a, b, trans, lower, unit_diagonal, overwrite_b, check_finite)
    x_d = yield x
    a_g, b_g = solve_triangular_adjoint(x_d, a, b, x, trans, lower, unit_diagonal)
    a_d += unbroadcast(a_g, a)
    b_d += unbroadcast(b_g, b)


@rule(scipy.linalg.inv)
def inv(a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
    y = scipy.linalg.inv(a, overwrite_a, check_finite, assume_a=assume_a, lower=lower)
    y_d = yield y
    a_d += inv_adjoint(y_d, y, a, assume_a, lower)


@rule(scipy.linalg.det)
def det(a, overwrite_a=False, check_finite=True):
    y = scipy.linalg.det(a, overwrite_a, check_finite)
    y_d = yield y
    a_d += scipy_det_adjoint(y_d, a, overwrite_a)


# ---- factorizations ---------------------------------------------------------------------------


@rule(scipy.linalg.cholesky)
def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    y = scipy.linalg.cholesky(a, lower, overwrite_a, check_finite)
    y_d = yield y
    a_d += unbroadcast(cholesky_adjoint(y_d, y, not lower), a)


@rule(scipy.linalg.cho_factor)
def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    y = scipy.linalg.cho_factor(a, lower, overwrite_a, check_finite)
    y_d = yield y
    a_d += unbroadcast(cho_factor_adjoint(y_d, y), a)


@rule(scipy.linalg.cho_solve)
def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    x = scipy.linalg.cho_solve(c_and_lower, b, overwrite_b, check_finite)
    x_d = yield x
    c_g, b_g = cho_solve_adjoint(x_d, c_and_lower, b, x)
    c_and_lower_d += c_g
    b_d += unbroadcast(b_g, b)


@rule(scipy.linalg.lu_factor)
def lu_factor(a, overwrite_a=False, check_finite=True):
    y = scipy.linalg.lu_factor(a, overwrite_a, check_finite)
    y_d = yield y
    a_d += unbroadcast(lu_factor_adjoint(y_d, y), a)


@rule(scipy.linalg.lu_solve)
def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    x = scipy.linalg.lu_solve(lu_and_piv, b, trans, overwrite_b, check_finite)
    x_d = yield x
    lu_g, b_g = lu_solve_adjoint(x_d, lu_and_piv, b, x, trans)
    lu_and_piv_d += lu_g
    b_d += unbroadcast(b_g, b)


# ---- matrix functions -------------------------------------------------------------------------


@rule(scipy.linalg.sqrtm)
def sqrtm(A, disp=True, blocksize=64):
    y = scipy.linalg.sqrtm(A, disp, blocksize)
    y_d = yield y
    A_d += sqrtm_adjoint(y_d, y, A)


@rule(scipy.linalg.expm)
def expm(A):
    y = scipy.linalg.expm(A)
    y_d = yield y
    A_d += expm_adjoint(y_d, A)


# ---- helpers ----------------------------------------------------------------------------------

_GENERAL = (None, "gen", "general")
_SYMMETRIC = ("sym", "symmetric", "her", "hermitian", "pos", "positive definite")
_TRIANGULAR = {"lower triangular": True, "upper triangular": False}


def _read(a, assume_a, lower, construct):
    """(the matrix scipy solves with, the map from its adjoint to a's) for `assume_a`."""
    a = np.asarray(a)
    if assume_a in _GENERAL:
        return a, lambda g: g
    if assume_a in _SYMMETRIC:
        return symmetric_from(a, lower), lambda g: triangle_read(g, lower)
    eye = np.eye(a.shape[-1], dtype=bool)
    if assume_a == "diagonal":
        return np.where(eye, a, 0.0), lambda g: np.where(eye, g, 0.0)
    if assume_a in _TRIANGULAR:
        part = np.tril if _TRIANGULAR[assume_a] else np.triu
        return part(a), part
    refuse(f"{construct}(assume_a={assume_a!r})",
           "cpsgrad differentiates assume_a None, 'gen', 'sym', 'her', 'pos', 'diagonal', 'lower "
           "triangular' and 'upper triangular'; pass the full matrix with assume_a='gen'")


def _not_overwritten(overwrite_a, construct):
    """The backward reads a again: refuse when scipy may have overwritten it (a silent wrong
    gradient otherwise, for a Fortran-ordered a)."""
    if overwrite_a:
        refuse(f"{construct}(overwrite_a=True)",
               "its backward reads a again, which scipy may have overwritten; pass overwrite_a=False")


def scipy_det_adjoint(y_d, a, overwrite_a):
    if is_zero(y_d):
        return 0.0
    _not_overwritten(overwrite_a, "scipy.linalg.det")
    return det_adjoint(y_d, a)


def solve_adjoint(x_d, a, b, x, lower, assume_a, transposed_, overwrite_a=False):
    if is_zero(x_d):
        return 0.0, 0.0
    _not_overwritten(overwrite_a, "scipy.linalg.solve")
    matrix, back = _read(a, assume_a, lower, "scipy.linalg.solve")
    if transposed_:
        matrix = transposed(matrix)
    matrix_t = transposed(matrix)
    m_g, b_g = solved_adjoints(np.asarray(x_d), x, lambda g: np.linalg.solve(matrix_t, g), np.ndim(b) == 1)
    return back(transposed(m_g) if transposed_ else m_g), b_g


def solve_triangular_adjoint(x_d, a, b, x, trans, lower, unit_diagonal):
    """x = op(t)^-1 b, t the triangle of a (ones on its diagonal for unit_diagonal), op by trans."""
    if is_zero(x_d):
        return 0.0, 0.0
    a = np.asarray(a)
    part = np.tril if lower else np.triu
    eye = np.eye(a.shape[-1], dtype=bool)
    triangle = np.where(eye, 1.0, part(a)) if unit_diagonal else part(a)
    flipped = trans in (1, 2, "T", "C")
    matrix = transposed(triangle) if flipped else triangle
    matrix_t = transposed(matrix)
    m_g, b_g = solved_adjoints(np.asarray(x_d), x, lambda g: np.linalg.solve(matrix_t, g), np.ndim(b) == 1)
    a_g = part(transposed(m_g) if flipped else m_g)
    return (np.where(eye, 0.0, a_g) if unit_diagonal else a_g), b_g


def inv_adjoint(y_d, y, a, assume_a, lower):
    if is_zero(y_d):
        return 0.0
    _, back = _read(a, assume_a, lower, "scipy.linalg.inv")
    y_t = transposed(y)
    return unbroadcast(back(-y_t @ y_d @ y_t), a)


def cho_factor_adjoint(y_d, y):
    c_d = item(y_d, 0)
    if is_zero(c_d):
        return 0.0
    c, lower = y
    part, other = (np.tril, np.triu) if lower else (np.triu, np.tril)
    factor_g = cholesky_adjoint(part(c_d), part(c), not lower)
    return factor_g + other(c_d, 1 if lower else -1)


def cho_solve_adjoint(x_d, c_and_lower, b, x):
    """x = s^-1 b with s = l l^T (or u^T u) from c's triangle: s's adjoint -b_g x^T reaches
    the factor as (g + g^T) l (or u (g + g^T))."""
    if is_zero(x_d):
        return 0.0, 0.0
    c, lower = c_and_lower
    s_g, b_g = solved_adjoints(np.asarray(x_d), x, lambda g: scipy.linalg.cho_solve((c, lower), g), np.ndim(b) == 1)
    both = s_g + transposed(s_g)
    c_g = np.tril(both @ np.tril(c)) if lower else np.triu(np.triu(c) @ both)
    return SequenceAdjoint((unbroadcast(c_g, c), 0.0)), b_g


def _row_order(piv):
    """The rows of a that LAPACK's swaps `piv` (0-based) bring to the top, in order: p a = l u
    with (p a)[i] = a[order[i]]."""
    piv = np.asarray(piv)
    order = np.broadcast_to(np.arange(piv.shape[-1]), piv.shape).copy()
    for index in np.ndindex(piv.shape[:-1]):
        row = order[index]
        for i, j in enumerate(piv[index]):
            row[i], row[j] = row[j], row[i]
    return order


def _factors(lu):
    eye = np.eye(lu.shape[-1])
    return np.tril(lu, -1) + eye, np.triu(lu)


def _unpermuted(g, order):
    """a's adjoint from that of its rows taken in `order`."""
    out = np.empty_like(g)
    np.put_along_axis(out, order[..., :, None], g, axis=-2)
    return out


def lu_factor_adjoint(y_d, y):
    """p a = l u: a's rows in order get l^-T (tril(l^T l_d, -1) + triu(u_d u^T)) u^-T."""
    lu_d = item(y_d, 0)
    if is_zero(lu_d):
        return 0.0
    lu, piv = y
    if lu.shape[-1] != lu.shape[-2]:
        refuse("scipy.linalg.lu_factor of a matrix that is not square",
               "cpsgrad differentiates the LU factors of square matrices only")
    lower_factor, u = _factors(lu)
    inner = np.tril(transposed(lower_factor) @ np.tril(lu_d, -1), -1) + np.triu(np.triu(lu_d) @ transposed(u))
    left = np.linalg.solve(transposed(lower_factor), inner)
    return _unpermuted(transposed(np.linalg.solve(u, transposed(left))), _row_order(piv))


def lu_solve_adjoint(x_d, lu_and_piv, b, x, trans):
    if is_zero(x_d):
        return 0.0, 0.0
    lu, piv = lu_and_piv
    flipped = trans in (1, 2, "T", "C")
    m_g, b_g = solved_adjoints(
        np.asarray(x_d), x, lambda g: scipy.linalg.lu_solve((lu, piv), g, trans=0 if flipped else 1), np.ndim(b) == 1
    )
    a_g = transposed(m_g) if flipped else m_g
    lower_factor, u = _factors(lu)
    ordered = np.take_along_axis(a_g, _row_order(piv)[..., :, None], axis=-2)  # (p a)'s adjoint
    lu_g = np.tril(ordered @ transposed(u), -1) + np.triu(transposed(lower_factor) @ ordered)
    return SequenceAdjoint((unbroadcast(lu_g, lu), 0.0)), b_g


def sqrtm_adjoint(y_d, y, A):
    """x x = A: A's adjoint z solves x^T z + z x^T = y_d (the Sylvester operator's adjoint). The
    principal root is holomorphic off the matrices with an eigenvalue on the negative real axis,
    so JAX's convention takes the same transposes for a complex A. A real A may have simple
    negative eigenvalues (and a complex root): a real perturbation keeps them real, on the cut's
    one side. Refused on the cut, where the root jumps: a complex A with an eigenvalue there, a
    real A with a repeated one (a real perturbation can split it into a complex pair)."""
    if is_zero(y_d):
        return 0.0
    _off_the_branch_cut(np.asarray(A))
    y_d = given(y_d, y)
    g = np.empty(np.broadcast_shapes(np.shape(y), np.shape(y_d)), np.result_type(y, y_d, 1.0))
    for index in np.ndindex(g.shape[:-2]):
        root_t = y[index].T
        g[index] = scipy.linalg.solve_sylvester(root_t, root_t, y_d[index])
    return unbroadcast(g, A)


def _off_the_branch_cut(A):
    for index in np.ndindex(A.shape[:-2]):
        w = np.linalg.eigvals(A[index])
        tolerance = np.finfo(w.dtype).eps ** 0.5 * max(1.0, float(np.max(np.abs(w), initial=0.0)))
        negative = w[(np.abs(w.imag) <= tolerance) & (w.real < -tolerance)]
        if np.iscomplexobj(A):
            repeated = negative.size > 0
        else:
            repeated = bool(np.any(np.abs(negative[:, None] - negative[None, :]) + np.eye(negative.size) <= tolerance))
        if repeated:
            what = "an eigenvalue" if np.iscomplexobj(A) else "a repeated eigenvalue"
            refuse(f"scipy.linalg.sqrtm of a matrix with {what} on the negative real axis",
                   "the principal square root jumps across that axis (its branch cut), so it has no derivative "
                   "there; shift the matrix off it, or differentiate a function of a positive definite matrix")


def expm_adjoint(y_d, A):
    """The Fréchet derivative at A^T applied to y_d: the upper right block of
    expm([[A^T, y_d], [0, A^T]])."""
    if is_zero(y_d):
        return 0.0
    a_t = transposed(np.asarray(A))
    n = a_t.shape[-1]
    block = np.zeros(np.broadcast_shapes(a_t.shape, np.shape(y_d))[:-2] + (2 * n, 2 * n), np.result_type(a_t, y_d))
    block[..., :n, :n] = a_t
    block[..., n:, n:] = a_t
    block[..., :n, n:] = y_d
    return unbroadcast(scipy.linalg.expm(block)[..., :n, n:], A)
