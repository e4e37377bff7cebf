"""The closures corpus through cpsgrad: values equal the original's, gradients match finite
differences (a dict, list or tuple argument leaf by leaf), and for the programs transcribed to
jax.numpy below, gradients match jax.grad's."""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cpsgrad
from cpsgrad.errors import UnsupportedError
from cpsgrad.testing import GradCheck, check_grad
from tests.corpus import closure_programs as programs
from tests.corpus import harness
from tests.corpus.closure_programs import CASES

MAX_SKIPPED_FRACTION = 0.5
EXAMPLES = 5
JAX_EXAMPLES = 3
JAX_RTOL = 1e-9
JAX_ATOL = 1e-12

# Cases that fail, name -> reason: marked xfail(strict=True) and not shrunk. Empty: the bugs this
# corpus found (partials of partials, partials of primitives, all/any of call results, keys of a
# dict, sorted over iterators, a comprehension variable taken for a reassignment, a lambda's
# lambda default) are fixed and their programs run like the others.
XFAIL: dict[str, str] = {}


# --- containers as differentiated arguments: checked leaf by leaf ----------------------------


def _leaves(tree):
    if isinstance(tree, dict):
        return [leaf for part in tree.values() for leaf in _leaves(part)]
    if isinstance(tree, (tuple, list)):
        return [leaf for part in tree for leaf in _leaves(part)]
    return [tree]


def _rebuild(tree, values):
    if isinstance(tree, dict):
        return {key: _rebuild(part, values) for key, part in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_rebuild(part, values) for part in tree)
    return next(values)


def _assert_same_structure(gradient, argument):
    assert type(gradient) is type(argument), (type(gradient), type(argument))
    if isinstance(argument, dict):
        assert list(gradient) == list(argument)
        for key in argument:
            _assert_same_structure(gradient[key], argument[key])
    elif isinstance(argument, (tuple, list)):
        assert len(gradient) == len(argument)
        for g, a in zip(gradient, argument, strict=True):
            _assert_same_structure(g, a)
    elif isinstance(argument, np.ndarray):
        assert gradient.shape == argument.shape and gradient.dtype == argument.dtype


def _is_container(value):
    return isinstance(value, (dict, tuple, list))


def _check(case, arguments) -> GradCheck:
    """check_grad of the case; differentiated containers are flattened into their leaves, the
    value compared exactly and the gradient's structure against the argument's."""
    positions = harness.positions(case.argnums)
    if not any(_is_container(arguments[p]) for p in positions):
        return check_grad(case.function, *arguments, argnums=case.argnums)
    value, gradient = cpsgrad.value_and_grad(case.function, argnums=case.argnums)(*arguments)
    expected = case.function(*arguments)
    assert value == expected, (value, expected)
    for position, part in zip(positions, harness.parts(gradient, case.argnums), strict=True):
        _assert_same_structure(part, arguments[position])
    counts = [len(_leaves(arguments[p])) for p in positions]

    def with_leaves(*values):
        remaining = iter(values)
        rebuilt = list(arguments)
        for position in positions:
            rebuilt[position] = _rebuild(arguments[position], remaining)
        return case.function(*rebuilt)

    def gradient_of_leaves(*values):
        remaining = iter(values)
        rebuilt = list(arguments)
        for position in positions:
            rebuilt[position] = _rebuild(arguments[position], remaining)
        parts = harness.parts(cpsgrad.grad(case.function, argnums=case.argnums)(*rebuilt), case.argnums)
        return [leaf for part in parts for leaf in _leaves(part)]

    flat = [leaf for p in positions for leaf in _leaves(arguments[p])]
    assert sum(counts) == len(flat)
    return check_grad(
        with_leaves, *flat, argnums=tuple(range(len(flat))), gradient=gradient_of_leaves
    )


def test_the_corpus_is_large_enough():
    assert len(CASES) >= 36
    assert len({case.name for case in CASES}) == len(CASES)
    assert set(XFAIL) <= {case.name for case in CASES}


@pytest.mark.parametrize("case", harness.params(CASES, XFAIL))
def test_value_and_gradient_match_the_original(case):
    """The value must equal f(*args) exactly, each gradient have its argument's structure,
    shape and dtype (a Python float's a Python float), and match finite differences."""
    outcomes: list[GradCheck] = []

    @settings(max_examples=EXAMPLES, phases=harness.phases(case, XFAIL))
    @given(st.tuples(*case.arguments))
    def check(arguments):
        outcome = _check(case, arguments)
        outcomes.append(outcome)
        if any(_is_container(arguments[p]) for p in harness.positions(case.argnums)):
            return
        for position, derivative in zip(harness.positions(case.argnums), outcome.analytic, strict=True):
            if type(arguments[position]) is float:  # a Python float, not a numpy scalar
                assert type(derivative) is float, (position, type(derivative))

    check()
    skipped = [outcome.reason for outcome in outcomes if outcome.skipped]
    assert len(skipped) <= MAX_SKIPPED_FRACTION * len(outcomes), (
        f"{len(skipped)} of {len(outcomes)} examples skipped; first reasons: {skipped[:3]}"
    )


# --- refused by design: late binding, nested functions in a cycle --------------------------


@pytest.mark.parametrize(
    ("function", "arguments", "message"),
    [pytest.param(*refused, id=refused[0].__name__) for refused in programs.REFUSED],
)
def test_late_binding_and_cycles_are_refused_with_advice(function, arguments, message):
    function(*arguments)  # plain Python runs it
    with pytest.raises(UnsupportedError, match=message):
        cpsgrad.grad(function)(*arguments)


