"""Tests of cpsgrad.testing on numpy arrays: check_grad element by element, and the array
strategies.

Most checks pass the analytic gradient with `gradient=`, so they do not depend on the
transform's array rules; one section runs a few through cpsgrad.grad itself.
"""

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cpsgrad
from cpsgrad.testing import (
    DEFAULT_ATOL,
    DEFAULT_MAX_ELEMENTS,
    DEFAULT_RTOL,
    FLOAT32_ATOL,
    FLOAT32_RTOL,
    check_grad,
)
from cpsgrad.testing.strategies import (
    FLOAT_DTYPES,
    MIN_MAGNITUDE,
    arrays,
    broadcastable_shapes,
    float_dtypes,
    positive_arrays,
    shapes,
    well_conditioned_matrices,
)

# --- functions with known gradients ----------------------------------------------------------


def tanh_dot(x, w):
    return np.sum(np.tanh(x) * w)


def tanh_dot_gradient(x, w):
    return (1 - np.tanh(x) ** 2) * w, np.tanh(x)  # numpy scalars for 0-d arrays


def quadratic_form(x, W):
    return x @ W @ x


def quadratic_form_gradient(x, W):
    return (W + W.T) @ x, np.outer(x, x)


def sum_of_squares(x):
    return np.sum(x * x)


def twice(x):
    return 2 * x


def log_sum(x):
    return np.sum(np.log(x))


def reciprocal(x):
    return 1 / x


def same_shape_pairs(dtype=np.float64):
    return shapes().flatmap(lambda shape: st.tuples(arrays(shape, dtype), arrays(shape, dtype)))


@given(float_dtypes().flatmap(same_shape_pairs))
def test_arrays_of_any_shape_and_dtype(pair):
    x, w = pair
    result = check_grad(tanh_dot, x, w, argnums=(0, 1), gradient=tanh_dot_gradient)
    assert not result.skipped, result.reason
    for analytic, numeric, argument in zip(result.analytic, result.numeric, pair, strict=True):
        assert analytic.shape == numeric.shape == argument.shape
        assert analytic.dtype == argument.dtype and numeric.dtype == np.float64
    exact = tanh_dot_gradient(x.astype(np.float64), w.astype(np.float64))
    for numeric, expected in zip(result.numeric, exact, strict=True):
        np.testing.assert_allclose(numeric, expected, rtol=1e-8, atol=1e-9)


@given(st.integers(1, 4).flatmap(lambda n: st.tuples(arrays(n), well_conditioned_matrices(n))))
def test_matrix_argument(pair):
    x, W = pair
    result = check_grad(quadratic_form, x, W, argnums=(0, 1), gradient=quadratic_form_gradient)
    assert not result.skipped, result.reason
    np.testing.assert_allclose(result.numeric[1], np.outer(x, x), rtol=1e-8, atol=1e-9)


@given(positive_arrays(shapes(min_dims=1)))
def test_positive_arrays_suit_log(x):
    result = check_grad(log_sum, x, gradient=reciprocal)
    assert not result.skipped, result.reason


def test_array_and_scalar_arguments_together():
    def scaled(x, s, n):
        return s * np.sum(x**n)

    def gradient(x, s, n):
        return s * n * x ** (n - 1), float(np.sum(x**n))

    x = np.array([0.5, -1.5, 2.0])
    result = check_grad(scaled, x, 0.75, 3, argnums=(0, 1), gradient=gradient)
    assert not result.skipped
    assert isinstance(result.numeric[0], np.ndarray) and isinstance(result.numeric[1], float)
    assert result.numeric[1] == pytest.approx(float(np.sum(x**3)), rel=1e-9)


def test_zero_dimensional_array():
    x = np.array(0.4)
    result = check_grad(np.tanh, x, gradient=lambda x: np.asarray(1 - np.tanh(x) ** 2))
    assert not result.skipped
    assert result.numeric[0].shape == () and result.analytic[0].shape == ()
    with pytest.raises(AssertionError) as raised:
        check_grad(np.tanh, x, gradient=lambda x: np.asarray(np.tanh(x)))
    assert "  d/dx: analytic" in str(raised.value)


