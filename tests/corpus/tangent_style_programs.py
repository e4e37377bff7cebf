"""Programs in the forms of Tangent's public test corpus (google/tangent, tests/functions.py),
written here anew: none of Tangent's code is copied, and Tangent's file is not needed (the runner
benchmarks/peers/tangent_corpus.py runs the file itself, where it is at hand).

The forms: a parameter rebound (to a call's result, in both branches of an if, by `a op= b`),
three-address code and its nested form, if/elif chains whose conditions compute, serial and
nested branches and loops (a loop in a branch, a branch in a loop, `range(n + 1)`), a list
display mixing constants and values summed by numpy, subscripts of arrays and lists, a `for`
over an array's elements, the numpy functions one at a time, helper functions called in
branches and loops and through one another, parameters that are tuples and dicts (nested),
a tuple packed and indexed by an int, a `while` whose condition is an `abs`, slices with steps
and `np.newaxis`, arrays filled row by row (`h[t + 1] = ...`), a rebinding that only moves a
value (`b = a; b = a * a`), a power of a negated base in the other branch; and the forms a
previous run of the runner found wrong: `d | m` and `d |= m` of dicts (a zero gradient), the bit
operators of a user class (a zero gradient, now refused). Writes into the arguments themselves
(`x[0] = ...` on the caller's array, `x += y` twice) are checked in tests/test_writes.py, since
finite differences need the arguments unchanged.
"""

import jax.numpy as jnp
import numpy as np
from hypothesis import strategies as st

from cpsgrad.testing.strategies import arrays, floats, ints
from tests.corpus import Case

SCALE = 1.5


# -- straight-line code --------------------------------------------------------------------------


def rebinds_to_a_reduction(x):
    """The parameter rebound to a reduction of itself, then to a product of that."""
    x = np.sum(x * SCALE)
    x = x * x
    return x


def jax_rebinds_to_a_reduction(x):
    x = jnp.sum(x * SCALE)
    return x * x


def sum_of_an_array_made_from_it(x):
    return np.sum(np.array(x) * 2.0)


def three_address(a, b, c):
    """One operation a line, each result named once."""
    p = a * b
    q = p - c
    r = q / 2.0
    return r


def jax_three_address(a, b, c):
    return (a * b - c) / 2.0


def rebound_twice(a, b, c):
    u = b * c
    u = u + a
    u = u * u
    return u


def with_itself(a):
    """An operand on both sides: each binary operator with the same value twice."""
    return a * a + a / a - (a - a) + (a + a) * 0.25


def constants_on_either_side(a):
    return 2.5 - a + a / 4.0 + 4.0 / a - a * 1.5


def named_like_an_adjoint(a):
    """Names ending in `d` or `_d` as the user wrote them (the generated names must not clash)."""
    da = a * a
    a_d = da + a
    return a_d * da


def moves_then_recomputes(a):
    """`b = a` then `b` rebound: the move must not alias what follows."""
    b = a
    b = a * a
    c = b * b
    return c * b


# -- branches --------------------------------------------------------------------------------------


def rebound_in_both_branches(a):
    if a > 0.5:
        a = a * 2.0
    else:
        a = a * -3.0
    return a


def jax_rebound_in_both_branches(a):
    return jnp.where(a > 0.5, a * 2.0, a * -3.0)


def nested_conditions(a):
    if a > -1.0:
        if a < 1.0:
            a = a * a * a
    else:
        a = 5.0 * a
    return a


def computed_conditions(a):
    """Conditions that compute (`a * a / 2 > 1`, `a < b - a * b`), an elif chain with a nested if."""
    if a * a / 2.0 > 1.0:
        b = 2.0
    else:
        b = 5.0
    a = a * b
    if a < b - a * b:
        a = a * a
    elif a > b + 2.0 * a:
        if a / 3.0 < 0:
            a = a / b
        else:
            a = a * b
    else:
        a = -a
    return a


def serial_branches(a):
    if a > 0:
        a = a * a
    a = a + a
    if a < 0:
        a = 2.0 * a
    return a


def compares_two(a, b):
    if a > b:
        a = a * b
    else:
        a = a * a
    return a


def three_way(a):
    if a > 0.2:
        a = a * 4.0
    elif -0.2 > a:
        a = a * 0.5
    else:
        a = 3.0 * a
    return a


def power_of_a_negated_base(a, b):
    """`(-a) ** b` in the other branch, so the base is positive in both."""
    if a >= 0:
        a = a**b
    else:
        a = (-a) ** b
    return a


