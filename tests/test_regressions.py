"""Regressions from adversarial testing: wrong answers once, right (or clearly refused) now."""

import inspect
import math

import numpy as np
import pytest

import cpsgrad
from cpsgrad.testing import check_grad
from tests.cases import regressions as cases


@pytest.mark.parametrize(
    ("function", "arguments", "expected"),
    [
        (cases.break_in_inner_else, (1.5, 3), (3.0, 2.0)),
        (cases.continue_in_inner_else, (1.5, 3), (12.0, 8.0)),
        (cases.global_len_shadowed, (1.5, [1.0, 2.0, 3.0]), (9.0, 6.0)),
        (cases.local_len_shadowed, (1.5, [1.0, 2.0, 3.0]), (27.0, 18.0)),
        (cases.loop_over_reversed, (1.5,), (31.5, 21.0)),
        (cases.loop_over_tuple_variable, (1.5,), (6.25, 3.0)),
        (cases.zip_of_one_list, (1.5,), (11.25, 3.0)),
        (cases.bitwise_on_data, (1.5, 5), (1.5 + 3.0 - 9.0, -3.0)),
    ],
    ids=lambda value: getattr(value, "__name__", None),
)
def test_value_and_gradient(function, arguments, expected):
    assert cpsgrad.value_and_grad(function)(*arguments) == expected
    assert function(*arguments) == expected[0]


def test_tuple_argnums_keep_their_order_and_may_not_repeat():
    assert cpsgrad.grad(cases.linear, argnums=(1, 0))(1.0, 1.0) == (1.0, 3.0)
    assert cpsgrad.grad(cases.linear, argnums=(-1, 0))(1.0, 1.0) == (1.0, 3.0)
    with pytest.raises(cpsgrad.ArgumentError, match="twice"):
        cpsgrad.grad(cases.linear, argnums=(0, 0))(1.0, 1.0)


def test_repetition_and_concatenation_of_a_list_are_differentiated():
    assert cpsgrad.value_and_grad(cases.repeats)(1.5) == (1.5, 1.0)
    assert cpsgrad.value_and_grad(cases.concatenates)(1.5, [2.0]) == (3.0, 2.0)
    assert cpsgrad.value_and_grad(cases.reverses)(1.5) == (2.0, 0.0)


def test_append_and_pop_of_a_list_the_function_builds_are_differentiated():
    assert cpsgrad.grad(cases.appends)(1.5) == 1.0
    assert cpsgrad.grad(cases.pops)(1.5) == 0.0


@pytest.mark.parametrize("function", [cases.compares_unbound, cases.returns_unbound])
def test_a_variable_unbound_on_the_path_taken_raises_as_python_does(function):
    with pytest.raises(UnboundLocalError):
        function(-1.0)
    with pytest.raises(UnboundLocalError):
        cpsgrad.value_and_grad(function)(-1.0)
    assert cpsgrad.value_and_grad(function)(1.0)[0] == function(1.0)


def test_singular_derivatives_are_ieee_not_exceptions():
    assert cpsgrad.value_and_grad(cases.square_root)(0.0) == (0.0, math.inf)
    value, gradient = cpsgrad.value_and_grad(cases.square_root_times_zero)(0.0)
    assert value == 0.0 and math.isnan(gradient)


@pytest.mark.parametrize("arguments", [(7.5, 2.0), (-7.5, 2.0), (7.3, -2.5), (1.25, 3.5)])
def test_divmod_and_fmod(arguments):
    check = check_grad(cases.remainder, *arguments, argnums=(0, 1))
    assert not check.skipped


@pytest.mark.parametrize("arguments", [(0.5, 1.5), (-2.0, 3.0), (4.0, 0.25)])
def test_prod_and_dist(arguments):
    check = check_grad(cases.product_and_distance, *arguments, argnums=(0, 1))
    assert not check.skipped


