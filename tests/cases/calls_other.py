"""A second module of helpers that tests/cases/calls_functions.py calls (tests/test_calls.py)."""

import math

RATE = 0.5


def softplus(v):
    return math.log(1.0 + math.exp(v))


def decay(v, steps):
    for _ in range(steps):
        v = v * RATE + math.sin(v)
    return v
