"""Programs that call their own functions: helpers, methods, function values and recursion.

Each entry program is a module-level function calling other module-level user functions (here
and in tests/corpus/call_helpers.py) with differentiable arguments: helpers returning floats,
arrays and tuples; keyword arguments and defaults; methods of small classes whose objects hold
configuration while the weights are passed as arguments; an object's `__call__`;
`functools.partial`; functions passed as arguments; direct, mutual and tail recursion;
recursion over nested tuples, over `Node` objects with `.left`/`.right` children and over a
None-terminated linked list (the structures are built outside and passed as data); recursion
inside loops and loops inside recursion; helpers returning early, raising on bad input, or
returning ints. `CASES` at the end pairs each entry with hypothesis strategies for its
arguments and the argnums to differentiate. The helpers themselves (below each entry) are not
cases. Shapes are small; domains keep inputs away from branch thresholds and kinks.
"""

import functools
import math

import jax.numpy as jnp
import numpy as np
from hypothesis import strategies as st

from cpsgrad.testing.strategies import arrays, floats, ints, positive_floats
from tests.corpus import Case, call_helpers
from tests.corpus.call_helpers import lstm_cell, rnn_step, sigmoid, softplus

HIDDEN = 2
VOCABULARY = 4
EMBEDDING = 2
DEEP = 200
KNOTS = np.linspace(-2.0, 2.0, 9)
NEWTON_TOLERANCE = 1e-13
NEWTON_MAX_STEPS = 40
BISECTION_DEPTH = 12


# --- scalar helpers ------------------------------------------------------------------------


def square(v):
    return v * v


def cube(v):
    return square(v) * v


def scaled_shift(v, scale=2.0, *, shift=1.0):
    return scale * v + shift


def nested_scalar_helpers(x, y):
    """Helpers calling helpers (`cube` calls `square`), a call as another call's argument, and
    `softplus` from the second module."""
    return cube(square(x) * 0.5 + y) + softplus(x * y) + square(y) * x


def keywords_and_defaults(x, y):
    """One helper called positionally, with its default, with a keyword-only argument that
    receives a gradient, and with every argument by keyword in another order."""
    first = scaled_shift(x)
    second = scaled_shift(y, 3.0, shift=x)
    third = scaled_shift(scale=y, v=x)
    fourth = scaled_shift(2.0, shift=x * y)
    return first * second + third * fourth


# --- array helpers -------------------------------------------------------------------------


def affine(W, x, b):
    return W @ x + b


def squared_norm(v):
    return np.sum(v * v)


def array_and_scalar_results(W, b, x):
    """A helper returning an array (`affine`) fed to one returning a scalar (`squared_norm`)."""
    h = np.tanh(affine(W, x, b))
    return squared_norm(h) + h @ affine(W, x, 0.5) + squared_norm(x) * h[0]


def dense(x, W, b=None, activation="tanh"):
    z = W @ x
    if b is not None:
        z = z + b
    if activation == "tanh":
        return np.tanh(z)
    if activation == "softplus":
        return np.log(1.0 + np.exp(z))
    return z


def dense_with_keywords(W, b, x):
    """An array helper with a default `b=None` and a string keyword choosing the activation."""
    h = dense(x, W, b=b)
    g = dense(x, W, activation="softplus")
    k = dense(activation="linear", W=W, x=x, b=b)
    return np.sum(h * g) + np.sum(k**2)


def lstm_over_sequence(W, U, bias, xs):
    """An LSTM over a sequence, the cell a helper of the second module returning a tuple:
    `h, c = lstm_cell(W, U, bias, x, h, c)`."""
    h = np.zeros(HIDDEN)
    c = np.zeros(HIDDEN)
    for x in xs:
        h, c = lstm_cell(W, U, bias, x, h, c)
    return np.sum(h * h) + np.sum(c)


def rnn_classifier(Wxh, Whh, b, Why, xs, target):
    """An RNN step helper called in a loop, then `call_helpers.log_softmax(...)[target]`."""
    h = np.zeros(HIDDEN + 1)
    for x in xs:
        h = rnn_step(Wxh, Whh, b, x, h)
    return -call_helpers.log_softmax(Why @ h)[target]


