"""Functions whose programs depend on what their arguments hold (tests/test_kinds.py)."""

import math

import numpy as np

OFFSET = 1.0


def scale_and_square(x, w):
    y = w * x + 2.0
    return np.sum(y * y) if isinstance(y, np.ndarray) else y * y


def mixed(x, n):
    total = 0.0
    for i in range(n):
        total = total + math.sin(x * i) * 2.0
    return total


def with_a_global(x, n):
    total = 0.0
    for i in range(n):
        total = total + math.sin(x * i) * OFFSET
    return total


def through_a_list(x, values):
    s = 0.0
    for v in values:
        s = s + v * x
    return s


def becomes_an_array(x):
    x = np.array([x, 2.0 * x])
    return x @ x


def appended(x, values):
    values.append(1.0)
    return values[0] * x


def in_place(x):
    y = x * 1.0
    y += x
    return np.sum(y)


def in_place_shared(x):
    y = x * 1.0
    z = y
    y += x
    return np.sum(z * y)


def in_place_shared_list(x):
    y = [x * 1.0]
    z = y
    y += [x]
    return sum(z) * y[0]


def in_place_number(x):
    y = x * 1.0
    y += x
    return y