def square_root_of_magnitude(a):
    if a >= 0:
        r = np.sqrt(a)
    else:
        r = np.sqrt(-a)
    return r


# -- loops -----------------------------------------------------------------------------------------


def loops_in_sequence(a, n):
    for _ in range(n):
        a = a * 0.9 + a * a * 0.1
    a = 1.5 * a
    for _ in range(n + 1):
        a = a * 1.1
    return a



def branch_then_loop(a, n):
    if a > 0:
        a = a * a
    a = 0.5 * a
    for _ in range(n):
        a = a * a
    return a


def loop_then_branch(a, n):
    for _ in range(n):
        a = a * a
    a = 0.5 * a
    if a > 0:
        a = a * 3.0
    return a


def power_by_a_loop(a):
    result = 1
    for _ in range(4):
        result = result * a
    return result


def power_by_a_loop_from_a(a):
    result = a
    for _ in range(4 - 1):
        result = result * a
    return result


def squares_repeatedly(a, n):
    for _ in range(n):
        a = a * a
    return a



def branch_in_a_loop(a):
    for _ in range(3):
        if a < 4.0:
            a = a * a
    return a


def loop_in_a_branch(a):
    if a < 4.0:
        for _ in range(3):
            a = a * a
    return a


def nested_loops(a):
    for _ in range(2):
        for _ in range(2):
            a = a * a * 0.5
    return a


def cubes_in_a_loop(a):
    for _ in range(2):
        a = a * a * a
    return a


def halves_while_large(a):
    """A `while` whose condition is an `abs` of what the body changes."""
    while np.abs(a) > 0.3:
        a = a * 0.5
    return a


def augmented_number(a):
    y = a * a
    y *= y
    y -= a
    return y


# -- numpy functions -------------------------------------------------------------------------------


def exp_of_exp(a):
    return np.exp(np.exp(a) * 0.5)


def trigonometry(a):
    return np.sin(a) * np.cos(a) + np.tan(a * 0.3)


def hyperbolic(a):
    return np.cosh(a) - np.sinh(a) * np.tanh(a)


def inverse_trigonometry(a):
    return np.arcsin(a) + np.arccos(a) * np.arctan(a)


def mean_of_products(x):
    return np.mean(x * x) + np.multiply(np.sum(x), 3.0)


def at_least_dims(x):
    return np.sum(np.atleast_1d(x) * 2.0) + np.sum(np.atleast_2d(x)) + np.sum(np.atleast_3d(x) ** 2)


def determinant(sqm):
    return np.linalg.det(sqm)


def logistic_loss(inputs, labels, W, b):
    hidden = np.dot(inputs, W) + b
    prediction = 0.5 * (np.tanh(hidden) + 1)
    likelihood = prediction * labels + (1 - prediction) * (1 - labels)
    return -np.sum(np.log(likelihood))


def jax_logistic_loss(inputs, labels, W, b):
    hidden = jnp.dot(inputs, W) + b
    prediction = 0.5 * (jnp.tanh(hidden) + 1)
    likelihood = prediction * labels + (1 - prediction) * (1 - labels)
    return -jnp.sum(jnp.log(likelihood))


def bilinear_layer(x, h, U, W, b):
    y = np.dot(x, W)
    y = y + np.dot(h, U)
    y = y + b
    y = np.tanh(y)
    return np.sum(y)


def jax_bilinear_layer(x, h, U, W, b):
    return jnp.sum(jnp.tanh(jnp.dot(x, W) + jnp.dot(h, U) + b))


# -- subscripts, displays, arrays filled in place ------------------------------------------------


def display_with_constants(a):
    """A list display of constants and a value, summed by numpy."""
    items = [2, a * a, -1]
    return np.sum(items)


def display_of_subscripts(x):
    items = [1, x[0] * x[1] * x[2], 3]
    return np.sum(items)


def product_of_subscripts(x):
    first = x[0]
    second = x[1]
    return first * second


def subscript_of_a_list(a):
    values = [2.0, a, 4.0]
    return values[0] * values[1]


def accumulates_over_elements(x):
    """A `for` over an array's elements."""
    total = 0.0
    for value in x:
        total += value * value
    return total


def jax_accumulates_over_elements(x):
    return jnp.sum(x * x)


def written_into_a_copy(x):
    """`y[0] = ...` into a power of x, then a product with it."""
    y = x**2.0
    y[0] = y[1] * y[2]
    return np.sum(x * y)


