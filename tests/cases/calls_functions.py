"""Functions calling user functions: helpers, methods, function values, recursion (tests/test_calls.py)."""

import functools
import math

import numpy as np

from tests.cases import calls_other
from tests.cases.calls_other import softplus

# ---- helpers -------------------------------------------------------------------------------------


def square(v):
    return v * v


def cube(v):
    return square(v) * v


def affine(v, scale=2.0, *, shift=1.0):
    return scale * v + shift


def product(a, b):
    return a * b


def halve_and_count(v):
    return v / 2.0, 1


halve = lambda v: v / 2.0  # noqa: E731


def calls_helper(x, y):
    return square(x) + cube(y) * x


def nested_calls(x):
    return cube(square(x) + 1.0)


def same_argument_twice(x):
    return product(x, x) + product(x, 3.0) * x


def defaults_and_keywords(x, y):
    return affine(x) + affine(y, 3.0, shift=x) + affine(scale=y, v=x)


def keyword_only_receives_the_gradient(x, y):
    return affine(2.0, shift=x * y)


def other_module(x):
    return softplus(x) + calls_other.decay(x, 3)


def tuple_result(x):
    half, count = halve_and_count(x * x)
    return half * count + halve(x)


def result_unused(x):
    y = square(x)
    z = square(y)  # noqa: F841  (the call runs; its result carries no gradient)
    return y * 2.0


def calls_in_loop_and_branches(x, n):
    total = 0.0
    for i in range(n):
        if i % 2 == 0:
            total = total + square(x + i)
        else:
            total = total - affine(total, 0.5, shift=x)
            if total > 10.0:
                break
    return total


def reassigns_through_calls(x, n):
    y = x
    while n > 0:
        y = square(math.sin(y)) + x
        n = n - 1
    return y


def returns_from_a_loop_through_a_call(x, values):
    for v in values:
        if v > 0.0:
            return square(x * v)
    return x


def unbound_across_a_call(x, use):
    if use:
        z = x * 2.0
    w = square(x)
    if use:
        return z * w
    return w


SWAPPABLE = square


def calls_swappable(x):
    return SWAPPABLE(x) + 1.0


def changeable(v):
    return v * 2.0


def tripling(v):
    return v * 3.0


def calls_changeable(x):
    return changeable(x)


def softclip(v):
    return math.tanh(v)


def applies_softclip(x):
    return apply_twice(softclip, x)


# ---- methods and callable objects ------------------------------------------------------------------


class Polynomial:
    def __init__(self, coefficients):
        self.coefficients = coefficients

    def __call__(self, v):
        total = 0.0
        for c in self.coefficients:
            total = total * v + c
        return total

    def evaluate(self, v):
        return self(v)  # a call of a local callable object: dispatched at run time

    def scaled(self, v, factor=2.0):
        return self.evaluate(v) * factor

    @staticmethod
    def static_square(v):
        return v * v

    @classmethod
    def tripled(cls, v):
        return v * 3.0


POLYNOMIAL = Polynomial((0.5, -2.0, 1.0))


def calls_methods(x):
    return POLYNOMIAL.evaluate(x) + Polynomial.evaluate(POLYNOMIAL, x) + POLYNOMIAL.scaled(x, factor=x)


def calls_callable_object(x):
    return POLYNOMIAL(x) * x


def calls_static_and_class_methods(x):
    return Polynomial.static_square(x) + Polynomial.tripled(x) + POLYNOMIAL.static_square(x)


def calls_method_of_argument(x, polynomial):
    return polynomial.scaled(x) + polynomial(x)


SCALED = functools.partial(affine, scale=3.0)


def calls_partial(x):
    return SCALED(x) + SCALED(x, shift=x)


# ---- function values -----------------------------------------------------------------------------


def apply_twice(f, v):
    return f(f(v))


def applies_functions_passed_as_arguments(x):
    return apply_twice(square, x) + apply_twice(math.sin, x) + apply_twice(halve, x) + apply_twice(np.tanh, x)


FUNCTIONS = (square, math.sin, cube, softplus, Polynomial.static_square, POLYNOMIAL)


def applies_functions_from_a_table(x):
    total = 0.0
    for f in FUNCTIONS:
        total = total + f(x)
    return total


def indexes_a_table(x, i):
    return FUNCTIONS[i](x) * FUNCTIONS[i + 1](x)


def apply_keyword(f, v):
    return f(v, shift=v)


