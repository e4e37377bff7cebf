"""The calls corpus through cpsgrad: values equal the original's, gradients match differences,
and for the programs transcribed to jax.numpy below, gradients match jax.grad's."""

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cpsgrad
from cpsgrad.testing import GradCheck, check_grad
from tests.corpus import call_programs as programs
from tests.corpus import harness
from tests.corpus.call_programs import CASES

MAX_SKIPPED_FRACTION = 0.5
EXAMPLES = 6
JAX_EXAMPLES = 3
JAX_RTOL = 1e-9
JAX_ATOL = 1e-12

# Cases that fail because of a cpsgrad bug, name -> reason: marked xfail(strict=True) and not
# shrunk. Empty now: the one bug this corpus found (`h = f(h)` followed by more code dropped the
# argument's adjoint at the call site, transforms/adjoint.py) is fixed.
XFAIL: dict[str, str] = {}


def test_the_corpus_is_large_enough():
    assert len(CASES) >= 32
    assert len({case.name for case in CASES}) == len(CASES)
    assert set(XFAIL) <= {case.name for case in CASES}


@pytest.mark.parametrize("case", harness.params(CASES, XFAIL))
def test_value_and_gradient_match_the_original(case):
    """check_grad runs value_and_grad and grad: the value must equal f(*args) exactly, each
    gradient have its argument's shape and dtype, and match finite differences."""
    outcomes: list[GradCheck] = []

    @settings(max_examples=EXAMPLES, phases=harness.phases(case, XFAIL))
    @given(st.tuples(*case.arguments))
    def check(arguments):
        outcome = check_grad(case.function, *arguments, argnums=case.argnums)
        outcomes.append(outcome)
        for position, derivative in zip(harness.positions(case.argnums), outcome.analytic, strict=True):
            if type(arguments[position]) is float:  # a Python float, not a numpy scalar
                assert type(derivative) is float, (position, type(derivative))

    check()
    skipped = [outcome.reason for outcome in outcomes if outcome.skipped]
    assert len(skipped) <= MAX_SKIPPED_FRACTION * len(outcomes), (
        f"{len(skipped)} of {len(outcomes)} examples skipped; first reasons: {skipped[:3]}"
    )


# --- helpers that raise: through cpsgrad exactly when the original raises ------------------


def test_a_helper_raising_on_bad_input_raises_through_the_gradient():
    x, mu = np.array([0.5, -1.0, 2.0]), np.zeros(3)
    with pytest.raises(ValueError, match="checked_log needs a positive value"):
        programs.gaussian_log_likelihood(x, mu, -1.0)
    with pytest.raises(ValueError, match="checked_log needs a positive value"):
        cpsgrad.grad(programs.gaussian_log_likelihood, argnums=(0, 2))(x, mu, -1.0)
    with pytest.raises(ValueError, match="shapes differ"):
        cpsgrad.grad(programs.gaussian_log_likelihood)(x, np.zeros(2), 1.0)


def test_recursion_two_hundred_deep_is_exact():
    value, gradient = cpsgrad.value_and_grad(programs.recursion_two_hundred_deep)(
        0.7, programs.DEEP
    )
    assert value == programs.recursion_two_hundred_deep(0.7, programs.DEEP)
    assert type(gradient) is float
    step = 1e-6
    numeric = (
        programs.recursion_two_hundred_deep(0.7 + step, programs.DEEP)
        - programs.recursion_two_hundred_deep(0.7 - step, programs.DEEP)
    ) / (2 * step)
    assert gradient == pytest.approx(numeric, rel=1e-6)


# --- jax.numpy transcriptions: the same programs, differentiated by jax.grad ----------------


def _sigmoid(z):
    return 1.0 / (1.0 + jnp.exp(-z))


def lstm_over_sequence(W, U, bias, xs):
    n = programs.HIDDEN
    h, c = jnp.zeros(n), jnp.zeros(n)
    for x in xs:
        z = W @ x + U @ h + bias
        gates = _sigmoid(z[: 3 * n])
        c = gates[:n] * c + gates[n : 2 * n] * jnp.tanh(z[3 * n :])
        h = gates[2 * n :] * jnp.tanh(c)
    return jnp.sum(h * h) + jnp.sum(c)


def rnn_classifier(Wxh, Whh, b, Why, xs, target):
    h = jnp.zeros(programs.HIDDEN + 1)
    for x in xs:
        h = jnp.tanh(Wxh @ x + Whh @ h + b)
    logits = Why @ h
    shifted = logits - jnp.max(logits)
    return -(shifted - jnp.log(jnp.sum(jnp.exp(shifted))))[target]


