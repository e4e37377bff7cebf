"""Numpy programs written the way users write them, mixing arrays with Python control flow.

Each function is plain module-level Python over numpy arrays (and floats and ints beside them);
`CASES` at the end pairs it with hypothesis strategies for its arguments and the argnums to
differentiate. Shapes are small (2 to 5 per axis): every element of a differentiated array
costs finite differences. Domains keep inputs away from branch thresholds and kinks (relu at 0,
clip bounds, mask thresholds), so that few examples are skipped. Each function's docstring
says what it exercises.
"""

import jax.numpy as jnp
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from cpsgrad.testing.strategies import arrays, floats, ints, positive_floats
from tests.corpus import Case

HIDDEN = 2
NORM_TOLERANCE = 0.05
NEWTON_TOLERANCE = 1e-12
NEWTON_MAX_STEPS = 50
BUDGET = 4.0
ESCAPE = 6.0
DIFFUSIVITY = 0.2
SPRING = 1.5
COUPLING = 0.4
SOFTENING = 0.5
EPSILON = 1e-3
PICKS = np.array([0, 2, 2, 1, 0, 2])
PICK_WEIGHTS = np.array([1.0, -0.5, 2.0, 0.25, 1.5, -1.0])
TOKENS = np.array([3, 0, 3, 1, 3])


# --- recurrent networks and small models -----------------------------------------------------


def rnn_sequence_loss(Wxh, Whh, b, Why, xs, target):
    """A vanilla RNN over a sequence (`for x in xs`), softmax cross-entropy on the last state."""
    h = np.zeros(HIDDEN + 1)
    for x in xs:
        h = np.tanh(Wxh @ x + Whh @ h + b)
    logits = Why @ h
    shifted = logits - np.max(logits)
    log_probabilities = shifted - np.log(np.sum(np.exp(shifted)))
    return -log_probabilities[target]


def lstm_sequence(W, U, bias, xs):
    """An LSTM-like cell over a sequence, its state a tuple of arrays unpacked each step."""
    state = (np.zeros(HIDDEN), np.zeros(HIDDEN))
    for x in xs:
        h, c = state
        z = W @ x + U @ h + bias
        gates = 1.0 / (1.0 + np.exp(-z[: 3 * HIDDEN]))
        candidate = np.tanh(z[3 * HIDDEN :])
        forget = gates[:HIDDEN]
        remember = gates[HIDDEN : 2 * HIDDEN]
        expose = gates[2 * HIDDEN :]
        c = forget * c + remember * candidate
        h = expose * np.tanh(c)
        state = (h, c)
    h, c = state
    return np.sum(h * h) + np.sum(c)


def mlp_over_samples(W1, b1, w2, b2, X, y):
    """A 2-layer relu MLP, a loop over samples with `X[i]`; b2 is a Python float."""
    loss = 0.0
    for i in range(X.shape[0]):
        hidden = np.maximum(W1 @ X[i] + b1, 0.0)
        prediction = w2 @ hidden + b2
        loss = loss + (prediction - y[i]) ** 2
    return loss / X.shape[0]


def attention_readout(query, keys, values):
    """Attention: softmax over scores of keys against a query, a weighted sum of values."""
    scores = keys @ query / np.sqrt(query.shape[0])
    weights = np.exp(scores - np.max(scores))
    weights = weights / np.sum(weights)
    context = weights @ values
    return np.sum(context * context) + np.log(np.sum(np.exp(scores)))


def softmax_regression(W, b, X, labels):
    """Softmax cross-entropy over a batch: axis reductions with keepdims, a gather by labels."""
    logits = X @ W + b
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probabilities = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    picked = log_probabilities[np.arange(X.shape[0]), labels]
    return -np.mean(picked)


def batch_norm_loss(X, gamma, beta):
    """Batch normalisation: means over axis 0 broadcast back, then a nonlinear loss."""
    mean = X.mean(axis=0)
    variance = ((X - mean) ** 2).mean(axis=0)
    normalized = (X - mean) / np.sqrt(variance + EPSILON)
    out = gamma * normalized + beta
    return np.sum(np.tanh(out) ** 2) + np.sum(out[0])


def float32_tanh_layer(W, x):
    """A tanh layer in float32: the gradients come back as float32 arrays."""
    hidden = np.tanh(W @ x)
    return np.sum(hidden * hidden) + np.sum(W) * 0.5


