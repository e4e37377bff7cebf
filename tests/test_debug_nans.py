"""debug_nans (cpsgrad.nonfinite): the first statement that makes a NaN or an infinity from
finite values is named, with its pass, the values it read and made and its generated line."""

import gc
import inspect
import sys

import numpy as np
import pytest

import cpsgrad
from cpsgrad import nonfinite
from tests.cases import nan_functions as cases
from tests.cases import nan_helpers


def _birth(module, name: str) -> int:
    """The line of `module` marked `# birth: name`."""
    lines = inspect.getsource(module).splitlines()
    found = [number for number, line in enumerate(lines, 1) if line.rstrip().endswith(f"# birth: {name}")]
    assert len(found) == 1, name
    return found[0]


def _error(function, *args, argnums=0) -> cpsgrad.NonFiniteError:
    with np.errstate(all="ignore"), pytest.raises(cpsgrad.NonFiniteError) as caught:
        cpsgrad.grad(function, argnums=argnums, debug_nans=True)(*args)
    return caught.value


def _at(error, module, name: str) -> None:
    assert error.location is not None
    assert error.location.filename == inspect.getsourcefile(module)
    assert error.location.line == _birth(module, name)
    assert str(error).startswith(f"{error.location}: debug_nans: ")


def test_a_nan_made_in_the_forward_pass_names_its_statement():
    error = _error(cases.log_of_negated, 1.0)
    _at(error, cases, "log_of_negated")
    assert error.phase == "forward"
    assert error.source_line == "y = np.log(-x)  # birth: log_of_negated"
    assert error.statement == "y = np.log(t1)"
    assert error.inputs == {"t1": "-1.0"}
    assert list(error.results) == ["y"] and "nan" in error.results["y"]
    assert "y = np.log(t1)" in str(error) and "forward pass" in str(error)
    # the statement is a line of the program show prints
    shown = cpsgrad.show(cases.log_of_negated, example=(1.0,)).splitlines()
    assert shown[error.program_line - 1].strip() == error.statement


def test_an_infinity_made_only_in_the_backward_pass_of_a_root_of_an_array():
    error = _error(cases.root, np.array([1.0, 0.0, 4.0]))
    _at(error, cases, "root")
    assert error.phase == "backward"
    assert "elementwise_adjoint" in error.statement and error.statement.startswith("x_d = ")
    assert "1 of 3 not finite: 1 inf" in error.results["x_d"]
    assert set(error.inputs) == {"x", "y", "y_d"}


def test_a_float_half_power_at_zero_is_infinite_in_the_backward_pass():
    error = _error(cases.half_power, 0.0)
    _at(error, cases, "half_power")
    assert error.phase == "backward"
    assert "power_slope" in error.statement
    assert error.inputs == {"t1_d": "1.0", "x": "0.0"} and error.results == {"x_d": "inf"}


def test_inside_a_loop_the_iteration_that_makes_it_is_reported():
    error = _error(cases.logs_in_a_loop, np.float64(2.0), 4)
    _at(error, cases, "logs_in_a_loop")
    assert error.phase == "forward"
    assert error.results == {next(iter(error.results)): "np.float64(-inf)"}
    assert "np.float64(0.0)" in error.inputs.values()  # x - i at i = 2


def test_inside_a_called_helper_its_own_file_and_line():
    error = _error(cases.calls_the_helper, 0.0)
    _at(error, nan_helpers, "root_scaled")
    assert error.phase == "backward"
    assert error.program == "root_scaled__program"


def test_inside_a_recursion():
    error = _error(cases.recursive_root, 0.0, 6)
    _at(error, cases, "recursive_root")
    assert error.phase == "backward"


def test_inside_a_lambda():
    error = _error(cases.lambda_log, 0.0)
    _at(error, cases, "lambda_log")
    assert error.phase == "forward"
    assert "-inf" in next(iter(error.results.values()))


def test_the_first_non_finite_value_is_blamed_not_what_follows_from_it():
    error = _error(cases.overflow_then_nan, 1000.0)
    _at(error, cases, "overflow_then_nan")
    assert "inf" in str(error) and error.results == {"y": "np.float64(inf)"}


