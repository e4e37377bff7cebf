"""The rules of issue 16 in programs, and what they refuse: scipy.linalg's eigh, svd, qr, lstsq,
pinv, solve_sylvester, solve_banded; scipy.special.betainc; reductions' where= and initial=;
np.maximum/minimum.accumulate and the reduceat methods; non-differentiable calls. One rule at a
time is checked by the spec tables (tests/specs/numpy_more.py, scipy_more.py, run by
tests/test_rules_arrays.py)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.special

import cpsgrad
from cpsgrad.errors import NoRuleError, UnsupportedError

SL = scipy.linalg
SIGMA = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]])
POINT = np.array([0.5, -1.0, 2.0])


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


def check(function, *args, rtol=1e-6, atol=1e-8):
    gradients = cpsgrad.grad(function, argnums=tuple(range(len(args))))(*args)
    for position, gradient in enumerate(gradients):
        np.testing.assert_allclose(gradient, numeric_gradient(function, args, position), rtol=rtol, atol=atol)
    return gradients


# ---- scipy in programs ------------------------------------------------------------------------


def _sylvester_helper(a, q):
    return SL.solve_sylvester(a, a.T, q)


def sylvester_in_a_loop(a, q):
    total = 0.0
    for k in range(3):
        x = _sylvester_helper(a + (k + 3.0) * np.eye(3), q)  # a used twice: a and a.T
        total = total + np.sum(x * x)
    return total


def test_solve_sylvester_in_a_loop_through_a_helper():
    check(sylvester_in_a_loop, SIGMA - np.eye(3), np.outer(POINT, POINT) + np.eye(3))


def banded_laplacian(ab, b):
    x = SL.solve_banded((1, 1), ab, b)
    return np.sum(x**2) + np.sum(SL.solve_banded((1, 1), ab, x)[1:])


def test_solve_banded_twice_in_both_arguments():
    ab = np.array([[0.0, -1.0, -0.5, -1.0], [4.0, 3.0, 5.0, 4.5], [-1.0, 0.5, -1.0, 0.0]])
    ab_g, _ = check(banded_laplacian, ab, np.array([1.0, -2.0, 0.5, 3.0]))
    assert ab_g[0, 0] == 0.0 and ab_g[2, -1] == 0.0  # outside the matrix: scipy never reads them


def spectral(a):
    w, v = SL.eigh(a)
    s = SL.svd(a, compute_uv=False)
    q, r = SL.qr(a, mode="economic")
    return np.sum(w**3) + np.sum(v[:, 0] ** 2 * POINT) + np.sum(s) + np.sum(r) + np.sum(SL.pinv(a) ** 2)


def test_decompositions_together():
    gradient = check(spectral, SIGMA + np.diag([1.0, 0.0, -0.5]))[0]
    assert gradient.dtype == np.float64


def test_eigh_reads_one_triangle():
    a = SIGMA + np.triu(np.ones((3, 3)), 1)  # the upper triangle is not what eigh reads
    gradient = cpsgrad.grad(lambda m: np.sum(SL.eigh(m, eigvals_only=True) ** 2))(a)
    np.testing.assert_allclose(np.triu(gradient, 1), 0.0)


def _eigh32(m):
    return np.sum(SL.eigh(m)[1] ** 2 * SIGMA)


def _pinvh32(m):
    return np.sum(SL.pinvh(m))


def _lstsq32(m):
    return np.sum(SL.lstsq(m, POINT)[0])


def _sylvester32(m):
    return np.sum(SL.solve_sylvester(m, m, m))


@pytest.mark.parametrize("function", [_eigh32, _pinvh32, _lstsq32, _sylvester32])
def test_float32_in_float32_out(function):
    a = (SIGMA + 2 * np.eye(3)).astype(np.float32)
    gradient = cpsgrad.grad(function)(a)
    assert gradient.dtype == np.float32 and gradient.shape == (3, 3)


def test_betainc_at_the_ends_is_one_sided():
    # x = 0 with a = 1 and x = 1 with b = 1: 1 / B(a, b); JAX gives nan there
    gradient = cpsgrad.grad(lambda x: np.sum(scipy.special.betainc(np.array([1.0, 2.0]), np.array([3.0, 1.0]), x)))(
        np.array([0.0, 1.0])
    )
    np.testing.assert_allclose(gradient, [1.0 / scipy.special.beta(1.0, 3.0), 1.0 / scipy.special.beta(2.0, 1.0)])


# ---- refusals ---------------------------------------------------------------------------------


def betainc_in_a(a, x):
    return scipy.special.betainc(a, 2.0, x)


def betainc_in_b(b, x):
    return scipy.special.betainc(2.0, b, x)


def test_betainc_refuses_its_parameters():
    with pytest.raises(NoRuleError, match=r"scipy\.special\.betainc in its parameter a.*in x only"):
        cpsgrad.grad(betainc_in_a)(1.5, 0.5)
    with pytest.raises(NoRuleError, match=r"scipy\.special\.betainc in its parameter b"):
        cpsgrad.grad(betainc_in_b)(1.5, 0.5)
    assert cpsgrad.grad(betainc_in_a, argnums=1)(1.5, 0.5) == pytest.approx(
        numeric_gradient(betainc_in_a, (1.5, 0.5), 1)
    )


def generalized_eigh(a):
    return np.sum(SL.eigh(a, np.eye(3))[0])


def subset_eigh(a):
    return np.sum(SL.eigh(a, subset_by_index=[0, 1])[0])


def eigh_tie(a):
    return np.sum(SL.eigh(a)[1][0])


def raw_qr(a):
    return np.sum(SL.qr(a, mode="raw")[0][0])


def complex_svd(a):
    return np.sum(SL.svd(a * (1 + 1j), compute_uv=False))


def full_svd_complement(a):
    return np.sum(SL.svd(a)[0])


def stacked_lstsq(a):
    return np.sum(SL.lstsq(a, a)[0])


def truncating_pinv(a):
    return np.sum(SL.pinv(a, rtol=0.1))


def truncating_lstsq(a):
    return np.sum(SL.lstsq(a, POINT, cond=0.1)[0])


def gelsy_rank_deficient(a):
    return np.sum(SL.lstsq(a, POINT, lapack_driver="gelsy")[0])


def overwritten_svd(a):
    return np.sum(SL.svd(a + 0.0, compute_uv=False, overwrite_a=True))


def overwritten_band(ab):
    return np.sum(SL.solve_banded((1, 1), ab + 0.0, POINT, overwrite_ab=True))


def complex_sylvester(a):
    return np.sum(np.abs(SL.solve_sylvester(a, a, a * 1j)))


NEARLY_SINGULAR = np.diag([3.0, 2.0, 0.05])
REFUSED = [
    (generalized_eigh, (SIGMA,), "scipy.linalg.eigh(a, b) (a generalized eigenproblem)"),
    (subset_eigh, (SIGMA,), "scipy.linalg.eigh(subset_by_index"),
    (eigh_tie, (np.eye(3),), "scipy.linalg.eigh's eigenvectors at a repeated eigenvalue"),
    (raw_qr, (SIGMA,), "scipy.linalg.qr(mode='raw')"),
    (complex_svd, (SIGMA,), "complex"),
    (
        full_svd_complement,
        (np.arange(6.0).reshape(3, 2) + np.eye(3, 2),),
        "scipy.linalg.svd's singular vectors beyond min(m, n)",
    ),
    (stacked_lstsq, (np.stack([SIGMA, SIGMA]),), "scipy.linalg.lstsq of a stack of matrices"),
    (truncating_pinv, (NEARLY_SINGULAR,), "scipy.linalg.pinv of a matrix whose cutoff drops singular values"),
    (truncating_lstsq, (NEARLY_SINGULAR,), "scipy.linalg.lstsq of a matrix whose cond drops singular values"),
    (gelsy_rank_deficient, (np.ones((3, 3)),), "scipy.linalg.lstsq(lapack_driver='gelsy') of a rank-deficient matrix"),
    (overwritten_svd, (SIGMA,), "scipy.linalg.svd(overwrite_a=True, compute_uv=False)"),
    (
        overwritten_band,
        (np.array([[0.0, 1.0, 1.0], [4.0, 4.0, 4.0], [1.0, 1.0, 0.0]]),),
        "scipy.linalg.solve_banded(overwrite_ab=True)",
    ),
    (complex_sylvester, (SIGMA,), "scipy.linalg.solve_sylvester with a complex input or result"),
]


@pytest.mark.parametrize(("function", "args", "construct"), REFUSED, ids=[f.__name__ for f, _, _ in REFUSED])
def test_refused_at_the_call(function, args, construct):
    with pytest.raises(UnsupportedError) as raised:
        cpsgrad.grad(function)(*args)
    message = str(raised.value)
    assert construct in message
    assert f"{__file__}:{function.__code__.co_firstlineno + 1}:" in message


# ---- where= and initial= in programs ----------------------------------------------------------


def _positive_energy(x, floor):
    return np.sum(x**2, where=x > 0.0) + np.max(x, initial=floor)


def masked_loop(x, floor):
    total = 0.0
    for k in range(3):
        total = total + _positive_energy(x - 0.5 * k, floor) * (k + 1.0)
    return total + x.mean(where=x < 1.0)


def test_where_and_initial_in_a_loop_through_a_helper():
    x = np.array([0.3, -1.2, 1.7, 0.9, -0.4])
    check(masked_loop, x, 0.1)


def test_an_initial_that_wins_takes_the_whole_adjoint():
    def f(x, c):
        return np.max(x, initial=c) + 2.0 * np.min(x, initial=-c)

    x_g, c_g = cpsgrad.grad(f, argnums=(0, 1))(np.array([0.5, -0.25, 1.0]), 3.0)
    np.testing.assert_array_equal(x_g, 0.0)
    assert c_g == -1.0 and type(c_g) is float


SOME = np.array([True, False, True])


def _masked32(x):
    return np.sum(x, where=SOME) + np.std(x, where=SOME)


def test_a_masked_reduction_keeps_float32():
    gradient = cpsgrad.grad(_masked32)(np.array([1.0, 2.0, 4.0], np.float32))
    assert gradient.dtype == np.float32
    np.testing.assert_allclose(gradient, [0.5, 0.0, 1.5], rtol=1e-6)


# ---- running extrema and reduceat -------------------------------------------------------------


def test_a_three_way_tie_in_maximum_accumulate_is_shared_equally():
    # JAX's scan splits y[2]'s adjoint 1/4, 1/4, 1/2 here (a tree of pairwise maxima)
    weights = np.array([0.0, 0.0, 1.0, 0.0])
    gradient = cpsgrad.grad(lambda x: np.sum(np.maximum.accumulate(x) * weights))(np.array([1.0, 1.0, 1.0, 0.5]))
    np.testing.assert_allclose(gradient, [1 / 3, 1 / 3, 1 / 3, 0.0])


def test_a_nan_in_the_prefix_gives_nan():
    gradient = cpsgrad.grad(lambda x: np.sum(np.minimum.accumulate(x)))(np.array([1.0, np.nan, 0.5]))
    assert np.all(np.isnan(gradient))


def _segment_peaks(x, indices):
    return np.sum(np.maximum.reduceat(x, indices) ** 2) + np.sum(np.add.reduceat(x * x, indices))


def running(x):
    total = 0.0
    for k in range(2):
        total = total + np.sum(np.maximum.accumulate(x * (k + 1.0)) * np.arange(1.0, 6.0))
        total = total + _segment_peaks(x, [0, 2, 1, 4])
    return total + np.sum(np.multiply.reduceat(x, [0, 3]))


def test_scans_and_segments_in_a_loop_through_a_helper():
    check(running, np.array([0.3, -1.2, 1.7, 0.9, -0.4]))


# ---- results that carry no gradient -----------------------------------------------------------


def cast_to_int(w):
    values = w[:, :-1]
    rows = np.int64(w[:, -1])  # autograd's test_cast_to_int
    flags = (
        float(np.iscomplex(w).sum()) + float(np.isreal(w).all()) + float(np.iscomplexobj(w)) + float(np.isrealobj(w))
    )
    return values[rows].sum() + np.int32(w[0, 0] * 3.0) + flags + float(np.isin(w, [1.0]).sum()) + np.uint8(w[1, 1])


def test_integer_casts_and_predicates_carry_no_gradient():
    w = np.arange(1.0, 16.0).reshape(5, 3) / 4.0
    w[:, -1] = [0.0, 1.0, 4.0, 2.0, 2.5]
    gradient = cpsgrad.grad(cast_to_int)(w)
    expected = np.zeros_like(w)
    for row in (0, 1, 4, 2, 2):
        expected[row, :-1] += 1.0
    np.testing.assert_array_equal(gradient, expected)
    assert cpsgrad.grad(lambda x: x * float(np.isscalar(x)) + np.int64(x))(2.5) == 1.0


def overwritten_solve(a):
    return np.sum(SL.solve((a * 1.0).T, POINT, overwrite_a=True))  # a Fortran-ordered temporary


def overwritten_det(a):
    return SL.det((a * 1.0).T, overwrite_a=True)


@pytest.mark.parametrize(("function", "call"), [(overwritten_solve, "solve"), (overwritten_det, "det")])
def test_scipy_solve_and_det_refuse_overwrite_a(function, call):
    with pytest.raises(UnsupportedError, match=rf"scipy\.linalg\.{call}\(overwrite_a=True\)"):
        cpsgrad.grad(function)(SIGMA)


# ---- a DeviceArray reaching these rules: a clear error, never a wrong answer ------------------


def _device_sum_where(x):
    return np.sum(x, where=x > 1.0)


def _device_max_initial(x):
    return np.max(x, initial=0.0)


def _device_accumulate(x):
    return np.sum(np.maximum.accumulate(x))


def _device_reduceat(x):
    return np.sum(np.add.reduceat(x, [0, 2]))


def _device_pinv(x):
    return np.sum(SL.pinv(x.reshape(2, 2)))


def _device_betainc(x):
    return np.sum(scipy.special.betainc(2.0, 3.0, x * 0.1))


@pytest.mark.parametrize(
    "function",
    [_device_sum_where, _device_max_initial, _device_accumulate, _device_reduceat, _device_pinv, _device_betainc],
)
def test_a_device_array_is_refused_clearly(function):
    from cpsgrad.kernels import cuda_available

    if cuda_available() is None:
        pytest.skip("no CUDA device and NUMBA_ENABLE_CUDASIM is not set")
    x = cpsgrad.to_device(np.array([1.0, 2.0, 3.0, 4.0]))
    with pytest.raises((TypeError, UnsupportedError), match=r"DeviceArray|device"):
        cpsgrad.grad(function)(x)


# ---- numpy's pseudo-inverses: the same refusal (it gave a wrong gradient before) ----------------


def numpy_truncating_pinv(a):
    return np.sum(np.linalg.pinv(a, rcond=0.1) * np.arange(9.0).reshape(3, 3))


def numpy_truncating_lstsq(a):
    return np.sum(np.linalg.lstsq(a, POINT, rcond=0.1)[0])


def numpy_truncating_pinv_hermitian(a):
    return np.sum(np.linalg.pinv(a, rcond=0.1, hermitian=True))


@pytest.mark.parametrize(
    ("function", "construct"),
    [
        (numpy_truncating_pinv, "np.linalg.pinv of a matrix whose cutoff drops singular values"),
        (numpy_truncating_lstsq, "np.linalg.lstsq of a matrix whose rcond drops singular values"),
        (numpy_truncating_pinv_hermitian, "np.linalg.pinv of a matrix whose cutoff drops singular values"),
    ],
)
def test_numpy_pinv_and_lstsq_refuse_a_cutoff_that_drops_a_real_singular_value(function, construct):
    with pytest.raises(UnsupportedError, match=construct):
        cpsgrad.grad(function)(NEARLY_SINGULAR + 0.01 * SIGMA)


def _rank_two_pinv(b):
    return np.sum(np.linalg.pinv(b @ b.T, rcond=1e-4) ** 2) + np.sum(SL.pinv(b @ b.T, rtol=1e-4) * SIGMA)


def test_an_exactly_rank_deficient_pinv_is_still_differentiated():
    # b b^T has rank 2 whatever b is: its third singular value is rounding, the rank constant
    check(_rank_two_pinv, np.array([[1.0, 0.5], [-0.5, 2.0], [0.25, 1.0]]), rtol=1e-5, atol=1e-7)
