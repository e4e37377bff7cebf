"""Everyday Python that cpsgrad once refused: assignment expressions (`:=`), sets of plain
values, calls made for their effect (`print`, logging, a plotting function, a list kept outside),
and generator functions consumed by the differentiated code.

Each entry is a module-level function written the way users write it, mixed with loops,
branches, helpers and recursion. `CASES` at the end pairs each with hypothesis strategies;
the module-level helpers are not cases. Strategies keep inputs away from branch thresholds.
"""

import logging
import math

import jax.numpy as jnp
import numpy as np

from cpsgrad.testing.strategies import arrays, floats, ints
from tests.cases import fake_plotting
from tests.corpus import Case

# --- assignment expressions ----------------------------------------------------------------


def walrus_countdown(x, n):
    """`while (n := n - 1) > 0`: the test rebinds a parameter on every iteration."""
    total = 0.0
    while (n := n - 1) > 0:
        total = total + x * n + math.sin(x * total)
    return total + n


def jax_walrus_countdown(x, n):
    total = 0.0
    while (n := n - 1) > 0:
        total = total + x * n + jnp.sin(x * total)
    return total + n


def walrus_filter(scale, offset):
    """The comprehension's condition binds `y` in the function's scope, as Python does: after
    the comprehension `y` is the last element computed (kept or not)."""
    data = [1.0, -2.0, 3.0, -0.5, 2.5]
    kept = [y * y for v in data if (y := v * scale + offset) > 0]
    return sum(kept) + y


def jax_walrus_filter(scale, offset):
    data = [1.0, -2.0, 3.0, -0.5, 2.5]
    kept = [y * y for v in data if (y := v * scale + offset) > 0]
    return sum(kept) + y


def walrus_branches(x):
    """`if`/`elif` tests that bind what their branches use."""
    if (square := x * x) > 4.0:
        return square - 4.0
    elif (root := math.sqrt(square + 1.0)) > 1.5:
        return root * x
    return square + root


def walrus_operands(x, w):
    """Several walruses in one expression, on the same name, read before and after: Python's
    left-to-right order decides each value."""
    y = w
    first = y + (y := x * w) + y
    second = (z := x + 1.0) * (z := z * w) - z
    return first + second + math.exp(t := x * 0.5) * t


def jax_walrus_operands(x, w):
    y = w
    first = y + (y := x * w) + y
    second = (z := x + 1.0) * (z := z * w) - z
    return first + second + jnp.exp(t := x * 0.5) * t


def walrus_helper(x, k):
    total = 0.0
    for i in range(k):
        if (term := x ** (i + 1) / (i + 1)) > 0.01:
            total = total + term
        else:
            total = total - term
    return total


def walrus_in_calls(x):
    """A helper whose loop binds with `:=`, called, and called recursively."""
    return walrus_helper(x, 3) + walrus_recursive(x, 3)


def walrus_recursive(x, depth):
    if (depth := depth - 1) < 0:
        return x
    return math.cos(walrus_recursive(x * 0.9, depth)) + x


def walrus_short_circuit(x, w):
    """Walruses under `and`/`or` and a conditional expression bind only where they run; a
    chained comparison reads its middle operand once; a parallel assignment reads before."""
    hit = x > 0 and (big := x * w) > 1.0
    small = big if hit else (big := x - w)
    a, b = w, x
    a, b = b, (b := a * x)
    inside = 0.0 < (c := x * x + w) < 100.0
    return small + a * b + c * inside


def jax_walrus_short_circuit(x, w):
    hit = x > 0 and (big := x * w) > 1.0
    small = big if hit else (big := x - w)
    a, b = w, x
    a, b = b, (b := a * x)
    inside = 0.0 < (c := x * x + w) < 100.0
    return small + a * b + c * inside


def walrus_generator_sum(xs):
    """A generator expression's condition binds; the sum is of what passed."""
    return sum(y for v in xs if (y := v * v - 0.25) > 0) + y + np.sum(xs * 0.0)


def walrus_arrays(x):
    if (energy := np.sum(x * x)) > 1.0:
        return energy - np.sum(np.tanh(scaled := x * 0.5) * scaled)
    return energy + np.max(x)


def jax_walrus_arrays(x):
    energy = jnp.sum(x * x)
    if energy > 1.0:
        scaled = x * 0.5
        return energy - jnp.sum(jnp.tanh(scaled) * scaled)
    return energy + jnp.max(x)


def walrus_lambda(x, w):
    """A walrus in a lambda binds the lambda's own name; the callee named by the walrus is read
    before the argument rebinds it."""
    g = lambda v: (u := v * w) * u  # noqa: E731
    f = math.sin
    return g(x) + f((f := math.cos) and x) + f(x)


def jax_walrus_lambda(x, w):
    return (x * w) ** 2 + jnp.sin(x) + jnp.cos(x)


# --- sets of non-differentiable values ------------------------------------------------------


