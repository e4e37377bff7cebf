"""grad, value_and_grad, show, rule: arguments, errors, caching and live reads of names."""

import math

import numpy as np
import pytest

import cpsgrad
from cpsgrad import api
from cpsgrad.transforms import pipeline
from tests.cases import api_functions as cases


def test_int_argnums_gives_one_gradient_and_tuple_gives_tuple():
    assert cpsgrad.grad(cases.polynomial)(2.0, 5.0) == 20.0
    assert cpsgrad.grad(cases.polynomial, argnums=1)(2.0, 5.0) == 7.0
    assert cpsgrad.grad(cases.polynomial, argnums=(0, 1))(2.0, 5.0) == (20.0, 7.0)
    assert cpsgrad.grad(cases.polynomial, argnums=(1,))(2.0, 5.0) == (7.0,)


def test_value_and_grad_returns_the_original_value():
    value, gradient = cpsgrad.value_and_grad(cases.polynomial, argnums=(0, 1))(2.0, 5.0)
    assert value == cases.polynomial(2.0, 5.0)
    assert gradient == (20.0, 7.0)


def test_decorator_forms():
    decorated = cpsgrad.grad(argnums=1)(cases.polynomial)
    assert decorated(2.0, 5.0) == 7.0
    assert cpsgrad.value_and_grad(argnums=0)(cases.scaled)(1.0) == (3.0, 3.0)


def test_keyword_arguments_and_defaults_pass_through():
    assert cpsgrad.grad(cases.keyword_only)(3.0, power=3) == 27.0
    assert cpsgrad.grad(cases.with_default)(3.0) == 2.0
    assert cpsgrad.grad(cases.with_default)(3.0, scale=5.0) == 5.0


def test_float_argument_gets_float_gradient_even_when_constant():
    gradient = cpsgrad.grad(cases.calls_helper_inactively)(2.0, 3)
    assert type(gradient) is float and gradient == 6.0


def test_methods_and_static_methods():
    model = cases.Model(2.0)
    assert cpsgrad.grad(cases.Model.energy, argnums=1)(model, 3.0) == 12.0
    assert cpsgrad.grad(cases.Model.static_energy)(3.0) == 3.0
    with pytest.raises(cpsgrad.SourceError, match="bound method"):
        cpsgrad.grad(model.energy)


def test_integer_argument_is_refused():
    with pytest.raises(cpsgrad.ArgumentError, match="int 2, not a float"):
        cpsgrad.grad(cases.scaled)(2)
    with pytest.raises(cpsgrad.ArgumentError):
        cpsgrad.grad(cases.scaled)(True)


@pytest.mark.parametrize("argnums", [5, -3, (), "0", (0, "1"), True])
def test_bad_argnums_are_refused(argnums):
    with pytest.raises(cpsgrad.ArgumentError):
        cpsgrad.grad(cases.polynomial, argnums=argnums)(1.0, 2.0)


@pytest.mark.parametrize("function", [cases.returns_tuple, cases.returns_none])
def test_non_scalar_output_is_refused(function):
    with pytest.raises(cpsgrad.NonScalarOutputError, match="real scalar"):
        cpsgrad.grad(function)(1.0)


def test_grad_of_grad_is_refused():
    with pytest.raises(cpsgrad.HigherOrderError, match="higher-order"):
        cpsgrad.grad(cpsgrad.grad(cases.scaled))


def calls_a_gradient(x):
    return cpsgrad.grad(cases.scaled)(x) * x


def test_a_gradient_called_inside_is_refused_as_higher_order():
    with pytest.raises(cpsgrad.HigherOrderError, match="differentiating through a gradient"):
        cpsgrad.grad(calls_a_gradient)(2.0)


def one_element_quadratic(x):
    return np.dot(x, x).reshape(1, 1) + np.sum(x[:1] * 3.0, keepdims=True)


def cube_rows(x):
    return np.sum(x**3, axis=0)


def doubled(x):
    return x * 2.0


def test_a_one_element_array_output_is_its_scalar():
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(cpsgrad.grad(one_element_quadratic)(x), [5.0, 4.0])
    column = np.array([[1.0], [2.0]], dtype=np.float32)
    value, gradient = cpsgrad.value_and_grad(cube_rows)(column)
    assert value.shape == (1,) and value.dtype == np.float32 and value[0] == 9.0
    assert gradient.dtype == np.float32
    np.testing.assert_array_equal(gradient, [[3.0], [12.0]])
    np.testing.assert_array_equal(cpsgrad.grad(doubled)(np.array([1.5])), [2.0])


@pytest.mark.parametrize("x", [np.array([1.0, 2.0]), np.array([[1.0, 2.0]]), np.array([1j])])
def test_other_array_outputs_are_refused(x):
    with pytest.raises(cpsgrad.NonScalarOutputError, match="real scalar"):
        cpsgrad.grad(doubled)(x)


def test_builtins_and_missing_source_are_explained():
    with pytest.raises(cpsgrad.SourceError, match="not a Python function"):
        cpsgrad.grad(math.frexp)  # a builtin without a rule (one with a rule is differentiated)
    assert cpsgrad.grad(math.sin)(0.5) == math.cos(0.5)
    namespace = {}
    exec("def typed(x):\n    return x\n", namespace)
    with pytest.raises(cpsgrad.SourceError, match="cannot read the source"):
        cpsgrad.grad(namespace["typed"])(1.0)


def test_call_of_user_function_with_differentiable_argument_is_transformed():
    assert cpsgrad.value_and_grad(cases.calls_helper)(1.0) == (3.0, 2.0)
    assert "out, x_d = call_1_site(helper, after_call_1, x)" in cpsgrad.show(cases.calls_helper)


