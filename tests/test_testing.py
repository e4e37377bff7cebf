"""Tests of cpsgrad.testing: check_grad's accuracy, its skips, its failures, and the strategies.

Most checks pass the analytic gradient with `gradient=`, so they do not need the transform;
the default path is exercised with a stand-in for cpsgrad.grad and cpsgrad.value_and_grad.
"""

import math
import sys

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import cpsgrad
from cpsgrad.testing import GradCheck, check_grad
from cpsgrad.testing.strategies import (
    MIN_MAGNITUDE,
    float_lists,
    floats,
    ints,
    positive_floats,
)

# --- functions with known derivatives --------------------------------------------------------


def exponential(x):
    return math.exp(x)


def sine(x):
    return math.sin(3.0 * x)


def logarithm(x):
    return math.log(x)


def polynomial(x):
    return x**5 - 3.0 * x + 1.0


def rational(x):
    return 1.0 / (1.0 + x * x)


def square_root(x):
    return math.sqrt(x)


KNOWN_DERIVATIVES = [
    (exponential, lambda x: math.exp(x), floats(-5.0, 5.0)),
    (sine, lambda x: 3.0 * math.cos(3.0 * x), floats()),
    (logarithm, lambda x: 1.0 / x, positive_floats(0.1, 100.0)),
    (polynomial, lambda x: 5.0 * x**4 - 3.0, floats(-3.0, 3.0)),
    (rational, lambda x: -2.0 * x / (1.0 + x * x) ** 2, floats()),
    (square_root, lambda x: 0.5 / math.sqrt(x), positive_floats(0.1, 100.0)),
]


@pytest.mark.parametrize(
    ("function", "derivative", "inputs"),
    KNOWN_DERIVATIVES,
    ids=[function.__name__ for function, _, _ in KNOWN_DERIVATIVES],
)
def test_finite_differences_are_accurate(function, derivative, inputs):
    @given(inputs)
    def check(x):
        result = check_grad(function, x, gradient=derivative)
        assert not result.skipped, result.reason
        assert math.isclose(result.numeric[0], derivative(x), rel_tol=1e-8, abs_tol=1e-9)

    check()


def product_and_sine(x, y, n):
    return x * y**n + math.sin(x * y)


def product_and_sine_gradient(x, y, n):
    return (
        y**n + y * math.cos(x * y),
        n * x * y ** (n - 1) + x * math.cos(x * y),
    )


@given(floats(-3.0, 3.0), floats(-3.0, 3.0), ints(1, 4))
def test_several_arguments(x, y, n):
    result = check_grad(
        product_and_sine, x, y, n, argnums=(0, 1), gradient=product_and_sine_gradient
    )
    assert not result.skipped, result.reason
    assert len(result.analytic) == len(result.numeric) == 2
    for numeric, exact in zip(result.numeric, product_and_sine_gradient(x, y, n), strict=True):
        assert math.isclose(numeric, exact, rel_tol=1e-8, abs_tol=1e-8)


def test_int_argnums_gives_one_derivative():
    result = check_grad(sine, 0.25, gradient=lambda x: 3.0 * math.cos(0.75))
    assert isinstance(result, GradCheck)
    assert (result.skipped, result.reason) == (False, "")
    assert result.analytic == (3.0 * math.cos(0.75),)
    assert result.numeric == pytest.approx(result.analytic, rel=1e-9)


# --- wrong gradients fail --------------------------------------------------------------------


@pytest.mark.parametrize("relative_error", [1e-4, 1e-3, 0.5, -1.0])
def test_wrong_gradient_raises(relative_error):
    def wrong(x):
        return math.exp(x) * (1.0 + relative_error)

    with pytest.raises(AssertionError, match="disagrees with finite differences"):
        check_grad(exponential, 1.3, gradient=wrong)


def test_error_within_tolerance_passes():
    assert not check_grad(exponential, 1.3, gradient=lambda x: math.exp(x) * (1 + 1e-7)).skipped


def test_mismatch_message_names_everything():
    def wrong_in_y(x, y, n):
        dx, dy = product_and_sine_gradient(x, y, n)
        return dx, dy + 0.25

    with pytest.raises(AssertionError) as raised:
        check_grad(product_and_sine, 0.5, 1.5, 2, argnums=(0, 1), gradient=wrong_in_y)
    message = str(raised.value)
    assert "product_and_sine(x=0.5, y=1.5, n=2) with argnums=(0, 1)" in message
    dx_line, dy_line = message.splitlines()[1:3]
    assert dx_line.startswith("  d/dx: analytic") and "mismatch" not in dx_line
    assert dy_line.startswith("  d/dy: analytic") and dy_line.endswith("<-- mismatch")
    assert "numeric" in dy_line and "abs error 0.25" in dy_line and "rel error" in dy_line