def test_zero_dimensional_array_takes_a_numpy_scalar_of_its_dtype_from_gradient():
    for dtype in FLOAT_DTYPES:
        x = np.array(0.4, dtype)
        result = check_grad(np.tanh, x, gradient=lambda x: 1 - np.tanh(x) ** 2)
        assert type(result.analytic[0]) is np.ndarray and result.analytic[0].dtype == dtype


def test_numpy_scalars():
    for x in (np.float64(0.4), np.float32(0.4)):
        result = check_grad(np.tanh, x, gradient=lambda x: 1 - np.tanh(x) ** 2)
        assert not result.skipped and isinstance(result.numeric[0], float)
        with pytest.raises(AssertionError, match="mismatch"):
            check_grad(np.tanh, x, gradient=lambda x: 1 + np.tanh(x) ** 2)


def test_empty_array_has_nothing_to_check():
    result = check_grad(sum_of_squares, np.zeros((0, 3)), gradient=twice)
    assert not result.skipped and result.numeric[0].shape == (0, 3)


# --- wrong gradients fail --------------------------------------------------------------------


@given(
    shapes(min_dims=1).flatmap(lambda shape: st.tuples(arrays(shape), st.integers(0, 10**6))),
    st.sampled_from([1e-3, 0.5, -1.0]),
)
def test_any_wrong_element_is_caught(drawn, relative_error):
    x, which = drawn
    index = np.unravel_index(which % x.size, x.shape)

    def wrong(x):
        gradient = 2 * x
        gradient[index] += relative_error * max(abs(gradient[index]), 1.0)
        return gradient

    label = f"x[{', '.join(map(str, index))}]"
    with pytest.raises(AssertionError, match=rf"d/d{re.escape(label)}: analytic .* <-- mismatch"):
        check_grad(sum_of_squares, x, gradient=wrong)


def test_mismatch_message_names_argument_element_and_errors():
    x = np.array([0.5, -0.25, 1.0])
    W = np.arange(9.0).reshape(3, 3) / 9

    def wrong_in_W(x, W):
        dx, dW = quadratic_form_gradient(x, W)
        dW[1, 2] += 0.25
        return dx, dW

    with pytest.raises(AssertionError) as raised:
        check_grad(quadratic_form, x, W, argnums=(0, 1), gradient=wrong_in_W)
    message = str(raised.value)
    assert message.startswith(
        "gradient of quadratic_form(x=array([ 0.5 , -0.25, 1. ]), "
        "W=array(shape=(3, 3), dtype=float64)) with argnums=(0, 1) disagrees"
    )
    lines = message.splitlines()
    assert lines[1] == "  d/dx: 3 of 3 elements checked, all within tolerance"
    assert lines[2] == "  d/dW: 1 of 9 elements checked mismatch (9 in all); the worst:"
    assert lines[3].startswith("    d/dW[1, 2]: analytic ") and lines[3].endswith("<-- mismatch")
    assert "abs error 0.25" in lines[3] and "rel error" in lines[3] and "numeric" in lines[3]
    assert lines[4].startswith("  tolerance: atol=1e-07 + rtol=1e-05")


def test_mismatch_message_shows_the_worst_few():
    x = np.full(8, 0.5)

    def wrong(x):
        return 2 * x + np.arange(1.0, 9.0)  # element 7 is furthest out of tolerance

    with pytest.raises(AssertionError) as raised:
        check_grad(sum_of_squares, x, gradient=wrong)
    lines = str(raised.value).splitlines()
    assert lines[1] == "  d/dx: 8 of 8 elements checked mismatch (8 in all); the worst:"
    assert [line.split(":")[0] for line in lines[2:7]] == [
        f"    d/dx[{i}]" for i in (7, 6, 5, 4, 3)
    ]
    assert lines[7] == "    ... and 3 more"


def test_nan_element_is_a_mismatch():
    with pytest.raises(AssertionError, match=r"d/dx\[1\]: analytic nan"):
        check_grad(sum_of_squares, np.ones(3), gradient=lambda x: np.array([2.0, np.nan, 2.0]))


