"""Generators consumed inside expressions (transforms/generator_hoist.py) and the builtins that consume
them (transforms/generator_consumers.py): the values, the side effects in Python's order, the gradient
against finite differences, in loops, branches, user functions and recursion; each refusal located."""

import numpy as np
import pytest

import cpsgrad
from cpsgrad.errors import UnsupportedError
from cpsgrad.testing import check_grad

LOG = []
SCALE = 3.0


def logged(xs, w):
    LOG.append("start")
    for x in xs:
        LOG.append(f"gen {x}")
        yield x * w
        LOG.append(f"resumed {x}")
    LOG.append("end")


def noted(x):
    LOG.append(f"noted {x}")
    return x


def scaled_sum(x, w):
    return 2.0 * sum(logged([x, x * x], w))


def array_of_list(x, w):
    y = w * 3.0
    return np.sum(np.array(list(logged([x, 2.0], w)))) + y


def extremes(x, w):
    return max(logged([x, 3.0 * x, 2.0], w)) + min(logged([x, w], x)) * SCALE


def operands_before(x, w):
    # noted(x) and ys[0] * 2.0 run before the generator, as in Python; ys[1] after it
    ys = [x, w]
    return noted(x) * ys[0] * 2.0 + max(logged(ys, w)) * ys[1]


def augmented_and_tests(x, w):
    s = 1.0
    s += sum(logged([x], w), 2.0)
    if any(logged([x - 1.0, w], 1.0)):  # stops at the first true item: the generator left suspended
        s = s * x
    if all(logged([x, 0.0, w], 1.0)):  # stops at 0.0
        s = s + 100.0
    return s * sorted(logged([w, x], x))[0] + tuple(logged([x], x))[0]


def helper(x, w):
    return x * sum(logged([x, w], w)) + 1.0


def in_a_loop_over_a_generator(x, w):
    s = 0.0
    for v in logged([x, w], x):
        s = s + v * helper(v, w) + min(logged([v, w], 2.0))
    return s


def recursive(x, n):
    if n == 0:
        return x
    return recursive(x, n - 1) * sum(logged([x, 1.0], x))


def in_recursion(x, w):
    return recursive(x, 2) + recursive(w, 1)


def twice_and_discarded(x, w):
    sum(logged([x], w))
    return x * (sum(logged([x], w)) + sum(logged([w, x], w)))


def in_branches(x, w):
    if x > 1.0:
        return max(logged([x, w], w), default=0.0) * x
    return next(logged([w], x)) * 2.0 + w


CASES = [
    scaled_sum,
    array_of_list,
    extremes,
    operands_before,
    augmented_and_tests,
    in_a_loop_over_a_generator,
    in_recursion,
    twice_and_discarded,
    in_branches,
]


@pytest.mark.parametrize("function", CASES)
@pytest.mark.parametrize("x", [0.5, 1.5])
def test_values_side_effects_and_gradients(function, x):
    LOG.clear()
    expected = function(x, 0.75)
    python_log = list(LOG)
    LOG.clear()
    value, _ = cpsgrad.value_and_grad(function, argnums=(0, 1))(x, 0.75)
    assert value == expected
    assert LOG == python_log
    check = check_grad(function, x, 0.75, argnums=(0, 1))
    assert not check.skipped, check.reason


def test_any_leaves_the_generator_where_python_does():
    LOG.clear()
    cpsgrad.grad(augmented_and_tests)(1.5, 0.75)
    assert "gen 0.5" in LOG and "resumed 0.5" not in LOG  # any stopped at its first item, 0.5 (true)
    assert "gen 0.0" in LOG and "resumed 0.0" not in LOG  # all stopped at 0.0
    assert LOG.count("end") == 3  # sum, sorted, tuple ran to the end; any and all did not


def empty_max(x):
    return 2.0 * max(logged([], x))


def test_min_max_of_an_empty_generator_raise_pythons_error():
    with pytest.raises(ValueError) as python:
        empty_max(1.0)
    with pytest.raises(ValueError) as ours:
        cpsgrad.grad(empty_max)(1.0)
    assert str(ours.value) == str(python.value)


def the_hoisted_code_is_readable(x, w):
    return 2.0 * sum(logged([x], w))


def test_the_hoisted_statement_keeps_names_readable():
    text = cpsgrad.show(the_hoisted_code_is_readable, stage="normalize")
    assert "sum_logged = sum_1" in text


def conditional(x, w):
    return x > 0.0 and sum(logged([x], w))


def in_elif(x, w):
    if x > 5.0:
        return x
    elif sum(logged([x], w)) > 0.0:
        return w
    return x


def in_while(x, w):
    while sum(logged([x], w)) > 10.0:
        x = x - 1.0
    return x


def computed_start(x, w):
    return sum(logged([x], w), x * 2.0)


def sorted_with_key(x, w):
    return sorted(logged([x], w), key=abs)[0]


def max_with_key(x, w):
    return 3.0 * max(logged([x], w), key=abs)


def _line_of(text):
    with open(__file__) as file:
        found = [number for number, line in enumerate(file, 1) if line.startswith(text)]
    return found[0]


@pytest.mark.parametrize(
    "function, text, construct",
    [
        (conditional, "    return x > 0.0 and sum(", "generator call in this position"),
        (in_elif, "    elif sum(", "generator call in this position"),
        (in_while, "    while sum(", "generator call in this position"),
        (
            computed_start,
            "    return sum(logged([x], w), x * 2.0)",
            "sum of a generator with an argument that is not a constant",
        ),
        (sorted_with_key, "    return sorted(", "sorted of a generator with these arguments"),
        (max_with_key, "    return 3.0 * max(", "max of a generator with these arguments"),
    ],
)
def test_refusals_are_located(function, text, construct):
    with pytest.raises(UnsupportedError) as raised:
        cpsgrad.grad(function)(1.0, 2.0)
    message = str(raised.value)
    assert f"test_generator_expressions.py:{_line_of(text)}:" in message, message
    assert construct in message