def rnn_with_residual(Wxh, Whh, b, xs):
    """The RNN step helper called in a loop, its result added to the state it was handed."""
    h = np.zeros(HIDDEN + 1)
    for x in xs:
        update = rnn_step(Wxh, Whh, b, x, h)
        h = 0.5 * h + update
    return np.sum(h * h) + h[0]


def softmax(scores):
    exponentials = np.exp(scores - np.max(scores))
    return exponentials / np.sum(exponentials)


def attend(query, keys, values):
    return softmax(keys @ query / np.sqrt(query.shape[0])) @ values


def two_query_attention(q1, q2, keys, values):
    """An attention helper (itself calling `softmax`) called twice on shared keys and values."""
    first = attend(q1, keys, values)
    second = attend(q2, keys, values)
    return first @ second + np.sum(first)


def least_squares_gradient(w, X, y):
    return X.T @ (X @ w - y) / X.shape[0]


def least_squares_loss(w, X, y):
    residual = X @ w - y
    return residual @ residual


def descend_through_helpers(w, X, y, rate, steps):
    """Gradient descent whose inner gradient and final loss are helpers; a float rate."""
    for _ in range(steps):
        w = w - rate * least_squares_gradient(w, X, y)
    return least_squares_loss(w, X, y)


# --- methods, callable objects, partials, function values ----------------------------------


def activate(z, name):
    if name == "tanh":
        return np.tanh(z)
    if name == "sigmoid":
        return sigmoid(z)
    return z


class Dense:
    """A layer's configuration (not differentiated); its weights come as arguments."""

    def __init__(self, activation, scale=1.0):
        self.activation = activation
        self.scale = scale

    def forward(self, x, W, b):
        z = self.scale * (W @ x) + b
        return activate(z, self.activation)


HIDDEN_LAYER = Dense("tanh", scale=0.5)
OUTPUT_LAYER = Dense("sigmoid")


def two_layer_objects(W1, b1, W2, b2, x):
    """`layer.forward(x, W, b)` on module-level layer objects, and `Dense.forward(layer, ...)`."""
    h = HIDDEN_LAYER.forward(x, W1, b1)
    y = OUTPUT_LAYER.forward(h, W2, b2)
    return np.sum(y * y) + Dense.forward(HIDDEN_LAYER, x, W1, b1) @ h


def layers_passed_as_data(W1, b1, W2, b2, x, layers):
    """A tuple of layer objects passed as data, zipped with tuples of differentiated weights;
    each step calls the loop variable's method."""
    for layer, W, b in zip(layers, (W1, W2), (b1, b2), strict=True):
        x = layer.forward(x, W, b)
    return np.sum(x * x) + x[0]


class RadialKernel:
    """A kernel object: its length scale is configuration, `__call__` computes the kernel."""

    def __init__(self, lengthscale):
        self.lengthscale = lengthscale

    def __call__(self, a, b):
        d = a - b
        return np.exp(-np.sum(d * d) / (2.0 * self.lengthscale**2))


KERNEL = RadialKernel(0.8)


def kernel_sum(x, X, alpha, kernel):
    """A module-level callable object `KERNEL(x, X[i])`, and one drawn as an argument."""
    total = 0.0
    for i in range(X.shape[0]):
        total = total + alpha[i] * KERNEL(x, X[i]) + kernel(X[i], x) * alpha[i] ** 2
    return total


def weighted_sum(weights, v):
    return weights @ v


TRIPLED = functools.partial(scaled_shift, scale=3.0)
WEIGHTED = functools.partial(weighted_sum, np.array([0.5, -1.0, 2.0]))


def partial_helpers(x, v):
    """`functools.partial` of helpers: one binding a keyword, one binding a positional array."""
    return TRIPLED(x) + TRIPLED(x, shift=x * x) + WEIGHTED(v) * x + WEIGHTED(np.sin(v))


def apply_twice(f, v):
    return f(f(v))


def apply_functions_twice(x, v):
    """A function passed as an argument and called: helpers, `math.sin`, `np.tanh`, a helper of
    the second module."""
    scalars = apply_twice(square, x) + apply_twice(softplus, x) + apply_twice(math.sin, x)
    return scalars + np.sum(apply_twice(np.tanh, v)) + np.sum(apply_twice(sigmoid, v * x))


def damped(v):
    return 0.8 * math.sin(v) + 0.1 * v


def iterate(f, v, n):
    if n == 0:
        return v
    return iterate(f, f(v), n - 1)


