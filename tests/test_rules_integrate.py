"""scipy.integrate.odeint by the adjoint method (cpsgrad/rules/scipy/integrate.py).

Gradients are compared with central finite differences of the function itself (`check_grad`,
at rtol 1e-6: the solves run at rtol = atol = 1e-10, so the gradient is that accurate), with a
closed form (y' = A y: y(t) = expm(A (t - t0)) y0, differentiated by cpsgrad's expm rule), and
with jax.experimental.ode.odeint. Then the forms: tfirst, args of containers, a func returning a
list, a scalar y0, odeint in a loop and inside a user function, a discarded result, float32, and
the refusals with their messages.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import scipy.special
from scipy.integrate import odeint

import cpsgrad
from cpsgrad.errors import NoRuleError, UnsupportedError
from cpsgrad.testing import check_grad

TIGHT = {"rtol": 1e-10, "atol": 1e-10}
A = np.array([[-0.5, 1.0], [-1.0, -0.3]])
WEIGHTS = np.array([[1.0, -0.5], [0.3, 2.0], [-1.2, 0.7], [0.4, 0.1], [2.0, -1.0]])
TIMES = np.linspace(0.0, 2.0, 5)


def linear(y, t, a):
    return a @ y


def lotka_volterra(y, t, alpha, beta, gamma, delta):
    """A list of numbers, as scipy's examples write it."""
    prey, predator = y[0], y[1]
    return [alpha * prey - beta * prey * predator, delta * prey * predator - gamma * predator]


def forced(t, y, k):
    """tfirst=True: a non-autonomous decay (its t derivative is not zero)."""
    return -k * y * (1.0 + np.sin(3.0 * t))


# ---- a linear ODE with a closed form --------------------------------------------------------------


def linear_loss(y0, t, a):
    return np.sum(WEIGHTS * odeint(linear, y0, t, (a,), **TIGHT))


def closed_form_loss(y0, t, a):
    total = 0.0
    for i in range(5):
        total = total + np.sum(WEIGHTS[i] * (scipy.linalg.expm(a * (t[i] - t[0])) @ y0))
    return total


def test_a_linear_ode_matches_its_closed_form_in_y0_t_and_the_matrix():
    y0 = np.array([1.0, 0.5])
    value, gradients = cpsgrad.value_and_grad(linear_loss, argnums=(0, 1, 2))(y0, TIMES, A)
    assert value == linear_loss(y0, TIMES, A)  # scipy's own forward
    expected = cpsgrad.grad(closed_form_loss, argnums=(0, 1, 2))(y0, TIMES, A)
    for gradient, wanted in zip(gradients, expected, strict=True):
        assert gradient.shape == wanted.shape and gradient.dtype == np.float64
        np.testing.assert_allclose(gradient, wanted, rtol=1e-7, atol=1e-8)
    assert abs(gradients[1][0]) > 0.1  # the start time's gradient is not trivially zero
    check_grad(linear_loss, y0, TIMES, A, argnums=(0, 1, 2), rtol=1e-6)


# ---- a nonlinear ODE with parameters in args ------------------------------------------------------


def predation(y0, alpha, beta, t):
    ys = odeint(lotka_volterra, y0, t, args=(alpha, beta, 0.8, 0.3), **TIGHT)
    return np.sum(ys[:, 0] * ys[:, 1]) + np.sum(ys[-1] ** 2)


def test_lotka_volterra_in_y0_float_parameters_and_t():
    y0, t = np.array([1.0, 0.5]), np.linspace(0.0, 3.0, 6)
    check_grad(predation, y0, 1.1, 0.4, t, argnums=(0, 1, 2, 3), rtol=1e-6)
    gradients = cpsgrad.grad(predation, argnums=(1, 2))(y0, 1.1, 0.4, t)
    assert all(type(g) is float for g in gradients)  # a float's gradient is a float