def test_a_loop_that_just_returns_needs_no_exit_continuation():
    text = cpsgrad.show(cases.global_len_shadowed)
    assert "after_for_1" not in text and "out, s_d = k(s)" in text


def test_zip_strict_raises_on_unequal_lengths_like_python():
    with pytest.raises(ValueError):
        cases.zip_strict_mismatch(1.0, [1.0])
    with pytest.raises(ValueError, match="different lengths"):
        cpsgrad.grad(cases.zip_strict_mismatch)(1.0, [1.0])
    assert cpsgrad.value_and_grad(cases.zip_strict_mismatch)(1.5, [2.0, 3.0]) == (7.5, 5.0)


def test_a_decorated_function_is_the_wrapper_that_runs():
    # the wrapper calls the original through its closure cell: a call of a user function
    assert cpsgrad.value_and_grad(cases.decorated_square)(3.0) == (18.0, 12.0)
    assert "def wrapper" in cpsgrad.show(cases.decorated_square, stage="normalize")


def test_rules_with_several_outputs_and_omitted_defaults():
    from cpsgrad.rules.registry import TABLE

    rules = [TABLE.add(cases.split, cases.split_rule), TABLE.add(cases.scale, cases.scale_rule)]
    try:
        assert cpsgrad.value_and_grad(cases.uses_split)(2.0) == (65.0, 30.0)
        assert cpsgrad.value_and_grad(cases.uses_scale_default)(1.5) == (13.0, 2.0)
    finally:
        for rule in rules:
            TABLE.remove(rule)


def test_a_continuation_that_returns_no_adjoint_still_returns_a_tuple():
    assert cpsgrad.value_and_grad(cases.loop_then_constant)(0.5, 3) == (2.0, 0.0)


def test_nan_and_overflow_give_ieee_gradients():
    value, gradient = cpsgrad.value_and_grad(cases.maximum, argnums=(0, 1))(math.nan, 0.5)
    assert math.isnan(value) and all(math.isnan(g) for g in gradient)
    assert math.isnan(cpsgrad.grad(cases.absolute)(math.nan))
    value, gradient = cpsgrad.value_and_grad(cases.power, argnums=(0, 1))(1e-300, -1.0)
    assert value == cases.power(1e-300, -1.0) and gradient[0] == -math.inf


def test_unbound_error_names_the_variable():
    with pytest.raises(UnboundLocalError, match="'y'"):
        cpsgrad.grad(cases.returns_unbound)(-1.0)


def test_threads_share_the_recursion_limit_safely():
    import sys
    import threading

    limit = sys.getrecursionlimit()
    results: dict[int, float] = {}
    errors: list[BaseException] = []

    def work(slot: int, steps: int):
        try:
            for _ in range(3):
                results[slot] = cpsgrad.grad(cases.counting_loop)(1.0, steps)
        except BaseException as error:  # collected and asserted below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(slot, steps)) for slot, steps in enumerate((20_000, 3_000))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert results[0] == pytest.approx(1.0001**20_000, rel=1e-9)
    assert results[1] == pytest.approx(1.0001**3_000, rel=1e-9)
    assert sys.getrecursionlimit() == limit


@pytest.mark.parametrize(
    ("name", "argument", "expected"),
    [
        ("transpose_of_a_product", np.ones((2, 2)), np.full((2, 2), 2.0)),
        ("transpose_of_a_row", np.ones((2, 2)), np.ones((2, 2))),
        ("method_of_a_transposed_row", np.ones((2, 2)), np.array([[1.0, 1.0], [0.0, 0.0]])),
    ],
)
def test_attribute_of_a_computed_value_gets_its_gradient(name, argument, expected):
    # `.T` of a temporary (`(x * 2.0).T`) was read as a constant: a zero gradient, no error
    np.testing.assert_array_equal(cpsgrad.grad(getattr(cases, name))(argument), expected)


def test_attribute_of_a_dict_entry_gets_its_gradient():
    gradient = cpsgrad.grad(cases.transpose_of_an_entry)({"W": np.ones((2, 3))})
    np.testing.assert_array_equal(gradient["W"], np.ones((2, 3)))