@pytest.mark.parametrize(
    ("gradient", "described"),
    [
        (lambda x: np.ones(3), "float64 array of shape (3,)"),
        (lambda x: np.ones((2, 3), dtype=np.float32), "float32 array of shape (2, 3)"),
        (lambda x: 2 * x.tolist()[0][0], "float 1.0"),
        (lambda x: [list(row) for row in 2 * x], "list"),
    ],
)
def test_gradient_must_have_the_argument_shape_and_dtype(gradient, described):
    x = np.full((2, 3), 0.5)
    with pytest.raises(AssertionError) as raised:
        check_grad(sum_of_squares, x, gradient=gradient)
    message = str(raised.value)
    assert message.startswith(
        f"the gradient function: the derivative for argument 0 (x) is {described}"
    )
    assert message.endswith(
        "a float64 array of shape (2, 3) needs an array of the same shape and dtype"
    )


@pytest.mark.parametrize("derivative", [0.8, np.float32(0.8), np.array([0.8])])
def test_zero_dimensional_argument_needs_a_zero_dimensional_array(derivative):
    with pytest.raises(AssertionError, match=r"a float64 array of shape \(\) needs an array"):
        check_grad(np.tanh, np.array(0.4), gradient=lambda x: derivative)


# --- float32 ---------------------------------------------------------------------------------


def float32_tanh_dot_gradient(x, w):
    dx, dw = tanh_dot_gradient(x, w)
    assert dx.dtype == dw.dtype == np.float32
    return dx, dw


@given(shapes(min_dims=1).flatmap(lambda shape: same_shape_pairs(np.float32)))
def test_float32_arguments(pair):
    result = check_grad(tanh_dot, *pair, argnums=(0, 1), gradient=float32_tanh_dot_gradient)
    assert not result.skipped, result.reason
    assert all(numeric.dtype == np.float64 for numeric in result.numeric)


def test_float32_finite_differences_run_on_float64_copies():
    seen = []

    def recording(x, w):
        seen.append((x.dtype, w.dtype))
        return tanh_dot(x, w)

    x = np.array([0.5, -1.0], dtype=np.float32)
    w = np.array([2.0, 3.0], dtype=np.float32)
    check_grad(recording, x, w, gradient=lambda x, w: tanh_dot_gradient(x, w)[0])
    assert seen[0] == (np.float32, np.float32)  # the value at the arguments themselves
    assert all(dtypes == (np.float64, np.float64) for dtypes in seen[1:])  # w copied as well
    assert len(seen) == 2 + 8 * 2


def test_float32_tolerance_defaults():
    assert (FLOAT32_RTOL, FLOAT32_ATOL) == (2e-3, 1e-4)
    assert (DEFAULT_RTOL, DEFAULT_ATOL) == (1e-5, 1e-7)
    x = np.array([0.5, 1.5], dtype=np.float32)
    off_by = lambda relative: lambda x: (2 * x * (1 + relative)).astype(x.dtype)
    assert not check_grad(sum_of_squares, x, gradient=off_by(1e-3)).skipped
    with pytest.raises(AssertionError, match="atol=0.0001 \\+ rtol=0.002"):
        check_grad(sum_of_squares, x, gradient=off_by(1e-2))
    with pytest.raises(AssertionError, match="mismatch"):
        check_grad(sum_of_squares, x, gradient=off_by(1e-3), rtol=1e-5, atol=1e-7)
    with pytest.raises(AssertionError, match="mismatch"):
        check_grad(sum_of_squares, x.astype(np.float64), gradient=off_by(1e-3))


def test_float32_is_skipped_where_float64_copies_are_refused():
    def single_only(x):
        assert x.dtype == np.float32
        return np.sum(x * x)

    result = check_grad(single_only, np.ones(2, np.float32), gradient=twice)
    assert result.skipped
    assert result.reason.startswith("f raises AssertionError")
    assert "on float64 copies of its float32 arguments" in result.reason

    def still_single(x):
        return np.sum(x.astype(np.float32) ** 2)

    result = check_grad(still_single, np.ones(2, np.float32), gradient=twice)
    assert result.skipped and result.reason.startswith("f returns float32 on float64 copies")