def iterate_maps(x, n):
    """Recursion carrying a function value: `iterate(f, f(v), n - 1)`."""
    return iterate(damped, x, n) + iterate(math.tanh, x * 0.5, n + 1)


def apply_drawn_function(f, x, y):
    """A function drawn by hypothesis (a helper, a primitive, a partial) passed as data."""
    return f(x) * y + apply_twice(f, y)


# --- recursion -----------------------------------------------------------------------------


def power(v, n):
    """v ** n by squaring: about log2(n) levels."""
    if n == 0:
        return 1.0
    half = power(v, n // 2)
    if n % 2 == 0:
        return half * half
    return v * half * half


def power_by_squaring(x, n):
    """Direct recursion through `power`, twice."""
    return power(x, n) + power(1.0 - 0.5 * x, n + 1) * x


def rising(v, n):
    """The rising factorial v (v + 1) ... (v + n - 1), recursively."""
    if n == 0:
        return 1.0
    return (v + n - 1) * rising(v, n - 1)


def log_rising_factorial(x, n):
    """A factorial-like product by recursion, divided by a recursion on constants only."""
    return math.log(rising(x, n)) - math.log(rising(1.0, n)) + rising(x, 2)


def horner_from(coefficients, v, i):
    if i == coefficients.shape[0]:
        return 0.0
    return coefficients[i] + v * horner_from(coefficients, v, i + 1)


def horner_recursion(coefficients, x):
    """Horner's rule as recursion over an index into a differentiated coefficient array."""
    return horner_from(coefficients, x, 0) + horner_from(coefficients[::-1], -x, 0) ** 2


def segment(x, low, high):
    """The index i with KNOTS[i] <= x < KNOTS[i + 1], by binary search: an int."""
    if high - low == 1:
        return low
    middle = (low + high) // 2
    if x < KNOTS[middle]:
        return segment(x, low, middle)
    return segment(x, middle, high)


def interpolate(values, x):
    i = segment(x, 0, KNOTS.shape[0] - 1)
    t = (x - KNOTS[i]) / (KNOTS[i + 1] - KNOTS[i])
    return (1.0 - t) * values[i] + t * values[i + 1]


def piecewise_linear_lookup(values, x):
    """Binary-search recursion with a data-dependent branch on the differentiated x, returning
    an int (no gradient) that indexes the differentiated values."""
    return interpolate(values, x) ** 2 + interpolate(np.sin(values), 0.5 * x)


def bisect_cube_root(b, low, high, depth):
    middle = 0.5 * (low + high)
    if depth == 0:
        return middle - (middle**3 + middle - b) / (3.0 * middle * middle + 1.0)
    if middle**3 + middle > b:
        return bisect_cube_root(b, low, middle, depth - 1)
    return bisect_cube_root(b, middle, high, depth - 1)


def cube_root_by_bisection(b):
    """The root of t**3 + t = b by recursive bisection (a branch on b at each level), then one
    Newton step from the last midpoint."""
    t = bisect_cube_root(b, -3.0, 3.0, BISECTION_DEPTH)
    return t * t + b * t


def newton_root(v, b, steps):
    residual = v**3 + v - b
    if abs(residual) < NEWTON_TOLERANCE or steps == 0:
        return v
    return newton_root(v - residual / (3.0 * v * v + 1.0), b, steps - 1)


def newton_by_recursion(b):
    """Newton's method as tail recursion with a data-dependent depth."""
    t = newton_root(0.5 * b, b, NEWTON_MAX_STEPS)
    return t * t + math.sin(t)


def even_step(v, n):
    if n == 0:
        return v
    return odd_step(math.sin(v) + 0.5 * v, n - 1)


def odd_step(v, n):
    if n == 0:
        return v * v
    return even_step(math.cos(v) * v, n - 1)


def mutual_recursion_stepping(x, n):
    """Mutual recursion: even and odd steps calling each other."""
    return even_step(x, n) + odd_step(x, n)


def discounted_return(rewards, gamma, i, total):
    if i < 0:
        return total
    return discounted_return(rewards, gamma, i - 1, rewards[i] + gamma * total)


def tail_recursive_discounting(rewards, gamma):
    """Tail recursion with an accumulator, backwards over a differentiated array."""
    return discounted_return(rewards, gamma, rewards.shape[0] - 1, 0.0)


def decay_chain(v, n):
    if n == 0:
        return v
    return decay_chain(v + 0.01 * math.sin(v), n - 1) * 0.999 + 0.001 * v


def recursion_two_hundred_deep(x, n):
    """About DEEP levels of (non-tail) recursion."""
    return decay_chain(x, n)


def series_term(v, i):
    return power(v, i) / rising(1.0, i)


def recursion_in_a_loop(x, n):
    """Recursive helpers called in a loop: a Taylor series of exp by `power` and factorials."""
    total = 0.0
    for i in range(n):
        total = total + series_term(x, i)
    return total * math.exp(-x)


def smooth(u):
    inner = 0.25 * u[:-2] + 0.5 * u[1:-1] + 0.25 * u[2:]
    return np.concatenate([u[:1], inner, u[-1:]])


def v_cycle(u, level):
    for _ in range(2):
        u = smooth(u)
    if level == 0 or u.shape[0] < 3:
        return np.sum(u * u)
    return np.sum(u * u) + 0.5 * v_cycle(u[::2] * 2.0, level - 1)


def multilevel_smoothing(u, levels):
    """A loop inside recursion: each level smooths twice, then recurses on every other point."""
    return v_cycle(u, levels) + u[0]


def pairwise_reduce(v):
    if v.shape[0] == 1:
        return v[0] * v[0]
    half = v.shape[0] // 2
    left = pairwise_reduce(v[:half])
    right = pairwise_reduce(v[half:])
    return 0.5 * left + np.tanh(right)


def divide_and_conquer(v):
    """Two recursive calls per level on the halves of a differentiated array."""
    return pairwise_reduce(v) + pairwise_reduce(v[::-1] * 0.5)


# --- recursion over structures passed as data ----------------------------------------------


def tree_value(tree, x):
    if isinstance(tree, tuple):
        return math.tanh(tree_value(tree[0], x) * x + tree_value(tree[1], x))
    return tree * x


def nested_tuple_tree(tree, x):
    """Recursion over a tree of nested pairs (drawn by hypothesis) with floats at the leaves."""
    return tree_value(tree, x) + tree_value((tree, 0.5), x * x)


def tree_sum_of_squares(tree):
    if isinstance(tree, tuple):
        total = 0.0
        for child in tree:
            total = total + tree_sum_of_squares(child)
        return total
    return tree * tree


def tree_of_active_leaves(a, b):
    """A tree built inside from the differentiated values; a loop over children inside the
    recursion."""
    tree = ((a, 2.0), (b, (a * b, 0.5, b)))
    return tree_sum_of_squares(tree) + tree_value(tree, b)


def compose(tree, W, b, E):
    if isinstance(tree, int):
        return np.tanh(E[tree])
    left = compose(tree[0], W, b, E)
    right = compose(tree[1], W, b, E)
    return np.tanh(W @ np.concatenate([left, right]) + b)


def tree_rnn(W, b, E, w, tree):
    """A TreeRNN over a parse tree of word indices (drawn by hypothesis): embeddings at the
    leaves, a composition layer at each inner node, a readout at the root."""
    root = compose(tree, W, b, E)
    return np.log(1.0 + np.exp(w @ root)) + 0.1 * np.sum(root * root)


class Node:
    """A binary tree node, its children None or Nodes."""

    def __init__(self, value, left=None, right=None):
        self.value = value
        self.left = left
        self.right = right


def node_score(node, w, decay):
    if node is None:
        return 0.0
    own = np.tanh(node.value @ w)
    return own + decay * (node_score(node.left, w, decay) + node_score(node.right, w, decay))


def count_nodes(node):
    if node is None:
        return 0
    return 1 + count_nodes(node.left) + count_nodes(node.right)


def node_tree_score(root, w, decay):
    """Recursion over `.left`/`.right` children of a tree built outside (feature vectors at the
    nodes), normalised by `count_nodes`, a call on non-differentiated arguments only."""
    return node_score(root, w, decay) / count_nodes(root)


def node_depth_weighted(node, x, depth):
    if node is None:
        return 0.0
    here = math.sin(float(node.value[0]) * x) / (depth + 1)
    left = node_depth_weighted(node.left, x, depth + 1)
    right = node_depth_weighted(node.right, x, depth + 1)
    return here + (left + right) * x


def node_tree_scalar(root, x):
    """A scalar recursion over the same trees, with an int parameter growing with the depth."""
    return node_depth_weighted(root, x, 0)


class Link:
    def __init__(self, value, following=None):
        self.value = value
        self.following = following


def linked_list(values):
    head = None
    for value in reversed(values):
        head = Link(value, head)
    return head


def link_step(state, value):
    return math.tanh(state * value + 0.3) + 0.1 * state


def chain_product(link, v):
    if link is None:
        return v
    return chain_product(link.following, v * link.value + 0.1 * math.sin(v))


def linked_list_walk(head, x):
    """A None-terminated linked list walked by a `while` loop calling a helper per link, and by
    recursion."""
    total = 0.0
    state = x
    link = head
    while link is not None:
        state = link_step(state, link.value)
        total = total + state
        link = link.following
    return total + chain_product(head, x)


# --- early returns, raising and int helpers ------------------------------------------------


def first_crossing(v, values, threshold):
    total = 0.0
    for value in values:
        total = total + value * v
        if total > threshold:
            return total * v
    return -total


def early_returns(x, y, values):
    """Helpers returning from inside a loop and from an `if`, before their end."""
    return first_crossing(x, values, 1.0) + call_helpers.leaky(y) * first_crossing(y, values, 0.5)


def require_same_shape(a, b):
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} and {b.shape}")
    return a.shape[0]