def test_unpacking_one_element_binds_the_element():
    # `a, = t` was generated as `a = t` (found by the program generator)
    assert cpsgrad.value_and_grad(cases.unpacks_one_element)(1.5) == (4.5, 6.0)
    assert cpsgrad.value_and_grad(cases.unpacks_one_element_in_a_branch)(1.5, True) == (4.5, 6.0)
    assert cpsgrad.value_and_grad(cases.unpacks_one_element_in_a_branch)(1.5, False) == (2.25, 3.0)


def test_power_of_a_negative_constant_keeps_its_parentheses():
    # `(-0.5) ** 2` was normalized to `-0.5 ** 2`, i.e. -(0.5 ** 2) (found by the program generator)
    x = 0.0421
    assert cpsgrad.value_and_grad(cases.power_of_a_negative_constant)(x)[0] == cases.power_of_a_negative_constant(x)
    value, gradient = cpsgrad.value_and_grad(cases.negative_base_and_exponent)(1.5)
    assert value == cases.negative_base_and_exponent(1.5)
    assert gradient == pytest.approx(4.0 - 1.5 ** -2 + 3.0)


# ---- found from outside: aliasing, differentiable subscripts, shapes (issue 13) ----------------

_VECTOR = np.array([0.4, -0.9, 1.3])
_MATRIX = np.arange(6.0).reshape(2, 3) / 7.0


@pytest.mark.parametrize(
    ("function", "argument"),
    [
        (cases.unused_call_with_one_array_twice, _VECTOR),
        (cases.chain_of_calls_with_one_array_twice, _VECTOR),
        (cases.repeated_by_keyword_in_a_loop, _VECTOR),
        (cases.tail_call_reaches_the_array_by_another_route, _VECTOR),
        (cases.a_callee_of_a_callee_reaches_the_array_by_another_route, _VECTOR),
        (cases.recursion_swapping_one_array_passed_twice, _VECTOR),
        (cases.results_discarded_and_used_twice, _VECTOR),
        (cases.alternating_helpers_with_one_array_twice, _VECTOR),
        (cases.helper_of_a_helper_with_one_array_twice, _VECTOR),
        (cases.aliases_by_name, _VECTOR),
        (cases.recursion_rotating_one_array_in_two_of_three, _VECTOR),
        (cases.containers_holding_one_array_twice, _VECTOR),
        (cases.r_of_an_array_twice, _VECTOR),
        (cases.r_of_arrays_and_numbers, _VECTOR),
        (cases.c_of_columns, _VECTOR),
        (cases.r_and_c_of_matrices, _MATRIX),
        (cases.r_of_an_array_and_a_range, _VECTOR),
        (cases.c_of_a_column_and_a_range, _VECTOR),
        (cases.subscript_of_a_user_class, 1.5),
        (cases.subscripts_of_a_user_class_by_computed_values, 1.5),
        (cases.lookup_by_a_computed_integer_index, _VECTOR),
        (cases.dict_read_by_a_differentiable_key, 1.5),
        (cases.shapes_are_not_differentiable, _VECTOR),
        (cases.random_draw_sized_by_a_shape, _VECTOR),
    ],
    ids=lambda value: getattr(value, "__name__", None),
)
def test_aliases_and_subscripts_get_the_whole_gradient(function, argument):
    check_grad(function, argument)


def test_the_reproducers_exact_values():
    assert np.array_equal(cpsgrad.grad(cases.unused_call_with_one_array_twice)(_VECTOR), np.ones(3))
    assert np.allclose(cpsgrad.grad(cases.chain_of_calls_with_one_array_twice)(_VECTOR), 2 * _VECTOR)
    assert np.array_equal(cpsgrad.grad(cases.r_of_an_array_twice)(_VECTOR), [3.0, 5.0, 7.0])
    assert cpsgrad.grad(cases.subscript_of_a_user_class)(1.5) == 2.0


