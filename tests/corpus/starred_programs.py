"""Programs unpacking with `*` and `**`: starred targets (also `for` targets), starred displays,
calls with `*xs` / `**kw` of user functions, closures, partials and primitives with rules, and
user functions with `*args` / `**kwargs` parameters (the RNN pattern of autograd's examples:
`rnn_predict(params, inputs, *args)`, `concatenate_and_multiply(*args)`), inside loops,
branches and recursion, with arguments used twice and results discarded.
"""

import functools

import jax.numpy as jnp
import numpy as np

from cpsgrad.testing.strategies import arrays, floats
from tests.corpus import Case

# --- helpers (not cases) ---------------------------------------------------------------------


def weighted(a, b, c=1.0):
    return a * b + c


def product_of(*values):
    result = 1.0
    for v in values:
        result = result * v
    return result


def with_options(x, *rest, scale=1.0, **options):
    total = x * scale
    for r in rest:
        total = total + r * r
    for key in options:
        total = total + options[key] * x
    return total


def concatenate_and_multiply(*args):
    *inputs, weights = args
    return np.dot(np.concatenate(inputs), weights)


def rnn_predict(params, inputs, *args):
    hidden = params["init"]
    outputs = []
    for x in inputs:
        hidden = np.tanh(concatenate_and_multiply(x, hidden, params["change"]))
        outputs.append(np.dot(hidden, params["out"]))
    return outputs


def sum_of_tail(first, *rest):
    if not rest:
        return first
    return first + 0.5 * sum_of_tail(*rest)


# --- cases -----------------------------------------------------------------------------------


def starred_target(x, y):
    a, *rest = (x, y, x * y)
    return a * sum(rest)


def jax_starred_target(x, y):
    return x * (y + x * y)


def starred_middle_of_rows(m):
    first, *middle, last = m
    return np.sum(first * last) + np.sum(middle[0] ** 2)


def jax_starred_middle_of_rows(m):
    return jnp.sum(m[0] * m[-1]) + jnp.sum(m[1] ** 2)


def starred_for_target(x, y):
    total = 0.0
    for a, *rest in [(x, y, y), (y, x)]:
        total = total + a * sum(rest)
    return total


def jax_starred_for_target(x, y):
    return x * (2 * y) + y * x


def starred_displays(x, y):
    xs = [x, y]
    joined = [*xs, x * y, *xs]
    pair = (*joined[1:3], y)
    return joined[2] * pair[0] + pair[2] - joined[3]


def jax_starred_displays(x, y):
    return x * y * y + y - x


def call_with_star(x, y):
    pair = (x, y)
    unused = weighted(*pair)  # noqa: F841
    return weighted(*pair) + weighted(x, *[y], c=x) + weighted(**{"a": x, "b": y})


def jax_call_with_star(x, y):
    return (x * y + 1.0) + (x * y + x) + (x * y + 1.0)


def star_parameters(x, y):
    return product_of(x, y, x) + with_options(x, y, y, scale=y, bias=x)


def jax_star_parameters(x, y):
    return x * y * x + (x * y + y * y + y * y + x * x)


def star_in_a_loop_and_branch(x, y):
    total = 0.0
    args = (x, y)
    for i in range(3):
        if i % 2 == 0:
            total = total + product_of(*args, x)
        else:
            total = total - with_options(*args, scale=x)
        args = (*args[1:], total * 0.1)
    return total


def star_recursion(x, y):
    return sum_of_tail(x, y, x * y, y)


def jax_star_recursion(x, y):
    return x + 0.5 * (y + 0.5 * (x * y + 0.5 * y))


def primitives_through_star(x, y):
    pair = (x, y)
    scale = (3,)
    noise = np.zeros(*scale)
    return np.maximum(*pair) + max(*[x, y, -3.0]) + np.sum(noise) + np.hypot(*pair)


def closures_and_partials_through_star(x, y):
    scale = lambda v, w=y: v * w * x  # noqa: E731
    add = functools.partial(weighted, x)
    return scale(*[x]) + add(*(y,), **{"c": x})


def jax_closures_and_partials_through_star(x, y):
    return x * y * x + (x * y + x)


def zip_of_rows(m):
    total = 0.0
    for a, b, c in zip(*m):  # noqa: B905
        total = total + a * b - c
    print(*m[0])
    return total


def jax_zip_of_rows(m):
    return jnp.sum(m[0] * m[1] - m[2])


def rnn_with_star_helpers(change, out, init, inputs):
    params = {"change": change, "out": out, "init": init}
    predictions = rnn_predict(params, inputs, 0.5, "unused")
    return np.sum(np.stack(predictions) ** 2)


def jax_rnn_with_star_helpers(change, out, init, inputs):
    hidden = init
    total = 0.0
    for x in inputs:
        hidden = jnp.tanh(jnp.dot(jnp.concatenate([x, hidden]), change))
        total = total + jnp.sum(jnp.dot(hidden, out) ** 2)
    return total


def stacked_starred_list(x, y):
    rows = [x, *[y, x * y]]
    return np.sum(np.stack([*rows]) ** 2)


def jax_stacked_starred_list(x, y):
    return jnp.sum(x**2) + jnp.sum(y**2) + jnp.sum((x * y) ** 2)


CASES = [
    Case(starred_target, (floats(), floats()), (0, 1), jax_starred_target),
    Case(starred_middle_of_rows, (arrays((3, 2)),), 0, jax_starred_middle_of_rows),
    Case(starred_for_target, (floats(), floats()), (0, 1), jax_starred_for_target),
    Case(starred_displays, (floats(), floats()), (0, 1), jax_starred_displays),
    Case(call_with_star, (floats(), floats()), (0, 1), jax_call_with_star),
    Case(star_parameters, (floats(), floats()), (0, 1), jax_star_parameters),
    Case(star_in_a_loop_and_branch, (floats(-2.0, 2.0), floats(-2.0, 2.0)), (0, 1)),
    Case(star_recursion, (floats(), floats()), (0, 1), jax_star_recursion),
    Case(primitives_through_star, (floats(0.1, 2.0), floats(2.5, 4.0)), (0, 1)),
    Case(closures_and_partials_through_star, (floats(), floats()), (0, 1), jax_closures_and_partials_through_star),
    Case(zip_of_rows, (arrays((3, 4)),), 0, jax_zip_of_rows),
    Case(
        rnn_with_star_helpers,
        (
            arrays((4, 2), min_value=-1.0, max_value=1.0),
            arrays((2, 3), min_value=-1.0, max_value=1.0),
            arrays(2, min_value=-1.0, max_value=1.0),
            arrays((3, 2), min_value=-1.0, max_value=1.0),
        ),
        (0, 1, 2),
        jax_rnn_with_star_helpers,
    ),
    Case(stacked_starred_list, (arrays(3), arrays(3)), (0, 1), jax_stacked_starred_list),
]

EXAMPLES = 5
JAX_EXAMPLES = 3
