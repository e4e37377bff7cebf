"""The linear algebra rules in programs: a Gaussian log-density (solve, slogdet), a least-squares
fit, a loop of solves, factorizations passed between calls; and the refusals where a derivative
is not defined, located at the user's call. The rules one at a time are checked by the spec
tables (tests/specs/linalg.py, run by tests/test_rules_arrays.py)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import cpsgrad
from cpsgrad.errors import UnsupportedError

SIGMA = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]])
POINT = np.array([0.5, -1.0, 2.0])
MEAN = np.array([0.1, 0.2, -0.3])


def numeric_gradient(function, args, position, step=1e-6):
    x = np.asarray(args[position], dtype=float)
    gradient = np.zeros(x.shape)
    for index in np.ndindex(x.shape):
        moved = []
        for sign in (1.0, -1.0):
            shifted = x.copy()
            shifted[index] += sign * step
            arguments = list(args)
            arguments[position] = shifted
            moved.append(function(*arguments))
        gradient[index] = (moved[0] - moved[1]) / (2 * step)
    return gradient


def gaussian_log_density(mean, sigma, x):
    residual = x - mean
    sign, logdet = np.linalg.slogdet(sigma)
    quadratic = residual @ np.linalg.solve(sigma, residual)
    return -0.5 * (quadratic + logdet + x.shape[0] * np.log(2 * np.pi)) + 0.0 * sign


def test_gaussian_log_density():
    d_mean, d_sigma = cpsgrad.grad(gaussian_log_density, argnums=(0, 1))(MEAN, SIGMA, POINT)
    inverse = np.linalg.inv(SIGMA)
    residual = POINT - MEAN
    np.testing.assert_allclose(d_mean, inverse @ residual, rtol=1e-12)
    expected = 0.5 * (np.outer(inverse.T @ residual, inverse @ residual).T - inverse.T)
    np.testing.assert_allclose(d_sigma, expected, rtol=1e-10)


def gaussian_by_cholesky(mean, sigma, x):
    factor = scipy.linalg.cho_factor(sigma, lower=True)
    residual = x - mean
    half_logdet = np.linalg.slogdet(np.linalg.cholesky(sigma))[1]
    return -0.5 * (residual @ scipy.linalg.cho_solve(factor, residual)) - half_logdet


def test_gaussian_by_cholesky_matches_on_symmetric_perturbations():
    d_sigma = cpsgrad.grad(gaussian_by_cholesky, argnums=1)(MEAN, SIGMA, POINT)
    # both factorizations read the lower triangle: the adjoint lies there
    assert np.all(np.triu(d_sigma, 1) == 0.0)
    direct = cpsgrad.grad(gaussian_log_density, argnums=1)(MEAN, SIGMA, POINT)
    symmetric = direct + direct.T - np.diag(np.diag(direct))
    np.testing.assert_allclose(d_sigma, np.tril(symmetric), rtol=1e-10)


def least_squares_fit(features, targets, test_features, test_targets):
    weights = np.linalg.lstsq(features, targets, rcond=None)[0]
    error = test_features @ weights - test_targets
    return np.sum(error * error)


def test_least_squares_fit():
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(6, 3)), rng.normal(size=6), rng.normal(size=(4, 3)), rng.normal(size=4))
    gradients = cpsgrad.grad(least_squares_fit, argnums=(0, 1, 2))(*args)
    for position, gradient in enumerate(gradients):
        np.testing.assert_allclose(gradient, numeric_gradient(least_squares_fit, args, position), rtol=1e-6, atol=1e-8)


def repeated_solves(a, x, n):
    for _ in range(n):
        x = np.linalg.solve(a, x)
    return np.sum(x * np.arange(1.0, 4.0))


def by_power(a, x, n):
    return np.sum(np.linalg.matrix_power(a, -n) @ x * np.arange(1.0, 4.0))


def test_a_loop_of_solves_is_a_negative_power():
    a = SIGMA + np.array([[0.0, 0.5, 0.0], [0.0, 0.0, 0.0], [0.2, 0.0, 0.0]])
    looped = cpsgrad.grad(repeated_solves, argnums=(0, 1))(a, POINT, 4)
    powered = cpsgrad.grad(by_power, argnums=(0, 1))(a, POINT, 4)
    for gradient, reference in zip(looped, powered, strict=True):
        np.testing.assert_allclose(gradient, reference, rtol=1e-10)
    np.testing.assert_allclose(looped[0], numeric_gradient(repeated_solves, (a, POINT, 4), 0), rtol=1e-6)


def lu_twice(a, b):
    factors = scipy.linalg.lu_factor(a)
    return np.sum(scipy.linalg.lu_solve(factors, b) * scipy.linalg.lu_solve(factors, a @ b, trans=1))


def test_factors_used_twice_through_a_user_function():
    def outer(a, b):
        return lu_twice(a, b) + lu_twice(a.T, b)

    args = (SIGMA + np.triu(np.ones((3, 3)), 1), POINT)
    gradients = cpsgrad.grad(outer, argnums=(0, 1))(*args)
    for position, gradient in enumerate(gradients):
        np.testing.assert_allclose(gradient, numeric_gradient(outer, args, position), rtol=1e-6, atol=1e-8)


def eigen_sum(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w * np.abs(v[0]))


def test_eigh_unpacked():
    gradient = cpsgrad.grad(eigen_sum)(SIGMA)
    np.testing.assert_allclose(np.triu(gradient, 1), 0.0)
    np.testing.assert_allclose(gradient, numeric_gradient(eigen_sum, (SIGMA,), 0), rtol=1e-6, atol=1e-8)


# ---- refusals: the derivative is not defined (or not real) there ------------------------------


def eigenvectors_at_a_tie(a):
    return np.sum(np.linalg.eigh(a)[1][0])


def singular_vectors_at_a_tie(a):
    return np.sum(np.linalg.svd(a)[0])


def complement_vectors(a):
    return np.sum(np.linalg.svd(a)[0])




def raw_qr(a):
    return np.sum(np.linalg.qr(a, mode="raw")[0])


def banded_solve(a, b):
    return np.sum(scipy.linalg.solve(a, b, assume_a="tridiagonal"))


def complex_sqrtm(a):
    return np.sum(np.abs(scipy.linalg.sqrtm(a)))


def complex_root_of_a_complex_matrix(a):
    return np.sum(np.abs(scipy.linalg.sqrtm(a * (1.0 + 0.0j))))


ROTATION = np.array([[0.0, -1.0], [1.0, 0.0]])
REFUSED = [
    (eigenvectors_at_a_tie, (np.eye(3),), "np.linalg.eigh's eigenvectors at a repeated eigenvalue"),
    (singular_vectors_at_a_tie, (2.0 * np.eye(3),), "np.linalg.svd's singular vectors at a repeated singular value"),
    (complement_vectors, (np.arange(6.0).reshape(3, 2),), "np.linalg.svd's singular vectors beyond min(m, n)"),
    (raw_qr, (SIGMA,), "np.linalg.qr(mode='raw')"),
    (banded_solve, (SIGMA, POINT), "scipy.linalg.solve(assume_a='tridiagonal')"),
    (complex_sqrtm, (-np.eye(2),),
     "scipy.linalg.sqrtm of a matrix with a repeated eigenvalue on the negative real axis"),
    (complex_root_of_a_complex_matrix, (np.diag([-1.0, 2.0]),),
     "scipy.linalg.sqrtm of a matrix with an eigenvalue on the negative real axis"),
]


def complex_eigenvalues(a):
    return np.sum(np.abs(np.linalg.eig(a)[0]) * np.array([1.0, 2.0]))


def test_complex_eigenvalues_and_roots_of_real_matrices():
    skewed = ROTATION + np.array([[0.3, 0.1], [0.0, -0.2]])  # eigenvalues a complex pair
    gradient = cpsgrad.grad(complex_eigenvalues)(skewed)
    assert gradient.dtype == np.float64
    np.testing.assert_allclose(gradient, numeric_gradient(complex_eigenvalues, (skewed,), 0), rtol=1e-6, atol=1e-8)
    negative = np.array([[-1.0, 0.5], [0.2, 2.0]])  # a simple negative eigenvalue: a complex root
    gradient = cpsgrad.grad(complex_sqrtm)(negative)
    np.testing.assert_allclose(gradient, numeric_gradient(complex_sqrtm, (negative,), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(("function", "args", "construct"), REFUSED, ids=[f.__name__ for f, _, _ in REFUSED])
def test_undefined_derivatives_are_refused_at_the_call(function, args, construct):
    with pytest.raises(UnsupportedError) as raised:
        cpsgrad.grad(function)(*args)
    message = str(raised.value)
    assert construct in message
    assert f"{__file__}:{function.__code__.co_firstlineno + 1}:" in message


def test_eigenvalues_alone_at_a_tie_are_differentiated():
    gradient = cpsgrad.grad(lambda a: np.sum(np.linalg.eigvalsh(a)))(np.eye(3))
    np.testing.assert_allclose(gradient, np.eye(3))


def test_det_backward_takes_lu_cofactors_only_far_from_singular_and_they_equal_the_svd_ones():
    """det's backward has two paths (cpsgrad/rules/numpy/linalg.py): det * inv^T from one LU where
    LAPACK's condition estimate says the matrix is far from singular, an SVD elsewhere. Both give
    the cofactor matrix; a wrong choice would be inf/nan (singular) or inaccurate (ill-conditioned)."""
    from cpsgrad.rules.numpy import linalg as rules

    def by_svd(a):
        u, s, vt = np.linalg.svd(a)
        return (u * rules._others_product(s)[None, :]) @ vt * np.linalg.det(u) * np.linalg.det(vt)

    rng = np.random.default_rng(3)
    for n in (1, 2, 3, 8, 20):
        for _ in range(10):
            a = rng.standard_normal((n, n))
            fast = rules._cofactors_by_lu(a)
            assert fast is not None
            np.testing.assert_allclose(fast, by_svd(a), rtol=1e-9, atol=1e-12 * np.abs(by_svd(a)).max())
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    nearly = np.array([[1.0, 2.0], [2.0, 4.0 + 1e-12]])
    assert rules._cofactors_by_lu(singular) is None and rules._cofactors_by_lu(nearly) is None
    assert rules._cofactors_by_lu(rng.standard_normal((2, 3, 3))) is None  # a stack: the SVD path
    assert rules._cofactors_by_lu(rng.standard_normal((3, 3)).astype(np.float32)) is None
    gradient = cpsgrad.grad(_det_loss)(singular)
    np.testing.assert_allclose(gradient, by_svd(singular), atol=1e-12)  # rank 2: cofactors not all zero
    assert np.abs(gradient).max() > 1


def _det_loss(a):
    return np.linalg.det(a)
