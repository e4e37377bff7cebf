# ruff: noqa: F821, F841  (rule templates: read by the transform, their names undefined)
"""`try` and `with` (transforms/exceptions.py, transforms/regions.py, adjoint/guards.py).

Each corpus program (tests/corpus/exception_programs.py) is run four ways: the original, the
normalized program, the CPS program and the derivative program; values, the side effects (`LOG`)
and the exceptions must be the same, and the gradient must match finite differences. Then the
traps of CPS: only the try body's own statements may be caught (an exception after the try, or
in its handler, goes on), a callee's exception is caught only before it enters its continuation,
the backward of what ran runs exactly once, the backward pass's own exceptions and cpsgrad's
refusals are never caught by the user's handlers.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cpsgrad
from cpsgrad import runtime
from cpsgrad.errors import RuleError, UnsupportedError
from cpsgrad.rules.registry import TABLE
from cpsgrad.testing import check_grad
from tests.corpus import exception_programs as corpus
from tests.corpus.exception_programs import LOG, Trace, checked


def _stage(function, stage: str, name: str):
    namespace = dict(function.__globals__)
    namespace["cpsgrad_runtime"] = runtime
    exec(cpsgrad.show(function, stage=stage), namespace)
    return namespace[name]


def _outcome(call):
    """(value or the exception's type and message, the side effects)."""
    LOG.clear()
    try:
        result = ("value", call())
    except Exception as error:  # noqa: BLE001 (compared below)
        result = ("raised", type(error), str(error))
    return result, list(LOG)


@pytest.mark.parametrize("case", corpus.CASES, ids=lambda case: case.name)
def test_every_stage_runs_as_the_original(case):
    normalized = _stage(case.function, "normalize", case.name)
    continuation_passing = _stage(case.function, "cps", case.name + "__cps")
    derivative = cpsgrad.value_and_grad(case.function, argnums=case.argnums)

    @settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(st.tuples(*case.arguments))
    def check(arguments):
        expected, log = _outcome(lambda: case.function(*arguments))
        for run in (
            lambda: normalized(*arguments),
            lambda: continuation_passing(*arguments, lambda v: v),
            lambda: derivative(*arguments)[0],
        ):
            got, got_log = _outcome(run)
            assert got_log == log
            assert got[0] == expected[0] and np.array_equal(got[1:], expected[1:])

    check()


@pytest.mark.parametrize(
    ("function", "arguments"),
    [
        (corpus.else_raises, [(0.5,), (-0.5,)]),
        (corpus.finally_raises, [(0.5,), (-0.5,)]),
        (corpus.return_in_finally_in_loop, [(0.7, n) for n in range(4)]),
        (corpus.every_jump_through_two_finallys, [(0.7, n) for n in range(7)]),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_exceptions_raised_in_else_and_finally_leave_as_in_python(function, arguments):
    """An exception in `else` or `finally` is not caught by the same try; every stage raises
    (or returns) as the original, with the same side effects."""
    normalized = _stage(function, "normalize", function.__name__)
    continuation_passing = _stage(function, "cps", function.__name__ + "__cps")
    for values in arguments:
        expected = _outcome(lambda values=values: function(*values))
        assert _outcome(lambda values=values: normalized(*values)) == expected
        assert _outcome(lambda values=values: continuation_passing(*values, lambda v: v)) == expected
        assert _outcome(lambda values=values: cpsgrad.value_and_grad(function)(*values)[0]) == expected


# --- values computed before the raise contribute; what did not run does not ----------------


@pytest.mark.parametrize("x", [-1.3, 0.2, 0.7, 1.9])
def test_statements_that_ran_before_the_raise_contribute(x):
    gradient = cpsgrad.grad(corpus.caught_value_error)(x)
    expected = 3 * x * x + 2 * x if x > 0.5 else 9 * x * x  # (x^2 + x) x, else 3 x^2 x
    assert gradient == pytest.approx(expected, rel=1e-12)


# --- an exception after the try, or raised by its handler, is not caught by it ----------------


def raises_after_the_try(x):
    try:
        y = x * 2.0
    except ValueError:
        LOG.append("handler")
        y = 0.0
    if y > 1.0:
        raise ValueError("after the try")
    return y


def double(v):
    return v * 2.0


def raises_after_a_guarded_call(x):
    try:
        y = double(x)
    except ValueError:
        LOG.append("handler")
        y = x
    z = y * x
    if z > 1.0:
        raise ValueError("after the try")
    return z


def handler_raises(x):
    try:
        try:
            raise KeyError("inner")
        except KeyError:
            LOG.append("inner handler")
            raise ValueError("from the handler")  # noqa: B904 (the context is the point)
    except ValueError:
        LOG.append("outer handler")
        y = x * 3.0
    return y


@pytest.mark.parametrize("function", [raises_after_the_try, raises_after_a_guarded_call])
def test_an_exception_after_the_try_propagates(function):
    LOG.clear()
    with pytest.raises(ValueError, match="after the try"):
        cpsgrad.grad(function)(2.0)
    assert LOG == []
    check_grad(function, 0.3)


def test_an_exception_raised_in_a_handler_goes_to_the_enclosing_try_only():
    LOG.clear()
    assert cpsgrad.value_and_grad(handler_raises)(1.5) == (4.5, 3.0)
    assert LOG == ["inner handler", "outer handler"]


def test_a_bare_raise_in_a_handler_re_raises_the_same_exception():
    def reraises(x):
        try:
            y = x * 2.0
            raise KeyError("original")
        except KeyError:
            raise
        return y

    with pytest.raises(KeyError, match="original"):
        cpsgrad.grad(reraises)(1.0)


# --- a callee's exception: caught only before it enters its continuation ----------------------


def risky(v):
    w = v * v
    if w > 1.0:
        raise ValueError("too large")
    return w + v


def calls_risky(x):
    try:
        y = risky(x)
        LOG.append("after the call")
        y = y * x
    except ValueError:
        LOG.append("handler")
        y = x * 3.0
    return y * y


@pytest.mark.parametrize("x", [-1.5, -0.4, 0.6, 1.7])
def test_an_exception_in_a_called_function_is_caught_and_its_backward_skipped(x):
    LOG.clear()
    value, gradient = cpsgrad.value_and_grad(calls_risky)(x)
    expected_log = ["handler"] if x * x > 1.0 else ["after the call"]
    assert LOG == expected_log
    LOG.clear()
    assert value == calls_risky(x) and LOG == expected_log
    check_grad(calls_risky, x)


def recursive_in_try(x, n):
    try:
        if n == 0:
            raise LookupError
        y = recursive_in_try(x * 1.1, n - 1)
    except LookupError:
        y = x * x
    return y + x


@pytest.mark.parametrize("n", [0, 1, 4])
def test_a_recursive_call_inside_a_try(n):
    check_grad(recursive_in_try, 0.7, n)


def traced(x):
    return x * 1.0


BACKWARD_RUNS: list = []


def note_backward(g):
    BACKWARD_RUNS.append(g)
    return g


@pytest.fixture
def traced_rule():
    def template(x):
        y = traced(x)
        y_d = yield y
        x_d += note_backward(y_d)

    cpsgrad.rule(traced)(template)
    added = TABLE.rules_for(traced)[0]
    yield
    TABLE.remove(added)


def rest_traced(x):
    try:
        y = risky(x)
    except ValueError:
        y = x * 2.0
    z = traced(y)
    return z * x


def rest_in_handler_traced(x):
    try:
        y = risky(x)
        y = traced(y)
    except ValueError:
        y = traced(x * 2.0)
    return y * x


@pytest.mark.parametrize("function", [rest_traced, rest_in_handler_traced])
@pytest.mark.parametrize("x", [0.5, 1.5])
def test_the_backward_of_the_rest_runs_exactly_once(traced_rule, function, x):
    BACKWARD_RUNS.clear()
    cpsgrad.grad(function)(x)
    assert len(BACKWARD_RUNS) == 1
    check_grad(function, x)


# --- the backward's own exceptions and cpsgrad's refusals are never caught ----------------


def catches_everything(x):
    try:
        y = traced(x)
    except Exception:
        y = x
    return y * 2.0


def test_an_exception_in_the_backward_pass_is_not_caught_by_the_users_try():
    def raises(x):
        y = traced(x)
        y_d = yield y
        x_d += y_d / 0

    cpsgrad.rule(traced)(raises)
    added = TABLE.rules_for(traced)[0]
    try:
        with pytest.raises(RuleError, match="its backward raised ZeroDivisionError"):
            cpsgrad.grad(catches_everything)(0.5)
    finally:
        TABLE.remove(added)


def in_place_in_try(x):
    try:
        y = x * 1.0
        z = y.reshape(3)
        y += x  # y's array is the view z's too: refused when it runs (an array)
    except Exception:
        y = z = x
    return np.sum(y * z)


def test_a_refusal_is_not_caught_by_the_users_handlers():
    with pytest.raises(UnsupportedError, match="in place"):
        cpsgrad.grad(in_place_in_try)(np.ones(3))


def test_a_manager_cannot_swallow_a_refusal():
    def suppresses(x):
        y = x * 1.0
        with corpus.contextlib.suppress(Exception):
            y += np.ones((2, 3))  # numpy raises (it cannot broadcast into y), cpsgrad refuses when it runs
        return np.sum(y)

    with pytest.raises(UnsupportedError, match="in place"):
        cpsgrad.grad(suppresses)(np.ones(3))


# --- with: enter before the body, exit after it (with the exception) --------------------------


def test_exit_gets_the_exception_and_swallowing_continues_after_the_with():
    LOG.clear()
    value, gradient = cpsgrad.value_and_grad(corpus.user_manager_swallows)(1.0)
    assert LOG == [("enter", "outer"), ("enter", "inner"), ("exit", "inner", "ValueError"), ("exit", "outer", None)]
    assert (value, gradient) == (3.0, 3.0)


def test_a_manager_without_the_protocol_raises_as_python_does():
    def no_protocol(x):
        with 3:
            y = x
        return y

    with pytest.raises(TypeError, match="does not support the context manager protocol"):
        no_protocol(1.0)
    with pytest.raises(TypeError, match="does not support the context manager protocol"):
        cpsgrad.grad(no_protocol)(1.0)


def test_exit_runs_when_a_return_or_break_leaves_the_with():
    def leaves(x, n):
        acc = x
        for i in range(n):
            with Trace(i):
                acc = acc * 1.5
                if acc > 3.0:
                    break
        with Trace("last"):
            return acc * x

    for x, n in ((1.0, 5), (0.5, 2)):
        expected, log = _outcome(lambda x=x, n=n: leaves(x, n))
        got, got_log = _outcome(lambda x=x, n=n: cpsgrad.value_and_grad(leaves)(x, n)[0])
        assert (got, got_log) == (expected, log)
        check_grad(leaves, x, n)


# --- nesting, arguments used twice, results discarded, long bodies ---------------------------


def used_twice(x, w):
    try:
        a = x * w
        b = a * a
        if b > 4.0:
            raise ArithmeticError
        unused = math.sin(a)
        c = b + a * w
    except ArithmeticError:
        c = a + a
    finally:
        c = c * x
    return c


@pytest.mark.parametrize("x", [0.5, 1.5, -2.5])
def test_arguments_used_twice_and_results_discarded(x):
    check_grad(used_twice, x, 1.3, argnums=(0, 1))


def long_body(x):
    try:
        y = x
        y = y * 1.01
        y = y + 0.1
        y = y * 1.01
        y = y + 0.1
        y = y * 1.01
        y = y + 0.1
        y = y * 1.01
        y = y + 0.1
        y = y * 1.01
        y = y + 0.1
        y = y * 1.01
        y = y + 0.1
        y = y * 1.01
        y = y + 0.1
        y = y * 1.01
        y = y + 0.1
        y = y * 1.01
        y = y + 0.1
        if y > 3.0:
            raise ValueError
        y = y * y
    except ValueError:
        y = y - x
    return y


def test_a_long_try_body_stays_within_pythons_nesting_limits():
    for x in (0.5, 2.0):
        check_grad(long_body, x)


def inactive_call_raises(x, n):
    try:
        checked(n * 1.0)
        y = x * 2.0
    except ValueError:
        y = x * x
    return y


@pytest.mark.parametrize("n", [0, 3])
def test_a_call_made_for_its_effect_raising_in_the_body(n):
    check_grad(inactive_call_raises, 0.8, n)


# --- what is still refused, with its location ------------------------------------------------


def test_the_refusals_name_their_location():
    from tests.cases import rejected

    for name in (
        "uses_try_star",
        "uses_bare_raise_in_finally",
        "uses_except_name_outside",
        "uses_return_assigned_in_finally",
    ):
        with pytest.raises(UnsupportedError) as raised:
            cpsgrad.grad(getattr(rejected, name))(1.0)
        assert raised.value.location is not None and raised.value.location.filename.endswith("rejected.py")
