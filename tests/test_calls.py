"""Calls of user functions: helpers, methods, function values, recursion, run-time dispatch, show."""

import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cpsgrad
from cpsgrad.rules.registry import TABLE
from cpsgrad.testing import check_grad
from cpsgrad.testing.strategies import arrays, floats, ints
from tests.cases import calls_functions as cases
from tests.corpus import Case

TREE = cases.balanced_tree(3)
NODES = cases.node_tree(3)
LINKS = cases.linked_list([0.5, 0.9, 1.1, -0.7])
WORDS = cases.word_tree(2, 3)

CASES = [
    Case(cases.calls_helper, (floats(-3.0, 3.0), floats(-3.0, 3.0)), (0, 1)),
    Case(cases.nested_calls, (floats(-1.5, 1.5),)),
    Case(cases.same_argument_twice, (floats(),)),
    Case(cases.defaults_and_keywords, (floats(), floats()), (0, 1)),
    Case(cases.keyword_only_receives_the_gradient, (floats(), floats()), (0, 1)),
    Case(cases.other_module, (floats(-3.0, 3.0),)),
    Case(cases.tuple_result, (floats(),)),
    Case(cases.result_unused, (floats(),)),
    Case(cases.calls_in_loop_and_branches, (floats(-2.0, 2.0), ints(0, 6))),
    Case(cases.reassigns_through_calls, (floats(-2.0, 2.0), ints(0, 5))),
    Case(cases.returns_from_a_loop_through_a_call, (floats(-2.0, 2.0), st.lists(floats(-2.0, 2.0), max_size=4))),
    Case(cases.calls_methods, (floats(-2.0, 2.0),)),
    Case(cases.calls_callable_object, (floats(-2.0, 2.0),)),
    Case(cases.calls_static_and_class_methods, (floats(),)),
    Case(cases.calls_method_of_argument, (floats(-2.0, 2.0), st.just(cases.POLYNOMIAL))),
    Case(cases.calls_partial, (floats(),)),
    Case(cases.applies_functions_passed_as_arguments, (floats(-2.0, 2.0),)),
    Case(cases.applies_functions_from_a_table, (floats(-2.0, 2.0),)),
    Case(cases.indexes_a_table, (floats(-2.0, 2.0), ints(0, 4))),
    Case(cases.passes_a_keyword_to_a_function_value, (floats(),)),
    Case(cases.power, (floats(-1.5, 1.5), ints(0, 8))),
    Case(cases.tail_sum, (floats(-2.0, 2.0), ints(0, 8), floats()), (0, 2)),
    Case(cases.even_weight, (floats(-2.0, 2.0), ints(0, 8))),
    Case(cases.fibonacci_like, (floats(-2.0, 2.0), ints(0, 7))),
    Case(cases.tuple_tree_value, (st.just(TREE), floats(-2.0, 2.0)), 1),
    Case(cases.node_sum, (st.just(NODES), floats(-2.0, 2.0)), 1),
    Case(cases.chain_value, (st.just(LINKS), floats(-1.0, 1.0)), 1),
    Case(cases.chain_sum, (st.just(LINKS), floats()), 1),
    Case(cases.tree_with_active_leaves, (floats(-2.0, 2.0),)),
    Case(cases.tree_network_loss,
         (arrays((3, 3), min_value=-1.0, max_value=1.0), arrays((3, 3), min_value=-1.0, max_value=1.0), arrays(3),
          st.just(WORDS)), (0, 1, 2)),
    Case(cases.two_layers, (arrays((3, 2)), arrays(3), arrays((2, 3)), arrays(2)), (0, 1, 2)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
@settings(max_examples=10)
@given(data=st.data())
def test_value_is_the_originals_and_gradient_matches_differences(case, data):
    arguments = data.draw(st.tuples(*case.arguments))
    check_grad(case.function, *arguments, argnums=case.argnums)


def test_float32_arrays_through_calls_stay_float32():
    rng = np.random.default_rng(3)
    W1, b1, W2, x = (rng.normal(size=s).astype(np.float32) for s in ((3, 2), 3, (2, 3), 2))
    gradients = cpsgrad.grad(cases.two_layers, argnums=(0, 1, 2))(W1, b1, W2, x)
    assert [g.dtype for g in gradients] == [np.float32] * 3
    check_grad(cases.two_layers, W1, b1, W2, x, argnums=(0, 1, 2))


def test_a_lambda_and_a_tuple_result():
    assert cpsgrad.value_and_grad(cases.tuple_result)(3.0) == (4.5 + 1.5, 3.0 + 0.5)


# ---- depth -------------------------------------------------------------------------------------


class _RecursionLimit:
    """The original functions recurse as deep as the transformed ones: let them."""

    def __enter__(self):
        self.saved = sys.getrecursionlimit()
        sys.setrecursionlimit(100_000)

    def __exit__(self, *exc):
        sys.setrecursionlimit(self.saved)


def _timed(function, *arguments, argnums=0):
    start = time.perf_counter()
    value, gradient = cpsgrad.value_and_grad(function, argnums=argnums)(*arguments)
    return value, gradient, time.perf_counter() - start


def test_linear_recursion_ten_thousand_deep():
    n = 10_000
    value, gradient, seconds = _timed(cases.power, 0.9999, n)
    with _RecursionLimit():
        assert value == cases.power(0.9999, n)
    assert gradient == pytest.approx(n * 0.9999 ** (n - 1), rel=1e-9)
    assert seconds < 10.0
    limit = sys.getrecursionlimit()
    value, gradient, _ = _timed(cases.chain_sum, cases.linked_list([1.0] * n), 0.7, argnums=1)
    assert gradient == pytest.approx(2.0, rel=1e-9)  # sum of 0.5**i
    assert sys.getrecursionlimit() == limit


def test_tail_recursion_hands_over_its_continuation():
    assert "out, x_d, t6_d = call_1_site(tail_sum, k, x, t2, t6)" in cpsgrad.show(cases.tail_sum, argnums=(0, 2))
    value, gradient, seconds = _timed(cases.tail_sum, 0.5, 10_000, 0.0)
    with _RecursionLimit():
        assert value == cases.tail_sum(0.5, 10_000, 0.0)
    assert gradient == pytest.approx(sum(math.cos(0.5 * n) for n in range(1, 10_001)), rel=1e-9)


@pytest.mark.parametrize(
    ("function", "tree"),
    [(cases.tuple_tree_value, cases.left_comb(1000)), (cases.node_sum, cases.node_spine(1000))],
    ids=["nested tuples", "objects with children"],
)
def test_tree_recursion_a_thousand_deep(function, tree):
    value, gradient, seconds = _timed(function, tree, 0.7, argnums=1)
    with _RecursionLimit():
        assert value == function(tree, 0.7)
        assert gradient == pytest.approx((function(tree, 0.7 + 1e-6) - function(tree, 0.7 - 1e-6)) / 2e-6, rel=1e-5)
    assert seconds < 10.0


def test_recursion_past_the_limit_is_a_depth_error_not_a_crash(monkeypatch):
    monkeypatch.setattr(cpsgrad.api, "max_depth", 20_000)
    limit = sys.getrecursionlimit()
    with pytest.raises(cpsgrad.DepthLimitError, match="call of a user function"):
        cpsgrad.grad(cases.power)(0.999, 50_000)
    assert sys.getrecursionlimit() == limit


# ---- run-time dispatch ---------------------------------------------------------------------------


def test_globals_naming_callees_are_read_live():
    assert cpsgrad.grad(cases.calls_swappable)(2.0) == 4.0
    cases.SWAPPABLE = cases.cube
    try:
        assert cpsgrad.grad(cases.calls_swappable)(2.0) == 12.0
        cases.SWAPPABLE = math.sin  # a primitive: its rule runs in a one-line adapter
        assert cpsgrad.grad(cases.calls_swappable)(2.0) == math.cos(2.0)
    finally:
        cases.SWAPPABLE = cases.square


def test_a_changed_callee_is_transformed_again():
    assert cpsgrad.grad(cases.calls_changeable)(1.0) == 2.0
    code = cases.changeable.__code__
    cases.changeable.__code__ = cases.tripling.__code__
    try:
        assert cpsgrad.grad(cases.calls_changeable)(1.0) == 3.0
    finally:
        cases.changeable.__code__ = code


def test_a_rule_for_a_user_function_wins_also_at_run_time():
    def softclip_rule(v):
        y = cases.softclip(v)
        y_d = yield y
        v_d += y_d * 2.0  # noqa: F821, F841  (a deliberately different derivative, to be seen)

    gradient = cpsgrad.grad(cases.applies_softclip)
    slope = 1.0 - math.tanh(0.5) ** 2
    assert gradient(0.5) == pytest.approx(slope * (1.0 - math.tanh(math.tanh(0.5)) ** 2), rel=1e-12)
    rule = TABLE.add(cases.softclip, softclip_rule)
    try:
        assert gradient(0.5) == 4.0
    finally:
        TABLE.remove(rule)
    assert gradient(0.5) == pytest.approx(slope * (1.0 - math.tanh(math.tanh(0.5)) ** 2), rel=1e-12)


@pytest.mark.parametrize(
    ("function", "error", "construct", "advice"),
    [
        (cases.applies_a_builtin_without_rule, cpsgrad.NoRuleError, "call of f",
         r"not a Python function.*@cpsgrad\.rule\(math\.frexp\)"),
        (cases.applies_a_class, cpsgrad.UnsupportedError, "call of the class tests.cases.calls_functions.SlottedLink",
         "it defines __slots__"),
        (cases.calls_a_function_with_match, cpsgrad.UnsupportedError, "match statement", "if/elif"),
        (cases.calls_for_its_effect, cpsgrad.UnsupportedError, "call of square for its effect", "could keep it"),
    ],
    ids=["builtin without rule", "class", "callee with match", "call for its effect"],
)
def test_unsupported_calls_are_refused_naming_file_line_and_construct(function, error, construct, advice):
    with pytest.raises(error, match=advice) as raised:
        cpsgrad.grad(function)(0.5)
    assert raised.value.construct == construct
    assert raised.value.location.filename.endswith("calls_functions.py")


def test_a_gradient_function_called_inside_is_refused():
    nested = cpsgrad.grad(cases.square)
    with pytest.raises(cpsgrad.CpsgradError, match="higher-order"):
        cpsgrad.grad(cases.apply_twice, argnums=1)(nested, 0.5)


def test_wrong_arguments_raise_as_python_does():
    with pytest.raises(TypeError, match="missing a required argument"):
        cpsgrad.grad(cases.apply_keyword, argnums=1)(cases.product, 0.5)
    with pytest.raises(TypeError, match="not callable"):
        cpsgrad.grad(cases.apply_twice, argnums=1)(3, 0.5)


def test_a_variable_unbound_on_the_path_taken_crosses_a_call():
    assert cpsgrad.value_and_grad(cases.unbound_across_a_call)(1.5, True) == (6.75, 13.5)
    assert cpsgrad.value_and_grad(cases.unbound_across_a_call)(1.5, False) == (2.25, 3.0)


# ---- show ----------------------------------------------------------------------------------------


def test_show_prints_the_callees_after_the_program():
    text = cpsgrad.show(cases.calls_helper, argnums=(0, 1), example=(1.0, 2.0))
    program, *callees = text.split("\n# ---- ")
    assert "def call_1_k(t1):" in program and "call_1_site(square, call_1_k, x)" in program
    assert callees[0].startswith("call_1 of calls_helper (") and "runs square, with respect to v:" in callees[0]
    assert "def square__cps(v, k):" in callees[0] and "v: number" in callees[0]
    assert any("runs cube" in c for c in callees) and any("def cube__cps(v, k):" in c for c in callees)
    assert sum("def square__cps" in c for c in callees) == 1  # once per argnums and kinds


def test_show_prints_the_legend_once_and_each_program_its_own_facts():
    text = cpsgrad.show(cases.calls_helper, argnums=(0, 1), example=(1.0, 2.0))
    lines = text.splitlines()
    assert lines[0] == "# Each continuation returns the result, then the adjoints of the values it was handed."
    programs = [n for n, line in enumerate(lines) if line.startswith("# cpsgrad: the derivative program of")]
    assert len(programs) >= 3  # calls_helper, square, cube (and square again for cube's call)
    for legend in ("# Each continuation returns", "# The wrapper's parameters are", "# call_N_site(f, k, *arguments)"):
        assert text.count(legend) == 1 and text.index(legend) < text.index("# cpsgrad: the derivative program of")
    for start in programs:  # each program still says which it is, for what, and its call sites
        assert lines[start + 1].startswith("# Specialised for arguments ")
    cube = text[text.index("# cpsgrad: the derivative program of cube"):]
    assert cube.splitlines()[2].startswith("# call_1: square(...) at ")


def test_show_of_each_stage_includes_the_callees_and_names_run_time_ones():
    assert "def odd_weight__cps(x, n, k):" in cpsgrad.show(cases.even_weight, stage="cps")
    assert "def odd_weight(x, n):" in cpsgrad.show(cases.even_weight, stage="normalize")
    text = cpsgrad.show(cases.apply_twice, argnums=1)
    assert "calls f, known only at run time" in text
    text = cpsgrad.show(cases.calls_a_function_with_match)
    assert "runs with_match, which cpsgrad refuses:\n# " in text and "match statement" in text


def test_the_cps_stage_with_its_callees_runs():
    namespace = dict(cases.__dict__)
    exec(cpsgrad.show(cases.calls_in_loop_and_branches, stage="cps"), namespace)
    assert namespace["calls_in_loop_and_branches__cps"](
        0.5, 5, lambda value: value
    ) == cases.calls_in_loop_and_branches(0.5, 5)


def test_the_command_shows_the_whole_program():
    root = Path(__file__).resolve().parent.parent
    command = [sys.executable, "-m", "cpsgrad", "show", "tests.cases.calls_functions:nested_calls", "--numbers", "x"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=root, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "# ---- call_1 of nested_calls" in result.stdout and "def cube__cps(v, k):" in result.stdout
    assert "# ---- call_1 of cube" in result.stdout and "def square__cps(v, k):" in result.stdout
    compile(result.stdout, "<show>", "exec")
