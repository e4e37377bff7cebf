"""Functions the API tests differentiate."""

import math

SCALE = 3.0


def polynomial(x, y):
    return x * x * y + 3.0 * y


def scaled(x):
    return SCALE * x


def returns_tuple(x):
    return (x, x)


def returns_none(x):
    x * 2


def loop(x, n):
    a = x
    for _ in range(n):
        a = 0.99 * a + 0.01 * a * a
    return a


def helper(x):
    return x * 2


def calls_helper(x):
    return helper(x) + 1.0


def calls_helper_inactively(x, n):
    return x * helper(n)


def calls_without_rule(x):
    return math.frexp(x)[0]


def softclip(x):
    return math.tanh(x)


def uses_softclip(x):
    return softclip(x) * 2.0


def keyword_only(x, *, power=2):
    return x**power


def with_default(x, scale=2.0):
    return x * scale


def sine(x):
    return math.sin(x) * x


def make_closure(factor):
    def closed(x):
        return factor[0] * x

    return closed


def unbound_on_one_path(x, use):
    if use:
        z = x * 2.0
    w = x + 1.0
    if use:
        return z * w
    return w


class Model:
    def __init__(self, scale):
        self.scale = scale

    def energy(self, x):
        return self.scale * x * x

    @staticmethod
    def static_energy(x):
        return 0.5 * x * x


def two_statements(x: float):
    y = math.sin(x) * x
    return y + x
