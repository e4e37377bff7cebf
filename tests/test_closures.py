"""Closures: nested defs and lambdas over differentiable values, partials, late binding.

Values must equal the original function's exactly and gradients match central differences
(the corpus in tests/corpus/closure_programs.py covers many more programs on hypothesis inputs)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cpsgrad
from cpsgrad.runtime.closures import DEFINITIONS
from cpsgrad.testing import check_grad
from tests.cases import closure_functions as cf

floats = st.floats(-2.0, 2.0, allow_nan=False).filter(lambda v: abs(v) > 0.05)

TWO_FLOATS = [
    "captured_lambda", "nested_def_with_default", "keyword_only_default", "returned_closure",
    "user_higher_order", "closures_in_containers", "closure_of_closure", "partial_of_function",
    "partial_of_lambda", "loop_immediately_called", "loop_default_binding",
]


@pytest.mark.parametrize("name", TWO_FLOATS)
@settings(max_examples=15, deadline=None)
@given(x=floats, w=floats)
def test_closure_value_and_gradient(name, x, w):
    function = getattr(cf, name)
    value, _ = cpsgrad.value_and_grad(function, argnums=(0, 1))(x, w)
    assert value == function(x, w)
    check_grad(function, x, w, argnums=(0, 1))


@settings(max_examples=15, deadline=None)
@given(x=floats, n=st.integers(0, 6))
def test_recursive_nested_def_reaches_what_it_captured(x, n):
    gradient = cpsgrad.grad(cf.recursive_nested)(x, n)
    assert gradient == pytest.approx(n * x ** (n - 1) if n else 0.0, rel=1e-12, abs=1e-12)


def test_deep_recursion_of_a_nested_def():
    assert cpsgrad.grad(cf.recursive_nested)(1.0001, 3000) == pytest.approx(3000 * 1.0001 ** 2999, rel=1e-9)


def test_closure_over_arrays():
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=4), 0.5 * rng.normal(size=(4, 4))
    check_grad(cf.closure_over_array, x, w, argnums=(0, 1))


def test_made_function_is_a_python_function_elsewhere():
    x, w = 0.3, 1.7
    assert cpsgrad.value_and_grad(cf.used_by_plain_python, argnums=(0, 1))(x, w)[0] == cf.used_by_plain_python(x, w)
    check_grad(cf.used_by_plain_python, x, w, argnums=(0, 1))


def test_one_program_serves_every_closure_of_a_definition():
    gradient = cpsgrad.grad(cf.loop_default_binding, argnums=(0, 1))
    gradient(0.5, 1.5)
    code = cf.loop_default_binding.__code__.co_consts
    lambdas = [c for c in code if getattr(c, "co_name", "") == "<lambda>"]
    assert lambdas and all(c in DEFINITIONS for c in lambdas)
    from cpsgrad.transforms import pipeline

    programs = pipeline._CACHE.get(lambdas[0], {})
    assert len(programs) == 1  # both calls (i=1, i=2) ran the same program
    assert gradient(0.5, 1.5) == pytest.approx((3 * 1.5, 3 * 0.5))


@pytest.mark.parametrize(
    ("name", "construct", "line", "words"),
    [
        ("late_in_loop", "lambda capturing i", 3, "in a loop around it"),
        ("late_reassigned", "lambda capturing a", 2, "later in the function"),
        ("late_in_comprehension", "lambda capturing i", 1, "in a loop around it"),
        ("mutual_nested", "nested def even capturing odd", 1, "define it first"),
        ("writes_nonlocal", "nonlocal statement", 2, "nonlocal"),
    ],
)
def test_refusals_name_file_line_and_construct(name, construct, line, words):
    function = getattr(cf, name)
    with pytest.raises(cpsgrad.UnsupportedError) as raised:
        cpsgrad.grad(function)(0.5, 3) if name == "mutual_nested" else cpsgrad.grad(function)(0.5)
    error = raised.value
    assert error.construct == construct
    assert error.location.filename.endswith("closure_functions.py")
    assert error.location.line == function.__code__.co_firstlineno + line
    assert words in str(error)


def test_top_level_gradient_of_a_made_function():
    """A function made by a transformed function's definition, differentiated on its own, reads
    what it captured from its cells, as any closure."""
    cpsgrad.grad(cf.returned_closure)(0.5, 2.0)  # registers the lambda's definition
    h = cf.make_power(3.0)
    assert cpsgrad.grad(h)(0.5) == pytest.approx(3.0 * 2 * 0.5)


def test_show_prints_the_nested_programs():
    text = cpsgrad.show(cf.closure_of_closure)
    assert "def_outer = " not in text
    assert "outer = cpsgrad_runtime.make_function(def_outer, " in text
    assert "# ---- def_outer of closure_of_closure: the nested def outer" in text
    assert "# ---- def_inner of closure_of_closure.<locals>.outer: the nested def inner" in text
    assert "def inner__program(" in text


def test_a_closure_never_called_adds_nothing():
    def f(x):
        g = lambda v: v * x  # noqa: E731, F841
        return x * 3.0

    assert cpsgrad.grad(f)(1.5) == 3.0


def test_math_in_lambda_matches_the_chain_rule():
    assert cpsgrad.grad(cf.user_higher_order)(0.4, 1.3) == pytest.approx(
        math.cos(math.sin(0.4 * 1.3) * 1.3) * 1.3 * math.cos(0.4 * 1.3) * 1.3
    )


def test_a_closure_capturing_objects_differentiates_only_what_can_carry_a_gradient():
    """`self`, a module function or a plain object in a closure's environment are read, not
    differentiated (reading an attribute of a differentiated plain object is refused)."""
    model = cf.Scaled(2.0)
    value, gradient = cpsgrad.value_and_grad(cf.Scaled.loss, argnums=1)(model, 1.5)
    assert value == model.loss(1.5)
    assert gradient == pytest.approx(2.0 * 2 * 1.5 + 2.0 * 2.0)
    value, gradient = cpsgrad.value_and_grad(cf.captures_an_object_and_a_builtin)(0.5, model, math.tanh)
    assert value == cf.captures_an_object_and_a_builtin(0.5, model, math.tanh)
    check_grad(cf.captures_an_object_and_a_builtin, 0.5, model, math.tanh)


@settings(max_examples=10, deadline=None)
@given(a=floats, b=floats, x=floats, c=floats)
def test_a_partial_of_a_partial_gives_each_layer_its_adjoint(a, b, x, c):
    value, _ = cpsgrad.value_and_grad(cf.partial_of_a_partial, argnums=(0, 1, 2, 3))(a, b, x, c)
    assert value == cf.partial_of_a_partial(a, b, x, c)
    check_grad(cf.partial_of_a_partial, a, b, x, c, argnums=(0, 1, 2, 3))