def copied_element_by_element(x):
    y = np.zeros_like(x)
    for i in range(len(x)):
        y[i] = x[i] * 2.0
    return np.sum(y * y)


def rows_from_elements(x):
    """Each row of a matrix written from one element (broadcast along the row)."""
    h = np.zeros((len(x), 3))
    for t in range(len(h)):
        h[t] = x[t]
    return np.sum(h * np.arange(3.0))


def recurrent_rows(inputs, W):
    """`h[t + 1] = f(h[t])`: each row from the previous one."""
    h = np.zeros((4, 3))
    for t in range(3):
        h[t + 1] = np.dot(inputs[t], W) + h[t] * 0.5
    return np.sum(np.tanh(h[1:]))


def jax_recurrent_rows(inputs, W):
    h = jnp.zeros((4, 3))
    for t in range(3):
        h = h.at[t + 1].set(jnp.dot(inputs[t], W) + h[t] * 0.5)
    return jnp.sum(jnp.tanh(h[1:]))


def tail_slice(x):
    return np.sum(x[1:] * x[:-1])


def stepped_slice_with_new_axis(x):
    return np.sum(x[::2, np.newaxis] * np.ones((1, 2)))


# -- calls, tuples and dicts -----------------------------------------------------------------------


def _times(a, b):
    return a * b


def _plus(a, b):
    return a + b


def composed_helpers(a, b, c):
    return _plus(_times(a, b), c)


def jax_composed_helpers(a, b, c):
    return a * b + c


def helper_in_branches(a, b):
    if a > b:
        out = _times(a, b)
    else:
        out = _times(b, b)
    return out


def helper_in_a_loop(a, n):
    for _ in range(n):
        a = _times(a, a)
    return a


def _through(a, b):
    return composed_helpers(a, b, 1.0)


def helper_of_a_helper(a, b):
    return _through(a, b) * a


def unpacks_a_tuple(abc):
    a, b, c = abc
    return a * b + c


def reads_a_dict(values):
    return values["a"] * values["b"] + values["c"]


def jax_reads_a_dict(values):
    return values["a"] * values["b"] + values["c"]


def builds_a_dict_for_a_helper(abc):
    a, b, c = abc
    return reads_a_dict(dict(a=a, b=b, c=c))


def packs_and_picks(a, b, c, i):
    packed = a, b, c
    return packed[i]


def first_of_a_tuple(abc):
    a, b, c = abc
    return a


def nested_dict_product(p):
    return p["outer"]["left"] * p["outer"]["right"]


def jax_nested_dict_product(p):
    return p["outer"]["left"] * p["outer"]["right"]


def merged_dicts(a, b):
    """`d | m`: a merge; a key of both is the right one's (it was a zero gradient)."""
    d = {"x": a, "y": b}
    m = {"y": b * a, "z": a + 1.0}
    e = d | m
    return e["x"] * e["y"] + e["z"]


def jax_merged_dicts(a, b):
    return a * (b * a) + (a + 1.0)


def merged_into(a, b):
    """`d |= m` of a dict the function built."""
    d = {"x": a}
    d |= {"y": b * 2.0}
    return d["x"] * d["y"]


def jax_merged_into(a, b):
    return a * b * 2.0


def merges_a_dict_argument(values, b):
    both = values | {"b": b}
    return both["a"] * both["b"] + both["c"]


def jax_merges_a_dict_argument(values, b):
    return values["a"] * b + values["c"]


def merges_in_a_loop(a, b):
    """`d |= m` in a loop, each pass reading what the last wrote (it was a zero gradient)."""
    d = {"x": a}
    for _ in range(3):
        d |= {"x": d["x"] * b}
    return d["x"]


def jax_merges_in_a_loop(a, b):
    return a * b**3


def merge_kept_past_a_write(a, b):
    """The merge is a new dict: a later write into `d` does not reach it."""
    d = {"x": a}
    m = d | {"y": b}
    d["x"] = b
    return m["x"] * d["x"] + m["y"]


def jax_merge_kept_past_a_write(a, b):
    return a * b + b


def merges_into_a_shared_dict(a, b):
    """`d |= m` changes the dict `e` also names, in place, as Python does: `e` sees the merge."""
    d = {"x": a}
    e = d
    d |= {"y": b * a}
    return e["y"] * d["x"]


def jax_merges_into_a_shared_dict(a, b):
    return b * a * a


