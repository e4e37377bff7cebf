"""Generators consumed by differentiated code (transforms/generators.py, generator_folds.py):
side effects in Python's order (a log both the generator and the consumer write), early exits
that must not run the generator further, the stages as valid Python, and every refusal located."""

import pytest

import cpsgrad
from cpsgrad.errors import UnsupportedError
from cpsgrad.testing import check_grad

LOG = []


def logged(xs, w):
    LOG.append("start")
    for x in xs:
        LOG.append(f"gen {x}")
        if x > 100.0:
            return
        yield x * w
        LOG.append(f"resumed {x}")
    LOG.append("end")


def consumer_all(x, w):
    s = 0.0
    for v in logged([x, 2.0, x + 1.0], w):
        LOG.append(f"body {v}")
        s = s + v * v
    LOG.append("after")
    return s


def consumer_break(x, w):
    s = 0.0
    for v in logged([x, 2.0, x + 1.0, 4.0], w):
        LOG.append(f"body {v}")
        if v > 3.0:
            break
        s = s + v * x
    else:
        LOG.append("else")
    LOG.append("after")
    return s


def consumer_next(x, w):
    first = next(logged([x, 5.0], w))
    LOG.append("between")
    last = next(logged([], w), x)
    return first * last


def consumer_return(x, w):
    for v in logged([x, 200.0, 3.0], w):
        LOG.append(f"body {v}")
        if v > x * w:
            return v * x
    LOG.append("fell through")
    return w * x


def consumer_sum_list(x, w):
    total = sum(logged([x, 1.0], w))
    LOG.append("sum done")
    values = list(logged([w, x], x))
    return total * values[0] + values[1]


@pytest.mark.parametrize("function", [consumer_all, consumer_break, consumer_next, consumer_return, consumer_sum_list])
@pytest.mark.parametrize("x", [0.5, 1.5, 150.0])
def test_the_side_effects_come_in_pythons_order_and_the_gradient_is_right(function, x):
    LOG.clear()
    try:
        expected = function(x, 1.25)
    except (StopIteration, IndexError) as error:  # a generator that returned first: the same exception, log
        python_log = list(LOG)
        LOG.clear()
        with pytest.raises(type(error)):
            cpsgrad.value_and_grad(function, argnums=(0, 1))(x, 1.25)
        assert LOG == python_log
        return
    python_log = list(LOG)
    LOG.clear()
    value, _ = cpsgrad.value_and_grad(function, argnums=(0, 1))(x, 1.25)
    assert value == expected
    assert LOG == python_log
    LOG.clear()
    check = check_grad(function, x, 1.25, argnums=(0, 1))  # raises where they differ
    assert not check.skipped, check.reason


def test_break_stops_the_generator_where_python_leaves_it():
    LOG.clear()
    cpsgrad.grad(consumer_break)(1.0, 2.0)
    assert LOG == ["start", "gen 1.0", "body 2.0", "resumed 1.0", "gen 2.0", "body 4.0", "after"]


def stored(x, w):
    g = logged([x], w)
    return sum(g) if x > 0.0 else 0.0  # a consumer in a branch (`return sum(g)` alone is taken)


def generator_in_expression(x, w):
    return x > 0.0 and sum(logged([x], w))  # run only if x > 0: not hoisted (2.0 * sum(...) is)


def yield_in_try(xs):
    try:
        yield xs
    finally:
        LOG.append("closed")


def consumes_yield_in_try(x):
    return sum(yield_in_try(x))


def sent(x):
    y = yield x
    yield y


def consumes_sent(x):
    return sum(sent(x))


def maybe_bound(x, w):
    if x > 0:
        last = 0.0
    for v in logged([x], w):  # last maybe unbound
        last = v
    return last


def zip_generator_second(x, w):
    s = 0.0
    xs = [x]
    for a, b in zip(xs, logged([x], w), strict=False):
        s = s + a * b
    return s


def differentiated_generator(x):
    yield x


def nested_def_in_body(x, w):
    s = 0.0
    for v in logged([x], w):
        s = s + (lambda u: u * v)(x)
    return s


def _line_of(text):
    """The line of this file holding `text` (once)."""
    with open(__file__) as file:
        found = [number for number, line in enumerate(file, 1) if text in line and "(stored," not in line]
    return found[0]


@pytest.mark.parametrize(
    "function, text, construct",
    [
        (stored, "    return sum(g) if", "generator object g kept in a variable and used here"),
        (generator_in_expression, "    return x > 0.0 and sum(", "generator call in this position"),
        (consumes_yield_in_try, "        yield xs", "yield inside try or with"),
        (consumes_sent, "    y = yield x", "yield used as a value"),
        (maybe_bound, "# last maybe unbound", "variable last assigned in a loop over a generator"),
        (zip_generator_second, "    for a, b in zip(", "zip with a generator that is not its first argument"),
        (differentiated_generator, "    yield x\n", "yield"),
        (nested_def_in_body, "(lambda u", "function defined in a loop over a generator"),
    ],
)
def test_refusals_name_the_file_line_and_construct(function, text, construct):
    with pytest.raises(UnsupportedError) as raised:
        cpsgrad.grad(function)(1.0, 2.0) if function.__code__.co_argcount == 2 else cpsgrad.grad(function)(1.0)
    message = str(raised.value)
    assert f"test_generators.py:{_line_of(text)}:" in message
    assert construct in message


def test_the_stages_are_valid_python_and_readable():
    text = cpsgrad.show(consumer_break, stage="normalize")
    assert "generator_fold(def_fold_logged, logged)" in text and "def logged(consumer" in text
    final = cpsgrad.show(consumer_break)
    compile(final.split("\n# ----")[0], "<final>", "exec")


def last_of(x, n):
    for v in logged([x, x][:n], 2.0):
        last = v * x
    return last


def test_a_variable_first_bound_in_the_loop_is_unbound_after_an_empty_one_as_in_python():
    assert cpsgrad.value_and_grad(last_of)(1.5, 2) == (last_of(1.5, 2), 6.0)
    with pytest.raises(UnboundLocalError, match="'last'"):
        last_of(1.5, 0)
    with pytest.raises(UnboundLocalError, match="'last'"):
        cpsgrad.grad(last_of)(1.5, 0)