def solve_sum(A, b):
    return np.sum(np.linalg.solve(A, b))


def solve_sum_gradient(A, b):
    u = np.linalg.solve(A.T, np.ones_like(b))
    return -np.outer(u, np.linalg.solve(A, b)), u


@given(
    st.integers(1, 3).flatmap(
        lambda n: st.tuples(well_conditioned_matrices(n, np.float32), arrays(n, np.float32))
    )
)
def test_float32_through_numpy_paths_that_depend_on_dtype(pair):
    # np.linalg takes other Python paths for float32 than for float64: not a branch change
    result = check_grad(solve_sum, *pair, argnums=(0, 1), gradient=solve_sum_gradient)
    assert not result.skipped, result.reason


def test_float32_is_skipped_where_precision_changes_the_branch():
    def branches_on_rounding(x):
        if np.sum(x) * 10 > 1.0:  # float32(0.1) * 10 rounds to 1.0 in float32, not in float64
            return np.sum(x)
        return np.sum(x) * 2

    x = np.array([0.1], dtype=np.float32)
    result = check_grad(branches_on_rounding, x, gradient=lambda x: np.ones_like(x))
    assert result.skipped and result.reason.startswith("branch change")
    assert result.reason.endswith("on float64 copies of its float32 arguments")


# --- skips, element by element ---------------------------------------------------------------


def abs_sum(x):
    return np.sum(np.abs(x))


def sign(x):
    return np.where(x >= 0, 1.0, -1.0)


def count_above(x, threshold):
    total = 0.0
    for value in x:
        if value > threshold:
            total = total + value * value
        else:
            total = total + value
    return total


def count_above_gradient(x, threshold):
    return np.where(x > threshold, 2 * x, 1.0)


def test_kink_inside_an_element_is_skipped():
    x = np.array([[0.5, -1.0], [0.0, 2.0]])
    result = check_grad(abs_sum, x, gradient=sign)
    assert result.skipped
    assert result.reason.startswith("kink or jump near x[1, 0]=0.0")
    assert result.analytic[0].shape == (2, 2) and result.numeric == ()
    assert not check_grad(abs_sum, x + np.array([[0, 0], [0.5, 0]]), gradient=sign).skipped


def test_branch_change_inside_an_element_is_skipped():
    x = np.array([0.1, 0.3 - 1e-6, 0.8])
    result = check_grad(count_above, x, 0.3, gradient=count_above_gradient)
    assert result.skipped
    assert result.reason.startswith("branch change") and "at x[1]=" in result.reason
    assert "(count_above)" in result.reason


def test_several_skipped_elements_are_counted():
    result = check_grad(abs_sum, np.array([0.0, 1.0, 0.0, 0.0]), gradient=sign)
    assert result.skipped and result.reason.endswith("(and 2 more)")


def test_a_wrong_element_fails_even_where_another_is_skipped():
    def wrong(x):
        gradient = sign(x)
        gradient[2] = 0.0
        return gradient

    with pytest.raises(AssertionError) as raised:
        check_grad(abs_sum, np.array([0.0, 1.0, -2.0]), gradient=wrong)
    message = str(raised.value)
    assert "d/dx[2]: analytic 0.0" in message
    assert "skipped 1 (finite differences unreliable), first: kink or jump near x[0]" in message


def test_raising_at_a_probe_point_of_an_element_is_skipped():
    def checked_log_sum(x):
        if np.any(x <= 0):
            raise ValueError("log of a non-positive number")
        return log_sum(x)

    result = check_grad(checked_log_sum, np.array([1.0, 1e-5]), step=1e-3, gradient=reciprocal)
    assert result.skipped and "ValueError" in result.reason and "x[1]=" in result.reason


def test_non_finite_value_is_skipped():
    with np.errstate(divide="ignore"):
        result = check_grad(log_sum, np.array([1.0, 0.0]), gradient=reciprocal)
    assert result.skipped and result.reason == "f returns np.float64(-inf)"


# --- max_elements ----------------------------------------------------------------------------