def extends_a_shared_list(a, b):
    """`xs += ys` and `xs *= 2` on a list `ys` also names: both see each change."""
    xs = [a]
    ys = xs
    xs += [b]
    xs *= 2
    return ys[3] * xs[0] + sum(ys)


def jax_extends_a_shared_list(a, b):
    return b * a + 2.0 * (a + b)


def bit_operators_of_integers(x, n):
    """`|`, `&`, `^`, `<<`, `>>`, `~` of integers and of masks: constants beside a gradient."""
    k = (n | 1) ^ (n & 2)
    shifted = (k << 1) >> 1
    mask = (x > 0) | (x < -1.0)
    return np.sum(np.where(mask & ~(x > 2.5), x * x, x)) * shifted


def jax_bit_operators_of_integers(x, n):
    k = (n | 1) ^ (n & 2)
    shifted = (k << 1) >> 1
    mask = (x > 0) | (x < -1.0)
    return jnp.sum(jnp.where(mask & ~(x > 2.5), x * x, x)) * shifted


# -- refused: the operator of a user class runs as plain code ------------------------------------


class Interval:
    """A user class whose `|` and `&` compute new values from its attributes."""

    def __init__(self, low, high):
        self.low = low
        self.high = high

    def __or__(self, other):
        return Interval(min(self.low, other.low), max(self.high, other.high))

    def __and__(self, other):
        return Interval(max(self.low, other.low), min(self.high, other.high))


def width_of_a_union(a, b):
    return (Interval(a, a + 1.0) | Interval(b, b * 3.0)).high


def width_of_an_intersection(a, b):
    both = Interval(a, 2.0) & Interval(0.0, b)
    return both.high - both.low


EXAMPLES = 6
JAX_EXAMPLES = 4

_SCALAR = floats(-2.0, 2.0)
_AWAY_FROM_ZERO = floats(-2.0, 2.0, exclude_near=(0.0,), margin=0.05)
_DICT = st.fixed_dictionaries({"a": _SCALAR, "b": _SCALAR, "c": _SCALAR})