def test_lotka_volterra_matches_jax():
    jax = pytest.importorskip("jax")
    from jax.experimental.ode import odeint as jax_odeint

    y0, t = np.array([1.0, 0.5]), np.linspace(0.0, 3.0, 6)

    def reference(y0, alpha, beta, t):
        def dynamics(y, s, alpha, beta):
            return jax.numpy.stack(lotka_volterra(y, s, alpha, beta, 0.8, 0.3))

        ys = jax_odeint(dynamics, y0, t, alpha, beta, rtol=1e-10, atol=1e-10)
        return jax.numpy.sum(ys[:, 0] * ys[:, 1]) + jax.numpy.sum(ys[-1] ** 2)

    gradients = cpsgrad.grad(predation, argnums=(0, 1, 2, 3))(y0, 1.1, 0.4, t)
    with jax.enable_x64(True):
        expected = jax.grad(reference, argnums=(0, 1, 2, 3))(y0, 1.1, 0.4, t)
    for gradient, wanted in zip(gradients, expected, strict=True):
        np.testing.assert_allclose(gradient, np.asarray(wanted), rtol=1e-6, atol=1e-8)


# ---- forms of the call ----------------------------------------------------------------------------


def forced_loss(y0, k, t):
    return np.sum(odeint(forced, y0, t, (k,), tfirst=True, **TIGHT) ** 2)


def test_tfirst_and_a_non_autonomous_right_hand_side():
    check_grad(forced_loss, np.array([1.0, -2.0]), 0.7, np.array([0.1, 0.4, 1.0]), argnums=(0, 1, 2), rtol=1e-6)


def decreasing_times(y0, a):
    return np.sum(WEIGHTS[:3] * odeint(linear, y0, np.array([1.0, 0.5, 0.5]), (a,), **TIGHT))


def test_decreasing_times_and_a_repeated_time_point():
    check_grad(decreasing_times, np.array([1.0, 0.5]), A, argnums=(0, 1), rtol=1e-6)


@dataclasses.dataclass
class Rates:
    scale: np.ndarray
    shift: float


def nested(y, t, params, rates, label, power):
    ((w, b),) = params
    return rates.scale * np.tanh(w @ y + b) - rates.shift * y**power


def nested_loss(w, b, scale, shift):
    ys = odeint(nested, np.array([0.3, -0.2]), TIMES, ([(w, b)], Rates(scale, shift), "ignored", 1), **TIGHT)
    return np.sum(WEIGHTS * ys)


def test_args_of_lists_tuples_dataclasses_with_constants_among_them():
    w, b = np.array([[0.5, -1.0], [0.3, 0.2]]), np.array([0.1, -0.4])
    check_grad(nested_loss, w, b, np.array([1.5, 0.5]), 0.2, argnums=(0, 1, 2, 3), rtol=1e-6)


def scalar_state(y0, k):
    return odeint(forced, y0, TIMES, (k,), tfirst=True, **TIGHT)[-1, 0]


def listed_state(a, b):
    return np.sum(WEIGHTS * odeint(linear, [a, b], TIMES, (A,), **TIGHT))


def test_a_scalar_y0_gets_a_float_and_a_listed_one_its_elements():
    check_grad(scalar_state, 1.5, 0.5, argnums=(0, 1), rtol=1e-6)
    gradient = cpsgrad.grad(scalar_state)(1.5, 0.5)
    assert type(gradient) is float
    check_grad(listed_state, 1.0, 0.5, argnums=(0, 1), rtol=1e-6)


def relay(y0, a):
    """odeint in a loop: each leg starts where the last ended, with the matrix scaled."""
    y = y0
    total = 0.0
    for leg in range(3):
        ys = odeint(linear, y, np.array([0.0, 0.3, 0.6]), (a * (1.0 + 0.5 * leg),), **TIGHT)
        total = total + np.sum(ys[1] * WEIGHTS[leg])
        y = ys[-1]
    return total + np.sum(y**2)


def solve(y0, a):
    return odeint(linear, y0, TIMES, (a,), **TIGHT)


def through_a_helper(y0, a):
    return np.sum(WEIGHTS * solve(y0, a)) + np.sum(solve(2.0 * y0, a)[-1])


def test_odeint_in_a_loop_and_inside_a_user_function():
    y0 = np.array([1.0, 0.5])
    check_grad(relay, y0, A, argnums=(0, 1), rtol=1e-6)
    check_grad(through_a_helper, y0, A, argnums=(0, 1), rtol=1e-6)


