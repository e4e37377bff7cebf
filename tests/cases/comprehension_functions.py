"""Programs with comprehensions, generator expressions and the builtin higher-order functions
(`map`, `filter`, `functools.reduce`, `sorted`, `max`/`min` with `key=`), for
tests/test_comprehensions.py. `CASES` at the end pairs each program with hypothesis strategies
for its arguments and the argnums to differentiate; the helpers they call are not cases.
Comparisons on differentiable values stay away from their thresholds by the strategies'
`exclude_near`, so few checks are skipped.
"""

import functools
import math
from functools import reduce

import numpy as np

from cpsgrad.testing.strategies import arrays, floats, positive_floats
from tests.corpus import Case

ROWS = 4
FEATURES = 3

# --- helpers (module-level functions passed to map, filter, reduce, sorted, max, min) -------


def square(v):
    return v * v


def cube(v):
    return v * v * v


def is_positive(v):
    return v > 0.0


def multiply(u, v):
    return u * v


def add_scaled(total, v):
    return total + 0.5 * v


def negated(v):
    return -v


# --- comprehensions --------------------------------------------------------------------------


def shadowing_keeps_outer_names(x):
    """A comprehension's variable is its own: `i` is still 5 after it, and `x`, read inside and
    bound by a second comprehension, is the parameter again afterwards."""
    i = 5
    ys = [x * i for i in range(3)]
    zs = [x * 2.0 for x in ys]
    return sum(ys) * i + sum(zs) + x


def several_clauses(a, b, c):
    """A later clause's iterable reads an earlier clause's variable; conditions on indices."""
    xs = (a, b, c)
    products = [xs[i] * xs[j] for i in range(3) for j in range(i + 1) if i != j]
    return sum(products)


def conditions_on_differentiable_values(a, b, c):
    """Several `if`s, each on differentiable values: the branch taken decides what is summed."""
    xs = [a, b, c, a * b]
    kept = [v * v for v in xs if v > 0.0 if v < 2.0]
    return sum(kept) + len(kept)


def nested_comprehensions(a, b, c):
    """A comprehension as another's element, its iterable reading the outer variable."""
    xs = (a, b, c)
    matrix = [[u * v for v in xs if v != u] for u in xs]
    rows = [sum(row) for row in matrix]
    return sum(r * r for r in rows)


def nested_rebinding_the_same_name(a, b):
    """`[... for x in x]`: the inner iterable is the outer `x`, the inner element its own `x`."""
    x = 10.0
    groups = ((a, b), (b,), (a, a))
    return sum([sum([x * 2.0 for x in x]) for x in groups]) * x


def over_zip_and_enumerate(a, b, c, d):
    """Tuple targets from `zip`, `enumerate(xs, start)` and `enumerate(zip(...))`."""
    xs, ys = (a, b), (c, d)
    dot = sum(u * v for u, v in zip(xs, ys, strict=True))
    weighted = sum(i * v for i, v in enumerate((a, b, c), 1))
    nested = [i * u - v for i, (u, v) in enumerate(zip(xs, ys, strict=True))]
    return dot + weighted + nested[1] * nested[0]


def over_array_rows(X, w):
    """A generator over a matrix's rows (numpy arrays) inside `sum`."""
    return sum(np.tanh(row @ w) ** 2 for row in X)


def over_a_list_built_in_a_loop(x, y):
    """A comprehension over a list the function appended to."""
    parts = []
    for k in range(3):
        parts.append(x * k + y)
    halves = [p / 2.0 for p in parts]
    return halves[0] * halves[2] + max(halves)


def powers(x):
    return sum(x**i for i in range(5))


def dict_comprehension(a, b, x):
    """`{k: v * x for k, v in params.items()}` over a dict display, and a dict built from `zip`
    whose repeated key keeps the later value."""
    params = {"w": a, "b": b}
    scaled = {k: v * x for k, v in params.items()}
    repeated = {k: v for k, v in zip(("p", "q", "p"), (a, b, a * b), strict=True)}
    return scaled["w"] * scaled["b"] + repeated["p"] + 2.0 * repeated["q"]


def scale_parameters(params, x):
    """A dict comprehension over a parameter dict of arrays (tests/test_comprehensions.py
    differentiates `params` itself)."""
    scaled = {name: value * x for name, value in params.items() if name != "skip"}
    return sum(np.sum(v * v) for v in scaled.values())


def set_of_ints(a, b):
    """A set comprehension of ints (no gradient through it), deciding a factor."""
    classes = {int(v) % 3 for v in (a, b, a + b)}
    return a * len(classes) + b


def generators_in_reductions(a, b, c):
    """Generators eagerly evaluated into lists for sum, max, min, list, tuple, sorted, any, all."""
    xs = (a, b, c)
    total = sum(v * v for v in xs) + max(v * b for v in xs) - min(v - c for v in xs)
    listed = list(2.0 * v for v in xs)
    tupled = tuple(v + 1.0 for v in xs)
    ordered = sorted(v * a for v in xs)
    if any(v > 1.0 for v in xs) and not all(v > -1.0 for v in xs):
        total = total * 2.0
    return total + listed[0] * tupled[1] + ordered[0]


# --- map, filter, reduce -------------------------------------------------------------------


