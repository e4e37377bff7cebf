"""Functions for tests/test_closures.py: nested defs, lambdas, partials and late binding."""

import functools
import math

import numpy as np


def captured_lambda(x, w):
    scale = lambda v: v * w + x  # noqa: E731
    return scale(x) * scale(2.0)


def nested_def_with_default(x, w):
    def g(y, s=w):
        return y * s
    return g(x) + g(x, 2.0)


def keyword_only_default(x, w):
    def g(y, *, s=w * w):
        return y * s
    return g(x) + g(x, s=x)


def make_power(a):
    return lambda y: a * y * y


def returned_closure(x, w):
    h = make_power(w)
    return h(x) + h(1.0)


def apply_twice(f, v):
    return f(f(v))


def user_higher_order(x, w):
    return apply_twice(lambda v: math.sin(v * w), x)


def closures_in_containers(x, w):
    table = {"lin": lambda v: v * w, "sq": lambda v: v * v + x}
    fs = [table["lin"], table["sq"], lambda v: math.exp(v * 0.1) * w]
    s = 0.0
    for f in fs:
        s = s + f(x)
    return s + table["sq"](w)


def recursive_nested(x, n):
    def power(m):
        if m <= 0:
            return 1.0
        return x * power(m - 1)
    return power(n)


def closure_of_closure(x, w):
    def outer(a):
        def inner(b):
            return a * b + w
        return inner(a * x)
    return outer(x) + outer(w)


def partial_of_function(x, w):
    p = functools.partial(_mul_add, x, c=w)
    return p(w) + p(2.0, c=1.0)


def _mul_add(a, b, c=0.0):
    return a * b + c


def partial_of_lambda(x, w):
    g = lambda a, b: a * b * w  # noqa: E731
    p = functools.partial(g, x)
    return p(3.0) + p(x)


def partial_of_a_partial(a, b, x, c):
    """Layers Python would merge: each keeps its own adjoint; an outer keyword and the call's
    own keyword override an inner one."""
    inner = functools.partial(_terms, b, w=c)
    outer = functools.partial(inner, x, z=c * 2.0)
    return outer(a) + outer(a, w=1.0)


def _terms(u, v, t, w=0.0, z=0.0):
    return u + v * t + w * t + z * u


def closure_over_array(x, w):
    layer = lambda v: np.tanh(w @ v)  # noqa: E731
    return float(np.sum(layer(layer(x))))


def loop_immediately_called(x, w):
    s = 0.0
    for i in range(3):
        def term(v):
            return v * w * i  # noqa: B023
        s = s + term(x)
    return s


def loop_default_binding(x, w):
    fs = []
    for i in range(3):
        fs.append(lambda y, i=i: y * i * w)
    return fs[1](x) + fs[2](x)


def used_by_plain_python(x, w):
    values = sorted([x, w, x * w], key=lambda v: -v)
    return values[0] * 2.0 + values[1]


class Scaled:
    """A plain object (not a dataclass): a closure capturing it reads its attributes."""

    def __init__(self, w):
        self.w = w

    def loss(self, x):
        g = lambda v: self.w * v * x  # noqa: E731
        return g(x) + g(2.0)


def captures_an_object_and_a_builtin(x, model, act):
    g = lambda v: act(v) * model.w * x  # noqa: E731
    return g(x)


# ---- refused: Python would read the variable when the closure runs ------------------------------


def late_in_loop(x):
    fs = []
    for i in range(3):
        fs.append(lambda y: y * i)  # noqa: B023
    return fs[0](x)


def late_reassigned(x):
    a = x
    g = lambda y: y * a  # noqa: E731
    a = 2.0 * x
    return g(2.0)


def late_in_comprehension(x):
    return [lambda y: y * i for i in range(3)][0](x)  # noqa: B023


def mutual_nested(x, n):
    def even(m):
        return x if m == 0 else odd(m - 1) * x
    def odd(m):
        return 1.0 if m == 0 else even(m - 1) * x
    return even(n)


def writes_nonlocal(x):
    def bump():
        nonlocal x
        x = x + 1.0
    bump()
    return x
