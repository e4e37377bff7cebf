"""A stand-in for a plotting library (matplotlib may not be importable in tests): plain Python
functions with * parameters, which cpsgrad could not transform, recording what they were given."""

CALLS = []


def plot(*values, **style):
    CALLS.append((values, style))
    return ["line"]


def fill(array, value):
    array[...] = value