def gaussian_log_likelihood(x, mu, sigma):
    """Helpers that raise on bad input (never drawn): an int-valued shape check on the
    differentiated arrays and `checked_log` of the differentiated sigma."""
    n = require_same_shape(x, mu)
    z = (x - mu) / sigma
    return -0.5 * np.sum(z * z) - n * call_helpers.checked_log(sigma)


def index_of_largest(v):
    best = 0
    for i in range(1, v.shape[0]):
        if v[i] > v[best]:
            best = i
    return best


def int_results_mixed(v, x):
    """Helpers returning ints from differentiated arguments (`index_of_largest`,
    `count_positive`), their results used as indices and factors."""
    i = index_of_largest(v)
    n = call_helpers.count_positive(v)
    return v[i] * x + n * np.sum(v * v) + square(x) * i


def binomial_row(n):
    if n == 0:
        return (1,)
    previous = binomial_row(n - 1)
    row = (1,)
    for i in range(n - 1):
        row = row + (previous[i] + previous[i + 1],)
    return row + (1,)


def bernstein_with_constant_helpers(x, n):
    """Helpers on non-differentiated arguments only (`binomial_row(n)`, a recursion building a
    tuple of ints); the differentiated arithmetic stays in the entry."""
    weights = binomial_row(n)
    total = 0.0
    for k in range(n + 1):
        total = total + weights[k] * x**k * (1.0 - x) ** (n - k) * (k + 1)
    return total