def set_membership(x, n):
    """Sets of ints built by displays, comprehensions and methods decide which terms count."""
    wanted = {n, n + 2, 7}
    seen = set()
    total = 0.0
    for i in range(8):
        if i in wanted and i not in seen:
            seen.add(i)
            total = total + math.sin(x * i)
        elif i % 3 == 0:
            seen |= {i}
            total = total - x * i
    odd = {i for i in seen if i % 2}
    seen.discard(0)
    return total * len(odd) + len(seen - wanted) + x * len(wanted & {n})


def jax_set_membership(x, n):
    wanted = {n, n + 2, 7}
    seen = set()
    total = 0.0
    for i in range(8):
        if i in wanted and i not in seen:
            seen.add(i)
            total = total + jnp.sin(x * i)
        elif i % 3 == 0:
            seen |= {i}
            total = total - x * i
    odd = {i for i in seen if i % 2}
    seen.discard(0)
    return total * len(odd) + len(seen - wanted) + x * len(wanted & {n})


def unique_labels(labels):
    """A helper returning a set of strings, used for lookups only."""
    return {label.lower() for label in labels}


def set_of_strings(w):
    names = ("a", "B", "b", "c")
    known = unique_labels(names)
    keys = {(name, len(name)) for name in names}
    score = 0.0
    for name in sorted(known):
        if (name, 1) in keys:
            score = score + w * w
    return score + len(frozenset(known)) * w


def jax_set_of_strings(w):
    return 3 * w * w + 3 * w


# --- calls made for their effect ----------------------------------------------------------

LOG = []
LOGGER = logging.getLogger("cpsgrad.tests.everyday")


class Recorder:
    """A plain user class: its method is called for its effect with a differentiable value."""

    def __init__(self):
        self.seen = []

    def record(self, value, label="value"):
        self.seen.append((label, value))


RECORDER = Recorder()


def effects_in_a_loop(x, w):
    """print, logging and a plotting function, each given differentiable values inside a loop and a
    branch (a list, an object or a user function that could keep them is refused: tests/test_everyday.py)."""
    total = 0.0
    for i in range(3):
        total = total + math.sin(x * i) * w
        print("step", i, total)
        LOGGER.info("step %d: %s", i, total)
        if total > 0:
            fake_plotting.plot(total, x, color="r")
    return total * x


def jax_effects_in_a_loop(x, w):
    total = 0.0
    for i in range(3):
        total = total + jnp.sin(x * i) * w
    return total * x


def effects_on_arrays(x):
    """An array handed to calls for their effect (as a read-only view), a tuple of them too."""
    fake_plotting.plot(x, (x, 2.0), np.tanh(x))
    LOGGER.debug("x = %s", x)
    return np.sum(np.tanh(x) * x)


def jax_effects_on_arrays(x):
    return jnp.sum(jnp.tanh(x) * x)


# --- the cases -----------------------------------------------------------------------------

CASES = [
    Case(walrus_countdown, (floats(-2.0, 2.0), ints(0, 6)), jax=jax_walrus_countdown),
    Case(walrus_filter, (floats(-2.0, 2.0), floats(-1.0, 1.0)), argnums=(0, 1), jax=jax_walrus_filter),
    Case(walrus_branches, (floats(-3.0, 3.0, exclude_near=(-2.0, 2.0, 0.0, -1.118, 1.118), margin=0.01),)),
    Case(walrus_operands, (floats(-2.0, 2.0), floats(-2.0, 2.0)), argnums=(0, 1), jax=jax_walrus_operands),
    Case(walrus_in_calls, (floats(-1.5, 1.5),)),
    Case(
        walrus_short_circuit,
        (floats(-3.0, 3.0, exclude_near=(0.0,)), floats(-3.0, 3.0)),
        argnums=(0, 1),
        jax=jax_walrus_short_circuit,
    ),
    Case(walrus_generator_sum, (arrays((4,), min_value=-2.0, max_value=2.0, exclude_near=(0.5, -0.5)),)),
    Case(walrus_arrays, (arrays((3,), min_value=-1.5, max_value=1.5),), jax=jax_walrus_arrays),
    Case(set_membership, (floats(-2.0, 2.0), ints(0, 7)), jax=jax_set_membership),
    Case(set_of_strings, (floats(-2.0, 2.0),), jax=jax_set_of_strings),
    Case(effects_in_a_loop, (floats(-2.0, 2.0), floats(-2.0, 2.0)), argnums=(0, 1), jax=jax_effects_in_a_loop),
    Case(effects_on_arrays, (arrays((3,), min_value=-2.0, max_value=2.0),), jax=jax_effects_on_arrays),
    Case(walrus_lambda, (floats(-2.0, 2.0), floats(-2.0, 2.0)), argnums=(0, 1), jax=jax_walrus_lambda),
]
EXAMPLES = 6
JAX_EXAMPLES = 3