_RANDOM = np.random.default_rng(7)
_V, _M, _B = _RANDOM.normal(size=5), _RANDOM.normal(size=(3, 4)), _RANDOM.normal(size=(2, 3, 4))


@pytest.mark.parametrize(
    ("x", "order", "axis"),
    [(_V, order, None) for order in (None, 1, 2, 3, 0.5, -1, np.inf, -np.inf, 0)]
    + [(_M, order, None) for order in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf)]
    + [(_B, order, (1, 2)) for order in ("nuc", 2, -2, 1, np.inf)]
    + [(_B, 1, (2, 1)), (_B, 3, 2), (_M, np.inf, 0)],
    ids=repr,
)
def test_every_norm_order_has_its_derivative(x, order, axis):
    """ord=3 and ord='nuc' raised a bare NotImplementedError from the backward pass."""

    def f(x):
        return np.sum(np.linalg.norm(x, ord=order, axis=axis) * 1.7)

    check_grad(f, x)


def test_a_global_rebound_after_the_transform_is_followed(monkeypatch):
    """The rule bound at the first transform was reused after the global was rebound."""
    assert cpsgrad.grad(cases.reads_a_rebound_global_function)(0.5) == math.cos(0.5)
    monkeypatch.setattr(cases, "sine", math.cos)
    assert cpsgrad.grad(cases.reads_a_rebound_global_function)(0.5) == -math.sin(0.5)
    x = np.array([0.1, 0.2])
    network = cpsgrad.grad(cases.network_calling_the_layer)  # the rebound name is in a callee
    assert np.allclose(network(x), 2.0 * (1.0 - np.tanh(x) ** 2))
    monkeypatch.setattr(cases, "activation", np.sin)
    assert np.allclose(network(x), 2.0 * np.cos(x))
    helper = cpsgrad.grad(cases.calls_the_redefined_helper)
    assert helper(1.0) == 3.0
    monkeypatch.setattr(cases, "helper_to_redefine", lambda v: v * 5.0)
    assert helper(1.0) == 5.0
    uses_a_module_attribute = cpsgrad.grad(cases.sum_of_np_sin)
    assert np.allclose(uses_a_module_attribute(x), np.cos(x))
    monkeypatch.setattr(np, "sin", np.cos)  # a module attribute rebound
    assert np.allclose(uses_a_module_attribute(x), -np.sin(x))


def test_a_rule_for_a_bound_method_serves_every_read_of_it():
    """`@cpsgrad.rule(scipy.stats.norm.logpdf)` was accepted and never used (a bound method is a
    new object at each attribute read)."""
    import scipy.stats

    def logpdf(x):
        return scipy.stats.norm.logpdf(x) * 2.0

    rule = None
    try:

        @cpsgrad.rule(scipy.stats.norm.logpdf)
        def norm_logpdf(x):
            y = scipy.stats.norm.logpdf(x)
            y_d = yield y
            x_d += -x * y_d  # noqa: F821, F841

        rule = cpsgrad.rules.TABLE.rules_for(scipy.stats.norm.logpdf)[0]
        check_grad(logpdf, 0.3)
        assert cpsgrad.grad(logpdf)(0.3) == -0.6
    finally:
        if rule is not None:
            cpsgrad.rules.TABLE.remove(rule)


def test_a_primitive_with_a_rule_is_differentiated_directly():
    assert cpsgrad.grad(np.sqrt)(4.0) == 0.25
    assert cpsgrad.grad(math.atan2, argnums=(0, 1))(1.0, 2.0) == (0.4, -0.2)
    assert cpsgrad.value_and_grad(np.tanh)(0.5) == (np.tanh(0.5), 1.0 - np.tanh(0.5) ** 2)