CASES = [
    Case(rebinds_to_a_reduction, (arrays(4),), jax=jax_rebinds_to_a_reduction),
    Case(sum_of_an_array_made_from_it, (arrays(3),)),
    Case(three_address, (_SCALAR, _SCALAR, _SCALAR), argnums=(0, 1, 2), jax=jax_three_address),
    Case(rebound_twice, (_SCALAR, _SCALAR, _SCALAR), argnums=(0, 1, 2)),
    Case(with_itself, (_AWAY_FROM_ZERO,)),
    Case(constants_on_either_side, (_AWAY_FROM_ZERO,)),
    Case(named_like_an_adjoint, (_SCALAR,)),
    Case(moves_then_recomputes, (_SCALAR,)),
    Case(rebound_in_both_branches, (floats(-2.0, 2.0, exclude_near=(0.5,)),), jax=jax_rebound_in_both_branches),
    Case(nested_conditions, (floats(-2.0, 2.0, exclude_near=(-1.0, 1.0)),)),
    Case(computed_conditions, (floats(-2.0, 2.0),)),
    Case(serial_branches, (_AWAY_FROM_ZERO,)),
    Case(compares_two, (_SCALAR, _SCALAR), argnums=(0, 1)),
    Case(three_way, (floats(-2.0, 2.0, exclude_near=(-0.2, 0.2)),)),
    Case(power_of_a_negated_base, (_AWAY_FROM_ZERO, floats(1.0, 3.0)), argnums=(0, 1)),
    Case(square_root_of_magnitude, (_AWAY_FROM_ZERO,)),
    Case(loops_in_sequence, (floats(-1.0, 1.0), ints(0, 3))),
    Case(branch_then_loop, (_AWAY_FROM_ZERO, ints(0, 3))),
    Case(loop_then_branch, (_AWAY_FROM_ZERO, ints(0, 3))),
    Case(power_by_a_loop, (_SCALAR,)),
    Case(power_by_a_loop_from_a, (_SCALAR,)),
    Case(squares_repeatedly, (floats(-1.5, 1.5), ints(0, 3))),
    Case(branch_in_a_loop, (floats(-1.5, 1.5),)),
    Case(loop_in_a_branch, (floats(-1.5, 1.5),)),
    Case(nested_loops, (floats(-1.5, 1.5),)),
    Case(cubes_in_a_loop, (floats(-1.2, 1.2),)),
    Case(halves_while_large, (floats(-3.0, 3.0),)),
    Case(augmented_number, (_SCALAR,)),
    Case(exp_of_exp, (floats(-1.0, 1.0),)),
    Case(trigonometry, (_SCALAR,)),
    Case(hyperbolic, (_SCALAR,)),
    Case(inverse_trigonometry, (floats(-0.9, 0.9),)),
    Case(mean_of_products, (arrays(5),)),
    Case(at_least_dims, (arrays(3),)),
    Case(determinant, (arrays((3, 3)),)),
    Case(
        logistic_loss,
        (arrays(3, min_value=0.0, max_value=1.0), st.just(np.array([0.0, 1.0, 0.0, 0.0, 0.0])),
         arrays((3, 5)), arrays(5)),
        argnums=(0, 2, 3),
        jax=jax_logistic_loss,
    ),
    Case(
        bilinear_layer,
        (arrays((1, 3)), arrays((1, 3)), arrays((3, 3)), arrays((3, 3)), arrays((1, 3))),
        argnums=(0, 1, 2, 3, 4),
        jax=jax_bilinear_layer,
    ),
    Case(display_with_constants, (_SCALAR,)),
    Case(display_of_subscripts, (arrays(3),)),
    Case(product_of_subscripts, (arrays(3),)),
    Case(subscript_of_a_list, (_SCALAR,)),
    Case(accumulates_over_elements, (arrays(4),), jax=jax_accumulates_over_elements),
    Case(written_into_a_copy, (arrays(3),)),
    Case(copied_element_by_element, (arrays(4),)),
    Case(rows_from_elements, (arrays(3),)),
    Case(recurrent_rows, (arrays((3, 2)), arrays((2, 3))), argnums=(0, 1), jax=jax_recurrent_rows),
    Case(tail_slice, (arrays(4),)),
    Case(stepped_slice_with_new_axis, (arrays(5),)),
    Case(composed_helpers, (_SCALAR, _SCALAR, _SCALAR), argnums=(0, 1, 2), jax=jax_composed_helpers),
    Case(helper_in_branches, (_SCALAR, _SCALAR), argnums=(0, 1)),
    Case(helper_in_a_loop, (floats(-1.5, 1.5), ints(0, 3))),
    Case(helper_of_a_helper, (_SCALAR, _SCALAR), argnums=(0, 1)),
    Case(unpacks_a_tuple, (st.tuples(_SCALAR, _SCALAR, _SCALAR),)),
    Case(reads_a_dict, (_DICT,), jax=jax_reads_a_dict),
    Case(builds_a_dict_for_a_helper, (st.tuples(_SCALAR, _SCALAR, _SCALAR),)),
    Case(packs_and_picks, (_SCALAR, _SCALAR, _SCALAR, ints(0, 2)), argnums=(0, 1, 2)),
    Case(first_of_a_tuple, (st.tuples(_SCALAR, _SCALAR, _SCALAR),)),
    Case(
        nested_dict_product,
        (st.fixed_dictionaries({"outer": st.fixed_dictionaries({"left": _SCALAR, "right": _SCALAR})}),),
        jax=jax_nested_dict_product,
    ),
    Case(merged_dicts, (_SCALAR, _SCALAR), argnums=(0, 1), jax=jax_merged_dicts),
    Case(merged_into, (_SCALAR, _SCALAR), argnums=(0, 1), jax=jax_merged_into),
    Case(merges_a_dict_argument, (_DICT, _SCALAR), argnums=(0, 1), jax=jax_merges_a_dict_argument),
    Case(merges_in_a_loop, (_SCALAR, _SCALAR), argnums=(0, 1), jax=jax_merges_in_a_loop),
    Case(merge_kept_past_a_write, (_SCALAR, _SCALAR), argnums=(0, 1), jax=jax_merge_kept_past_a_write),
    Case(merges_into_a_shared_dict, (_SCALAR, _SCALAR), argnums=(0, 1), jax=jax_merges_into_a_shared_dict),
    Case(extends_a_shared_list, (_SCALAR, _SCALAR), argnums=(0, 1), jax=jax_extends_a_shared_list),
    Case(
        bit_operators_of_integers,
        (arrays(4, exclude_near=(-1.0, 0.0, 2.5)), ints(0, 6)),
        jax=jax_bit_operators_of_integers,
    ),
]

REFUSED = [
    (width_of_a_union, (0.5, 1.5),
     r"operator \| on operands of type Interval and Interval .* ran __or__ as plain code"),
    (width_of_an_intersection, (0.5, 1.5), r"operator & on operands of type Interval and Interval"),
]
