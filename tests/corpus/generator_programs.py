"""Programs consuming module-level generator functions: `for v in gen(...)`, `sum`, `list`,
`tuple`, `next` (with and without a default), `enumerate`, `zip(gen(...), xs)`, early exits
(`break`, `return` in the loop, `next` once), `yield` in branches, loops and after a `return`
condition, `yield from` a list and another generator, recursion through `yield from`,
generators in loops, in user functions, arguments used twice, loop `else`; consumers (`sum`, `list`,
`max`, `min`, `sorted`, `any`, `all`, `tuple`, `next`) inside expressions; a generator object kept in
a variable (`next` calls, a loop with `break`, the rest summed).
"""

import jax.numpy as jnp
import numpy as np

from cpsgrad.testing.strategies import arrays, floats
from tests.corpus import Case

# --- generators (not cases) ---------------------------------------------------------------------


def scaled(xs, w):
    for x in xs:
        yield x * w


def powers(x, n):
    value = 1.0
    i = 0
    while i < n:
        yield value
        value = value * x
        i = i + 1


def branchy(xs, w, limit=10.0):
    for x in xs:
        if x * w > limit:
            return
        if x > 0:
            yield x * w
        else:
            yield -x
            yield x * x


def chained(xs, w):
    yield w
    yield from scaled(xs, w)
    yield from [w * w, 2.0 * w]


def tree_leaves(node, w):
    if isinstance(node, tuple):
        for child in node:
            yield from tree_leaves(child, w)
    else:
        yield node * w


def rows(m):
    for row in m:
        yield np.tanh(row)


def pairs(x, y):
    yield x, y
    yield y, x * y


# --- cases -------------------------------------------------------------------------------------


def loop_over_generator(x, y, w):
    s = 0.0
    for v in scaled([x, y, x], w):
        s = s + v * v
    return s


def jax_loop_over_generator(x, y, w):
    return 2 * (x * w) ** 2 + (y * w) ** 2


def sum_of_generator(x, w):
    s = sum(powers(x, 4))
    return s * w


def jax_sum_of_generator(x, w):
    return (1.0 + x + x**2 + x**3) * w


def list_and_tuple(x, w):
    ys = list(scaled([x, w], x))
    zs = tuple(powers(w, 3))
    return ys[0] * zs[2] + ys[1] - zs[1]


def jax_list_and_tuple(x, w):
    return x * x * w * w + w * x - w


def next_once(x, w):
    first = next(scaled([x, w], w))
    missing = next(scaled([], w), 0.5)
    second = next(powers(x, 0), w)
    return first * missing + second * x


def break_early(x, y):
    s = 0.0
    for v in powers(x, 100):
        if v > 4.0:
            break
        s = s + v * y
    else:
        s = -1.0
    return s


def return_in_loop(x, y):
    for v in scaled([x, y, x + y], 2.0):
        if v > 1.0:
            return v * y
    return x


def branches_and_returns(x, y, w):
    s = 0.0
    for v in branchy([x, -y, 0.5], w, limit=5.0):
        s = s + v * w
    return s


def yield_from(x, y, w):
    total = 0.0
    for v in chained([x, y], w):
        total = total * 0.5 + v
    return total


def jax_yield_from(x, y, w):
    total = 0.0
    for v in [w, x * w, y * w, w * w, 2.0 * w]:
        total = total * 0.5 + v
    return total


def recursion_through_yield_from(x, y, w):
    return sum(tree_leaves((x, (y, x * y), ((w,),)), w))


def jax_recursion_through_yield_from(x, y, w):
    return (x + y + x * y + w) * w


def enumerate_and_zip(x, y):
    s = 0.0
    for i, v in enumerate(powers(x, 3), 1):
        s = s + i * v
    weights = [y, 2.0 * y]
    for v, b in zip(scaled([x, y, x], y), weights, strict=False):
        s = s + v * b
    return s


def jax_enumerate_and_zip(x, y):
    return 1.0 + 2 * x + 3 * x * x + x * y * y + y * y * 2.0 * y


def generator_in_a_loop(x, y):
    s = 0.0
    for k in range(3):
        for v in scaled([x, y], k + 1.0):
            if v > 5.0:
                continue
            s = s + v * x
    return s


def helper_consumes(xs, w):
    return sum(scaled(xs, w))


def generator_in_a_user_function(x, y):
    return helper_consumes([x, y], y) * helper_consumes([y], x)


def jax_generator_in_a_user_function(x, y):
    return (x * y + y * y) * (y * x)


def argument_used_twice(x):
    s = 0.0
    for v in scaled([x, x], x):
        s = s + v
    return s