def float32_softmax_entropy(logits):
    """The entropy of a softmax in float32, a Python float constant mixed in."""
    shifted = logits - np.max(logits)
    probabilities = np.exp(shifted) / np.sum(np.exp(shifted))
    return -np.sum(probabilities * np.log(probabilities)) + 0.25 * np.sum(logits * logits)


# --- optimisation loops and data-dependent while ---------------------------------------------


def fit_by_gradient_descent(w, X, y, rate, steps):
    """Gradient-descent steps on least squares inside the function; `X.T`, a float rate."""
    n = X.shape[0]
    for _ in range(steps):
        residual = X @ w - y
        gradient = X.T @ residual / n
        w = w - rate * gradient
    residual = X @ w - y
    return residual @ residual


def adapt_per_sample(theta, rate, X, y):
    """A meta-learning style inner loop: one gradient step per sample, over `zip(X, y)`."""
    adapted = theta
    for row, target in zip(X, y, strict=True):
        activation = np.tanh(row @ adapted)
        error = activation - target
        adapted = adapted - rate * error * (1.0 - activation * activation) * row
    return np.sum((np.tanh(X @ adapted) - y) ** 2)


def halve_until_inside_unit_ball(x):
    """`while np.sqrt(np.sum(x * x)) > 1.0: x = x * 0.5`, the trip count used afterwards."""
    halvings = 0
    while np.sqrt(np.sum(x * x)) > 1.0:
        x = x * 0.5
        halvings = halvings + 1
    return np.sum(x**3) + halvings * x[0]


def contract_until_small(x, decay):
    """`while np.linalg.norm(x) > tol` around a contraction; decay is a Python float."""
    steps = 0
    while np.linalg.norm(x) > NORM_TOLERANCE:
        x = decay * np.sin(x)
        steps = steps + 1
    return np.sum(x) + steps * np.sum(x * x)


def newton_cubic_roots(b):
    """Newton's method for x**3 + x = b elementwise, until the largest residual is tiny."""
    x = b * 0.5
    residual = x**3 + x - b
    steps = 0
    while np.max(np.abs(residual)) > NEWTON_TOLERANCE and steps < NEWTON_MAX_STEPS:
        x = x - residual / (3.0 * x**2 + 1.0)
        residual = x**3 + x - b
        steps = steps + 1
    return np.sum(x * x)


def iterate_map_until_escape(W, x):
    """A recurrent map with `break` once the state's squared norm passes a threshold."""
    for _ in range(8):
        x = np.tanh(W @ x) + 1.2 * x
        if np.sum(x * x) > ESCAPE:
            break
    return np.sum(x) + x @ x


def early_return_when_over_budget(x):
    """`return` from inside a `for` over `range(x.shape[0])` once a running total passes a budget."""
    total = 0.0
    for i in range(x.shape[0]):
        total = total + x[i] * x[i]
        if total > BUDGET:
            return total * x[0] + i
    return -total


def branch_on_sum(x, y):
    """`if np.sum(x) > 0:` ... `elif` ... `else`."""
    if np.sum(x) > 0:
        result = np.sum(x * y)
    elif np.sum(y) > 0:
        result = np.sum(np.exp(y) - x)
    else:
        result = np.sum(x * x) - np.sum(y)
    return result


# --- loops and indexing ----------------------------------------------------------------------


def neighbour_products(x):
    """`for i in range(1, len(x))` with `x[i] * x[i - 1]`, and a negative index."""
    total = 0.0
    for i in range(1, len(x)):
        total = total + x[i] * x[i - 1]
    return total + x[-1] ** 2


def matrix_entries(A):
    """Nested `for` loops over `A[i, j]`, a branch on the indices."""
    n = A.shape[0]
    total = 0.0
    for i in range(n):
        for j in range(n):
            if i == j:
                total = total + np.exp(A[i, j])
            else:
                total = total + A[i, j] * A[j, i]
    return total


def rows_through_a_neuron(X, w):
    """`for row in X:` over the first axis of a differentiated matrix."""
    total = 0.0
    for row in X:
        total = total + np.tanh(row @ w)
    return total


def weighted_rows_with_continue(X, w):
    """`for i, row in enumerate(X)` with `continue` on a sign test of `row[0]`."""
    total = 0.0
    for i, row in enumerate(X):
        if row[0] < 0.0:
            continue
        total = total + (i + 1) * np.sum(row * w) ** 2
    return total