def test_a_slice_bound_computed_from_a_differentiable_value_is_refused_with_its_location():
    with pytest.raises(cpsgrad.UnsupportedError) as raised:
        cpsgrad.grad(cases.slices_a_user_object_by_a_differentiable_bound)(1.0)
    assert raised.value.construct == "slice bound computed from a differentiable value"
    assert (
        raised.value.location.line == cases.slices_a_user_object_by_a_differentiable_bound.__code__.co_firstlineno + 1
    )


def test_an_unused_index_concatenation_passes_the_symbolic_zero():
    value, gradient = cpsgrad.value_and_grad(cases.unused_r_)(_VECTOR)
    assert value == cases.unused_r_(_VECTOR)
    assert np.array_equal(gradient, np.ones(3))


def test_std_of_single_values_has_gradient_zero_not_nan():
    # the std of one value is 0 whatever the value, but its gradient was 0 / 0 = NaN (found by
    # autograd's test suite, test_systematic.py::test_std, benchmarks/peers/)
    assert cpsgrad.grad(cases.std_of_one_value)(3.5) == 0.0
    assert cpsgrad.grad(cases.std_of_one_value)(np.array(0.5)).tolist() == 0.0
    np.testing.assert_array_equal(
        cpsgrad.grad(cases.std_of_single_rows)(np.array([[0.5, -1.0, 2.0]])), np.zeros((1, 3))
    )
    assert not check_grad(cases.std_of_single_rows, np.array([[0.5, -1.0, 2.0]])).skipped


def test_two_calls_with_one_array_twice_and_a_view_in_the_callee():
    # sum(u[:] * v) twice with u = v = x: 2 * sum(x ** 2), gradient 4x (cpsgrad gave 7x before
    # the claimed loans; found by the aliasing generator)
    x = np.array([0.3, 0.7, -1.1])
    np.testing.assert_allclose(cpsgrad.grad(cases.calls_twice_with_one_array_twice)(x), 4.0 * x)


@pytest.mark.parametrize(
    "name", ["lambda_reads_a_rebound_global_function", "nested_def_reads_a_rebound_global_function"]
)
def test_a_global_rebound_after_the_transform_is_followed_in_a_closure(monkeypatch, name):
    # the value followed act = math.cos, the gradient kept math.sin's rule (cos x for -sin x),
    # until the closure fast path checked the binding guard (found by the aliasing generator)
    function = getattr(cases, name)
    assert cpsgrad.value_and_grad(function)(0.5) == (math.sin(0.5), math.cos(0.5))
    monkeypatch.setattr(cases, "act", math.cos)
    assert cpsgrad.value_and_grad(function)(0.5) == (math.cos(0.5), -math.sin(0.5))


def test_a_lambda_in_a_lambdas_default_on_one_line_keeps_its_own_code():
    """Found by the fuzzer (seed 11000): lambdas on one line were matched to their code objects
    by the column of their bodies' first instruction, and a lambda in another's default has the
    earlier body: the outer lambda got the inner's captures (NameError for x)."""
    assert cpsgrad.value_and_grad(cases.lambda_with_a_lambda_in_its_default, argnums=(0, 1))(1.5, 0.5) == (
        0.75,
        (0.5, 1.5),
    )


def test_a_missing_callee_is_looked_up_before_the_arguments_as_python_does():
    """Found by the fuzzer (seed 11000): the arguments were computed first, so their
    ZeroDivisionError came where Python raises the callee's AttributeError."""
    with pytest.raises(AttributeError, match="hupot"):
        cases.calls_a_missing_attribute_with_a_failing_argument(0.5, 3)
    with pytest.raises(AttributeError, match="hupot"):
        cpsgrad.grad(cases.calls_a_missing_attribute_with_a_failing_argument)(0.5, 3)


