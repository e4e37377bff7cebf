"""The array corpus through cpsgrad: values equal the original's, gradients match differences,
and for the programs transcribed to jax.numpy below, gradients match jax.grad's."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cpsgrad
from cpsgrad.testing import GradCheck, check_grad
from tests.corpus import array_programs as programs
from tests.corpus.array_programs import CASES

MAX_SKIPPED_FRACTION = 0.5
EXAMPLES = 8
JAX_EXAMPLES = 4
JAX_RTOL = 1e-9
JAX_ATOL = 1e-12

def _positions(argnums):
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _parts(gradient, argnums):
    return (gradient,) if isinstance(argnums, int) else tuple(gradient)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_value_and_gradient_match_the_original(case):
    """check_grad runs value_and_grad and grad: the value must equal f(*args) exactly, each
    gradient have its argument's shape and dtype, and match finite differences."""
    outcomes: list[GradCheck] = []

    @settings(max_examples=EXAMPLES)
    @given(st.tuples(*case.arguments))
    def check(arguments):
        outcome = check_grad(case.function, *arguments, argnums=case.argnums)
        outcomes.append(outcome)
        for position, derivative in zip(_positions(case.argnums), outcome.analytic, strict=True):
            if type(arguments[position]) is float:  # a Python float, not a numpy scalar
                assert type(derivative) is float, (position, type(derivative))

    check()
    skipped = [outcome.reason for outcome in outcomes if outcome.skipped]
    assert len(skipped) <= MAX_SKIPPED_FRACTION * len(outcomes), (
        f"{len(skipped)} of {len(outcomes)} examples skipped; first reasons: {skipped[:3]}"
    )


# The float32 programs, with the shapes of their arguments.
FLOAT32_SHAPES = {"float32_tanh_layer": ((3, 2), (2,)), "float32_softmax_entropy": ((4,),)}
FLOAT32_CASES = [case for case in CASES if case.name in FLOAT32_SHAPES]


@pytest.mark.parametrize("case", FLOAT32_CASES, ids=lambda case: case.name)
def test_float32_programs_stay_float32(case):
    arguments = tuple(
        np.linspace(-0.9, 0.8, int(np.prod(shape)), dtype=np.float32).reshape(shape)
        for shape in FLOAT32_SHAPES[case.name]
    )
    value, gradient = cpsgrad.value_and_grad(case.function, argnums=case.argnums)(*arguments)
    assert value == case.function(*arguments)
    assert np.asarray(value).dtype == np.float32
    for position, derivative in zip(
        _positions(case.argnums), _parts(gradient, case.argnums), strict=True
    ):
        assert type(derivative) is np.ndarray
        assert derivative.dtype == np.float32
        assert derivative.shape == arguments[position].shape


# --- jax.numpy transcriptions: the same programs, differentiated by jax.grad ----------------


def rnn_sequence_loss(Wxh, Whh, b, Why, xs, target):
    h = jnp.zeros(programs.HIDDEN + 1)
    for x in xs:
        h = jnp.tanh(Wxh @ x + Whh @ h + b)
    logits = Why @ h
    shifted = logits - jnp.max(logits)
    return -(shifted - jnp.log(jnp.sum(jnp.exp(shifted))))[target]


def lstm_sequence(W, U, bias, xs):
    n = programs.HIDDEN
    h, c = jnp.zeros(n), jnp.zeros(n)
    for x in xs:
        z = W @ x + U @ h + bias
        gates = 1.0 / (1.0 + jnp.exp(-z[: 3 * n]))
        c = gates[:n] * c + gates[n : 2 * n] * jnp.tanh(z[3 * n :])
        h = gates[2 * n :] * jnp.tanh(c)
    return jnp.sum(h * h) + jnp.sum(c)


def mlp_over_samples(W1, b1, w2, b2, X, y):
    loss = 0.0
    for i in range(X.shape[0]):
        prediction = w2 @ jnp.maximum(W1 @ X[i] + b1, 0.0) + b2
        loss = loss + (prediction - y[i]) ** 2
    return loss / X.shape[0]


def attention_readout(query, keys, values):
    scores = keys @ query / jnp.sqrt(query.shape[0])
    weights = jnp.exp(scores - jnp.max(scores))
    context = (weights / jnp.sum(weights)) @ values
    return jnp.sum(context * context) + jnp.log(jnp.sum(jnp.exp(scores)))


def softmax_regression(W, b, X, labels):
    logits = X @ W + b
    shifted = logits - jnp.max(logits, axis=1, keepdims=True)
    log_probabilities = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=1, keepdims=True))
    return -jnp.mean(log_probabilities[jnp.arange(X.shape[0]), labels])


def batch_norm_loss(X, gamma, beta):
    mean = X.mean(axis=0)
    variance = ((X - mean) ** 2).mean(axis=0)
    out = gamma * (X - mean) / jnp.sqrt(variance + programs.EPSILON) + beta
    return jnp.sum(jnp.tanh(out) ** 2) + jnp.sum(out[0])


def fit_by_gradient_descent(w, X, y, rate, steps):
    for _ in range(steps):
        w = w - rate * (X.T @ (X @ w - y) / X.shape[0])
    residual = X @ w - y
    return residual @ residual


