"""Programs that combine and change tuples, lists and dicts holding differentiable values.

`+` and `*` on tuples and lists (concatenation and repetition, decided when they run: an array
plus a list is numpy's addition), `+=` and `*=` on a list nothing else shares, the list methods
`extend`, `insert`, `remove`, `sort` and `reverse` on a list the function builds. Each
function's docstring says what it exercises. `REFUSED` lists the forms cpsgrad refuses, each
with its location.
"""

import jax.numpy as jnp
import numpy as np

from cpsgrad.testing.strategies import arrays, floats, ints
from tests.corpus import Case


def concatenated_in_loop(x, n):
    """A list grown by `+` and `+=` in a loop, read at both ends."""
    values = [x]
    for i in range(n):
        values = values + [values[-1] * x]
        values += [np.sin(values[i])]
    return sum(values) * values[0]


def jax_concatenated_in_loop(x, n):
    values = [x]
    for i in range(n):
        values = values + [values[-1] * x]
        values += [jnp.sin(values[i])]
    return sum(values) * values[0]


def repeated_both_sides(x, n):
    """`[a] * n`, `n * (a, b)` and `*=` with an int count from the data."""
    row = [x * x] * n
    pair = 2 * (x, 1.0)
    row *= 2
    return sum(row) + pair[2] * pair[0] + len(row)


def jax_repeated_both_sides(x, n):
    row = [x * x] * n
    pair = 2 * (x, 1.0)
    row *= 2
    return sum(row) + pair[2] * pair[0] + len(row)


def tuple_plus_arrays(w):
    """rnn.py of HIPS autograd: `args + (np.ones(...),)` stacked."""
    args = (w, w * 2.0)
    stacked = np.hstack(args + (np.ones(2),))
    return np.sum(stacked**2)


def jax_tuple_plus_arrays(w):
    args = (w, w * 2.0)
    stacked = jnp.hstack(args + (jnp.ones(2),))
    return jnp.sum(stacked**2)


def array_plus_list(x, w):
    """An array plus a list the function built: numpy's addition (broadcast), not concatenation."""
    values = [x, x * 2.0]
    total = w + values
    return np.sum(total * total)


def jax_array_plus_list(x, w):
    values = jnp.array([x, x * 2.0])
    total = w + values
    return jnp.sum(total * total)


def concatenate_helper(parts, x):
    return parts + [x]


def concatenated_by_helper(x):
    """`+` inside a user function called twice, its result concatenated again."""
    first = concatenate_helper([x], x * 3.0)
    second = concatenate_helper(first, first[1] * x)
    both = list(first) + second  # results of calls: list(...) says it is a list (else refused, below)
    return both[0] * both[-1] + both[3]


def jax_concatenated_by_helper(x):
    first = [x] + [x * 3.0]
    second = first + [first[1] * x]
    both = first + second
    return both[0] * both[-1] + both[3]


def concatenated_and_discarded(x):
    """A concatenation whose result is never read: no gradient from it."""
    unused = [x] + [x * x]  # noqa: F841
    kept = (x,) + (2.0 * x,)
    return kept[1] * kept[0]


def jax_concatenated_and_discarded(x):
    kept = (x,) + (2.0 * x,)
    return kept[1] * kept[0]


def repeated_in_branch(x, n):
    """A repetition in one branch, a concatenation in the other."""
    if n > 1:
        values = [x] * n
    else:
        values = [x] + [x * x]
    return sum(values) * values[-1]


def list_methods_in_loop(x, n):
    """extend, insert (also past the ends), remove, sort with key and reverse, in a loop (x > 0: no ties)."""
    values = [x, 2.0 * x]
    for i in range(n):
        values.extend([values[-1] * x, 0.5])
        values.insert(1, np.cos(values[i]))
        values.insert(-100, 1.0 + i)
        values.remove(0.5)
    values.sort(key=abs)
    values.reverse()
    return values[0] * values[-1] + sum(values)


def jax_list_methods_in_loop(x, n):
    values = [x, 2.0 * x]
    for i in range(n):
        values.extend([values[-1] * x, 0.5])
        values.insert(1, jnp.cos(values[i]))
        values.insert(-100, 1.0 + i)
        values.remove(0.5)
    values.sort(key=abs)
    values.reverse()
    return values[0] * values[-1] + sum(values)


def sorted_in_branch(w, flip):
    """Rows of an array extended into a list, sorted by their sums, reversed in one branch only."""
    rows = []
    rows.extend(w)
    rows.sort(key=np.sum, reverse=True)
    if flip > 0:
        rows.reverse()
    return np.sum(rows[0] * 3.0 + rows[1])


def helper_builds_list(x):
    values = [x]
    values.insert(0, x * x)
    return values


def list_methods_in_helper(x):
    """A helper builds a list with insert; the caller extends a list of its own with it."""
    mine = [1.0]
    mine.extend(helper_builds_list(x))
    mine.extend(helper_builds_list(mine[1]))
    return mine[-1] * mine[1] + mine[2]


