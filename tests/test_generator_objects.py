"""A generator object kept in a variable and consumed later in its block (transforms/generator_objects.py):
`next` calls then a loop, a loop with `break` then another resuming it, `sum`/`list` of the rest; the values,
the side effects in Python's order (the generator resumes only when asked), the gradient against finite
differences, in loops, branches, user functions; every other use refused, located."""

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


def nexts_then_a_loop(x, w):
    g = logged([x, 2.0, x + 1.0, 4.0], w)
    LOG.append("made")
    a = next(g)
    LOG.append(f"a {a}")
    b = next(g)
    s = a * b
    for v in g:
        LOG.append(f"body {v}")
        s = s + v * x
    else:
        LOG.append("else")
    LOG.append("after")
    return s


def break_then_resume(x, w):
    g = logged([x, 2.0, x + 1.0, 4.5, x * x], w)
    s = 0.0
    for v in g:
        if v > 3.0:
            break
        if v < 0.0:
            continue
        s = s + v
    LOG.append(f"between {s}")
    for v in g:
        if v > 1.0: break  # noqa: E701  (a one-line suite: the break becomes several statements)  # fmt: skip
        s = s + v * v
    return s


def next_with_a_default_and_sum_of_the_rest(x, w):
    g = logged([x, w], w)
    first = next(g)
    rest = sum(g)
    h = logged([x], x)
    one = next(h)
    two = next(h, w)
    return first * rest + one * two


def return_of_the_rest(x, w):
    g = logged([x, w, x], w)
    next(g)
    return sum(g)


def stopped_by_next(x, w):
    g = logged([x, 200.0, 3.0], w)
    a = next(g)
    b = next(g)  # the generator returns at 200.0: StopIteration here, as in Python
    return a * b


def returns_from_the_loop(x, w):
    g = logged([x, 2.0, 3.0], w)
    first = next(g)
    for v in g:
        if v > first:
            return v * x
    return first * w


def in_a_branch_and_a_helper(x, w):
    if x > 1.0:
        g = logged([x, w], x)
        a = next(g)
        return a * helper(g_values=[w, x], w=w)
    return helper([x], w)


def helper(g_values, w):
    g = logged(g_values, w)
    a = next(g)
    items = list(g)
    return a + sum(items) * w


def in_a_loop(x, w):
    s = 0.0
    for k in range(2):
        a = v = None  # in a loop, what the consumers assign is bound before (or refused: the message says so)
        g = logged([x, k + w], w)
        a = next(g)
        for v in g:
            s = s + v * a
    return s


def never_consumed(x, w):
    g = logged([x], w)  # noqa: F841
    LOG.append("made")
    return x * w


def discarded_next_and_return_between(x, w):
    g = logged([x, w, x * w], w)
    next(g)
    a = next(g)
    if a > 0.5:
        LOG.append("early")  # the generator stays suspended: it never resumes
        return a * x
    b = next(g, 0.0)
    return a * b


def kept_in_a_loop_over_a_generator(x, w):
    s = 0.0
    for u in logged([x, w], x):
        g = logged([u, x], w)
        a = next(g)
        rest = sum(g)
        s = s + a * rest
    return s


def break_then_list_of_the_rest(x, w):
    g = logged([x, w], w)
    for _v in g:
        LOG.append("first")
        break
    else:
        LOG.append("empty")
    ys = list(g)
    return ys[0] * x


CASES = [
    return_of_the_rest,
    discarded_next_and_return_between,
    kept_in_a_loop_over_a_generator,
    break_then_list_of_the_rest,
    nexts_then_a_loop,
    break_then_resume,
    next_with_a_default_and_sum_of_the_rest,
    stopped_by_next,
    returns_from_the_loop,
    in_a_branch_and_a_helper,
    in_a_loop,
    never_consumed,
]


@pytest.mark.parametrize("function", CASES)
@pytest.mark.parametrize("x", [0.5, 1.5, 150.0])
def test_values_side_effects_and_gradients(function, x):
    LOG.clear()
    try:
        expected = function(x, 0.75)
    except (StopIteration, IndexError) as error:  # the generator returned first: the same error, the same log
        python_log = list(LOG)
        LOG.clear()
        with pytest.raises(type(error)):
            cpsgrad.value_and_grad(function, argnums=(0, 1))(x, 0.75)
        assert LOG == python_log
        return
    python_log = list(LOG)
    LOG.clear()
    value, _ = cpsgrad.value_and_grad(function, argnums=(0, 1))(x, 0.75)
    assert value == expected
    assert LOG == python_log
    check = check_grad(function, x, 0.75, argnums=(0, 1))
    assert not check.skipped, check.reason


def test_a_generator_stopped_early_never_runs_further():
    LOG.clear()
    cpsgrad.grad(returns_from_the_loop)(1.5, 0.75)
    assert LOG == ["start", "gen 1.5", "resumed 1.5", "gen 2.0"]


def returned(x, w):
    g = logged([x], w)
    return g


def stored(x, w):
    g = logged([x], w)
    kept = [g]
    return next(kept[0])


def passed_on(x, w):
    g = logged([x], w)
    return consume(g)


def consume(g):
    return sum(g)


def consumed_in_a_branch(x, w):
    g = logged([x, w], w)
    a = next(g)
    if a > 0.0:
        a = a + next(g)
    return a


def consumed_in_a_while(x, w):
    g = logged([x, w], w)
    s = 0.0
    while s < 1.0:
        s = s + next(g)
    return s


def break_between(x, w):
    s = 0.0
    for _k in range(2):
        g = logged([x, w], w)
        a = next(g)
        if a > 1.0:
            break
        b = next(g)
        s = s + a + b
    return s


def inside_an_expression(x, w):
    g = logged([x, w, x], w)
    first = next(g)
    return sum(g) * first  # a kept generator's consumer inside an expression: assign it first


def rebound(x, w):
    g = logged([x], w)
    g = logged([w], w)
    return next(g)


def _line_of(text):
    with open(__file__) as file:
        found = [number for number, line in enumerate(file, 1) if line.startswith(text)]
    return found[-1]


@pytest.mark.parametrize(
    "function, text, construct",
    [
        (returned, "    return g\n", "generator object g kept in a variable and used here"),
        (stored, "    kept = [g]", "generator object g kept in a variable and used here"),
        (passed_on, "    return consume(g)", "generator object g kept in a variable and used here"),
        (consumed_in_a_branch, "        a = a + next(g)", "generator object g kept in a variable and used here"),
        (consumed_in_a_while, "        s = s + next(g)", "generator object g kept in a variable and used here"),
        (break_between, "            break", "break between the consumers of a kept generator"),
        (inside_an_expression, "    return sum(g) * first", "generator object g kept in a variable and used here"),
        (rebound, "    g = logged([w], w)", "generator object g kept in a variable and used"),
    ],
)
def test_other_uses_are_refused_with_their_location(function, text, construct):
    with pytest.raises(UnsupportedError) as raised:
        cpsgrad.grad(function)(1.0, 2.0)
    message = str(raised.value)
    assert f"test_generator_objects.py:{_line_of(text)}:" in message, message
    assert construct in message