def exponential_moving_average(series, alpha):
    """An EMA over a series, `enumerate` over an array, `continue` on the first element."""
    average = series[0]
    for i, value in enumerate(series):
        if i == 0:
            continue
        average = alpha * value + (1.0 - alpha) * average
    return average * average + alpha * series[-1]


def smoothness_penalty(x):
    """First and second differences by slices, `x[1:] - x[:-1]`, `x[2:] - 2 x[1:-1] + x[:-2]`."""
    first = x[1:] - x[:-1]
    second = x[2:] - 2.0 * x[1:-1] + x[:-2]
    return np.sum(first * first) + 0.5 * np.sum(second**2) + x[::2] @ x[::2]


def masked_sums(x, y):
    """Boolean-mask indexing with a mask and its negation, and `np.where` on the mask."""
    positive = x > 0.0
    return (
        np.sum(x[positive] ** 2)
        + np.sum(y[~positive] * x[~positive])
        + np.sum(np.where(positive, y, 0.0))
    )


def gather_with_repeats(x):
    """Integer-array indexing with repeated positions (their gradients add up)."""
    picked = x[PICKS]
    return np.sum(picked * picked * PICK_WEIGHTS) + np.sum(x[[1, 1, 0]])


def embedding_bag(E, w):
    """Rows of an embedding matrix gathered by repeated token ids, mean-pooled."""
    vectors = E[TOKENS]
    pooled = vectors.mean(axis=0)
    return np.tanh(pooled @ w) + np.sum(E[TOKENS, 0] ** 2)


# --- broadcasting, reductions, shapes --------------------------------------------------------


def broadcast_column_row(a, b):
    """An (n, 1) column broadcast against a (1, m) row."""
    grid = a * b + a - 2.0 * b
    return np.sum(np.tanh(grid)) + np.sum((a + b) ** 2)


def outer_trace_dot(u, v, A):
    """`np.outer`, `np.trace`, `np.dot` of vectors and of a matrix with a vector."""
    P = np.outer(u, v)
    return np.trace(P @ A) + np.dot(u, v) + np.dot(A, v) @ u + np.trace(A) ** 2


def column_statistics(X):
    """`np.sum(X, axis=0, keepdims=True)`, `x.mean(axis=1)`, `np.max(X, axis=1)`, `X.max()`."""
    totals = np.sum(X, axis=0, keepdims=True)
    centered = X - totals / X.shape[0]
    row_means = centered.mean(axis=1)
    peaks = np.max(X, axis=1)
    return peaks @ row_means + np.sum(centered**2) + X.sum() * X.max()


def transpose_and_reshape(X):
    """`X.T @ X`, `X.reshape(3, 2)`, `X.reshape(-1)` and a reversed slice."""
    gram = X.T @ X
    folded = X.reshape(3, 2)
    mixed = folded @ X
    flat = X.reshape(-1)
    return np.sum(gram * mixed) + flat @ flat[::-1]


def stack_and_concatenate(a, b):
    """`np.stack` along axes 0 and 1, `np.concatenate` of three pieces."""
    pair = np.stack([a, b])
    columns = np.stack([a, b * b], axis=1)
    joined = np.concatenate([a, 2.0 * b, a * b])
    return np.sum(pair @ columns) + joined @ joined


def where_and_clip(x):
    """`np.where`, `np.clip` and `np.abs`, inputs away from their kinks."""
    shaped = np.where(x > 0.0, x * x, -0.5 * x)
    clipped = np.clip(x, -1.0, 1.0)
    return np.sum(shaped) + np.sum(clipped**3) + np.sum(np.abs(x))


def quadratic_and_linear_forms(A, x, y):
    """Matmul of 1-D with 2-D operands on both sides, and of two vectors."""
    return x @ A @ x + y @ (A @ x) + (x @ A) @ y + x @ y


def scaled_log_partition(W, x, temperature):
    """A log-sum-exp of scores at a temperature that is a Python float argument."""
    scores = W @ x / temperature
    top = np.max(scores)
    return temperature * (top + np.log(np.sum(np.exp(scores - top))))


def tuple_of_arrays(x, y):
    """Tuples of arrays built, unpacked, swapped and indexed."""
    pair = (x * y, x - y)
    first, second = pair
    swapped = (second, first)
    stats = (np.sum(first), np.mean(second), swapped[0] @ swapped[1])
    total, mean, inner = stats
    return total * mean + inner