def test_call_of_user_function_on_inactive_values_runs_as_is():
    assert cpsgrad.grad(cases.calls_helper_inactively)(2.0, 3) == 6.0


def test_call_without_rule_names_it_and_says_how_to_add_one():
    with pytest.raises(cpsgrad.NoRuleError, match=r"no derivative rule for math\.frexp.*cpsgrad\.rule"):
        cpsgrad.grad(cases.calls_without_rule)(1.0)


def test_user_rule_is_used_and_the_cache_is_invalidated():
    # without a rule, softclip is a user function: transformed, its math.tanh rule inlined there
    assert cpsgrad.grad(cases.uses_softclip)(0.5) == pytest.approx(2.0 * (1.0 - math.tanh(0.5) ** 2), rel=1e-12)
    assert "call_1_site(softclip" in cpsgrad.show(cases.uses_softclip)

    def softclip_rule(x):
        y = cases.softclip(x)
        y_d = yield y
        x_d += y_d * (1.0 - y * y)  # noqa: F821, F841

    rule = cpsgrad.rule(cases.softclip)(softclip_rule)
    try:
        gradient = cpsgrad.grad(cases.uses_softclip)(0.5)
        assert gradient == pytest.approx(2.0 * (1.0 - math.tanh(0.5) ** 2), rel=1e-12)
        # a user's rule: its contribution is checked (cpsgrad_runtime.rule_contribution), naming it
        shown = cpsgrad.show(cases.uses_softclip)
        assert (
            "x_d = cpsgrad_runtime.rule_contribution(cpsgrad_runtime.rule_adjoint(t1_d, t1) * (1.0 - t1 * t1), x, "
            "'softclip_rule ("
            in shown
        )
    finally:
        from cpsgrad.rules.registry import TABLE

        TABLE.remove(TABLE.rules_for(cases.softclip)[0])
    assert rule is softclip_rule


def test_transform_is_cached_per_function():
    first = pipeline.transform(cases.sine, (0,))
    assert pipeline.transform(cases.sine, (0,)) is first
    assert pipeline.transform(cases.sine, (0,)) is not pipeline.transform(cases.polynomial, (0,))


def test_module_globals_are_read_live():
    assert cpsgrad.grad(cases.scaled)(1.0) == 3.0
    cases.SCALE = 5.0
    try:
        assert cpsgrad.grad(cases.scaled)(1.0) == 5.0
    finally:
        cases.SCALE = 3.0


def test_closure_cells_are_read_live_and_not_shared_between_closures():
    factor = [2.0]
    closed = cases.make_closure(factor)
    other = cases.make_closure([7.0])
    assert cpsgrad.grad(closed)(1.0) == 2.0
    assert cpsgrad.grad(other)(1.0) == 7.0
    factor[0] = 4.0
    assert cpsgrad.grad(closed)(1.0) == 4.0


def test_variable_bound_on_one_path_only():
    assert cpsgrad.value_and_grad(cases.unbound_on_one_path)(1.5, True) == (7.5, 8.0)
    assert cpsgrad.value_and_grad(cases.unbound_on_one_path)(1.5, False) == (2.5, 1.0)


def test_loop_of_100000_iterations():
    n = 100_000
    value, gradient = cpsgrad.value_and_grad(cases.loop)(0.5, n)
    assert value == cases.loop(0.5, n)
    a, derivative = 0.5, 1.0
    for _ in range(n):
        derivative *= 0.99 + 0.02 * a
        a = 0.99 * a + 0.01 * a * a
    assert gradient == pytest.approx(derivative, rel=1e-12)


def test_past_the_depth_limit_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(api, "max_depth", 2_000)
    with pytest.raises(cpsgrad.DepthLimitError, match="max_depth"):
        cpsgrad.grad(cases.loop)(0.5, 5_000)
    assert cpsgrad.grad(cases.loop)(0.5, 100) == pytest.approx(cpsgrad.grad(cases.loop)(0.5, 100))


def test_show_stages():
    normalized = cpsgrad.show(cases.loop, stage="normalize")
    assert "while True:" in normalized and "for_1_next" in normalized
    assert "def for_1(a, for_1_next):" in cpsgrad.show(cases.loop, stage="cps")
    final = cpsgrad.show(cases.loop)
    assert final == pipeline.transform(cases.loop, (0,)).text("final")
    compile(final, "<show>", "exec")
    with pytest.raises(ValueError, match="stage"):
        cpsgrad.show(cases.loop, stage="nope")


def test_show_annotate_heads_each_block_with_the_users_line():
    import inspect

    lines, first = inspect.getsourcelines(cases.two_statements)
    assert lines[1].strip() == "y = math.sin(x) * x" and lines[2].strip() == "return y + x"
    shown = cpsgrad.show(cases.two_statements, annotate=True).splitlines()
    forward = shown.index("        t1 = math.sin(x)")
    assert shown[forward - 1] == f"        # from line {first + 1}: y = math.sin(x) * x"
    assert shown[forward + 1] == "        y = t1 * x"  # the same statement: one block, one comment
    assert shown[forward + 2] == f"        # from line {first + 2}: return y + x"
    assert shown[forward + 3] == "        t2 = y + x"
    # the backward of line 1 is a block of its own, headed again; lines from no statement get none
    assert shown.count(f"        # from line {first + 1}: y = math.sin(x) * x") == 2
    assert not any(line.strip().startswith("# from line") for line in shown[: forward - 1])
    plain = cpsgrad.show(cases.two_statements)
    assert "# from line" not in plain
    assert [line for line in shown if not line.strip().startswith("# from line ")] == plain.splitlines()
    compile("\n".join(shown), "<show>", "exec")
    with pytest.raises(ValueError, match="final stage only"):
        cpsgrad.show(cases.two_statements, stage="cps", annotate=True)