def test_a_number_literal_as_a_receiver_keeps_its_parentheses():
    """Found by the fuzzer (seed 12000): `(-1).__len__()` was generated as `-1.__len__()`, a
    SyntaxError inside cpsgrad (and `-1 .real` would have read as `-(1 .real)`)."""
    assert cpsgrad.value_and_grad(cases.methods_of_number_literals)(1.5) == (3.0, 2.0)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("reads_a_global_before_a_call_that_rebinds_it", (4.5, 3.0)),
        ("reads_a_global_in_a_call_before_a_call_that_rebinds_it", (3.0, 2.0)),
        ("reads_a_global_subscript_before_a_call_that_rebinds_it", (7.5, 5.0)),
    ],
)
def test_a_global_operand_is_read_before_a_later_call_that_rebinds_it(monkeypatch, name, expected):
    """Found by the fuzzer (seed 13000): normalize hoisted a call before the global operand left
    of it was read, so a call that rebinds the global changed the value (and an undefined
    global's NameError came after the call's own error)."""
    function = getattr(cases, name)
    monkeypatch.setattr(cases, "SCALE", 2.0)
    original = function(1.5)
    monkeypatch.setattr(cases, "SCALE", 2.0)
    assert cpsgrad.value_and_grad(function)(1.5) == expected
    assert original == expected[0]


def test_a_slices_bounds_are_read_in_order(monkeypatch):
    function = cases.slices_with_a_global_bound_before_a_call_that_rebinds_it
    monkeypatch.setattr(cases, "STOP", 2)
    original = function(1.5)
    monkeypatch.setattr(cases, "STOP", 2)
    assert cpsgrad.value_and_grad(function)(1.5) == (original, 3.0) == (4.5, 3.0)


@pytest.mark.parametrize(
    "name", ["undefined_global_before_a_failing_call", "undefined_callee_before_a_failing_argument"]
)
def test_an_undefined_global_raises_before_the_operands_right_of_it(name):
    function = getattr(cases, name)
    with pytest.raises(NameError):
        function(1.5)
    with pytest.raises(NameError):
        cpsgrad.grad(function)(1.5)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(
    ("name", "expected"), [("numpy_one_over", (np.inf, -np.inf)), ("numpy_over_python_zero", (np.nan, np.inf))]
)
def test_a_numpy_division_by_a_python_zero_divides_as_numpy_in_the_backward_too(name, expected):
    """Found by the fuzzer: the forward divided with numpy's meaning (inf), the backward's
    Python float division by the same zero raised ZeroDivisionError (`quotient` now)."""
    function = getattr(cases, name)
    value, gradient = cpsgrad.value_and_grad(function)(0.0)
    np.testing.assert_equal((value, gradient), expected)
    np.testing.assert_equal(function(0.0), expected[0])


@pytest.mark.parametrize(
    "name", ["subscript_of_a_differentiable_dataclass", "subscript_of_a_differentiable_named_tuple"]
)
def test_a_subscript_of_a_differentiable_object_with_its_own_getitem_is_refused_with_its_location(name):
    """Its __getitem__ ran as an opaque call, then the adjoint was a list's one-hot: a crash for
    a dataclass, a wrong gradient for a NamedTuple (whose len() works)."""
    function = getattr(cases, name)
    with pytest.raises(cpsgrad.UnsupportedError, match="own __getitem__") as raised:
        cpsgrad.grad(function, argnums=(0, 1))(1.5, 2.0)
    line = inspect.getsourcelines(function)[1] + 2
    assert (raised.value.location.filename, raised.value.location.line) == (inspect.getsourcefile(function), line)
    assert str(raised.value).startswith(f"{raised.value.location}: ")


def test_a_subscript_of_a_constant_object_with_its_own_getitem_is_differentiated():
    assert cpsgrad.value_and_grad(cases.subscript_of_a_constant_dataclass)(1.5) == (4.5, 3.0)


def test_an_empty_tuple_default_keeps_its_parentheses():
    """Found by the fuzzer (seed 14000): stripping the parentheses of a lambda's default `()`
    made libcst refuse the tree (an internal CSTValidationError in show and grad)."""
    # (this module shadows len: len(()) is 1 here)
    assert cpsgrad.value_and_grad(cases.lambda_with_an_empty_tuple_default)(1.5) == (6.0, 4.0)
    assert cases.lambda_with_an_empty_tuple_default(1.5) == 6.0


