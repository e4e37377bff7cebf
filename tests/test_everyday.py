"""Everyday Python (issue 15 item 5): assignment expressions, sets of plain values, calls made
for their effect, generator functions. The programs are tests/corpus/everyday_programs.py
(finite differences, the original's values and jax.grad in tests/test_corpus.py); here: the
normalized and CPS stages run with the original's semantics, Python's order of evaluation and
scoping hold exactly, and what stays refused is refused with its location."""

import inspect
import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cpsgrad
from cpsgrad import runtime
from cpsgrad.errors import UnsupportedError
from cpsgrad.testing import check_grad
from tests.corpus import everyday_programs
from tests.corpus.everyday_programs import CASES


def _stage_function(function, stage: str, name: str, argnums=0):
    namespace = dict(function.__globals__)
    namespace["cpsgrad_runtime"] = runtime
    exec(cpsgrad.show(function, stage=stage, argnums=argnums), namespace)
    return namespace[name]


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    return a == b and type(a) is type(b)


# the stages of a function with a nested definition name it by a label only the pipeline binds
STAGED = [case for case in CASES if "lambda" not in inspect.getsource(case.function)]


@pytest.mark.parametrize("case", STAGED, ids=lambda case: case.name)
def test_normalized_and_cps_stages_compute_the_original_value(case):
    normalized = _stage_function(case.function, "normalize", case.name, case.argnums)
    continuation_passing = _stage_function(case.function, "cps", case.name + "__cps", case.argnums)

    @settings(max_examples=8, deadline=None)
    @given(st.tuples(*case.arguments))
    def check(arguments):
        expected = case.function(*arguments)
        assert _same(normalized(*arguments), expected)
        assert _same(continuation_passing(*arguments, lambda value: value), expected)

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)
    try:
        check()
    finally:
        sys.setrecursionlimit(limit)


# --- assignment expressions ----------------------------------------------------------------


def operands_in_order(x):
    y = 1.0
    return y + (y := x * 2.0) + y * (y := y + 1.0) + y


def chained(x):
    return (0.0 < (m := x * 3.0) < 10.0) * m + (m := m * 2.0)


def test_python_order_of_evaluation_decides_every_read():
    for function in (operands_in_order, chained):
        for x in (0.5, -1.5, 2.0):
            value, gradient = cpsgrad.value_and_grad(function)(x)
            assert value == function(x)
            check_grad(function, x)


def comprehension_scope(x):
    values = [x, 2.0 * x, -x]
    doubled = [z for v in values if (z := v * 2.0) > 0]
    return sum(doubled) * z  # z: the last value computed, as Python binds it in the function


def test_a_walrus_in_a_comprehension_binds_the_function_scope():
    for x in (0.7, -0.7):
        assert cpsgrad.value_and_grad(comprehension_scope)(x)[0] == comprehension_scope(x)
        check_grad(comprehension_scope, x)


def test_the_normalized_walrus_reads_well():
    text = cpsgrad.show(everyday_programs.walrus_countdown, stage="normalize")
    assert "n = n - 1" in text
    assert ":=" not in text


def in_fstring(x):
    label = f"{(y := x * 2)}"
    return y + len(label)


def test_a_walrus_in_an_fstring_is_refused_with_its_location():
    with pytest.raises(UnsupportedError) as raised:
        cpsgrad.grad(in_fstring)(1.0)
    error = raised.value
    assert error.construct == "assignment expression (:=) in an f-string"
    assert error.location.line == inspect.getsourcelines(in_fstring)[1] + 1
    assert "line before" in error.advice


def late_capture(x):
    a = 1.0
    g = lambda v: v * a  # noqa: E731
    total = g(x)
    if (a := x * 2.0) > 0:
        total = total + a
    return total


def test_a_closure_capturing_a_name_a_walrus_rebinds_later_is_refused():
    with pytest.raises(UnsupportedError, match="capturing a"):
        cpsgrad.grad(late_capture)(1.0)


# --- sets ----------------------------------------------------------------------------------


def set_display_of_a_differentiable_value(x):
    chosen = {x, 1.0}
    return x * len(chosen)


def set_comprehension_of_differentiable_values(x):
    return len({v * x for v in (1.0, 2.0)}) * x


def set_call_of_differentiable_values(x):
    return len(set([x, x * 2.0])) * x


def set_method_with_a_differentiable_value(x):
    chosen = set()
    chosen.add(x)
    return x * len(chosen)


@pytest.mark.parametrize(
    ("function", "offset"),
    [
        (set_display_of_a_differentiable_value, 1),
        (set_comprehension_of_differentiable_values, 1),
        (set_call_of_differentiable_values, 1),
    ],
)
def test_a_set_holding_a_differentiable_value_is_refused_at_its_line(function, offset):
    function(1.5)  # plain Python runs it
    with pytest.raises(cpsgrad.NoRuleError) as raised:
        cpsgrad.grad(function)(1.5)
    error = raised.value
    assert error.location.line == inspect.getsourcelines(function)[1] + offset
    assert "sets are not differentiable values" in error.advice
    assert "tuple or list" in error.advice