def counting(function):
    def counted(*args):
        counted.calls += 1
        return function(*args)

    counted.calls = 0
    return counted


def test_max_elements_checks_a_fixed_subset():
    assert DEFAULT_MAX_ELEMENTS == 64
    x = np.linspace(-1.0, 1.0, 100).reshape(10, 10)
    f = counting(sum_of_squares)
    result = check_grad(f, x, gradient=twice, max_elements=7)
    checked = ~np.isnan(result.numeric[0])
    assert checked.sum() == 7 and f.calls == 1 + 8 * 7
    np.testing.assert_allclose(result.numeric[0][checked], 2 * x[checked], rtol=1e-9)
    again = check_grad(sum_of_squares, x, gradient=twice, max_elements=7)
    assert np.array_equal(~np.isnan(again.numeric[0]), checked)
    assert (~np.isnan(check_grad(sum_of_squares, x, gradient=twice).numeric[0])).sum() == 64
    assert not np.isnan(
        check_grad(sum_of_squares, x, gradient=twice, max_elements=None).numeric[0]
    ).any()


def test_max_elements_is_per_array_argument():
    x, w = np.full(5, 0.5), np.full(5, 2.0)
    result = check_grad(tanh_dot, x, w, argnums=(0, 1), gradient=tanh_dot_gradient, max_elements=3)
    assert [int((~np.isnan(n)).sum()) for n in result.numeric] == [3, 3]


def test_max_elements_finds_a_wrong_element_only_inside_the_subset():
    x = np.linspace(-1.0, 1.0, 20)
    subset = ~np.isnan(check_grad(sum_of_squares, x, gradient=twice, max_elements=4).numeric[0])
    inside, outside = np.flatnonzero(subset)[0], np.flatnonzero(~subset)[0]

    def wrong_at(i):
        def wrong(x):
            gradient = 2 * x
            gradient[i] += 1.0
            return gradient

        return wrong

    with pytest.raises(AssertionError, match=rf"d/dx\[{inside}\]"):
        check_grad(sum_of_squares, x, gradient=wrong_at(inside), max_elements=4)
    assert not check_grad(sum_of_squares, x, gradient=wrong_at(outside), max_elements=4).skipped


@pytest.mark.parametrize("max_elements", [0, -1, 2.5, True])
def test_max_elements_must_be_positive(max_elements):
    with pytest.raises(ValueError, match="max_elements"):
        check_grad(sum_of_squares, np.ones(3), gradient=twice, max_elements=max_elements)


# --- arguments and values --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argument", "described"),
    [
        (np.arange(3), "int64"),
        (np.ones(2, dtype=np.float16), "float16"),
        (np.ones(2, dtype=np.complex128), "complex128"),
        (np.float16(1.0), "float16"),
        ([1.0, 2.0], "list"),
        (np.ma.masked_array([1.0, 2.0]), "float64"),
    ],
)
def test_other_arguments_are_refused(argument, described):
    with pytest.raises(TypeError, match=f"argument 0 is {described}.*must be floats"):
        check_grad(sum_of_squares, argument, gradient=twice)


def test_non_scalar_value_is_refused():
    with pytest.raises(TypeError, match=r"returns an array of shape \(2,\)"):
        check_grad(twice, np.ones(2), gradient=twice)


def test_in_place_modification_is_refused():
    def modifies(x):
        x *= 2
        return np.sum(x)

    with pytest.raises(ValueError, match="modifies its argument x in place"):
        check_grad(modifies, np.ones(2), gradient=lambda x: np.full(2, 2.0))

    def gradient_modifies(x):
        x += 1
        return 2 * x

    with pytest.raises(AssertionError, match="the gradient modifies argument x in place"):
        check_grad(sum_of_squares, np.ones(2), gradient=gradient_modifies)


def test_zero_dimensional_value_is_a_scalar():
    result = check_grad(lambda x: np.asarray(np.sum(x * x)), np.ones(2), gradient=twice)
    assert not result.skipped


# --- the default path, with a stand-in for cpsgrad -------------------------------------------


