"""Generators as real code writes them (transforms/generators.py, generator_folds.py,
generator_comprehensions.py): closure generators of an enclosing factory (HIPS autograd's
bayesian_neural_net.py), generators defined by a `def` of the differentiated function reading its
variables (recursive, nested, consumed in a loop body), and comprehensions over a generator call.
Each against finite differences, with the primal value equal to Python's and side effects in
Python's order; what stays refused is refused where it is written."""

import inspect

import numpy as np
import pytest

import cpsgrad
from cpsgrad.errors import UnsupportedError
from cpsgrad.testing import check_grad

LOG = []


# ---- closure generators of a factory ----------------------------------------------------------


def make_network(shapes, nonlinearity=np.tanh):
    def unpack_layers(weights):
        for m, n in shapes:
            yield weights[: m * n].reshape((m, n)), weights[m * n : m * n + n]
            weights = weights[(m + 1) * n :]

    def predictions(weights, inputs):
        for W, b in unpack_layers(weights):
            outputs = inputs @ W + b
            inputs = nonlinearity(outputs)
        return outputs

    def loss(weights, inputs):
        return np.sum(predictions(weights, inputs) ** 2)

    return loss


def make_scaled(k, scale):
    def gen(x, *, power=2, offset=0.5):
        LOG.append("gen start")
        for i in range(k):
            LOG.append(f"gen {i}")
            yield scale * x**power + i * offset

    def f(x):
        total = sum(gen(x)) + max(gen(x, power=3))
        LOG.append("between")
        for v in gen(x, offset=1.0):
            LOG.append("body")
            total = total + v * x
            if total > 50.0:
                break
        return total

    return f


def test_a_factory_closure_generator_is_differentiated():
    loss = make_network([(2, 3), (3, 1)])
    w = np.linspace(-1.0, 1.0, 13)
    x = np.linspace(0.5, 1.5, 8).reshape(4, 2)
    check_grad(loss, w, x)
    check_grad(loss, w, x, argnums=(0, 1))


def test_a_factory_generator_with_keywords_runs_lazily_in_pythons_order():
    f = make_scaled(3, 1.5)
    LOG.clear()
    expected = f(1.25)
    python_log = list(LOG)
    LOG.clear()
    value, _ = cpsgrad.value_and_grad(f)(1.25)
    assert value == expected
    assert LOG == python_log
    check_grad(f, 1.25)
    check_grad(make_scaled(4, -0.75), 2.5)  # a second factory: its own cells


def make_recursive(c):
    def gen(n):
        if n > 0:
            yield c * n
            yield from gen(n - 1)

    def h(x):
        return sum(v * x for v in gen(3))

    return h


def make_consumer(c):
    def gen(n):
        for i in range(n):
            yield c * i

    def h():
        return sum(gen(3))

    return h


def factory_called_in_the_function(x):  # the generator's captured value is differentiated
    h = make_consumer(x * x)
    return h() * x


def test_a_recursive_factory_generator_and_a_factory_called_in_the_function():
    check_grad(make_recursive(1.5), 1.3)
    check_grad(factory_called_in_the_function, 1.3)


def test_two_instances_of_a_factory_read_their_own_captures():
    small, large = make_network([(2, 1)]), make_network([(2, 2), (2, 1)])
    x = np.ones((3, 2))
    check_grad(small, np.linspace(-1.0, 1.0, 3), x)
    check_grad(large, np.linspace(-1.0, 1.0, 9), x)


# ---- generators defined in the differentiated function ----------------------------------------


def local_sum(x, n):
    c = x * 2.0

    def gen(k, scale=0.5):
        for i in range(k):
            yield c * i * scale + x

    return sum(gen(n)) + max(gen(2))


def local_loop(x, n):
    def gen(k):
        LOG.append("gen start")
        for i in range(k):
            LOG.append(f"gen {i}")
            yield x**i
        LOG.append("gen end")

    s = 0.0
    for v in gen(n):
        LOG.append("body")
        s = s + v * x
        if s > 20.0:
            break
    LOG.append("after")
    return s


def local_object(x):
    def gen():
        yield x
        yield x * x

    g = gen()
    a = next(g)
    b = next(g)
    return a * b


def local_recursive(x):
    def gen(n):
        if n > 0:
            yield x * n
            yield from gen(n - 1)

    return sum(gen(3))


def local_nested_consumer(x):
    def gen(n):
        for i in range(n):
            yield x * (i + 1)

    def h(v):
        return v * x

    s = 0.0
    for v in gen(3):
        for w in gen(2):
            s = s + h(v) * w
    return s


def local_defaults(x):
    def gen(k, scale=x * 2.0, *, off=x):  # differentiable defaults
        for i in range(k):
            yield scale * i + off

    return sum(gen(3)) + sum(gen(2, off=1.0))


def local_two_levels(x):
    y = x * 3.0

    def outer():
        def gen():
            yield y
            yield x

        def inner():
            return sum(v * v for v in gen())

        return inner()

    return outer()


