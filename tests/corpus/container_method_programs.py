"""Programs that change lists and dicts with their methods (issue 15): `append` and `pop` in place
(a stack, a queue, a recurrence, appends in branches and in a user function), dicts as
accumulators, `update`, `setdefault`, `pop`, `del`, `clear`, `|=` with differentiable values,
nested lists of arrays. The jax transcriptions build the same lists and dicts functionally.
`REFUSED` lists the changes cpsgrad refuses (a parameter's, a shared container's), each located.
"""

import jax.numpy as jnp
import numpy as np

from cpsgrad.testing.strategies import arrays, floats, ints
from tests.corpus import Case


def appends_in_branches(x, n):
    """Appends in both branches of an if in a loop, reading the last element each time."""
    xs = [x]
    for i in range(n):
        if i % 2 == 0:
            xs.append(xs[-1] * x + 0.5)
        else:
            xs.append(np.sin(xs[-1]) - xs[0])
    return sum(xs) * xs[-1]


def jax_appends_in_branches(x, n):
    xs = [x]
    for i in range(n):
        if i % 2 == 0:
            xs = xs + [xs[-1] * x + 0.5]
        else:
            xs = xs + [jnp.sin(xs[-1]) - xs[0]]
    return sum(xs) * xs[-1]


def stack_evaluation(x, n):
    """A stack algorithm: pop in a while loop, pushes computed from what was popped."""
    stack = [x, 2.0 * x]
    total = 0.0
    steps = 0
    while stack and steps < n:
        top = stack.pop()
        total = total + top * top
        if steps % 2 == 0:
            stack.append(top * 0.5)
            stack.append(top + x)
        steps = steps + 1
    while stack:
        total = total + stack.pop()
    return total


def jax_stack_evaluation(x, n):
    stack = [x, 2.0 * x]
    total = 0.0
    steps = 0
    while stack and steps < n:
        top = stack[-1]
        stack = stack[:-1]
        total = total + top * top
        if steps % 2 == 0:
            stack = stack + [top * 0.5, top + x]
        steps = steps + 1
    for value in reversed(stack):
        total = total + value
    return total


def queue_from_front(x, n):
    """A queue: pop(0) from the front, append at the back."""
    queue = [x, x * x]
    total = 0.0
    for _ in range(n):
        front = queue.pop(0)
        total = total + front
        queue.append(front * 0.7 + x)
    return total + queue[0] * queue[-1]


def jax_queue_from_front(x, n):
    queue = [x, x * x]
    total = 0.0
    for _ in range(n):
        front = queue[0]
        queue = queue[1:]
        total = total + front
        queue = queue + [front * 0.7 + x]
    return total + queue[0] * queue[-1]


def _powers(x, n):
    out = []
    for i in range(n):
        out.append(x ** (i + 1))
    return out


def appends_in_helper(x, n):
    """A user function appends to a list it owns and returns it."""
    values = _powers(x, n + 1)
    more = _powers(values[-1], 2)
    return sum(values) + more[0] * more[1]


def _jax_powers(x, n):
    return [x ** (i + 1) for i in range(n)]


def jax_appends_in_helper(x, n):
    values = _jax_powers(x, n + 1)
    more = _jax_powers(values[-1], 2)
    return sum(values) + more[0] * more[1]


def dict_accumulator(x, n):
    """`d[k] = d.get(k, 0) + x`: a dict of sums, keys computed in the loop."""
    sums = {}
    for i in range(n):
        key = "even" if i % 2 == 0 else "odd"
        sums[key] = sums.get(key, 0.0) + x * (i + 1)
    return sums.get("even", 0.0) * sums.get("odd", 1.0)


def jax_dict_accumulator(x, n):
    sums = {}
    for i in range(n):
        key = "even" if i % 2 == 0 else "odd"
        sums = {**sums, key: sums.get(key, 0.0) + x * (i + 1)}
    return sums.get("even", 0.0) * sums.get("odd", 1.0)


def dict_methods(x, y):
    """update (a mapping, pairs, keywords), |=, setdefault, pop with and without default, del, clear."""
    d = {"a": x, "b": 2.0}
    d.update({"b": y * x, "c": y}, e=x * x)
    d.update([("a", y)])  # overwrites x's value: x gets nothing from d["a"] any more
    d |= {"f": x}
    v = d.setdefault("g", x * 3.0)
    w = d.setdefault("a", 100.0)
    p = d.pop("c")
    q = d.pop("missing", x * 7.0)
    del d["e"]
    r = d["b"] + d["f"] * v
    d.clear()
    d["h"] = w
    return v * w + p * q + r + d["h"]


def jax_dict_methods(x, y):
    d = {"a": x, "b": 2.0}
    d = {**d, "b": y * x, "c": y, "e": x * x}
    d = {**d, "a": y}
    d = {**d, "f": x}
    d = {**d, "g": x * 3.0}
    v = d["g"]
    w = d["a"]
    p = d["c"]
    d = {k: val for k, val in d.items() if k != "c"}
    q = x * 7.0
    d = {k: val for k, val in d.items() if k != "e"}
    r = d["b"] + d["f"] * v
    d = {"h": w}
    return v * w + p * q + r + d["h"]