def pairwise_kernel(X):
    """Pairwise differences by `X[:, None, :] - X[None, :, :]`, a reduction over the last axis."""
    difference = X[:, None, :] - X[None, :, :]
    squared = np.sum(difference**2, axis=-1)
    return np.sum(np.exp(-squared)) + np.sum(np.sqrt(squared + EPSILON))


# --- numerical methods -----------------------------------------------------------------------


def horner_vector(coefficients, x):
    """Horner's rule over a coefficient vector, evaluated at a vector of points."""
    result = 0.0 * x
    for c in coefficients:
        result = result * x + c
    return np.sum(result)


def horner_rows(coefficients, x):
    """Horner's rule with one coefficient row per power (a polynomial per point)."""
    value = coefficients[0]
    for row in coefficients[1:]:
        value = value * x + row
    return np.sum(value * value)


def heat_diffusion_2d(u, steps):
    """Explicit heat steps: a five-point Laplacian stencil of slices, borders rebuilt by
    `np.concatenate`."""
    for _ in range(steps):
        laplacian = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        interior = u[1:-1, 1:-1] + DIFFUSIVITY * laplacian
        middle = np.concatenate([u[1:-1, :1], interior, u[1:-1, -1:]], axis=1)
        u = np.concatenate([u[:1], middle, u[-1:]], axis=0)
    return np.sum(u**3)


def velocity_verlet_springs(positions, velocities, dt, steps):
    """Velocity Verlet for particles on springs to the origin and to their centre of mass."""
    centre = np.mean(positions, axis=0, keepdims=True)
    acceleration = -SPRING * positions - COUPLING * (positions - centre)
    for _ in range(steps):
        positions = positions + dt * velocities + 0.5 * dt * dt * acceleration
        centre = np.mean(positions, axis=0, keepdims=True)
        new_acceleration = -SPRING * positions - COUPLING * (positions - centre)
        velocities = velocities + 0.5 * dt * (acceleration + new_acceleration)
        acceleration = new_acceleration
    kinetic = 0.5 * np.sum(velocities * velocities)
    potential = 0.5 * SPRING * np.sum(positions**2)
    return kinetic + potential + positions[0, 0]


def softened_nbody(positions, velocities, dt, steps):
    """Symplectic Euler for softened gravity between all pairs of particles in 2-D."""
    for _ in range(steps):
        separation = positions[:, None, :] - positions[None, :, :]
        distance2 = np.sum(separation**2, axis=2, keepdims=True) + SOFTENING
        forces = -np.sum(separation / distance2**1.5, axis=1)
        velocities = velocities + dt * forces
        positions = positions + dt * velocities
    return np.sum(positions * positions) + np.sum(velocities)


# --- domains ---------------------------------------------------------------------------------


def sum_away_from_zero(strategy, margin=0.05):
    """Arrays from `strategy` whose sum is at least `margin` away from 0 (a branch threshold)."""
    return strategy.filter(lambda a: abs(float(np.sum(a))) >= margin)


def labels(n, classes):
    """n integer class labels in [0, classes)."""
    return hnp.arrays(np.int64, n, elements=st.integers(0, classes - 1))


RELU_INPUTS = arrays((4, 2), min_value=-2.0, max_value=2.0)

# --- jax.numpy transcriptions: the same programs for jax.grad (tests/test_corpus.py compares) ---


def jax_rnn_sequence_loss(Wxh, Whh, b, Why, xs, target):
    h = jnp.zeros(HIDDEN + 1)
    for x in xs:
        h = jnp.tanh(Wxh @ x + Whh @ h + b)
    logits = Why @ h
    shifted = logits - jnp.max(logits)
    return -(shifted - jnp.log(jnp.sum(jnp.exp(shifted))))[target]


def jax_lstm_sequence(W, U, bias, xs):
    n = HIDDEN
    h, c = jnp.zeros(n), jnp.zeros(n)
    for x in xs:
        z = W @ x + U @ h + bias
        gates = 1.0 / (1.0 + jnp.exp(-z[: 3 * n]))
        c = gates[:n] * c + gates[n : 2 * n] * jnp.tanh(z[3 * n :])
        h = gates[2 * n :] * jnp.tanh(c)
    return jnp.sum(h * h) + jnp.sum(c)