# --- an integrator taking the vector field as an argument ----------------------------------


def oscillator(y, omega):
    return np.array([y[1], -omega * omega * y[0] - 0.1 * y[1]])


def rk4_step(f, y, dt, parameter):
    k1 = f(y, parameter)
    k2 = f(y + 0.5 * dt * k1, parameter)
    k3 = f(y + 0.5 * dt * k2, parameter)
    k4 = f(y + dt * k3, parameter)
    return y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def integrate_oscillator(y0, omega, dt, steps):
    """An RK4 step helper taking the vector field as an argument, called in a loop."""
    y = y0
    for _ in range(steps):
        y = rk4_step(oscillator, y, dt, omega)
    return y @ y + y[0]


# --- domains -------------------------------------------------------------------------------


def tuple_trees(leaves, max_leaves=6):
    """Trees of nested pairs with `leaves` at the leaves."""
    return st.recursive(
        leaves, lambda children: st.tuples(children, children), max_leaves=max_leaves
    )


def node_trees(max_leaves=5):
    """Node trees with 2-vectors at the nodes, some children None."""
    features = arrays(EMBEDDING, min_value=-1.0, max_value=1.0)
    leaf = st.builds(Node, features)
    return st.recursive(
        leaf,
        lambda children: st.builds(Node, features, children, st.none() | children),
        max_leaves=max_leaves,
    )