def rnn_with_residual(Wxh, Whh, b, xs):
    h = jnp.zeros(programs.HIDDEN + 1)
    for x in xs:
        h = 0.5 * h + jnp.tanh(Wxh @ x + Whh @ h + b)
    return jnp.sum(h * h) + h[0]


def two_query_attention(q1, q2, keys, values):
    def attend(query):
        scores = keys @ query / jnp.sqrt(query.shape[0])
        weights = jnp.exp(scores - jnp.max(scores))
        return (weights / jnp.sum(weights)) @ values

    first, second = attend(q1), attend(q2)
    return first @ second + jnp.sum(first)


def two_layer_objects(W1, b1, W2, b2, x):
    h = jnp.tanh(0.5 * (W1 @ x) + b1)
    y = _sigmoid(W2 @ h + b2)
    return jnp.sum(y * y) + h @ h


def kernel_sum(x, X, alpha, kernel):
    def rbf(a, b, lengthscale):
        d = a - b
        return jnp.exp(-jnp.sum(d * d) / (2.0 * lengthscale**2))

    total = 0.0
    for i in range(X.shape[0]):
        total = total + alpha[i] * rbf(x, X[i], programs.KERNEL.lengthscale)
        total = total + rbf(X[i], x, kernel.lengthscale) * alpha[i] ** 2
    return total


def power_by_squaring(x, n):
    def power(v, n):
        if n == 0:
            return 1.0
        half = power(v, n // 2)
        return half * half if n % 2 == 0 else v * half * half

    return power(x, n) + power(1.0 - 0.5 * x, n + 1) * x


def horner_recursion(coefficients, x):
    def horner(c, v):
        value = 0.0
        for i in reversed(range(c.shape[0])):
            value = c[i] + v * value
        return value

    return horner(coefficients, x) + horner(coefficients[::-1], -x) ** 2


def tail_recursive_discounting(rewards, gamma):
    total = 0.0
    for i in reversed(range(rewards.shape[0])):
        total = rewards[i] + gamma * total
    return total


def divide_and_conquer(v):
    def reduce(v):
        if v.shape[0] == 1:
            return v[0] * v[0]
        half = v.shape[0] // 2
        return 0.5 * reduce(v[:half]) + jnp.tanh(reduce(v[half:]))

    return reduce(v) + reduce(v[::-1] * 0.5)


def tree_rnn(W, b, E, w, tree):
    def compose(tree):
        if isinstance(tree, int):
            return jnp.tanh(E[tree])
        return jnp.tanh(W @ jnp.concatenate([compose(tree[0]), compose(tree[1])]) + b)

    root = compose(tree)
    return jnp.log(1.0 + jnp.exp(w @ root)) + 0.1 * jnp.sum(root * root)


def node_tree_score(root, w, decay):
    def score(node):
        if node is None:
            return 0.0
        return jnp.tanh(jnp.asarray(node.value) @ w) + decay * (
            score(node.left) + score(node.right)
        )

    return score(root) / programs.count_nodes(root)


def integrate_oscillator(y0, omega, dt, steps):
    def field(y):
        return jnp.stack([y[1], -omega * omega * y[0] - 0.1 * y[1]])

    y = y0
    for _ in range(steps):
        k1 = field(y)
        k2 = field(y + 0.5 * dt * k1)
        k3 = field(y + 0.5 * dt * k2)
        k4 = field(y + dt * k3)
        y = y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y @ y + y[0]


JAX_TRANSCRIPTIONS = {
    function.__name__: function
    for function in (
        lstm_over_sequence,
        rnn_classifier,
        rnn_with_residual,
        two_query_attention,
        two_layer_objects,
        kernel_sum,
        power_by_squaring,
        horner_recursion,
        tail_recursive_discounting,
        divide_and_conquer,
        tree_rnn,
        node_tree_score,
        integrate_oscillator,
    )
}
JAX_CASES = [case for case in CASES if case.name in JAX_TRANSCRIPTIONS]


def test_every_transcription_has_a_case():
    assert len(JAX_CASES) == len(JAX_TRANSCRIPTIONS) >= 8


@pytest.mark.parametrize("case", harness.params(JAX_CASES, XFAIL))
def test_gradient_matches_jax(case):
    harness.check_against_jax(case, JAX_TRANSCRIPTIONS[case.name], XFAIL, JAX_EXAMPLES, JAX_RTOL, JAX_ATOL)