def discarded(y0, a):
    unused = odeint(linear, y0, TIMES, (a,))  # noqa: F841
    return np.sum(y0 * y0) + np.sum(a)


def discarded_in_part(y0, a):
    ys = odeint(linear, y0, TIMES, (a,), **TIGHT)
    return np.sum(y0) + 0.0 * ys[0, 0]


def test_a_discarded_result_contributes_exact_zeros():
    y0 = np.array([1.0, 0.5])
    g_y0, g_a = cpsgrad.grad(discarded, argnums=(0, 1))(y0, A)
    np.testing.assert_array_equal(g_y0, 2.0 * y0)
    np.testing.assert_array_equal(g_a, np.ones_like(A))
    g_y0, g_a = cpsgrad.grad(discarded_in_part, argnums=(0, 1))(y0, A)
    np.testing.assert_array_equal(g_y0, np.ones(2))
    np.testing.assert_array_equal(g_a, np.zeros_like(A))  # an output adjoint of zeros: no NaN


def test_float32_arguments_get_float32_gradients():
    y0, k = np.array([1.0, -2.0], np.float32), np.array(0.7, np.float32)
    gradients = cpsgrad.grad(forced_loss, argnums=(0, 1))(y0, k, TIMES)
    assert [g.dtype for g in gradients] == [np.float32, np.float32]
    assert gradients[0].shape == (2,) and gradients[1].shape == ()
    expected = cpsgrad.grad(forced_loss, argnums=(0, 1))(y0.astype(np.float64), 0.7, TIMES)
    np.testing.assert_allclose(gradients[0], expected[0], rtol=1e-5)
    np.testing.assert_allclose(gradients[1], expected[1], rtol=1e-5)


def only_the_solution(k):
    ys, info = odeint(forced, np.ones(2), TIMES, (k,), tfirst=True, full_output=True, **TIGHT)
    return np.sum(ys) + float(len(info))


def test_full_output_differentiates_the_solution():
    check_grad(only_the_solution, 0.5, rtol=1e-6)


def test_array_tolerances_serve_the_augmented_system():
    def loss(y0, a):
        return np.sum(WEIGHTS * odeint(linear, y0, TIMES, (a,), rtol=1e-10, atol=np.array([1e-10, 1e-11])))

    check_grad(loss, np.array([1.0, 0.5]), A, argnums=(0, 1), rtol=1e-6)


# ---- refusals -------------------------------------------------------------------------------------


def closure_over_parameters(theta, y0):
    """func a nested def over a dict of parameters and a lambda with a default: their gradients
    reach theta through the closures' environments."""
    scale = theta["scale"]

    def decay(y, t):
        return -theta["rate"] * y + scale * np.sin(t)

    ys = odeint(decay, y0, TIMES, **TIGHT)
    zs = odeint(lambda y, t, w=theta["rate"]: -w * y * y, y0, TIMES, **TIGHT)
    return np.sum(WEIGHTS * ys) + np.sum(WEIGHTS * zs)


def through_args(rate, scale, y0):
    ys = odeint(forced_by, y0, TIMES, (rate, scale), **TIGHT)
    zs = odeint(squared, y0, TIMES, (rate,), **TIGHT)
    return np.sum(WEIGHTS * ys) + np.sum(WEIGHTS * zs)


def forced_by(y, t, rate, scale):
    return -rate * y + scale * np.sin(t)


def squared(y, t, w):
    return -w * y * y


def test_a_closure_over_parameters_gets_their_gradients():
    theta, y0 = {"rate": 0.7, "scale": 0.3}, np.array([1.0, 0.5])
    gradient = cpsgrad.grad(closure_over_parameters)(theta, y0)
    rate, scale, y0_gradient = cpsgrad.grad(through_args, argnums=(0, 1, 2))(0.7, 0.3, y0)
    assert gradient.keys() == {"rate", "scale"}
    np.testing.assert_allclose([gradient["rate"], gradient["scale"]], [rate, scale], rtol=1e-9)
    check_grad(through_args, 0.7, 0.3, y0, argnums=(0, 1, 2), rtol=1e-6)
    assert cpsgrad.grad(closure_over_parameters, argnums=1)(theta, y0) == pytest.approx(y0_gradient, rel=1e-9)