def distinct(strategy, margin=0.01):
    """Arrays from `strategy` whose elements are pairwise at least `margin` apart (no ties)."""
    return strategy.filter(
        lambda a: all(
            abs(float(a[i]) - float(a[j])) >= margin for i in range(a.shape[0]) for j in range(i)
        )
    )


AWAY_FROM_ZERO = floats(-1.5, 1.5, exclude_near=(0.0,), margin=0.01)  # the kink of leaky
DRAWN_FUNCTIONS = (square, math.sin, softplus, np.tanh, TRIPLED, damped, call_helpers.leaky)

# --- jax.numpy transcriptions: the same programs for jax.grad (tests/test_corpus.py compares) ---


def _jax_sigmoid(z):
    return 1.0 / (1.0 + jnp.exp(-z))


def jax_lstm_over_sequence(W, U, bias, xs):
    n = HIDDEN
    h, c = jnp.zeros(n), jnp.zeros(n)
    for x in xs:
        z = W @ x + U @ h + bias
        gates = _jax_sigmoid(z[: 3 * n])
        c = gates[:n] * c + gates[n : 2 * n] * jnp.tanh(z[3 * n :])
        h = gates[2 * n :] * jnp.tanh(c)
    return jnp.sum(h * h) + jnp.sum(c)


def jax_rnn_classifier(Wxh, Whh, b, Why, xs, target):
    h = jnp.zeros(HIDDEN + 1)
    for x in xs:
        h = jnp.tanh(Wxh @ x + Whh @ h + b)
    logits = Why @ h
    shifted = logits - jnp.max(logits)
    return -(shifted - jnp.log(jnp.sum(jnp.exp(shifted))))[target]


def jax_rnn_with_residual(Wxh, Whh, b, xs):
    h = jnp.zeros(HIDDEN + 1)
    for x in xs:
        h = 0.5 * h + jnp.tanh(Wxh @ x + Whh @ h + b)
    return jnp.sum(h * h) + h[0]


def jax_two_query_attention(q1, q2, keys, values):
    def attend(query):
        scores = keys @ query / jnp.sqrt(query.shape[0])
        weights = jnp.exp(scores - jnp.max(scores))
        return (weights / jnp.sum(weights)) @ values

    first, second = attend(q1), attend(q2)
    return first @ second + jnp.sum(first)


def jax_two_layer_objects(W1, b1, W2, b2, x):
    h = jnp.tanh(0.5 * (W1 @ x) + b1)
    y = _jax_sigmoid(W2 @ h + b2)
    return jnp.sum(y * y) + h @ h


def jax_kernel_sum(x, X, alpha, kernel):
    def rbf(a, b, lengthscale):
        d = a - b
        return jnp.exp(-jnp.sum(d * d) / (2.0 * lengthscale**2))

    total = 0.0
    for i in range(X.shape[0]):
        total = total + alpha[i] * rbf(x, X[i], KERNEL.lengthscale)
        total = total + rbf(X[i], x, kernel.lengthscale) * alpha[i] ** 2
    return total


