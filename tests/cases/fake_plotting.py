"""A stand-in for a plotting library (matplotlib may not be importable in tests): plain Python
functions with * parameters, which cpsgrad could not transform, recording what they were given.
Being user code, they are declared `cpsgrad.observer`s: they only look at what they are given
(`fill` does not, which the read-only view handed to it shows)."""

import cpsgrad

CALLS = []


@cpsgrad.observer
def plot(*values, **style):
    CALLS.append((values, style))
    return ["line"]


@cpsgrad.observer
def fill(array, value):
    array[...] = value