# --- jax.numpy transcriptions: the same programs, differentiated by jax.grad ----------------


def _make_layer(W, b, activation):
    def layer(h):
        z = W @ h + b
        if activation == "tanh":
            return jnp.tanh(z)
        return z

    return layer


def mlp_of_closure_layers(params, x):
    layers = [
        _make_layer(params["W1"], params["b1"], "tanh"),
        _make_layer(params["W2"], params["b2"], "linear"),
    ]
    h = x
    for layer in layers:
        h = layer(h)
    return sum(v * v for v in h) + h[0]


def composed_lambdas(a, x):
    f = lambda v: jnp.sin(a * v)
    g = lambda v: v * v + a
    h = programs.compose(f, g)
    twice = programs.compose(h, h)
    return twice(x) + h(x) * a


def closure_returned_called_twice(a, x):
    scale = programs.make_scaler(a)
    return scale(scale(x)) - scale(1.0)


def partial_of_a_lambda(a, b, x):
    weighted = functools.partial(lambda w, v: w * v + b * v * v, a)
    return weighted(x) + weighted(weighted(x))


def newton_cube_root(c, steps):
    f = lambda y: y**3 - c
    df = lambda y: 3.0 * y * y
    return programs.newton(f, df, 1.0 + 0.1 * c, steps)


def euler_integrator(W, b, decay, y0, dt, steps):
    def field(y):
        return jnp.tanh(W @ y + b) - decay * y

    y = programs.euler(field, y0, dt, steps)
    return y @ y + y[0]


def scan_rnn(Wx, Wh, b, xs):
    def step(h, x):
        return jnp.tanh(Wx @ x + Wh @ h + b)

    h, states = programs.scan(step, jnp.zeros(programs.HIDDEN), xs)
    return jnp.sum(h) + sum(s @ s for s in states)


def riemann_integral(a, b, hi, n):
    f = lambda t: jnp.exp(-a * t * t) + b * t
    h = hi / n
    return h * sum(f((i + 0.5) * h) for i in range(n))


def gradient_descent_with_closures(w, X, y, lr, steps):
    n = X.shape[0]

    def residual(v):
        return X @ v - y

    for _ in range(steps):
        w = w - lr * (X.T @ residual(w) / n)
    r = residual(w)
    return r @ r / n


def tree_fold_with_closures(weight, embeddings, tree):
    combine = lambda left, right: jnp.tanh(weight * left + right)
    root = programs.fold_tree(combine, lambda i: embeddings[i], tree)
    return jnp.sum(root * root)


def recursive_nested_power(x, n):
    def power(k):
        if k == 0:
            return 1.0
        half = power(k // 2)
        return half * half if k % 2 == 0 else x * half * half

    return power(n) + power(n + 1) * 0.5


def softmax_with_comprehensions(a, b, c):
    scores = jnp.stack([a, b * a, c - b])
    probabilities = jax.nn.softmax(scores)
    return probabilities @ scores


def attention_with_a_score_closure(q, K, V):
    weights = jax.nn.softmax(K @ q / math.sqrt(q.shape[0]))
    context = weights @ V
    return context @ context + jnp.sum(context)


def product_by_reduce(xs, scale):
    return jnp.prod(xs) + 1.0 + scale * jnp.sum(xs)


def polynomial_terms_as_closures(c, x):
    return sum(c[k] * x**k for k in range(c.shape[0]))


def chain_of_closures_built_recursively(a, x, n):
    def make_chain(n, a):
        if n == 0:
            return lambda v: v
        inner = make_chain(n - 1, a)
        return lambda v: a * jnp.sin(inner(v)) + v

    f = make_chain(n, a)
    return f(x) * f(0.5)


def reduce_with_array_state(W, xs):
    step = lambda h, x: jnp.tanh(W @ h + x)
    return jnp.sum(functools.reduce(step, xs, jnp.zeros(programs.INPUTS)))


def dict_comprehension_sgd_step(params, lr, x):
    updated = {name: value - lr * 2.0 * value for name, value in params.items()}
    h = jnp.tanh(updated["W"] @ x + updated["b"])
    return h @ h + sum(jnp.sum(v * v) for v in updated.values())


JAX_TRANSCRIPTIONS = {
    function.__name__: function
    for function in (
        mlp_of_closure_layers,
        composed_lambdas,
        closure_returned_called_twice,
        partial_of_a_lambda,
        newton_cube_root,
        euler_integrator,
        scan_rnn,
        riemann_integral,
        gradient_descent_with_closures,
        tree_fold_with_closures,
        recursive_nested_power,
        softmax_with_comprehensions,
        attention_with_a_score_closure,
        product_by_reduce,
        polynomial_terms_as_closures,
        dict_comprehension_sgd_step,
        chain_of_closures_built_recursively,
        reduce_with_array_state,
    )
}
JAX_CASES = [case for case in CASES if case.name in JAX_TRANSCRIPTIONS]


def test_every_transcription_has_a_case():
    assert len(JAX_CASES) == len(JAX_TRANSCRIPTIONS) >= 10


@pytest.mark.parametrize("case", harness.params(JAX_CASES, XFAIL))
def test_gradient_matches_jax(case):
    harness.check_against_jax(case, JAX_TRANSCRIPTIONS[case.name], XFAIL, JAX_EXAMPLES, JAX_RTOL, JAX_ATOL)