def map_module_functions(a, b, c):
    """`map` with module-level functions, a math primitive, and two sequences."""
    xs = [a, b, c]
    squares = list(map(square, xs))
    sines = sum(map(math.sin, xs))
    products = list(map(multiply, xs, (b, c)))
    return sum(squares) + sines + products[0] + products[1]


def map_function_value(a, b):
    """The function mapped is a local value chosen at run time."""
    f = square if a > 0.0 else cube
    return sum(map(f, (a, b, a * b)))


def filter_functions(a, b, c):
    """`filter(f, xs)` with a predicate on differentiable values, and `filter(None, xs)`."""
    kept = list(filter(is_positive, [a, b, c]))
    truthy = list(filter(None, (a, 0.0, b)))
    return sum(kept) * 2.0 + sum(truthy) + len(kept)


def reduce_functions(a, b, c):
    """`reduce` without an initial value, `functools.reduce` with one, over one element, and
    over `range`."""
    product = reduce(multiply, (a, b, c))
    folded = functools.reduce(add_scaled, [a, b, c], 1.0)
    single = reduce(multiply, [b])
    counted = reduce(add_scaled, range(3), a)
    return product + folded * single + counted


def reduce_empty(xs):
    return reduce(multiply, xs)


def reduce_empty_with_initial(x, xs):
    return reduce(multiply, xs, x)


# --- sorted, max and min with key --------------------------------------------------------------


def sorted_with_key_and_reverse(a, b, c, d):
    xs = [a, b, c, d]
    ascending = sorted(xs)
    by_key = sorted(xs, key=negated)
    descending = sorted(xs, reverse=True)
    by_square = sorted(xs, key=square, reverse=True)
    return (
        ascending[0] + 2.0 * by_key[0] + 3.0 * descending[1] + 5.0 * ascending[-1] + 7.0 * by_square[0] * by_square[3]
    )


def extremum_with_key(a, b, c):
    xs = (a, b, c)
    return max(xs, key=negated) * 2.0 + min(xs, key=abs) * 3.0 + max(a, b, key=square) + min(b, c, a, key=square)


def list_of_builtin_iterators(a, b, c):
    """`list(reversed(xs))`, `list(zip(xs, ys))`, `list(enumerate(xs))` as values."""
    xs, ys = [a, b, c], (c, a)
    backwards = list(reversed(xs))
    pairs = list(zip(xs, ys, strict=False))
    numbered = list(enumerate(xs))
    return backwards[0] * 7.0 + pairs[0][1] * pairs[1][0] + numbered[2][1] * numbered[2][0]


def first_of_a_generator(a, b, c):
    """`next()` of a generator expression: the first element that passes, found lazily."""
    xs = [a, b, c]
    first = next(v * a for v in xs if v > 0.0) if max(xs) > 0.0 else 0.5 * a
    pair = next((u * v for u in xs for v in xs if u * v > 1.0), a - b)
    return first * b + pair * c


# --- not differentiable ----------------------------------------------------------------------


def set_of_floats(a, b):
    """A set of differentiable values has no rule: a NoRuleError naming `set`."""
    values = {v * 2.0 for v in (a, b)}
    return sum(values)


def no_rule_inside_a_comprehension(a, b):
    mantissas = [math.frexp(v)[0] for v in (a, b)]
    return sum(mantissas)


_SCALAR = floats(-2.5, 2.5, exclude_near=(-1.0, 0.0, 1.0, 2.0), margin=0.01)
_DISTINCT = floats(-2.5, 2.5, exclude_near=(0.0,), margin=0.01)

CASES = [
    Case(shadowing_keeps_outer_names, (_SCALAR,)),
    Case(several_clauses, (_SCALAR,) * 3, (0, 1, 2)),
    Case(conditions_on_differentiable_values, (_SCALAR,) * 3, (0, 1, 2)),
    Case(nested_comprehensions, (_SCALAR,) * 3, (0, 1, 2)),
    Case(nested_rebinding_the_same_name, (_SCALAR,) * 2, (0, 1)),
    Case(over_zip_and_enumerate, (_SCALAR,) * 4, (0, 1, 2, 3)),
    Case(over_array_rows, (arrays((ROWS, FEATURES)), arrays(FEATURES)), (0, 1)),
    Case(over_a_list_built_in_a_loop, (_SCALAR,) * 2, (0, 1)),
    Case(powers, (_SCALAR,)),
    Case(dict_comprehension, (_SCALAR,) * 3, (0, 1, 2)),
    Case(set_of_ints, (positive_floats(0.1, 5.0),) * 2, (0, 1)),
    Case(generators_in_reductions, (_SCALAR,) * 3, (0, 1, 2)),
    Case(map_module_functions, (_SCALAR,) * 3, (0, 1, 2)),
    Case(map_function_value, (_SCALAR,) * 2, (0, 1)),
    Case(filter_functions, (_SCALAR,) * 3, (0, 1, 2)),
    Case(reduce_functions, (_SCALAR,) * 3, (0, 1, 2)),
    Case(sorted_with_key_and_reverse, (_DISTINCT,) * 4, (0, 1, 2, 3)),
    Case(extremum_with_key, (_DISTINCT,) * 3, (0, 1, 2)),
    Case(list_of_builtin_iterators, (_SCALAR,) * 3, (0, 1, 2)),
    Case(first_of_a_generator, (_SCALAR,) * 3, (0, 1, 2)),
]