def list_deletions(x, n):
    """del xs[i], del xs[i:j], xs.clear() on lists the function builds, then more appends."""
    xs = [x * (i + 1) for i in range(n + 4)]
    del xs[1]
    del xs[-2:]
    head = xs[0] * xs[-1]
    xs.clear()
    xs.append(head)
    xs.append(x)
    return sum(xs) * head


def jax_list_deletions(x, n):
    xs = [x * (i + 1) for i in range(n + 4)]
    xs = xs[:1] + xs[2:]
    xs = xs[:-2]
    head = xs[0] * xs[-1]
    xs = [head, x]
    return sum(xs) * head


def nested_lists_of_arrays(w, n):
    """A list of rows (lists of arrays) built by appends, stacked and read back."""
    grid = []
    for i in range(n + 1):
        row = [np.tanh(w * (i + 1)), w * w]
        grid.append(row)
    flat = []
    for row in grid:
        flat.append(row[0] * row[1])
    last = grid.pop()
    return np.sum(np.stack(flat)) + np.sum(last[0])


def jax_nested_lists_of_arrays(w, n):
    grid = [[jnp.tanh(w * (i + 1)), w * w] for i in range(n + 1)]
    flat = [row[0] * row[1] for row in grid]
    last = grid[-1]
    return jnp.sum(jnp.stack(flat)) + jnp.sum(last[0])


def setdefault_groups(x, n):
    """setdefault of a list per key, appended to through a name for it (an alias: refused below)
    is avoided: the groups are summed where they are built."""
    totals = {}
    for i in range(n + 1):
        key = i % 3
        totals.setdefault(key, 0.0)
        totals[key] = totals[key] + x ** (key + 1)
    return sum(totals.values())


def jax_setdefault_groups(x, n):
    totals = {}
    for i in range(n + 1):
        key = i % 3
        totals = {**totals, key: totals.get(key, 0.0) + x ** (key + 1)}
    return sum(totals.values())


def written_into_after_stored(x):
    """An array stored in a dict by `d[k] = arr`, then written into by its own name and read back
    through the dict. Once a silent wrong gradient (the write `d[k] = v` related nothing: the read
    got the array's gradient as it was); now the dict holds `arr` (aliasing.write records it for a
    container) and the read of `e` after the write is refused."""
    arr = np.zeros(2)
    d = {}
    d["a"] = arr
    e = d["a"]
    arr[0] = x
    return np.sum(e * x)


# ---- refused -------------------------------------------------------------------------------------


def updates_parameter(x, d):
    d.update({"a": x})
    return d["a"] * x


def pops_shared(x):
    d = {"a": x, "b": 2.0 * x}
    e = d
    d.pop("a")
    return e["b"] * x


def deletes_from_parameter(x, xs):
    xs = xs
    del xs[0]
    return x * len(xs)


def pops_while_iterating(x):
    d = {"a": x, "b": 2.0 * x}
    total = 0.0
    for key in d:
        total = total + d[key]
        if key == "b":
            d.pop("a")
            break
    return total


EXAMPLES = 8
JAX_EXAMPLES = 4

CASES = [
    Case(appends_in_branches, (floats(-1.0, 1.0), ints(0, 5)), jax=jax_appends_in_branches),
    Case(stack_evaluation, (floats(-1.5, 1.5), ints(0, 6)), jax=jax_stack_evaluation),
    Case(queue_from_front, (floats(-1.5, 1.5), ints(0, 5)), jax=jax_queue_from_front),
    Case(appends_in_helper, (floats(0.2, 1.2), ints(0, 3)), jax=jax_appends_in_helper),
    Case(dict_accumulator, (floats(-2.0, 2.0), ints(0, 5)), jax=jax_dict_accumulator),
    Case(dict_methods, (floats(-2.0, 2.0), floats(-2.0, 2.0)), argnums=(0, 1), jax=jax_dict_methods),
    Case(list_deletions, (floats(-2.0, 2.0), ints(0, 3)), jax=jax_list_deletions),
    Case(nested_lists_of_arrays, (arrays(3), ints(0, 3)), jax=jax_nested_lists_of_arrays),
    Case(setdefault_groups, (floats(-1.5, 1.5), ints(0, 5)), jax=jax_setdefault_groups),
]

REFUSED = [
    (updates_parameter, (0.5, {"a": 1.0}), r"container_method_programs.py:\d+:\d+: method call d.update"),
    (pops_shared, (0.5,), r"container_method_programs.py:\d+:\d+: method call d.pop"),
    (deletes_from_parameter, (0.5, [1.0, 2.0]), r"container_method_programs.py:\d+:\d+: del of an element of xs"),
    (pops_while_iterating, (0.5,), r"container_method_programs.py:\d+:\d+: method call d.pop"),
    (written_into_after_stored, (1.3,), r"container_method_programs.py:\d+:\d+: read of e after a write"),
]
