"""Unpacking with * and **: what the corpus (tests/corpus/starred_programs.py) does not check:
grad's argnums into *args, Python's exceptions kept, refusals with their location, recursion."""

import functools
import math

import numpy as np
import pytest

import cpsgrad
from cpsgrad.testing import check_grad


def scaled(x, *rest):
    return x * rest[0] + rest[1] ** 2


def test_argnums_past_the_named_parameters_index_into_star_args():
    value, gradients = cpsgrad.value_and_grad(scaled, argnums=(0, 1, 2))(1.5, 2.0, 3.0)
    assert value == scaled(1.5, 2.0, 3.0)
    assert gradients == (2.0, 1.5, 6.0)
    assert cpsgrad.grad(scaled, argnums=2)(1.5, 2.0, 3.0) == 6.0
    assert cpsgrad.grad(scaled, argnums=1)(1.5, 2.0, 3) == 1.5  # an int element not differentiated
    check_grad(scaled, 1.5, 2.0, 3.0)


def test_argnums_into_star_args_out_of_range_or_negative_are_refused():
    with pytest.raises(cpsgrad.ArgumentError, match="out of range"):
        cpsgrad.grad(scaled, argnums=3)(1.5, 2.0, 3.0)
    with pytest.raises(cpsgrad.ArgumentError, match="negative argnum"):
        cpsgrad.grad(scaled, argnums=-1)(1.5, 2.0, 3.0)
    with pytest.raises(cpsgrad.ArgumentError, match="rest\\[0\\]"):
        cpsgrad.grad(scaled, argnums=1)(1.5, 2, 3.0)


def keyword_bag(x, **options):
    return x * options["w"] + options.get("b", 0.0)


def calls_keyword_bag(x, w):
    return keyword_bag(x, w=w, b=x * w) + keyword_bag(**{"x": w, "w": x})


def test_kwargs_parameters_of_callees_get_their_gradient():
    value, gradients = cpsgrad.value_and_grad(calls_keyword_bag, argnums=(0, 1))(1.5, -2.0)
    assert value == calls_keyword_bag(1.5, -2.0)
    assert gradients == pytest.approx((2 * -2.0 + -2.0, 2 * 1.5 + 1.5))


def too_few(x):
    a, *rest, b = [x]  # noqa: F841
    return a + b


def test_starred_unpacking_of_too_few_values_raises_as_python_does():
    with pytest.raises(ValueError, match=r"not enough values to unpack \(expected at least 2, got 1\)"):
        too_few(1.0)
    with pytest.raises(ValueError, match=r"not enough values to unpack \(expected at least 2, got 1\)"):
        cpsgrad.grad(too_few)(1.0)


def rest_is_a_list(x):
    a, *rest = (x, x)
    assert type(rest) is list
    first, *empty = [x]  # noqa: F841
    return a * rest[0] + len(empty)


def test_starred_targets_bind_lists_as_python_does():
    assert cpsgrad.value_and_grad(rest_is_a_list)(3.0) == (9.0, 6.0)


def twice(a, b):
    return a * b


def duplicate_keyword(x):
    return twice(x, **{"a": x, "b": x})


def test_a_keyword_given_twice_raises_type_error_as_python_does():
    with pytest.raises(TypeError, match="multiple values for argument 'a'"):
        duplicate_keyword(1.0)
    with pytest.raises(TypeError, match="multiple values for argument 'a'"):
        cpsgrad.grad(duplicate_keyword)(1.0)


def frexp_of_star(x):
    pair = (x,)
    return math.frexp(*pair)[0]


def test_a_star_call_of_a_builtin_without_rule_is_refused_at_its_line():
    with pytest.raises(cpsgrad.NoRuleError) as raised:
        cpsgrad.grad(frexp_of_star)(1.5)
    assert raised.value.location.filename.endswith("test_starred.py")
    assert raised.value.location.line == frexp_of_star.__code__.co_firstlineno + 2


def spread_helper(*values):
    return values[0] * values[-1]


def partial_into_star_args(x, y):
    bound = functools.partial(spread_helper, x)
    return bound(y)


def test_a_partial_binding_a_differentiable_value_into_star_args_is_refused():
    with pytest.raises(cpsgrad.UnsupportedError, match="partial binds to \\*args"):
        cpsgrad.grad(partial_into_star_args, argnums=(0, 1))(1.5, 2.0)


def countdown(x, *rest):
    if not rest:
        return x
    return x + 0.5 * countdown(*rest)


def deep(x):
    values = [x * (1.0 + 0.001 * i) for i in range(300)]
    return countdown(*values)


def test_recursion_through_star_calls():
    value, gradient = cpsgrad.value_and_grad(deep)(0.7)
    assert value == deep(0.7)
    expected = sum(0.5**i * (1.0 + 0.001 * i) for i in range(300))
    assert gradient == pytest.approx(expected, rel=1e-12)


def prints_a_row(x, capsys=None):
    row = [x, 2.0 * x]
    print(*row, sep=",")
    return np.sum(np.stack([*row]))


def test_print_of_a_starred_row_runs_and_is_not_differentiated(capsys):
    assert cpsgrad.grad(prints_a_row)(1.5) == 3.0
    assert capsys.readouterr().out == "1.5,3.0\n"


def dict_unpacking_display(x):
    d = {"a": x}
    return {**d, "b": x}["a"]


def test_dict_unpacking_in_a_display_is_differentiated():
    assert cpsgrad.value_and_grad(dict_unpacking_display)(1.5) == (1.5, 1.0)


def star_arguments_in_show(x, y):
    pair = (x, y)
    a, *rest = pair
    return twice(*pair) + a * rest[0]


def test_show_prints_the_spread_and_the_unpacking():
    text = cpsgrad.show(star_arguments_in_show, argnums=(0, 1), stage="normalize")
    assert "t3 = tuple(pair)\n    t4 = cpsgrad_runtime.spread(twice, t3)" in text
    assert "cpsgrad_runtime.unpack_check(" in text
    assert cpsgrad.grad(star_arguments_in_show, argnums=(0, 1))(1.5, 2.0) == (4.0, 3.0)


def recorded(function):
    @functools.wraps(function)  # __wrapped__ names `twice`; what runs is the wrapper's code
    def recording(*args, **kwargs):
        return function(*args, **kwargs)

    return recording


recorded_twice = recorded(twice)


def calls_a_wrapper_with_star_parameters(x):
    square = lambda r: recorded_twice(r, 2.0 * r)  # noqa: E731
    return square(x)


def test_a_functools_wraps_wrapper_is_bound_by_its_own_parameters():
    assert cpsgrad.value_and_grad(calls_a_wrapper_with_star_parameters)(2.0) == (8.0, 8.0)