def install_stand_in(monkeypatch, value_of, gradient_of, value_and_grad_gradient_of=None):
    """Replace cpsgrad.grad and value_and_grad by functions computing the given results."""
    other_gradient = value_and_grad_gradient_of or gradient_of
    monkeypatch.setattr(cpsgrad, "grad", lambda f, argnums=0: gradient_of, raising=False)
    monkeypatch.setattr(
        cpsgrad,
        "value_and_grad",
        lambda f, argnums=0: lambda *args: (value_of(*args), other_gradient(*args)),
        raising=False,
    )


def test_default_path_passes_correct_array_gradients(monkeypatch):
    install_stand_in(monkeypatch, tanh_dot, tanh_dot_gradient)
    x, w = np.array([0.5, -1.0]), np.array([2.0, 3.0])
    result = check_grad(tanh_dot, x, w, argnums=(0, 1))
    assert not result.skipped


def test_default_path_values_compare_as_scalars(monkeypatch):
    install_stand_in(monkeypatch, lambda x: np.asarray(sum_of_squares(x)), twice)
    assert not check_grad(sum_of_squares, np.ones(2)).skipped
    install_stand_in(monkeypatch, lambda x: np.nextafter(sum_of_squares(x), 0.0), twice)
    with pytest.raises(AssertionError, match="returns the value"):
        check_grad(sum_of_squares, np.ones(2))


def test_default_path_requires_conforming_arrays(monkeypatch):
    install_stand_in(monkeypatch, sum_of_squares, lambda x: (2 * x).astype(np.float32))
    with pytest.raises(AssertionError, match=r"grad of sum_of_squares.*is float32 array of shape"):
        check_grad(sum_of_squares, np.ones(2))


def test_default_path_requires_zero_dimensional_arrays(monkeypatch):
    install_stand_in(monkeypatch, np.tanh, lambda x: 1 - np.tanh(x) ** 2)
    with pytest.raises(AssertionError, match=r"is float64 0.78.*; a float64 array of shape \(\)"):
        check_grad(np.tanh, np.array(0.5))


def test_default_path_requires_float32_scalars_for_float32_scalars(monkeypatch):
    install_stand_in(monkeypatch, np.tanh, lambda x: float(1 - np.tanh(x) ** 2))
    with pytest.raises(AssertionError, match="a float32 argument needs a float32 scalar"):
        check_grad(np.tanh, np.float32(0.5))


def test_default_path_requires_grad_to_agree_with_value_and_grad(monkeypatch):
    install_stand_in(monkeypatch, sum_of_squares, twice, lambda x: 2 * x + 1e-9)
    with pytest.raises(AssertionError, match="but value_and_grad returns"):
        check_grad(sum_of_squares, np.ones(2))


# --- the default path through cpsgrad itself -------------------------------------------------


def sum_tanh_times(x, w):
    return np.sum(np.tanh(x) * w)


def quadratic(x, W):
    return x @ W @ x


def squares(x):
    return np.sum(x * x)