def jax_mlp_over_samples(W1, b1, w2, b2, X, y):
    loss = 0.0
    for i in range(X.shape[0]):
        prediction = w2 @ jnp.maximum(W1 @ X[i] + b1, 0.0) + b2
        loss = loss + (prediction - y[i]) ** 2
    return loss / X.shape[0]


def jax_attention_readout(query, keys, values):
    scores = keys @ query / jnp.sqrt(query.shape[0])
    weights = jnp.exp(scores - jnp.max(scores))
    context = (weights / jnp.sum(weights)) @ values
    return jnp.sum(context * context) + jnp.log(jnp.sum(jnp.exp(scores)))


def jax_softmax_regression(W, b, X, labels):
    logits = X @ W + b
    shifted = logits - jnp.max(logits, axis=1, keepdims=True)
    log_probabilities = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=1, keepdims=True))
    return -jnp.mean(log_probabilities[jnp.arange(X.shape[0]), labels])


def jax_batch_norm_loss(X, gamma, beta):
    mean = X.mean(axis=0)
    variance = ((X - mean) ** 2).mean(axis=0)
    out = gamma * (X - mean) / jnp.sqrt(variance + EPSILON) + beta
    return jnp.sum(jnp.tanh(out) ** 2) + jnp.sum(out[0])


def jax_fit_by_gradient_descent(w, X, y, rate, steps):
    for _ in range(steps):
        w = w - rate * (X.T @ (X @ w - y) / X.shape[0])
    residual = X @ w - y
    return residual @ residual


def jax_adapt_per_sample(theta, rate, X, y):
    adapted = theta
    for row, target in zip(X, y, strict=True):
        activation = jnp.tanh(row @ adapted)
        adapted = adapted - rate * (activation - target) * (1.0 - activation * activation) * row
    return jnp.sum((jnp.tanh(X @ adapted) - y) ** 2)


def jax_gather_with_repeats(x):
    picked = x[PICKS]
    return jnp.sum(picked * picked * PICK_WEIGHTS) + jnp.sum(x[jnp.array([1, 1, 0])])


def jax_embedding_bag(E, w):
    pooled = E[TOKENS].mean(axis=0)
    return jnp.tanh(pooled @ w) + jnp.sum(E[TOKENS, 0] ** 2)


def jax_broadcast_column_row(a, b):
    return jnp.sum(jnp.tanh(a * b + a - 2.0 * b)) + jnp.sum((a + b) ** 2)


def jax_outer_trace_dot(u, v, A):
    return jnp.trace(jnp.outer(u, v) @ A) + jnp.dot(u, v) + jnp.dot(A, v) @ u + jnp.trace(A) ** 2


def jax_column_statistics(X):
    centered = X - jnp.sum(X, axis=0, keepdims=True) / X.shape[0]
    return jnp.max(X, axis=1) @ centered.mean(axis=1) + jnp.sum(centered**2) + X.sum() * X.max()


def jax_transpose_and_reshape(X):
    flat = X.reshape(-1)
    return jnp.sum((X.T @ X) * (X.reshape(3, 2) @ X)) + flat @ flat[::-1]


def jax_stack_and_concatenate(a, b):
    joined = jnp.concatenate([a, 2.0 * b, a * b])
    return jnp.sum(jnp.stack([a, b]) @ jnp.stack([a, b * b], axis=1)) + joined @ joined


def jax_pairwise_kernel(X):
    squared = jnp.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    return jnp.sum(jnp.exp(-squared)) + jnp.sum(jnp.sqrt(squared + EPSILON))


def jax_horner_rows(coefficients, x):
    value = coefficients[0]
    for row in coefficients[1:]:
        value = value * x + row
    return jnp.sum(value * value)


def jax_heat_diffusion_2d(u, steps):
    for _ in range(steps):
        laplacian = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        u = u.at[1:-1, 1:-1].set(u[1:-1, 1:-1] + DIFFUSIVITY * laplacian)
    return jnp.sum(u**3)