def local_in_a_helper(x):
    def consume(y):
        def gen():
            yield y
            yield np.sin(y)

        return sum(gen())

    return consume(x * 3.0) * x


@pytest.mark.parametrize(
    "function, args",
    [
        (local_sum, (1.5, 3)),
        (local_loop, (1.25, 4)),
        (local_loop, (3.0, 4)),  # breaks early
        (local_object, (0.75,)),
        (local_recursive, (1.5,)),
        (local_nested_consumer, (0.5,)),
        (local_in_a_helper, (0.3,)),
        (local_defaults, (1.3,)),
        (local_two_levels, (1.3,)),
    ],
)
def test_a_generator_defined_in_the_function_is_differentiated(function, args):
    check_grad(function, *args)


def test_a_local_generator_runs_lazily_in_pythons_order():
    for x in (1.25, 3.0):
        LOG.clear()
        expected = local_loop(x, 4)
        python_log = list(LOG)
        LOG.clear()
        value, _ = cpsgrad.value_and_grad(local_loop)(x, 4)
        assert value == expected
        assert LOG == python_log


def constant_list(x, n):
    def gen(k):
        for _ in range(k):
            yield 0.25

    ys = list(gen(3))
    return ys[0] * x


def test_a_consumer_whose_loop_nothing_differentiates_runs():
    # the loop body runs as plain Python there (it once read cpsgrad_runtime, undefined in the module)
    assert cpsgrad.value_and_grad(constant_list)(0.5, 2) == (0.125, 0.25)


# ---- comprehensions over a generator call -------------------------------------------------------


def counted(x, n):
    for i in range(n):
        LOG.append(f"gen {i}")
        yield x * (i + 1)


def note(v):
    LOG.append(f"element {v}")
    return v


def genexp_sum(x):
    return sum(v * v for v in counted(x, 3))


def genexp_condition(x):
    c = 2.0
    return x * 3.0 + sum(note(v) * c for v in counted(x, 4) if v > 2.0)


def list_comprehension(x):
    ys = [np.sin(note(v)) for v in counted(x, 3)]
    return ys[0] * ys[2]


def list_in_an_expression(x):
    return np.sum(np.array([v * x for v in counted(x, 3)]))


def genexp_max_and_next(x):
    return max(v * (2.0 - v) for v in counted(x, 3)) + next((v for v in counted(x, 3) if v > 2.5), x)


def genexp_any(x):
    return 1.0 * any(v > 3.0 for v in counted(x, 5)) + x


def genexp_keeps_its_scope(x):
    v = 5.0
    s = sum(v for v in counted(x, 2))
    return s * v


def genexp_local_generator(x):
    def gen(n):
        for i in range(n):
            yield x**i

    return sum(w for w in gen(4)) * len([w for w in gen(2)])


def genexp_zip(x):
    ys = [1.0, 2.0, 3.0]
    return sum(a * b for a, b in zip(counted(x, 4), ys, strict=False))


def genexp_enumerate(x):
    return sum(i * note(v) for i, v in enumerate(counted(x, 3), 1)) + [v * i for i, v in enumerate(counted(x, 2))][-1]


@pytest.mark.parametrize(
    "function",
    [
        genexp_zip,
        genexp_enumerate,
        genexp_sum,
        genexp_condition,
        list_comprehension,
        list_in_an_expression,
        genexp_max_and_next,
        genexp_any,
        genexp_keeps_its_scope,
        genexp_local_generator,
    ],
)
def test_a_comprehension_over_a_generator_call_is_differentiated_in_pythons_order(function):
    for x in (1.3, 0.4):
        LOG.clear()
        expected = function(x)
        python_log = list(LOG)
        LOG.clear()
        value, _ = cpsgrad.value_and_grad(function)(x)
        assert value == expected
        assert LOG == python_log
        check_grad(function, x)


# ---- what stays refused -------------------------------------------------------------------------


def make_counter():
    calls = 0

    def gen(x):
        nonlocal calls
        calls += 1
        yield x

    def f(x):
        return sum(gen(x))

    return f


def two_clauses(x):
    return sum(v * w for v in counted(x, 2) for w in (1.0, 2.0))


def late_bound(x):
    c = x

    def gen():
        yield c * x

    c = 2.0 * x
    return sum(gen())


def _line_of(function, text: str) -> int:
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize(
    "function, where, words",
    [
        (make_counter(), "nonlocal calls", r"nonlocal calls in a generator: pass the value in as an argument"),
        (two_clauses, "return sum(", r"generator call in this position: .*one `for` clause over the call"),
        (late_bound, "def gen", r"c is assigned again later in the function"),
    ],
)
def test_what_stays_refused_is_refused_where_it_is_written(function, where, words):
    source = function if where != "nonlocal calls" else make_counter
    with pytest.raises(UnsupportedError, match=words) as raised:
        cpsgrad.grad(function)(1.5)
    assert raised.value.location.line == _line_of(source, where)