def ivp_closure(rate, y0):
    sol = scipy.integrate.solve_ivp(lambda t, y: -rate * y * (1.0 + t), (0.0, 1.0), y0, t_eval=[0.5, 1.0], **TIGHT)
    return np.sum(sol.y**2)


def test_solve_ivp_with_a_closure():
    arguments = (0.7, np.array([1.0, 0.5]))
    gradients = cpsgrad.grad(ivp_closure, argnums=(0, 1))(*arguments)
    for position, gradient in enumerate(gradients):
        np.testing.assert_allclose(gradient, numeric_gradient(ivp_closure, arguments, position), rtol=1e-5)


def partial_over_a_parameter(k):
    rhs = functools.partial(forced, k=k)
    return np.sum(odeint(rhs, np.ones(2), TIMES, tfirst=True))


def recursive_closure(k):
    def rhs(y, t, depth=0):
        return -k * y if depth else rhs(y, t, 1)

    return np.sum(odeint(rhs, np.ones(2), TIMES))


def test_a_func_holding_values_cpsgrad_cannot_follow_is_refused():
    with pytest.raises(UnsupportedError, match=r"odeint of partial: func holds values of its own .*\(a partial"):
        cpsgrad.grad(partial_over_a_parameter)(0.5)
    with pytest.raises(UnsupportedError, match=r"odeint of recursive_closure.<locals>.rhs: func holds values"):
        cpsgrad.grad(recursive_closure)(0.5)


def mapped(y, t, a, g):
    return g(a @ y)


def odd_args(k):
    return np.sum(odeint(mapped, np.ones(2), TIMES, (A * k, lambda v, s=k: v * s)))


def solver_info(k):
    ys, info = odeint(forced, np.ones(2), TIMES, (k,), tfirst=True, full_output=True)
    return np.sum(ys) + np.sum(info["hu"])


def positional_options(k):
    return np.sum(odeint(forced, np.ones(2), TIMES, (k,), None, 0, 0, None, None, 1e-8, tfirst=True))


def test_the_refusals_name_the_call_and_the_argument():
    with pytest.raises(UnsupportedError, match=r"scipy.integrate.odeint: args\[1\] is a function; .* pass its values"):
        cpsgrad.grad(odd_args)(0.5)
    with pytest.raises(UnsupportedError, match=r"odeint\(full_output=True\): the solver's infodict"):
        cpsgrad.grad(solver_info)(0.5)
    with pytest.raises(NoRuleError, match=r"call of odeint: no derivative rule for odeint fits these arguments"):
        cpsgrad.grad(positional_options)(0.5)


# ---- solve_ivp ------------------------------------------------------------------------------------


def numeric_gradient(f, args, position):
    """Central differences of fourth order (steps 1e-3 and 2e-3): f's derivative in args[position]."""
    x = np.asarray(args[position], dtype=np.float64)
    found = np.zeros(x.shape)
    for index in np.ndindex(x.shape):
        values = []
        for step in (2e-3, 1e-3, -1e-3, -2e-3):
            moved = x.copy()
            moved[index] += step
            changed = list(args)
            changed[position] = moved if x.ndim else float(moved)
            values.append(f(*changed))
        found[index] = (-values[0] + 8.0 * values[1] - 8.0 * values[2] + values[3]) / 12e-3
    return found


def lotka_volterra_first(t, y, alpha, beta):
    return lotka_volterra(y, t, alpha, beta, 0.8, 0.3)


def ivp_loss(y0, alpha, beta, t_eval, start, method="RK45"):
    sol = scipy.integrate.solve_ivp(
        lotka_volterra_first, (start, 3.0), y0, method=method, t_eval=t_eval, args=(alpha, beta), **TIGHT
    )
    return np.sum(sol.y[0] * sol.y[1]) + np.sum(sol.y[:, -1] ** 2)