def jax_list_methods_in_helper(x):
    mine = [1.0, x * x, x]
    mine.extend([mine[1] * mine[1], mine[1]])
    return mine[-1] * mine[1] + mine[2]


def dict_merges(x, y):
    """`{**d, "k": v}` (a later key wins), dict(d), dict(k=v), dict(d, k=v), dict of pairs (a key twice)."""
    base = {"a": x, "b": y}
    more = {"z": 1.0, **base, "b": x * y}
    copied = dict(more)
    named = dict(c=x * x, d=y)
    both = dict(base, e=y * 3.0)
    pairs = dict([("p", x), ("p", y), ("q", x * 2.0)])
    total = more["a"] * more["b"] + copied["z"] * copied["b"] + named["c"] + both["e"] * both["a"]
    return total + pairs["p"] * pairs["q"]


def jax_dict_merges(x, y):
    base = {"a": x, "b": y}
    more = {"z": 1.0, **base, "b": x * y}
    copied = dict(more)
    named = dict(c=x * x, d=y)
    both = dict(base, e=y * 3.0)
    pairs = dict([("p", x), ("p", y), ("q", x * 2.0)])
    total = more["a"] * more["b"] + copied["z"] * copied["b"] + named["c"] + both["e"] * both["a"]
    return total + pairs["p"] * pairs["q"]


def update_params(params, scale):
    return {**params, "w": params["w"] * scale}


def dicts_in_loop(w, n):
    """A dict of parameters rebuilt with ** in a loop through a helper, the argument a dict."""
    params = {"w": w, "b": 1.0}
    for i in range(n):
        params = update_params(params, params["b"] + i)
        params = {**params, "b": np.sum(params["w"])}
    return np.sum(params["w"] ** 2) + params["b"]


# --- refused ---------------------------------------------------------------------------------


def dict_of_zip(x):
    table = dict(zip(["a", "b"], [x, x * 2.0], strict=True))
    return table["a"] * table["b"]


def extends_parameter(x, values):
    values.extend([x])
    return values[-1]


def extends_alias(x):
    values = [x]
    other = values
    values.extend([x * 2.0])
    return other[-1]


def sorts_after_passing(x):
    values = [x, 1.0]
    kept = tuple_of(values)
    values.sort()
    return kept[0] * values[0]


def tuple_of(values):
    return (values,)[0]


def shared_list_extended(x):
    """`values += [x]` extends the list in place, as Python does: `alias` sees it."""
    values = [x]
    alias = values
    values += [x * x]
    return sum(alias)


def jax_shared_list_extended(x):
    return x + x * x


def parameter_lists_concatenated(xs, ys):
    return sum(xs + ys) * xs[0]


EXAMPLES = 8
JAX_EXAMPLES = 4

CASES = [
    Case(concatenated_in_loop, (floats(-1.5, 1.5), ints(0, 4)), jax=jax_concatenated_in_loop),
    Case(repeated_both_sides, (floats(-2.0, 2.0), ints(0, 3)), jax=jax_repeated_both_sides),
    Case(tuple_plus_arrays, (arrays(2),), jax=jax_tuple_plus_arrays),
    Case(array_plus_list, (floats(-2.0, 2.0), arrays(2)), argnums=(0, 1), jax=jax_array_plus_list),
    Case(concatenated_by_helper, (floats(-2.0, 2.0),), jax=jax_concatenated_by_helper),
    Case(concatenated_and_discarded, (floats(-2.0, 2.0),), jax=jax_concatenated_and_discarded),
    Case(repeated_in_branch, (floats(-2.0, 2.0), ints(0, 3))),
    Case(list_methods_in_loop, (floats(0.1, 1.5), ints(0, 3)), jax=jax_list_methods_in_loop),
    Case(sorted_in_branch, (arrays((3, 2)), ints(-1, 1))),
    Case(list_methods_in_helper, (floats(-1.5, 1.5),), jax=jax_list_methods_in_helper),
    Case(dict_merges, (floats(-2.0, 2.0), floats(-2.0, 2.0)), argnums=(0, 1), jax=jax_dict_merges),
    Case(dicts_in_loop, (arrays(3), ints(0, 3))),
    Case(shared_list_extended, (floats(-2.0, 2.0),), jax=jax_shared_list_extended),
]

REFUSED = [
    (
        parameter_lists_concatenated,
        ([0.5, 1.0], [2.0]),
        r"container_programs.py:\d+:\d+: an operator combining a differentiable tuple or list",
    ),
    (extends_parameter, (0.5, [1.0]), r"container_programs.py:\d+:\d+: method call values.extend"),
    (extends_alias, (0.5,), r"container_programs.py:\d+:\d+: method call values.extend"),
    (sorts_after_passing, (0.5,), r"container_programs.py:\d+:\d+: method call values.sort"),
    (dict_of_zip, (0.5,), r"container_programs.py:\d+:\d+: dict\(...\) of a zip holding differentiable values"),
]