def test_a_set_method_given_a_differentiable_value_is_refused_at_its_line():
    with pytest.raises(UnsupportedError) as raised:
        cpsgrad.grad(set_method_with_a_differentiable_value)(1.5)
    assert raised.value.location.line == inspect.getsourcelines(set_method_with_a_differentiable_value)[1] + 2
    assert raised.value.construct == "method call chosen.add"  # a method of a local value: it keeps the value
    assert "cpsgrad differentiates the methods of numpy arrays" in raised.value.advice


def shadowed_set(x):
    set = list  # noqa: A001
    members = {1, 2, 1 + 1}
    return x * len(members) + len(set((1, 1)))


def test_a_display_builds_a_builtin_set_even_where_set_is_shadowed():
    assert cpsgrad.value_and_grad(shadowed_set)(2.0) == (shadowed_set(2.0), 2.0)


# --- calls made for their effect ------------------------------------------------------------

KEPT = []
BUFFER = np.zeros(3)


def prints(x):
    print("x", x)
    print("twice", float(x) * 2.0)
    return x * x


def test_a_call_for_its_effect_runs_with_the_values_in_order(capsys):
    value, gradient = cpsgrad.value_and_grad(prints)(1.25)
    assert (value, gradient) == (1.5625, 2.5)
    assert capsys.readouterr().out == "x 1.25\ntwice 2.5\n"


def keeps_in_a_list(x):
    KEPT.append(float(x) * 2.0)
    return x * x


def keeps_in_an_object(x):
    everyday_programs.RECORDER.record(x)
    return x * x


CACHE = {}


def remember(value):
    CACHE["last"] = value


def reads_back_through_a_helper(x):
    remember(x * 2.0)  # plain Python would keep x * 2.0 in CACHE, read back below as a constant
    return CACHE["last"] * x


def reads_back_what_it_kept(x, w):
    KEPT.append(x)
    return KEPT[-1] * w


def copies_into_a_buffer_it_reads(x):
    np.copyto(BUFFER, x)
    return np.sum(BUFFER * x)


def hands_over_a_list(x):
    everyday_programs.fake_plotting.plot([x, 1.0])
    return x


def writes_into_its_argument(x):
    everyday_programs.fake_plotting.fill(x, 0.0)
    return np.sum(x)


def uses_a_result_without_a_rule(x):
    mantissa = math.frexp(x)[0]
    return mantissa * x


@pytest.mark.parametrize(
    ("function", "argument", "error", "offset", "message"),
    [
        (reads_back_what_it_kept, 1.5, UnsupportedError, 1, "could keep it where the function"),
        (keeps_in_a_list, 1.5, UnsupportedError, 1, "KEPT.append receives a differentiable value and could keep it"),
        (keeps_in_an_object, 1.5, UnsupportedError, 1, "RECORDER.record receives a differentiable value"),
        (reads_back_through_a_helper, 1.5, UnsupportedError, 1, "remember receives a differentiable value"),
        (copies_into_a_buffer_it_reads, np.ones(3), UnsupportedError, 1, "reads BUFFER again"),
        (hands_over_a_list, 1.5, UnsupportedError, 1, "the callee could change it"),
        (uses_a_result_without_a_rule, 1.5, cpsgrad.NoRuleError, 1, "no derivative rule for math.frexp"),
    ],
    ids=["read back", "kept in a list", "kept in an object", "kept by a helper", "written buffer read", "list",
         "result used"],
)
def test_what_a_call_for_its_effect_could_change_is_refused_at_its_line(function, argument, error, offset, message):
    with pytest.raises(error, match=message) as raised:
        cpsgrad.grad(function, argnums=0)(argument, *([2.0] if function is reads_back_what_it_kept else []))
    assert raised.value.location.line == inspect.getsourcelines(function)[1] + offset
    assert raised.value.location.filename == __file__


def test_a_callee_writing_into_an_array_it_was_given_raises_instead_of_changing_it():
    x = np.ones(3)
    with pytest.raises(ValueError, match="read-only"):
        cpsgrad.grad(writes_into_its_argument)(x)
    assert np.array_equal(x, np.ones(3))


# --- generator functions: consumed lazily (tests/test_generators.py) --------------------------


def scaled(xs, w):
    for x in xs:
        yield x * w


def consumes_a_generator(w):
    return sum(scaled([1.0, 2.0], w))


def test_a_generator_called_from_differentiated_code_is_differentiated():
    assert cpsgrad.value_and_grad(consumes_a_generator)(1.5) == (4.5, 3.0)