REAL_PATH = [
    (sum_tanh_times, (np.array([0.5, -1.0, 0.25]), np.array([2.0, 3.0, -1.0]))),
    (quadratic, (np.array([0.5, -1.0, 0.25]), np.arange(9.0).reshape(3, 3) / 4)),
    (squares, (np.array([[0.5, -1.0], [0.25, 2.0]]),)),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize(
    ("function", "args"), REAL_PATH, ids=[function.__name__ for function, _ in REAL_PATH]
)
def test_through_cpsgrad(function, args, dtype):
    args = tuple(arg.astype(dtype) for arg in args)
    result = check_grad(function, *args, argnums=tuple(range(len(args))))
    assert not result.skipped, result.reason


@given(float_dtypes().flatmap(same_shape_pairs))
def test_through_cpsgrad_any_shape_and_dtype(pair):
    result = check_grad(sum_tanh_times, *pair, argnums=(0, 1))
    assert not result.skipped, result.reason


def product_sum(x, y):
    return np.sum(x * y)


@given(st.data(), shapes(), float_dtypes())
def test_through_cpsgrad_with_broadcasting(data, shape, dtype):
    x = data.draw(arrays(shape, dtype))
    y = data.draw(arrays(data.draw(broadcastable_shapes(shape)), dtype))
    result = check_grad(product_sum, x, y, argnums=(0, 1))
    assert not result.skipped, result.reason


# --- strategies ------------------------------------------------------------------------------


def well_conditioned(x, low, high):
    magnitudes = np.abs(x)
    return (
        np.all(np.isfinite(x))
        and np.all((low <= x) & (x <= high))
        and np.all((x == 0) | (magnitudes >= MIN_MAGNITUDE))
    )


@given(st.data(), shapes(), float_dtypes())
def test_arrays_are_well_conditioned(data, shape, dtype):
    x = data.draw(arrays(shape, dtype))
    assert type(x) is np.ndarray and x.shape == shape and x.dtype == dtype
    assert well_conditioned(x, -3.0, 3.0)


@given(arrays((3, 4), np.float32, -0.1, 0.3, exclude_near=(0.0, 0.2), margin=0.01))
def test_arrays_stay_away_from_excluded_points(x):
    assert well_conditioned(x, -0.1, 0.3)
    assert np.all(np.abs(x) >= 0.01) and np.all(np.abs(x - np.float32(0.2)) >= 0.01)


@given(arrays(5, np.float32, 0.1, 0.3))
def test_float32_bounds_move_inward(x):
    assert x.shape == (5,) and np.all((x >= 0.1) & (x <= 0.3))


@given(positive_arrays((2, 2)), positive_arrays(3, np.float32, 0.5, 2.0))
def test_positive_arrays(x, y):
    assert well_conditioned(x, 0.1, 10.0) and well_conditioned(y, 0.5, 2.0)
    assert y.dtype == np.float32


def test_array_strategies_refuse_bad_arguments():
    with pytest.raises(ValueError, match="min_value > 0"):
        positive_arrays(3, min_value=0.0)
    with pytest.raises(ValueError, match="float32 or float64"):
        arrays(3, np.int64)
    with pytest.raises(ValueError, match="min_value <= max_value"):
        arrays(3, np.float64, 1.0, 0.0)
    with pytest.raises(ValueError, match="positive int"):
        well_conditioned_matrices(0)


@given(shapes(min_dims=0, max_dims=3, min_side=1, max_side=4))
def test_shapes(shape):
    assert 0 <= len(shape) <= 3 and all(1 <= side <= 4 for side in shape)


@given(shapes(2, 2, 3, 3))
def test_shapes_bounds(shape):
    assert shape == (3, 3)


@given(st.data(), shapes())
def test_broadcastable_shapes_broadcast(data, shape):
    other = data.draw(broadcastable_shapes(shape))
    assert len(other) <= len(shape) + 1
    np.broadcast_shapes(shape, other)  # raises if they do not broadcast
    for mine, theirs in zip(reversed(shape), reversed(other), strict=False):
        assert theirs in (1, mine) or mine == 1


def test_broadcastable_shapes_include_size_one_axes_and_fewer_dims():
    from hypothesis import find

    assert find(broadcastable_shapes((3, 4)), lambda s: s == (1, 4)) == (1, 4)
    assert find(broadcastable_shapes((3, 4)), lambda s: len(s) == 1 and s[0] == 4) == (4,)
    assert len(find(broadcastable_shapes((3, 4)), lambda s: len(s) == 3)) == 3


@given(st.integers(1, 5).flatmap(lambda n: st.tuples(st.just(n), float_dtypes())), st.data())
def test_well_conditioned_matrices(size_and_dtype, data):
    n, dtype = size_and_dtype
    matrix = data.draw(well_conditioned_matrices(n, dtype))
    assert matrix.shape == (n, n) and matrix.dtype == dtype
    magnitudes = np.abs(matrix.astype(np.float64))
    off_diagonal = magnitudes.sum(axis=1) - np.diagonal(magnitudes)
    assert np.all(np.diagonal(magnitudes) - off_diagonal >= 1.0 - 1e-5)
    assert np.linalg.cond(matrix.astype(np.float64), p=np.inf) <= 2 + 2 * (n - 1) + 1e-5
    assert math.isfinite(np.linalg.det(matrix.astype(np.float64)))
