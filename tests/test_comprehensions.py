"""Comprehensions, generator expressions and the builtin higher-order functions
(transforms/comprehensions.py): values equal the original's, gradients match finite
differences, Python 3 scoping holds, errors name the place, and `show` reads well."""

import dataclasses

import libcst as cst
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cpsgrad
from cpsgrad.errors import NoRuleError, UnsupportedError
from cpsgrad.testing import GradCheck, check_grad
from cpsgrad.transforms import normalize, source
from tests.cases import comprehension_functions as programs
from tests.cases.comprehension_functions import CASES
from tests.test_containers import check_container_grad

EXAMPLES = 6
MAX_SKIPPED_FRACTION = 0.5


@pytest.mark.parametrize("case", [pytest.param(case, id=case.name) for case in CASES])
def test_value_and_gradient_match_the_original(case):
    outcomes: list[GradCheck] = []

    @settings(max_examples=EXAMPLES, deadline=None)
    @given(st.tuples(*case.arguments))
    def check(arguments):
        outcomes.append(check_grad(case.function, *arguments, argnums=case.argnums))

    check()
    skipped = [outcome.reason for outcome in outcomes if outcome.skipped]
    assert len(skipped) <= MAX_SKIPPED_FRACTION * len(outcomes), skipped[:3]


# ---- scoping ----------------------------------------------------------------------------------


def test_comprehension_variables_do_not_leak():
    x = 1.5
    value, gradient = cpsgrad.value_and_grad(programs.shadowing_keeps_outer_names)(x)
    # i stays 5 and x the parameter after the comprehensions that bind them
    assert value == (x * 0 + x * 1 + x * 2) * 5 + 2.0 * (x * 0 + x * 1 + x * 2) + x
    assert gradient == 3 * 5 + 2.0 * 3 + 1


def test_nested_comprehension_rebinding_its_variable():
    a, b = 0.5, -1.5
    value, gradient = cpsgrad.value_and_grad(programs.nested_rebinding_the_same_name, argnums=(0, 1))(a, b)
    assert value == programs.nested_rebinding_the_same_name(a, b) == 2.0 * (a + b + b + a + a) * 10.0
    assert gradient == (60.0, 40.0)


def test_the_first_iterable_is_evaluated_in_the_enclosing_scope():
    text = cpsgrad.show(programs.nested_rebinding_the_same_name, stage="normalize")
    assert "x_1 = for_1_items[for_1_index]" in text  # the outer comprehension's x
    assert "cpsgrad_runtime.as_sequence(x_1)" in text  # the inner iterable: the outer x
    assert "x_2 = for_2_items[for_2_index]" in text  # the inner comprehension's own x
    assert "t11 = t10 * x\n" in text  # after both: the function's x


# ---- containers ---------------------------------------------------------------------------------


def test_dict_comprehension_over_a_parameter_dict():
    rng = np.random.default_rng(3)
    params = {"W": rng.normal(size=(2, 3)), "b": rng.normal(size=2), "skip": rng.normal(size=2)}
    gradient = check_container_grad(programs.scale_parameters, (params, 0.7))
    assert not gradient["skip"].any()
    check_grad(programs.scale_parameters, params, 0.7, argnums=1)


def test_a_set_of_differentiable_values_has_no_rule():
    with pytest.raises(NoRuleError,
                       match=r"comprehension_functions.py:\d+:\d+: call of set: sets are not differentiable values"):
        cpsgrad.grad(programs.set_of_floats)(1.5, 2.0)
    assert cpsgrad.grad(programs.set_of_ints, argnums=(0, 1))(1.5, 2.5) == (2.0, 1.0)  # {1, 2, 4 % 3}


def test_errors_inside_a_comprehension_name_its_line():
    line = programs.no_rule_inside_a_comprehension.__code__.co_firstlineno + 1
    with pytest.raises(NoRuleError, match=rf"comprehension_functions.py:{line}:\d+: call of math.frexp"):
        cpsgrad.grad(programs.no_rule_inside_a_comprehension)(1.5, 2.0)


def test_async_comprehension_is_rejected():
    read = source.read(programs.powers)
    definition = cst.parse_module("def powers(x):\n    return [v async for v in x]\n").body[0]
    with pytest.raises(UnsupportedError, match="async comprehension"):
        normalize.normalize(dataclasses.replace(read, definition=definition))


# ---- reduce, sorted, max, min ---------------------------------------------------------------------