def test_nan_gradient_raises():
    with pytest.raises(AssertionError, match="mismatch"):
        check_grad(exponential, 0.5, gradient=lambda x: math.nan)


# --- skips: branch changes -------------------------------------------------------------------


def same_polynomial_both_branches(x):
    if x < 1.0:
        y = x * x
    else:
        y = x * x
    return y


def same_polynomial_conditional_expression(x):
    return x * x if x < 1.0 else x * x


def same_polynomial_short_circuit(x):
    return (x < 1.0 and x * x) or x * x


def branchy_helper(x):
    if x < 1.0:
        return x * x
    return x * x


def calls_branchy_helper(x):
    return branchy_helper(x) + x


def twice(x):
    return 2.0 * x


def zero(x):
    return 0.0


@pytest.mark.parametrize(
    "function",
    [
        same_polynomial_both_branches,
        same_polynomial_conditional_expression,
        same_polynomial_short_circuit,
        calls_branchy_helper,
    ],
)
def test_branch_change_within_the_step_is_skipped(function):
    result = check_grad(function, 1.0 - 1e-5, gradient=zero)
    assert result.skipped
    assert result.reason.startswith("branch change")
    assert result.analytic == (0.0,)
    assert result.numeric == ()
    with pytest.raises(AssertionError):
        check_grad(function, 0.5, gradient=zero)


def test_branch_change_names_the_called_function():
    result = check_grad(calls_branchy_helper, 1.0 - 1e-5, gradient=zero)
    assert "(branchy_helper)" in result.reason


def test_step_sets_the_probe_points():
    assert not check_grad(same_polynomial_both_branches, 0.99, gradient=twice).skipped
    assert check_grad(same_polynomial_both_branches, 0.99, step=0.02, gradient=twice).skipped


def halve_while_large(x):
    while x > 1.0:
        x = x / 2.0
    return x


def test_changed_trip_count_is_skipped():
    result = check_grad(halve_while_large, 4.0, gradient=lambda x: 0.25)
    assert result.skipped
    assert "instructions run" in result.reason or "runs where" in result.reason


# --- skips: kinks and jumps without a branch -------------------------------------------------


def absolute(x):
    return abs(x)


def at_least_one(x):
    return max(x, 1.0)


def with_floor(x):
    return x + math.floor(x)


def shifted_abs(x):
    return abs(x - 0.3) + 0.5 * x


def shifted_abs_gradient(x):
    return (1.0 if x >= 0.3 else -1.0) + 0.5


@pytest.mark.parametrize(
    ("function", "x", "derivative"),
    [(absolute, 0.0, 1.0), (at_least_one, 1.0, 0.5), (with_floor, 2.0, 1.0)],
)
def test_kink_without_branch_is_skipped(function, x, derivative):
    result = check_grad(function, x, gradient=lambda x: derivative)
    assert result.skipped
    assert result.reason.startswith("kink or jump")


STEP = 2.0**-10


@given(st.floats(-3.0 * STEP, 3.0 * STEP))
@example(STEP / 3.0)
@example(-STEP / 3.0)
@example(STEP / 6.0)
@example(2.0 * STEP / 3.0)
def test_no_false_failure_near_a_kink(offset):
    """A correct gradient never fails, wherever the kink falls among the probe points."""
    check_grad(shifted_abs, 0.3 + offset, step=STEP, gradient=shifted_abs_gradient)


def test_kink_outside_the_step_is_checked():
    with pytest.raises(AssertionError):
        check_grad(shifted_abs, 0.3 + 4 * STEP, step=STEP, gradient=lambda x: 0.5)


# --- skips: exceptions and non-finite values -------------------------------------------------


def reciprocal(x):
    return 1.0 / x


def overflowing(x):
    return x * 1e308 * 10.0


def not_a_number(x):
    return x * math.inf - math.inf


def test_raising_at_the_input_is_skipped():
    result = check_grad(reciprocal, 0.0, gradient=zero)
    assert result.skipped and "ZeroDivisionError" in result.reason


def test_raising_at_a_probe_point_is_skipped():
    result = check_grad(logarithm, 1e-5, step=1e-3, gradient=lambda x: 1.0 / x)
    assert result.skipped and "ValueError" in result.reason and "x=" in result.reason


def test_non_finite_value_is_skipped():
    assert check_grad(overflowing, 1.0, gradient=zero).reason == "f returns inf"
    assert check_grad(not_a_number, 1.0, gradient=zero).reason == "f returns nan"


def test_non_finite_at_a_probe_point_is_skipped():
    result = check_grad(exponential, 709.75, gradient=exponential)
    assert result.skipped and "OverflowError" in result.reason