def jax_velocity_verlet_springs(positions, velocities, dt, steps):
    def accelerate(p):
        return -SPRING * p - COUPLING * (p - jnp.mean(p, axis=0, keepdims=True))

    acceleration = accelerate(positions)
    for _ in range(steps):
        positions = positions + dt * velocities + 0.5 * dt * dt * acceleration
        new_acceleration = accelerate(positions)
        velocities = velocities + 0.5 * dt * (acceleration + new_acceleration)
        acceleration = new_acceleration
    potential = 0.5 * SPRING * jnp.sum(positions**2)
    return 0.5 * jnp.sum(velocities * velocities) + potential + positions[0, 0]


def jax_softened_nbody(positions, velocities, dt, steps):
    for _ in range(steps):
        separation = positions[:, None, :] - positions[None, :, :]
        distance2 = jnp.sum(separation**2, axis=2, keepdims=True) + SOFTENING
        velocities = velocities - dt * jnp.sum(separation / distance2**1.5, axis=1)
        positions = positions + dt * velocities
    return jnp.sum(positions * positions) + jnp.sum(velocities)


# hypothesis examples per case against finite differences, and against jax.grad
EXAMPLES = 8
JAX_EXAMPLES = 4
# the float32 programs, with the shapes of their arguments: their values and gradients stay float32
FLOAT32_SHAPES = {"float32_tanh_layer": ((3, 2), (2,)), "float32_softmax_entropy": ((4,),)}