def test_a_builtin_rewritten_by_normalize_is_guarded_when_a_global_shadows_it_later(monkeypatch):
    """normalize turns `map(...)` into a loop only while `map` is the builtin, and `reduce(...)`
    only while it is functools.reduce: a global of that name defined after the first transform
    makes the program again (the bindings of normalize's choices are in the binding guard)."""
    function = cases.maps_a_square
    assert cpsgrad.value_and_grad(function)(1.5) == (11.25, 15.0)
    monkeypatch.setattr(cases, "map", lambda f, xs: [f(xs[0])], raising=False)
    assert function(1.5) == 2.25
    assert cpsgrad.value_and_grad(function)(1.5) == (2.25, 3.0)
    product = cases.reduces_a_product
    assert cpsgrad.value_and_grad(product)(1.5) == (6.75, 9.0)
    monkeypatch.setattr(cases, "reduce", lambda f, xs: xs[0])
    assert cpsgrad.value_and_grad(product)(1.5) == (1.5, 1.0)


@pytest.mark.parametrize(
    ("function", "parameter"),
    [(cases.variance_with_a_differentiable_ddof, "ddof"), (cases.calls_with_numpy, "axis")],
)
def test_a_differentiable_value_reaching_a_parameter_without_a_derivative_is_refused(function, parameter):
    """Found by the session-9 rule helpers: the rule's backward gave that parameter nothing, so the
    gradient through it was silently dropped (np.var off by 0.3 in x[0]; m.sum(m.sin(x)) zero)."""
    with pytest.raises(cpsgrad.NoRuleError, match=f"reaches the parameter {parameter} of its rule") as raised:
        cpsgrad.grad(function)(np.array([0.5, 1.5, -0.7]))
    assert raised.value.location.filename == inspect.getsourcefile(cases.variance_with_a_differentiable_ddof)


def test_a_piecewise_constant_parameter_may_take_a_differentiable_value():
    check_grad(cases.copysign_of_a_differentiable_sign, 1.5, -0.7, argnums=(0, 1))


def test_a_lambda_continued_inside_a_calls_parentheses_is_read_whole():
    """Found by helper peer: `pair(lambda x: x * 2.0 + x\\n + x * x,)` was read as its first
    line (the rest parses as a statement of its own): a wrong value and a wrong gradient, silently."""
    first, second = cases.CONTINUED_LAMBDAS
    assert cpsgrad.value_and_grad(first)(3.0) == (18.0, 9.0)
    assert cpsgrad.value_and_grad(second)(0.5) == (math.sin(0.5) * 0.5, math.cos(0.5) * 0.5 + math.sin(0.5))
    line = first.__code__.co_firstlineno
    assert f"regressions.py:{line})" in cpsgrad.show(first, example=(3.0,))  # located on the lambda's own line


def test_a_generated_program_whose_gradient_was_doubled():
    """Drawn by test_generated_programs in CI (session 11): d/dv was [2, 4, 4] for [1, 2, 2]. A helper
    passed an array it had borrowed the caller's adjoint for twice to a callee (runtime/loans.py)."""
    from tests.cases import doubled_gradient as program

    v = np.array([-0.3388473480828771, 0.04203896484375, -0.6905809285037205])
    check_grad(program.f, -0.19895684720739792, v, 1, argnums=(0, 1))


@pytest.mark.parametrize("form", ["f_discarded", "f_keywords", "f_two_levels", "f_used", "f_in_loop"])
def test_a_borrowed_adjoint_passed_twice_to_a_callee_is_counted_once(form):
    from tests.cases import doubled_gradient_small as program

    function = getattr(program, form)
    v = np.array([-0.3388473480828771, 0.04203896484375, -0.6905809285037205])
    check_grad(function, v)
    assert cpsgrad.value_and_grad(function)(v)[0] == function(v)