@pytest.mark.parametrize("x", [np.array([1.0, np.nan, 2.0]), np.array([np.inf, 1.0])])
def test_a_non_finite_argument_is_not_blamed_on_the_statements_that_read_it(x):
    error = _error(cases.reads_everything, x, 1.0)
    assert error.phase == "input"
    assert list(error.inputs) == ["x"] and "not finite" in error.inputs["x"]
    assert "the argument x = " in str(error) and "was already non-finite" in str(error)
    # where it was first seen: the first statement reading x
    assert error.location is not None and error.location.filename == inspect.getsourcefile(cases)
    assert error.statement == "t1 = x * 2.0"


def test_a_non_finite_float_argument_and_a_non_finite_global():
    error = _error(cases.ignores_y, float("nan"), 1.0)
    assert error.phase == "input" and list(error.inputs) == ["x"]
    error = _error(cases.times_the_global, 2.0)
    assert error.phase == "input" and error.inputs == {}
    assert "no argument was non-finite" in str(error)


def test_a_non_finite_value_that_never_reaches_the_results_is_not_an_error():
    gradient = cpsgrad.grad(cases.ignores_y, argnums=(0, 1), debug_nans=True)(3.0, float("nan"))
    assert gradient == (2.0, 0.0)
    x = np.array([1.0, np.nan, 3.0])
    with np.errstate(all="ignore"):
        debugged = cpsgrad.grad(cases.cleaned, debug_nans=True)(x)
    np.testing.assert_array_equal(debugged, [2.0, 0.0, 6.0])


def test_watched_runs_give_the_same_values_and_gradients_up_to_rounding():
    x = np.linspace(-1.0, 1.0, 7)
    plain = cpsgrad.value_and_grad(cases.everything_finite)(x, 4)
    watched = cpsgrad.value_and_grad(cases.everything_finite, debug_nans=True)(x, 4)
    assert plain[0] == watched[0]  # the forward pass is the same operations on the same values
    # adjoints added in place or lent to callees unwatched are copied when watched (nonfinite's docstring)
    np.testing.assert_allclose(plain[1], watched[1], rtol=1e-13, atol=1e-15)


def test_value_and_grad_and_the_decorator_forms_take_debug_nans():
    with np.errstate(all="ignore"), pytest.raises(cpsgrad.NonFiniteError):
        cpsgrad.value_and_grad(cases.half_power, debug_nans=True)(0.0)
    with np.errstate(all="ignore"), pytest.raises(cpsgrad.NonFiniteError):
        cpsgrad.grad(debug_nans=True)(cases.half_power)(0.0)


def test_the_environment_variable_turns_it_on_for_gradient_functions_made_while_set(monkeypatch):
    monkeypatch.setenv(nonfinite.ENVIRONMENT, "1")
    watched = cpsgrad.grad(cases.half_power)
    monkeypatch.setenv(nonfinite.ENVIRONMENT, "0")
    plain = cpsgrad.grad(cases.half_power)
    with np.errstate(all="ignore"), pytest.raises(cpsgrad.NonFiniteError):
        watched(0.0)
    assert plain(0.0) == float("inf")


def test_the_tracer_is_removed_after_a_run_and_a_caught_error():
    before = sys.gettrace()
    cpsgrad.grad(cases.half_power, debug_nans=True)(4.0)
    assert sys.gettrace() is before
    _error(cases.half_power, 0.0)
    assert sys.gettrace() is before


def test_the_registry_lets_programs_go():
    gc.collect()  # programs earlier tests left in garbage cycles go first, not during the count
    count = nonfinite.registered()
    namespace: dict = {}
    exec("def program(x, k):\n    def inner():\n        return x\n    return inner\n", namespace)  # noqa: S102
    program = namespace.pop("program")
    nonfinite.register(program, "program__program", "<test>", "x = 1\n", [(None, "forward")])
    assert nonfinite.registered() == count + 2  # its code and the nested function's
    del program
    gc.collect()
    assert nonfinite.registered() == count


def test_a_nan_made_by_a_primitive_called_as_a_value_names_the_users_call():
    """A primitive handed as a value runs in an adapter's program (`def call_log(x0)`); the
    error names the user's call, not the adapter's line."""
    error = _error(cases.log_called_as_a_value, 1.0)
    _at(error, cases, "log_called_as_a_value")
    assert error.phase == "forward" and "call_log" in error.program