CASES = [
    Case(
        rnn_sequence_loss,
        (
            arrays((3, 2), min_value=-1.0, max_value=1.0),
            arrays((3, 3), min_value=-1.0, max_value=1.0),
            arrays(3, min_value=-1.0, max_value=1.0),
            arrays((4, 3), min_value=-2.0, max_value=2.0),
            arrays((3, 2)),
            ints(0, 3),
        ),
        (0, 1, 2, 3),
        jax=jax_rnn_sequence_loss,
    ),
    Case(
        lstm_sequence,
        (
            arrays((4 * HIDDEN, 2), min_value=-1.0, max_value=1.0),
            arrays((4 * HIDDEN, HIDDEN), min_value=-1.0, max_value=1.0),
            arrays(4 * HIDDEN, min_value=-1.0, max_value=1.0),
            arrays((3, 2)),
        ),
        (0, 1, 2),
        jax=jax_lstm_sequence,
    ),
    Case(
        mlp_over_samples,
        (
            arrays((3, 2), min_value=-1.0, max_value=1.0),
            arrays(3, min_value=-1.0, max_value=1.0),
            arrays(3),
            floats(-2.0, 2.0),
            RELU_INPUTS,
            arrays(4),
        ),
        (0, 1, 2, 3),
        jax=jax_mlp_over_samples,
    ),
    Case(
        attention_readout,
        (arrays(3), arrays((4, 3)), arrays((4, 2))),
        (0, 1, 2),
        jax=jax_attention_readout,
    ),
    Case(
        softmax_regression,
        (arrays((2, 3)), arrays(3), arrays((4, 2)), labels(4, 3)),
        (0, 1),
        jax=jax_softmax_regression,
    ),
    Case(
        batch_norm_loss,
        (arrays((4, 3)), arrays(3, min_value=0.5, max_value=2.0), arrays(3)),
        (0, 1, 2),
        jax=jax_batch_norm_loss,
    ),
    Case(
        float32_tanh_layer,
        (arrays((3, 2), np.float32, -1.0, 1.0), arrays(2, np.float32, -1.0, 1.0)),
        (0, 1),
    ),
    Case(float32_softmax_entropy, (arrays(4, np.float32, -2.0, 2.0),)),
    Case(
        fit_by_gradient_descent,
        (
            arrays(2),
            arrays((4, 2), min_value=-1.0, max_value=1.0),
            arrays(4),
            positive_floats(0.01, 0.3),
            ints(0, 5),
        ),
        (0, 1, 3),
        jax=jax_fit_by_gradient_descent,
    ),
    Case(
        adapt_per_sample,
        (
            arrays(2, min_value=-1.0, max_value=1.0),
            positive_floats(0.05, 0.5),
            arrays((3, 2), min_value=-1.0, max_value=1.0),
            arrays(3, min_value=-1.0, max_value=1.0),
        ),
        (0, 1, 2),
        jax=jax_adapt_per_sample,
    ),
    Case(halve_until_inside_unit_ball, (arrays(3, min_value=-5.0, max_value=5.0),)),
    Case(
        contract_until_small,
        (arrays(4, min_value=-3.0, max_value=3.0), positive_floats(0.3, 0.8)),
        (0, 1),
    ),
    Case(newton_cubic_roots, (arrays(3, min_value=-5.0, max_value=5.0),)),
    Case(
        iterate_map_until_escape,
        (arrays((2, 2), min_value=-1.0, max_value=1.0), arrays(2, min_value=-1.0, max_value=1.0)),
        (0, 1),
    ),
    Case(early_return_when_over_budget, (arrays(5, min_value=-2.0, max_value=2.0),)),
    Case(
        branch_on_sum,
        (
            sum_away_from_zero(arrays(3)),
            sum_away_from_zero(arrays(3, min_value=-2.0, max_value=2.0)),
        ),
        (0, 1),
    ),
    Case(neighbour_products, (arrays(st.integers(2, 5)),)),
    Case(matrix_entries, (arrays((3, 3), min_value=-2.0, max_value=2.0),)),
    Case(rows_through_a_neuron, (arrays((4, 3)), arrays(3, min_value=-1.0, max_value=1.0)), (0, 1)),
    Case(
        weighted_rows_with_continue,
        (arrays((4, 2), exclude_near=(0.0,), margin=0.01), arrays(2)),
        (0, 1),
    ),
    Case(exponential_moving_average, (arrays(st.integers(1, 5)), floats(0.1, 0.9)), (0, 1)),
    Case(smoothness_penalty, (arrays(st.integers(3, 6)),)),
    Case(masked_sums, (arrays(4, exclude_near=(0.0,), margin=0.01), arrays(4)), (0, 1)),
    Case(gather_with_repeats, (arrays(3),), jax=jax_gather_with_repeats),
    Case(embedding_bag, (arrays((4, 2)), arrays(2)), (0, 1), jax=jax_embedding_bag),
    Case(
        broadcast_column_row,
        (
            arrays((3, 1), min_value=-2.0, max_value=2.0),
            arrays((1, 4), min_value=-2.0, max_value=2.0),
        ),
        (0, 1),
        jax=jax_broadcast_column_row,
    ),
    Case(
        outer_trace_dot, (arrays(3), arrays(3), arrays((3, 3))), (0, 1, 2), jax=jax_outer_trace_dot
    ),
    Case(column_statistics, (arrays((3, 4)),), jax=jax_column_statistics),
    Case(transpose_and_reshape, (arrays((2, 3)),), jax=jax_transpose_and_reshape),
    Case(stack_and_concatenate, (arrays(3), arrays(3)), (0, 1), jax=jax_stack_and_concatenate),
    Case(where_and_clip, (arrays(5, exclude_near=(0.0, -1.0, 1.0), margin=0.01),)),
    Case(quadratic_and_linear_forms, (arrays((3, 3)), arrays(3), arrays(3)), (0, 1, 2)),
    Case(
        scaled_log_partition,
        (arrays((3, 2)), arrays(2), positive_floats(0.5, 3.0)),
        (0, 1, 2),
    ),
    Case(tuple_of_arrays, (arrays(3), arrays(3)), (0, 1)),
    Case(
        pairwise_kernel, (arrays((3, 2), min_value=-1.5, max_value=1.5),), jax=jax_pairwise_kernel
    ),
    Case(
        horner_vector, (arrays(st.integers(1, 5)), arrays(3, min_value=-1.5, max_value=1.5)), (0, 1)
    ),
    Case(
        horner_rows,
        (arrays((4, 3), min_value=-1.0, max_value=1.0), arrays(3, min_value=-1.5, max_value=1.5)),
        (0, 1),
        jax=jax_horner_rows,
    ),
    Case(
        heat_diffusion_2d,
        (arrays((4, 5), min_value=-1.0, max_value=1.0), ints(0, 3)),
        jax=jax_heat_diffusion_2d,
    ),
    Case(
        velocity_verlet_springs,
        (arrays((3, 2)), arrays((3, 2)), positive_floats(0.01, 0.2), ints(0, 4)),
        (0, 1, 2),
        jax=jax_velocity_verlet_springs,
    ),
    Case(
        softened_nbody,
        (
            arrays((3, 2), min_value=-2.0, max_value=2.0),
            arrays((3, 2), min_value=-1.0, max_value=1.0),
            positive_floats(0.01, 0.1),
            ints(0, 3),
        ),
        (0, 1, 2),
        jax=jax_softened_nbody,
    ),
]