def adapt_per_sample(theta, rate, X, y):
    adapted = theta
    for row, target in zip(X, y, strict=True):
        activation = jnp.tanh(row @ adapted)
        adapted = adapted - rate * (activation - target) * (1.0 - activation * activation) * row
    return jnp.sum((jnp.tanh(X @ adapted) - y) ** 2)


def gather_with_repeats(x):
    picked = x[programs.PICKS]
    return jnp.sum(picked * picked * programs.PICK_WEIGHTS) + jnp.sum(x[jnp.array([1, 1, 0])])


def embedding_bag(E, w):
    pooled = E[programs.TOKENS].mean(axis=0)
    return jnp.tanh(pooled @ w) + jnp.sum(E[programs.TOKENS, 0] ** 2)


def broadcast_column_row(a, b):
    return jnp.sum(jnp.tanh(a * b + a - 2.0 * b)) + jnp.sum((a + b) ** 2)


def outer_trace_dot(u, v, A):
    return jnp.trace(jnp.outer(u, v) @ A) + jnp.dot(u, v) + jnp.dot(A, v) @ u + jnp.trace(A) ** 2


def column_statistics(X):
    centered = X - jnp.sum(X, axis=0, keepdims=True) / X.shape[0]
    return jnp.max(X, axis=1) @ centered.mean(axis=1) + jnp.sum(centered**2) + X.sum() * X.max()


def transpose_and_reshape(X):
    flat = X.reshape(-1)
    return jnp.sum((X.T @ X) * (X.reshape(3, 2) @ X)) + flat @ flat[::-1]


def stack_and_concatenate(a, b):
    joined = jnp.concatenate([a, 2.0 * b, a * b])
    return jnp.sum(jnp.stack([a, b]) @ jnp.stack([a, b * b], axis=1)) + joined @ joined


def pairwise_kernel(X):
    squared = jnp.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    return jnp.sum(jnp.exp(-squared)) + jnp.sum(jnp.sqrt(squared + programs.EPSILON))


def horner_rows(coefficients, x):
    value = coefficients[0]
    for row in coefficients[1:]:
        value = value * x + row
    return jnp.sum(value * value)


def heat_diffusion_2d(u, steps):
    for _ in range(steps):
        laplacian = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        u = u.at[1:-1, 1:-1].set(u[1:-1, 1:-1] + programs.DIFFUSIVITY * laplacian)
    return jnp.sum(u**3)


def velocity_verlet_springs(positions, velocities, dt, steps):
    def accelerate(p):
        return -programs.SPRING * p - programs.COUPLING * (p - jnp.mean(p, axis=0, keepdims=True))

    acceleration = accelerate(positions)
    for _ in range(steps):
        positions = positions + dt * velocities + 0.5 * dt * dt * acceleration
        new_acceleration = accelerate(positions)
        velocities = velocities + 0.5 * dt * (acceleration + new_acceleration)
        acceleration = new_acceleration
    potential = 0.5 * programs.SPRING * jnp.sum(positions**2)
    return 0.5 * jnp.sum(velocities * velocities) + potential + positions[0, 0]


def softened_nbody(positions, velocities, dt, steps):
    for _ in range(steps):
        separation = positions[:, None, :] - positions[None, :, :]
        distance2 = jnp.sum(separation**2, axis=2, keepdims=True) + programs.SOFTENING
        velocities = velocities - dt * jnp.sum(separation / distance2**1.5, axis=1)
        positions = positions + dt * velocities
    return jnp.sum(positions * positions) + jnp.sum(velocities)


JAX_TRANSCRIPTIONS = {
    function.__name__: function
    for function in (
        rnn_sequence_loss,
        lstm_sequence,
        mlp_over_samples,
        attention_readout,
        softmax_regression,
        batch_norm_loss,
        fit_by_gradient_descent,
        adapt_per_sample,
        gather_with_repeats,
        embedding_bag,
        broadcast_column_row,
        outer_trace_dot,
        column_statistics,
        transpose_and_reshape,
        stack_and_concatenate,
        pairwise_kernel,
        horner_rows,
        heat_diffusion_2d,
        velocity_verlet_springs,
        softened_nbody,
    )
}
JAX_CASES = [case for case in CASES if case.name in JAX_TRANSCRIPTIONS]


def test_every_transcription_has_a_case():
    assert len(JAX_CASES) == len(JAX_TRANSCRIPTIONS) >= 8


@pytest.mark.parametrize("case", JAX_CASES, ids=lambda case: case.name)
def test_gradient_matches_jax(case):
    reference = JAX_TRANSCRIPTIONS[case.name]
    positions = _positions(case.argnums)

    @settings(max_examples=JAX_EXAMPLES)
    @given(st.tuples(*case.arguments))
    def check(arguments):
        gradient = _parts(
            cpsgrad.grad(case.function, argnums=case.argnums)(*arguments), case.argnums
        )
        with jax.enable_x64(True):
            inputs = tuple(
                jnp.asarray(argument) if i in positions else argument
                for i, argument in enumerate(arguments)
            )
            expected = jax.grad(reference, argnums=positions)(*inputs)
            expected = tuple(np.asarray(part) for part in expected)
        for position, ours, theirs in zip(positions, gradient, expected, strict=True):
            np.testing.assert_allclose(
                ours, theirs, rtol=JAX_RTOL, atol=JAX_ATOL, err_msg=f"argument {position}"
            )

    check()