def jax_argument_used_twice(x):
    return 2 * x * x


def array_rows(m, v):
    total = 0.0
    for r in rows(m):
        total = total + np.sum(r * v)
    return total


def jax_array_rows(m, v):
    return jnp.sum(jnp.tanh(m) * v)


def tuple_targets(x, y):
    s = 0.0
    for a, b in pairs(x, y):
        s = s + a * b * b
    return s


def jax_tuple_targets(x, y):
    return x * y * y + y * (x * y) ** 2


def sum_inside_an_expression(x, y, w):
    return 2.0 * sum(scaled([x, y], w)) + x * np.sum(np.array(list(scaled([y, w], x))))


def jax_sum_inside_an_expression(x, y, w):
    return 2.0 * (x * w + y * w) + x * (y * x + w * x)


def extremes_of_a_generator(x, y):
    return max(scaled([x, y, x * y], y)) - min(powers(x, 3)) * sorted(scaled([y, x], x))[-1]


def tests_of_a_generator(x, y):
    s = y * sum(scaled([x], y), 1.0)
    if any(branchy([x, -y], y)):
        s = s + x
    if all(scaled([x, y], 2.0)):
        s = s * y
    return s + tuple(chained([x], y))[1]


def in_an_expression_in_a_loop(x, y):
    s = 0.0
    for k in range(2):
        for v in scaled([x, y], k + 1.0):
            s = s + v * max(scaled([v, y], x))
    return s + helper_consumes([x], y) * next(powers(y, 2))


def jax_in_an_expression_in_a_loop(x, y):
    s = 0.0
    for k in range(2):
        for v in (x * (k + 1.0), y * (k + 1.0)):
            s = s + v * jnp.maximum(v * x, y * x)
    return s + x * y


def kept_generator(x, y):
    g = scaled([x, y, x * y, y * y], y)
    first = next(g)
    s = first * x
    for v in g:
        if v > 2.0:
            break
        s = s + v * first
    rest = sum(g)
    return s + rest


def kept_generator_in_a_helper(x, y):
    return helper_keeps([x, y], y) * helper_keeps([y, x, x], x)


def helper_keeps(xs, w):
    g = powers(w, 3)
    first = next(g)
    second = next(g, 0.0)
    return first + second * sum(scaled(xs, w))


def jax_kept_generator_in_a_helper(x, y):
    return (1.0 + y * (x * y + y * y)) * (1.0 + x * (y * x + x * x + x * x))


CASES = [
    Case(loop_over_generator, (floats(), floats(), floats()), (0, 1, 2), jax_loop_over_generator),
    Case(sum_of_generator, (floats(), floats()), (0, 1), jax_sum_of_generator),
    Case(list_and_tuple, (floats(), floats()), (0, 1), jax_list_and_tuple),
    Case(next_once, (floats(), floats()), (0, 1)),
    Case(break_early, (floats(0.5, 3.0), floats()), (0, 1)),
    Case(return_in_loop, (floats(), floats()), (0, 1)),
    Case(branches_and_returns, (floats(), floats(), floats(0.1, 3.0)), (0, 1, 2)),
    Case(yield_from, (floats(), floats(), floats()), (0, 1, 2), jax_yield_from),
    Case(recursion_through_yield_from, (floats(), floats(), floats()), (0, 1, 2), jax_recursion_through_yield_from),
    Case(enumerate_and_zip, (floats(), floats()), (0, 1), jax_enumerate_and_zip),
    Case(generator_in_a_loop, (floats(), floats()), (0, 1)),
    Case(generator_in_a_user_function, (floats(), floats()), (0, 1), jax_generator_in_a_user_function),
    Case(argument_used_twice, (floats(),), 0, jax_argument_used_twice),
    Case(array_rows, (arrays((3, 2)), arrays(2)), (0, 1), jax_array_rows),
    Case(tuple_targets, (floats(), floats()), (0, 1), jax_tuple_targets),
    Case(sum_inside_an_expression, (floats(), floats(), floats()), (0, 1, 2), jax_sum_inside_an_expression),
    Case(extremes_of_a_generator, (floats(), floats()), (0, 1)),
    Case(tests_of_a_generator, (floats(), floats()), (0, 1)),
    Case(in_an_expression_in_a_loop, (floats(), floats()), (0, 1), jax_in_an_expression_in_a_loop),
    Case(kept_generator, (floats(), floats()), (0, 1)),
    Case(kept_generator_in_a_helper, (floats(), floats()), (0, 1), jax_kept_generator_in_a_helper),
]

EXAMPLES = 5
JAX_EXAMPLES = 3