def jax_power_by_squaring(x, n):
    def power(v, n):
        if n == 0:
            return 1.0
        half = power(v, n // 2)
        return half * half if n % 2 == 0 else v * half * half

    return power(x, n) + power(1.0 - 0.5 * x, n + 1) * x


def jax_horner_recursion(coefficients, x):
    def horner(c, v):
        value = 0.0
        for i in reversed(range(c.shape[0])):
            value = c[i] + v * value
        return value

    return horner(coefficients, x) + horner(coefficients[::-1], -x) ** 2


def jax_tail_recursive_discounting(rewards, gamma):
    total = 0.0
    for i in reversed(range(rewards.shape[0])):
        total = rewards[i] + gamma * total
    return total


def jax_divide_and_conquer(v):
    def reduce(v):
        if v.shape[0] == 1:
            return v[0] * v[0]
        half = v.shape[0] // 2
        return 0.5 * reduce(v[:half]) + jnp.tanh(reduce(v[half:]))

    return reduce(v) + reduce(v[::-1] * 0.5)


def jax_tree_rnn(W, b, E, w, tree):
    def compose(tree):
        if isinstance(tree, int):
            return jnp.tanh(E[tree])
        return jnp.tanh(W @ jnp.concatenate([compose(tree[0]), compose(tree[1])]) + b)

    root = compose(tree)
    return jnp.log(1.0 + jnp.exp(w @ root)) + 0.1 * jnp.sum(root * root)


def jax_node_tree_score(root, w, decay):
    def score(node):
        if node is None:
            return 0.0
        return jnp.tanh(jnp.asarray(node.value) @ w) + decay * (
            score(node.left) + score(node.right)
        )

    return score(root) / count_nodes(root)


def jax_integrate_oscillator(y0, omega, dt, steps):
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


# hypothesis examples per case against finite differences, and against jax.grad. No case is
# marked xfail now: the one bug this corpus found (`h = f(h)` followed by more code dropped the
# argument's adjoint at the call site, transforms/adjoint.py) is fixed.
EXAMPLES = 6
JAX_EXAMPLES = 3

CASES = [
    Case(nested_scalar_helpers, (floats(-1.5, 1.5), floats(-1.5, 1.5)), (0, 1)),
    Case(keywords_and_defaults, (floats(), floats()), (0, 1)),
    Case(array_and_scalar_results, (arrays((3, 2)), arrays(3), arrays(2)), (0, 1, 2)),
    Case(
        dense_with_keywords,
        (arrays((3, 2), min_value=-1.0, max_value=1.0), arrays(3), arrays(2)),
        (0, 1, 2),
    ),
    Case(
        lstm_over_sequence,
        (
            arrays((4 * HIDDEN, 2), min_value=-1.0, max_value=1.0),
            arrays((4 * HIDDEN, HIDDEN), min_value=-1.0, max_value=1.0),
            arrays(4 * HIDDEN, min_value=-1.0, max_value=1.0),
            arrays((3, 2)),
        ),
        (0, 1, 2),
        jax=jax_lstm_over_sequence,
    ),
    Case(
        rnn_classifier,
        (
            arrays((HIDDEN + 1, 2), min_value=-1.0, max_value=1.0),
            arrays((HIDDEN + 1, HIDDEN + 1), min_value=-1.0, max_value=1.0),
            arrays(HIDDEN + 1, min_value=-1.0, max_value=1.0),
            arrays((3, HIDDEN + 1), min_value=-2.0, max_value=2.0),
            arrays((3, 2)),
            ints(0, 2),
        ),
        (0, 1, 2, 3),
        jax=jax_rnn_classifier,
    ),
    Case(
        rnn_with_residual,
        (
            arrays((HIDDEN + 1, 2), min_value=-1.0, max_value=1.0),
            arrays((HIDDEN + 1, HIDDEN + 1), min_value=-1.0, max_value=1.0),
            arrays(HIDDEN + 1, min_value=-1.0, max_value=1.0),
            arrays((3, 2)),
        ),
        (0, 1, 2),
        jax=jax_rnn_with_residual,
    ),
    Case(
        two_query_attention,
        (arrays(2), arrays(2), arrays((3, 2)), arrays((3, 2))),
        (0, 1, 2, 3),
        jax=jax_two_query_attention,
    ),
    Case(
        descend_through_helpers,
        (
            arrays(2),
            arrays((3, 2), min_value=-1.0, max_value=1.0),
            arrays(3),
            positive_floats(0.01, 0.3),
            ints(0, 4),
        ),
        (0, 1, 3),
    ),
    Case(
        two_layer_objects,
        (
            arrays((3, 2), min_value=-1.0, max_value=1.0),
            arrays(3),
            arrays((2, 3), min_value=-1.0, max_value=1.0),
            arrays(2),
            arrays(2),
        ),
        (0, 1, 2, 3, 4),
        jax=jax_two_layer_objects,
    ),
    Case(
        layers_passed_as_data,
        (
            arrays((3, 2), min_value=-1.0, max_value=1.0),
            arrays(3),
            arrays((2, 3), min_value=-1.0, max_value=1.0),
            arrays(2),
            arrays(2),
            st.tuples(
                st.builds(Dense, st.sampled_from(["tanh", "sigmoid", "linear"]), floats(0.5, 2.0)),
                st.builds(Dense, st.sampled_from(["tanh", "sigmoid", "linear"])),
            ),
        ),
        (0, 1, 2, 3, 4),
    ),
    Case(
        kernel_sum,
        (
            arrays(2),
            arrays((3, 2)),
            arrays(3),
            st.builds(RadialKernel, positive_floats(0.5, 2.0)),
        ),
        (0, 1, 2),
        jax=jax_kernel_sum,
    ),
    Case(partial_helpers, (floats(), arrays(3)), (0, 1)),
    Case(apply_functions_twice, (floats(-2.0, 2.0), arrays(3)), (0, 1)),
    Case(iterate_maps, (floats(-2.0, 2.0), ints(0, 8))),
    Case(
        apply_drawn_function,
        (st.sampled_from(DRAWN_FUNCTIONS), AWAY_FROM_ZERO, AWAY_FROM_ZERO),
        (1, 2),
    ),
    Case(power_by_squaring, (floats(-1.5, 1.5), ints(0, 12)), jax=jax_power_by_squaring),
    Case(log_rising_factorial, (positive_floats(0.1, 3.0), ints(0, 8))),
    Case(
        horner_recursion,
        (arrays(st.integers(1, 5), min_value=-2.0, max_value=2.0), floats(-1.5, 1.5)),
        (0, 1),
        jax=jax_horner_recursion,
    ),
    Case(
        piecewise_linear_lookup,
        (arrays(KNOTS.shape[0]), floats(-1.99, 1.99, exclude_near=tuple(KNOTS), margin=0.01)),
        (0, 1),
    ),
    Case(cube_root_by_bisection, (floats(-3.0, 3.0, exclude_near=(0.0,), margin=0.01),)),
    Case(newton_by_recursion, (floats(-5.0, 5.0, exclude_near=(0.0,), margin=0.01),)),
    Case(mutual_recursion_stepping, (floats(-2.0, 2.0), ints(0, 8))),
    Case(
        tail_recursive_discounting,
        (arrays(st.integers(1, 6)), positive_floats(0.5, 0.99)),
        (0, 1),
        jax=jax_tail_recursive_discounting,
    ),
    Case(recursion_two_hundred_deep, (floats(-2.0, 2.0), ints(DEEP - 10, DEEP))),
    Case(recursion_in_a_loop, (floats(-2.0, 2.0), ints(0, 8))),
    Case(multilevel_smoothing, (arrays(8), ints(0, 3))),
    Case(
        divide_and_conquer,
        (arrays(st.integers(1, 7), min_value=-2.0, max_value=2.0),),
        jax=jax_divide_and_conquer,
    ),
    Case(nested_tuple_tree, (tuple_trees(floats(-1.0, 1.0)), floats(-1.5, 1.5)), 1),
    Case(tree_of_active_leaves, (floats(-1.5, 1.5), floats(-1.5, 1.5)), (0, 1)),
    Case(
        tree_rnn,
        (
            arrays((EMBEDDING, 2 * EMBEDDING), min_value=-1.0, max_value=1.0),
            arrays(EMBEDDING),
            arrays((VOCABULARY, EMBEDDING)),
            arrays(EMBEDDING),
            tuple_trees(st.integers(0, VOCABULARY - 1), max_leaves=5),
        ),
        (0, 1, 2, 3),
        jax=jax_tree_rnn,
    ),
    Case(
        node_tree_score,
        (node_trees(), arrays(EMBEDDING), positive_floats(0.1, 0.9)),
        (1, 2),
        jax=jax_node_tree_score,
    ),
    Case(node_tree_scalar, (node_trees(), floats(-1.5, 1.5)), 1),
    Case(
        linked_list_walk,
        (st.lists(floats(-1.0, 1.0), max_size=6).map(linked_list), floats(-1.5, 1.5)),
        1,
    ),
    Case(
        early_returns,
        (
            floats(-2.0, 2.0),
            floats(-2.0, 2.0, exclude_near=(0.0,), margin=0.01),
            st.lists(floats(0.1, 1.0), max_size=5),
        ),
        (0, 1),
    ),
    Case(
        gaussian_log_likelihood,
        (arrays(3), arrays(3), positive_floats(0.5, 2.0)),
        (0, 1, 2),
    ),
    Case(
        int_results_mixed,
        (distinct(arrays(4, exclude_near=(0.0,), margin=0.01)), floats()),
        (0, 1),
    ),
    Case(bernstein_with_constant_helpers, (floats(0.0, 1.0), ints(0, 6))),
    Case(
        integrate_oscillator,
        (arrays(2), positive_floats(0.5, 2.0), positive_floats(0.01, 0.2), ints(0, 4)),
        (0, 1, 2),
        jax=jax_integrate_oscillator,
    ),
]