# --- arguments -------------------------------------------------------------------------------


def test_int_argument_is_refused():
    with pytest.raises(TypeError, match="must be floats"):
        check_grad(polynomial, 2, gradient=zero)


def test_argnums_out_of_range_is_refused():
    with pytest.raises(ValueError, match="out of range"):
        check_grad(polynomial, 2.0, argnums=(0, 1), gradient=zero)


def test_previous_tracer_is_restored():
    def tracer(frame, event, arg):
        return None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        check_grad(sine, 0.5, gradient=lambda x: 3.0 * math.cos(1.5))
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(previous)


# --- the default path: cpsgrad.grad and cpsgrad.value_and_grad -------------------------------


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


def test_default_path_passes_a_correct_gradient(monkeypatch):
    install_stand_in(monkeypatch, exponential, exponential)
    result = check_grad(exponential, 0.5)
    assert not result.skipped and result.analytic == (math.exp(0.5),)


def test_default_path_requires_the_exact_value(monkeypatch):
    install_stand_in(monkeypatch, lambda x: math.nextafter(math.exp(x), 0.0), exponential)
    with pytest.raises(AssertionError, match="returns the value"):
        check_grad(exponential, 0.5)


def test_default_path_treats_nan_values_as_equal(monkeypatch):
    install_stand_in(monkeypatch, lambda x: math.nan, zero)
    assert check_grad(not_a_number, 1.0).reason == "f returns nan"


def test_default_path_requires_float_derivatives(monkeypatch):
    install_stand_in(monkeypatch, polynomial, lambda x: 2)
    with pytest.raises(AssertionError, match="is int 2; a float argument needs a float"):
        check_grad(polynomial, 1.0)


def test_default_path_requires_grad_to_agree_with_value_and_grad(monkeypatch):
    install_stand_in(monkeypatch, exponential, exponential, lambda x: 1.0)
    with pytest.raises(AssertionError, match="but value_and_grad returns"):
        check_grad(exponential, 0.5)


def test_default_path_requires_one_derivative_per_argnum(monkeypatch):
    install_stand_in(monkeypatch, product_and_sine, lambda x, y, n: (1.0,))
    with pytest.raises(AssertionError, match="returns 1 derivatives for argnums"):
        check_grad(product_and_sine, 0.5, 1.5, 2, argnums=(0, 1))


# --- strategies ------------------------------------------------------------------------------


@given(floats())
def test_floats_are_well_conditioned(x):
    assert -10.0 <= x <= 10.0
    assert x == 0.0 or abs(x) >= MIN_MAGNITUDE


@given(floats(-2.0, 3.0, exclude_near=(0.0, 1.0), margin=0.01))
def test_floats_stay_away_from_excluded_points(x):
    assert -2.0 <= x <= 3.0
    assert abs(x) >= 0.01 and abs(x - 1.0) >= 0.01


@given(positive_floats(0.5, 2.0))
def test_positive_floats(x):
    assert 0.5 <= x <= 2.0


def test_positive_floats_refuse_a_non_positive_bound():
    with pytest.raises(ValueError, match="min_value > 0"):
        positive_floats(0.0)


@given(ints(-3, 4))
def test_ints(n):
    assert isinstance(n, int) and -3 <= n <= 4


@given(float_lists(2, 4, min_value=-1.0, max_value=1.0))
def test_float_lists(values):
    assert 2 <= len(values) <= 4
    assert all(-1.0 <= v <= 1.0 and isinstance(v, float) for v in values)


def test_seeded_draws_do_not_depend_on_the_modules_imported(tmp_path, monkeypatch):
    """Hypothesis mixes constants from the source of imported local modules into its draws; with
    cpsgrad.testing.soaking.reproducible_draws (on in the generators and this suite) a seed draws
    the same values before and after a module full of new constants is imported."""
    import importlib
    import sys

    from hypothesis import given, seed, settings
    from hypothesis import strategies as st

    from cpsgrad.testing.soaking import reproducible_draws

    assert reproducible_draws()

    def draws() -> list:
        out = []

        @seed(1234)
        @settings(max_examples=300, database=None, derandomize=False)
        @given(st.floats(-1e6, 1e6), st.integers(-10**6, 10**6))
        def collect(a, b):
            out.append((a, b))

        collect()
        return out

    before = draws()
    constants = ", ".join(f"{k * 1234.5678 + 0.1:.4f}, {k * 98761 + 17}" for k in range(400))
    (tmp_path / "cpsgrad_constants_module.py").write_text(f"VALUES = [{constants}]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("cpsgrad_constants_module")
    try:
        assert draws() == before
    finally:
        sys.modules.pop("cpsgrad_constants_module", None)