@pytest.mark.parametrize("method", ["RK45", "DOP853", "LSODA"])
def test_solve_ivp_in_y0_args_t_eval_and_the_start(method):
    arguments = (np.array([1.0, 0.5]), 1.1, 0.4, np.array([0.5, 1.0, 2.0, 2.5]), 0.1, method)
    value, gradients = cpsgrad.value_and_grad(ivp_loss, argnums=(0, 1, 2, 3, 4))(*arguments)
    assert value == ivp_loss(*arguments)
    assert type(gradients[1]) is float and type(gradients[4]) is float
    for position, gradient in enumerate(gradients):
        np.testing.assert_allclose(gradient, numeric_gradient(ivp_loss, arguments, position), rtol=1e-5, atol=1e-6)


def test_solve_ivp_matches_odeint_on_the_same_problem():
    """The same trajectory sampled at the same times from the same start: the same gradients."""
    y0, t_eval = np.array([1.0, 0.5]), np.array([0.1, 1.0, 2.0, 3.0])

    def by_odeint(y0, alpha, t):
        ys = odeint(lotka_volterra, y0, t, (alpha, 0.4, 0.8, 0.3), **TIGHT)
        return np.sum(ys[:, 0] * ys[:, 1]) + np.sum(ys[-1] ** 2)

    def by_solve_ivp(y0, alpha, t):
        return ivp_loss(y0, alpha, 0.4, t, 0.1)

    expected = cpsgrad.grad(by_odeint, argnums=(0, 1, 2))(y0, 1.1, t_eval)
    found = cpsgrad.grad(by_solve_ivp, argnums=(0, 1, 2))(y0, 1.1, t_eval)
    np.testing.assert_allclose(found[0], expected[0], rtol=1e-6)
    np.testing.assert_allclose(found[1], expected[1], rtol=1e-6)
    # t_eval[0] is the start too: odeint's t[0] gets both parts, solve_ivp's t_eval[0] one of them
    np.testing.assert_allclose(found[2][1:], expected[2][1:], rtol=1e-6)


def ivp_without_t_eval(y0):
    return np.sum(scipy.integrate.solve_ivp(lotka_volterra_first, (0.0, 1.0), y0, args=(1.0, 0.4)).y)


def ivp_reading_t(y0):
    sol = scipy.integrate.solve_ivp(lotka_volterra_first, (0.0, 1.0), y0, t_eval=[0.5, 1.0], args=(1.0, 0.4))
    return np.sum(sol.y) + np.sum(sol.t * sol.y[0])


def ivp_with_dense_output(y0):
    sol = scipy.integrate.solve_ivp(
        lotka_volterra_first, (0.0, 1.0), y0, t_eval=[0.5, 1.0], dense_output=True, args=(1.0, 0.4)
    )
    return np.sum(sol.y)


def stop(t, y, alpha, beta):
    return y[0] - 0.5


def ivp_with_events(y0):
    sol = scipy.integrate.solve_ivp(lotka_volterra_first, (0.0, 1.0), y0, t_eval=[0.5], events=stop, args=(1.0, 0.4))
    return np.sum(sol.y)


def test_solve_ivp_refusals_name_what_is_not_differentiated():
    y0 = np.array([1.0, 0.5])
    with pytest.raises(UnsupportedError, match=r"solve_ivp with sol.y without t_eval: .* pass t_eval"):
        cpsgrad.grad(ivp_without_t_eval)(y0)
    with pytest.raises(UnsupportedError, match=r"solve_ivp with its result's t: only sol.y is differentiated"):
        cpsgrad.grad(ivp_reading_t)(y0)
    with pytest.raises(UnsupportedError, match=r"solve_ivp with dense_output=True"):
        cpsgrad.grad(ivp_with_dense_output)(y0)
    with pytest.raises(UnsupportedError, match=r"solve_ivp with events"):
        cpsgrad.grad(ivp_with_events)(y0)


def few_steps(k):
    return np.sum(odeint(forced, np.ones(2), TIMES, (k,), tfirst=True, mxstep=3))


def without_a_rule(y, t, k):
    return -k * scipy.special.owens_t(np.clip(y, 0.1, 0.9), 0.5)


