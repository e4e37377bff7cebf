"""Derivative rules for scipy.linalg's decompositions: `eigh` (values and vectors,
`eigvals_only=`, `lower=`, any driver) and `eigvalsh`, `svd` (`full_matrices=`, `compute_uv=`)
and `svdvals`, `qr` (modes 'full', 'economic', 'r', `pivoting=`), on stacks of matrices.

The backwards are numpy.linalg's (cpsgrad/rules/numpy/linalg_decompositions.py), with scipy's
names in their refusals: eigenvectors or singular vectors at a repeated value, the columns that
`full_matrices=True` or mode='full' add beyond min(m, n) when their adjoint is not zero. Refused
with an UnsupportedError where the backward is reached: `eigh(a, b)` (the generalized problem),
`subset_by_index=` / `subset_by_value=`, qr mode='raw', complex matrices, and `overwrite_a=True`
where the backward reads a again (svd with compute_uv=False, qr mode='r'). With `pivoting=True`
the permutation has no derivative (it is constant where no two columns tie): a[:, p] = q r.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np
import scipy.linalg

from cpsgrad.rules.numpy.linalg import given, refuse, triangle_read
from cpsgrad.rules.numpy.linalg_decompositions import _eigh_backward, qr_backward, svd_adjoint
from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import is_zero, item
from cpsgrad.runtime.broadcasting import refuse_complex, unbroadcast

# ---- decompositions ---------------------------------------------------------------------------


@rule(scipy.linalg.eigh)
def eigh(
    a,
    b=None,
    *,
    lower=True,
    eigvals_only=False,
    overwrite_a=False,
    overwrite_b=False,
    type=1,
    check_finite=True,
    subset_by_index=None,
    subset_by_value=None,
    driver=None,
):
    y = scipy.linalg.eigh(
        a,
        b,
        lower=lower,
        eigvals_only=eigvals_only,
        overwrite_a=overwrite_a,
        overwrite_b=overwrite_b,
        type=type,
        check_finite=check_finite,
        subset_by_index=subset_by_index,
        subset_by_value=subset_by_value,
        driver=driver,
    )
    y_d = yield y
    a_g, b_g = eigh_adjoint(
        y_d, y, a, b, lower, eigvals_only, overwrite_a, (subset_by_index, subset_by_value), "scipy.linalg.eigh"
    )
    a_d += a_g
    b_d += b_g


@rule(scipy.linalg.eigvalsh)
def eigvalsh(
    a,
    b=None,
    *,
    lower=True,
    overwrite_a=False,
    overwrite_b=False,
    type=1,
    check_finite=True,
    subset_by_index=None,
    subset_by_value=None,
    driver=None,
):
    y = scipy.linalg.eigvalsh(
        a,
        b,
        lower=lower,
        overwrite_a=overwrite_a,
        overwrite_b=overwrite_b,
        type=type,
        check_finite=check_finite,
        subset_by_index=subset_by_index,
        subset_by_value=subset_by_value,
        driver=driver,
    )
    y_d = yield y
    a_g, b_g = eigh_adjoint(
        y_d, y, a, b, lower, True, overwrite_a, (subset_by_index, subset_by_value), "scipy.linalg.eigvalsh"
    )
    a_d += a_g
    b_d += b_g


@rule(scipy.linalg.svd)
def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True, lapack_driver="gesdd"):
    y = scipy.linalg.svd(a, full_matrices, compute_uv, overwrite_a, check_finite, lapack_driver)
    y_d = yield y
    a_d += scipy_svd_adjoint(y_d, y, a, compute_uv, overwrite_a, "scipy.linalg.svd")


@rule(scipy.linalg.svdvals)
def svdvals(a, overwrite_a=False, check_finite=True):
    y = scipy.linalg.svdvals(a, overwrite_a, check_finite)
    y_d = yield y
    a_d += scipy_svd_adjoint(y_d, y, a, False, overwrite_a, "scipy.linalg.svdvals")


@rule(scipy.linalg.qr)
def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    y = scipy.linalg.qr(a, overwrite_a, lwork, mode, pivoting, check_finite)
    y_d = yield y
    a_d += scipy_qr_adjoint(y_d, y, a, overwrite_a, mode, pivoting)


# ---- helpers ----------------------------------------------------------------------------------


def _real(a, construct):
    refuse_complex(a, construct)
    if np.iscomplexobj(a):  # array_like of complex numbers (a list)
        refuse_complex(np.asarray(a), construct)


def eigh_adjoint(y_d, y, a, b, lower, eigvals_only, overwrite_a, subsets, name):
    """(a's adjoint, b's) of scipy's eigh: numpy's eigh backward on the triangle `lower` reads."""
    if is_zero(y_d):
        return 0.0, 0.0
    if b is not None:
        refuse(
            f"{name}(a, b) (a generalized eigenproblem)",
            "cpsgrad differentiates the standard problem only (b=None); for a positive definite b, "
            "write it with cholesky and solve_triangular",
        )
    if any(subset is not None for subset in subsets):
        refuse(
            f"{name}(subset_by_index=..., subset_by_value=...)",
            "cpsgrad differentiates the whole spectrum only; compute it all and index the result",
        )
    _real(a, f"{name} of a complex matrix")
    if eigvals_only:
        if overwrite_a:
            refuse(
                f"{name}(overwrite_a=True) of the eigenvalues alone",
                "its backward reads a again, which scipy may have overwritten; pass overwrite_a=False",
            )
        w = np.asarray(y)
        w_d, v_d = given(y_d, w), 0.0
        v = scipy.linalg.eigh(a, lower=lower)[1]
    else:
        w, v = y
        w_d, v_d = given(item(y_d, 0), w), item(y_d, 1)
    g = _eigh_backward(w_d, v_d, w, v, f"{name}'s eigenvectors at a repeated eigenvalue")
    return unbroadcast(triangle_read(g, bool(lower)), a), 0.0


def scipy_svd_adjoint(y_d, y, a, compute_uv, overwrite_a, name):
    if is_zero(y_d):
        return 0.0
    _real(a, f"{name} of a complex matrix")
    if overwrite_a and not compute_uv:
        refuse(
            f"{name}(overwrite_a=True, compute_uv=False)",
            "its backward reads a again, which scipy may have overwritten; pass overwrite_a=False",
        )
    return svd_adjoint(y_d, y, a, compute_uv, False, name)


_MODES = ("full", "economic", "r")


def scipy_qr_adjoint(y_d, y, a, overwrite_a, mode, pivoting):
    """scipy's qr backward through numpy's: mode 'r' recomputes the economic q (scipy's r of a
    tall matrix has m - n rows of zeros below the triangle, constant: no adjoint)."""
    if is_zero(y_d):
        return 0.0
    if mode not in _MODES:
        refuse(f"scipy.linalg.qr(mode={mode!r})", "only modes 'full', 'economic' and 'r' are differentiated")
    _real(a, "scipy.linalg.qr of a complex matrix")
    a = np.asarray(a)
    parts = list(y) if isinstance(y, (tuple, list)) else [y]  # scipy gives a list for a stack
    adjoints = [item(y_d, i) for i in range(len(parts))]
    order = parts.pop() if pivoting else None
    if pivoting:
        adjoints.pop()
    matrix = np.take_along_axis(a, order[..., None, :], axis=-1) if pivoting else a
    k = min(a.shape[-2], a.shape[-1])
    if mode == "r":
        if overwrite_a:
            refuse(
                "scipy.linalg.qr(mode='r', overwrite_a=True)",
                "its backward reads a again, which scipy may have overwritten; pass overwrite_a=False",
            )
        q, r = scipy.linalg.qr(matrix, mode="economic")
        q_d, r_d = np.zeros(q.shape), given(adjoints[0], parts[0])[..., :k, :]
    else:
        (q, r), (q_d, r_d) = parts, adjoints
        q_d, r_d = given(q_d, q), given(r_d, r)
    g = qr_backward(q, r, q_d, r_d, matrix, "scipy.linalg.qr", "mode='full'", "mode='economic'")
    if not pivoting:
        return g
    out = np.empty_like(g)
    np.put_along_axis(out, order[..., None, :], g, axis=-1)
    return out