def passes_a_keyword_to_a_function_value(x):
    return apply_keyword(affine, x)


def applies_a_builtin_without_rule(x):
    return apply_twice(math.frexp, x)


def applies_a_class(x):
    return apply_twice(SlottedLink, x).value  # a class with __slots__ is not a plain class (runtime/objects.py)


def spread(*values):
    return values[0]


def calls_star_parameters(x):
    return spread(x, x)


def with_match(v):
    match v:
        case 0.0:
            return v
        case _:
            return v * 2.0


def calls_a_function_with_match(x):
    return with_match(x) + 1.0


def calls_for_its_effect(x):
    square(x)
    return x


# ---- recursion -----------------------------------------------------------------------------------


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def tail_sum(x, n, total):
    if n == 0:
        return total
    return tail_sum(x, n - 1, total + math.sin(x * n) / n)


def even_weight(x, n):
    if n == 0:
        return x
    return odd_weight(x * 0.9, n - 1) + 0.1 * x


def odd_weight(x, n):
    if n == 0:
        return -x
    return math.sin(even_weight(x, n - 1)) * x


def fibonacci_like(x, n):
    if n < 2:
        return x
    return fibonacci_like(x, n - 1) * 0.5 + math.sin(fibonacci_like(x, n - 2))


def tuple_tree_value(tree, x):
    """A tree of nested pairs with numbers at the leaves."""
    if isinstance(tree, tuple):
        left = tuple_tree_value(tree[0], x)
        right = tuple_tree_value(tree[1], x)
        return math.tanh(left * x + right)
    return tree * x


def balanced_tree(depth, leaf=0.5):
    if depth == 0:
        return leaf
    return (balanced_tree(depth - 1, leaf + 0.1), balanced_tree(depth - 1, leaf - 0.1))


def left_comb(depth):
    """A tree of `depth` nested pairs leaning left: ((((0.5, 0.3), 0.3), 0.3), ...)."""
    tree = 0.5
    for _ in range(depth):
        tree = (tree, 0.3)
    return tree


class Node:
    def __init__(self, value, left=None, right=None):
        self.value = value
        self.left = left
        self.right = right


def node_sum(node, x):
    if node is None:
        return 0.0
    return math.tanh(node.value * x) + 0.5 * node_sum(node.left, x) + 0.25 * node_sum(node.right, x)


def node_tree(depth, value=0.3):
    if depth == 0:
        return None
    return Node(value, node_tree(depth - 1, value + 0.2), node_tree(depth - 1, value - 0.1))


def node_spine(depth):
    """`depth` nodes, each the left child of the one before."""
    node = None
    for i in range(depth):
        node = Node(0.1 + 0.001 * i, node, None)
    return node


class Link:
    def __init__(self, value, following=None):
        self.value = value
        self.following = following


class SlottedLink:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def chain_value(link, x):
    if link is None:
        return x
    return chain_value(link.following, x * link.value + 0.01 * x * x)


def chain_sum(link, x):
    if link is None:
        return 0.0
    rest = chain_sum(link.following, x)
    return link.value * x + 0.5 * rest


def linked_list(values):
    link = None
    for value in reversed(values):
        link = Link(value, link)
    return link


def tree_with_active_leaves(x):
    """The tree itself is built from the differentiated value."""
    tree = ((x, 2.0), (3.0, (x, x)))
    return tuple_tree_value(tree, 0.5)


# ---- arrays through calls: a recursive tree network (TreeRNN) -------------------------------------


def node_vector(tree, W_left, W_right, b):
    if isinstance(tree, np.ndarray):
        return np.tanh(tree + b)
    left = node_vector(tree[0], W_left, W_right, b)
    right = node_vector(tree[1], W_left, W_right, b)
    return np.tanh(W_left @ left + W_right @ right + b)


def tree_network_loss(W_left, W_right, b, tree):
    h = node_vector(tree, W_left, W_right, b)
    return np.sum(h * h)


def word_tree(depth, width, seed=0):
    rng = np.random.default_rng(seed)

    def build(level):
        if level == 0:
            return rng.normal(size=width)
        return (build(level - 1), build(level - 1))

    return build(depth)


def mlp_layer(h, W, b):
    return np.tanh(W @ h + b)


def two_layers(W1, b1, W2, x):
    h = mlp_layer(x, W1, b1)
    return np.sum(mlp_layer(h, W2, 0.0) ** 2)