def through_a_primitive_without_a_rule(k):
    return np.sum(odeint(without_a_rule, np.full(2, 0.5), TIMES, (k,)))


def test_a_failed_backward_solve_and_a_func_without_rules_are_refused():
    with (
        pytest.warns(scipy.integrate.ODEintWarning),
        pytest.raises(
            UnsupportedError, match=r"odeint's backward solve: odeint of the adjoint system from t=2.0 .* failed"
        ),
    ):
        cpsgrad.grad(few_steps)(5.0)
    with pytest.raises(NoRuleError, match=r"test_rules_integrate.py:\d+:\d+: call of scipy.special.owens_t"):
        cpsgrad.grad(through_a_primitive_without_a_rule)(1.0)


def ivp_by_key(y0):
    sol = scipy.integrate.solve_ivp(lotka_volterra_first, (0.0, 1.0), y0, t_eval=[0.5, 1.0], args=(1.0, 0.4), **TIGHT)
    return np.sum(sol["y"] ** 2)


def test_solve_ivp_result_read_by_key():
    y0 = np.array([1.0, 0.5])
    np.testing.assert_allclose(cpsgrad.grad(ivp_by_key)(y0), numeric_gradient(ivp_by_key, (y0,), 0), rtol=1e-5)


def ivp_backward_in_time(y0, alpha, t_eval, start):
    sol = scipy.integrate.solve_ivp(
        lotka_volterra_first, [start, 0.0], y0, t_eval=t_eval, args=(alpha, 0.4), method="DOP853", **TIGHT
    )
    return np.sum(WEIGHTS[:3].T * sol.y)


def test_solve_ivp_backward_in_time_with_the_first_output_at_the_start():
    """t_eval[0] is the start: each can only move with the other (t_eval within t_span), so their
    gradients are checked as a sum, by moving both."""
    y0, t_eval = np.array([1.0, 0.5]), np.array([2.0, 1.0, 0.25])
    gradients = cpsgrad.grad(ivp_backward_in_time, argnums=(0, 1, 2, 3))(y0, 1.1, t_eval, 2.0)
    np.testing.assert_allclose(
        gradients[0], numeric_gradient(ivp_backward_in_time, (y0, 1.1, t_eval, 2.0), 0), rtol=1e-5
    )
    np.testing.assert_allclose(
        gradients[1], numeric_gradient(ivp_backward_in_time, (y0, 1.1, t_eval, 2.0), 1), rtol=1e-5
    )

    def later_times(rest):
        return ivp_backward_in_time(y0, 1.1, np.concatenate(([2.0], rest)), 2.0)

    def both(shift):
        return ivp_backward_in_time(y0, 1.1, t_eval + np.array([shift, 0.0, 0.0]), 2.0 + shift)

    np.testing.assert_allclose(gradients[2][1:], numeric_gradient(later_times, (t_eval[1:],), 0), rtol=1e-5)
    np.testing.assert_allclose(gradients[2][0] + gradients[3], numeric_gradient(both, (0.0,), 0), rtol=1e-5, atol=1e-7)
    assert abs(gradients[3]) > 1e-2 and abs(gradients[2][0]) > 1e-2  # both parts are there


def kinked(y, t, k):
    return -k * y * np.abs(t - 1.0)


def with_a_critical_point(k, y0):
    times = np.array([0.0, 0.7, 1.4, 2.0])  # the critical point 1.0 is inside an interval
    return np.sum(WEIGHTS[:4] * odeint(kinked, y0, times, (k,), tcrit=np.array([1.0, 5.0]), **TIGHT))


def test_tcrit_points_inside_an_interval_end_pieces_of_the_backward_solve():
    """lsoda refuses the forward's critical points on a backward solve ('Illegal input'): the
    backward ends its pieces at them instead, and the gradient is right."""
    arguments = (0.7, np.array([1.0, 2.0]))
    gradients = cpsgrad.grad(with_a_critical_point, argnums=(0, 1))(*arguments)
    for position, gradient in enumerate(gradients):
        np.testing.assert_allclose(gradient, numeric_gradient(with_a_critical_point, arguments, position), rtol=1e-6)