def test_reduce_of_an_empty_iterable():
    message = "reduce\\(\\) of empty iterable with no initial value"
    with pytest.raises(TypeError, match=message):
        programs.reduce_empty([])
    with pytest.raises(TypeError, match=message):
        cpsgrad.grad(programs.reduce_empty)([])
    assert cpsgrad.value_and_grad(programs.reduce_empty)([2.0]) == (2.0, [1.0])
    assert cpsgrad.value_and_grad(programs.reduce_empty)([2.0, 3.0, 4.0]) == (24.0, [12.0, 8.0, 6.0])
    assert cpsgrad.value_and_grad(programs.reduce_empty_with_initial)(1.5, []) == (1.5, 1.0)
    assert cpsgrad.value_and_grad(programs.reduce_empty_with_initial, argnums=(0, 1))(1.5, [2.0]) == (3.0, (2.0, [1.5]))


def test_next_stops_at_the_first_element_as_the_generator_would():
    def first_inverse(x, xs):
        # 1 / 0.0 comes after the first positive element: a generator never computes it
        return next(x / v for v in xs if v > 0.0) * x

    value, gradient = cpsgrad.value_and_grad(first_inverse)(3.0, [-1.0, 2.0, 0.0])
    assert value == first_inverse(3.0, [-1.0, 2.0, 0.0]) == 4.5
    assert gradient == 2 * 3.0 / 2.0


def test_next_without_a_match_raises_stop_iteration_or_gives_the_default():
    def without_default(x, xs):
        return next(v * x for v in xs if v > 10.0)

    def with_default(x, xs):
        return next((v * x for v in xs if v > 10.0), x * x)

    with pytest.raises(StopIteration):
        without_default(2.0, [1.0])
    with pytest.raises(StopIteration):
        cpsgrad.grad(without_default)(2.0, [1.0])
    assert cpsgrad.value_and_grad(with_default)(2.0, [1.0]) == (4.0, 4.0)
    assert cpsgrad.value_and_grad(with_default)(2.0, [11.0]) == (22.0, 11.0)


def test_sorted_keeps_python_stable_order_at_ties():
    # ascending[0] is the 0.5; descending[1] is the second 1.0 in stable order (index 1);
    # by_key (by -v) starts with the first 1.0 (index 0); by_square is stable under reverse
    xs = (1.0, 1.0, 0.5, -1.0)
    gradient = cpsgrad.grad(programs.sorted_with_key_and_reverse, argnums=(0, 1, 2, 3))(*xs)
    # ascending: [-1, .5, 1, 1] (indices 3, 2, 0, 1); by_key: [1, 1, .5, -1] (0, 1, 2, 3);
    # descending: [1, 1, .5, -1] (0, 1, 2, 3); by_square reversed: [1, 1, -1, .5] (0, 1, 3, 2)
    expected = [2.0 + 7.0 * 0.5, 3.0 + 5.0, 7.0 * 1.0, 1.0]
    assert list(gradient) == expected


def test_max_and_min_with_key_give_the_gradient_to_the_element_chosen():
    # every key ties: max by -v takes the first -1.0 (b), min by abs the first element (a),
    # max(a, b, key=square) a, and min(b, c, a, key=square) b
    gradient = cpsgrad.grad(programs.extremum_with_key, argnums=(0, 1, 2))(1.0, -1.0, -1.0)
    assert gradient == (3.0 + 1.0, 2.0 + 1.0, 0.0)


def test_list_of_builtin_iterators():
    value, gradient = cpsgrad.value_and_grad(programs.list_of_builtin_iterators, argnums=(0, 1, 2))(1.0, 2.0, 3.0)
    assert value == programs.list_of_builtin_iterators(1.0, 2.0, 3.0)
    # backwards[0] is c; pairs[0][1] * pairs[1][0] is c * b; numbered[2] is (2, c)
    assert gradient == (0.0, 3.0, 7.0 + 2.0 + 2.0)


# ---- show ------------------------------------------------------------------------------------------


def test_show_is_readable_and_deterministic():
    text = cpsgrad.show(programs.powers, numbers=("x",))
    assert text == cpsgrad.show(programs.powers, numbers=("x",))
    assert "comprehension = []" in text
    assert "comprehension_1 = cpsgrad_runtime.append_in_place(comprehension, t2)" in text
    assert "t2 = x ** i_1" in text
    normalized = cpsgrad.show(programs.map_module_functions, stage="normalize")
    assert "t3 = square(item)\n        mapped = cpsgrad_runtime.appended(mapped, t3)" in normalized
    assert "t6 = math.sin(item_1)" in normalized
    assert "t13 = multiply(item_2, item_3)" in normalized
    reduced = cpsgrad.show(programs.reduce_functions, stage="normalize")
    assert (
        "t2 = len(reduce_items)\n    if not t2:\n        t3 = TypeError('reduce() of empty iterable with no initial "
        "value')\n        raise t3"
        in reduced
    )
    assert "reduced = multiply(reduced, t5)" in reduced
    assert "reduced_1 = add_scaled(reduced_1, item)" in reduced
