"""Deep loops and recursions, run in subprocesses by tests/test_depth.py: each must end in a
result or DepthLimitError, never in a crash of the interpreter."""

import functools
import sys

import numpy as np

import cpsgrad


def loop(x, n):
    s = 0.0
    for _ in range(n):
        s = s + x * 1e-6
    return s


def plain(x, n):
    if n == 0:
        return x
    return plain(x, n - 1) * 1.0


def keywords(x, n):
    if n == 0:
        return x
    return keywords(x, n=n - 1) * 1.0


def default_argument(x, n, s=1.0):
    if n == 0:
        return x
    return default_argument(x, n - 1) * s


def arrays(x, n):
    if n == 0:
        return np.sum(x)
    return arrays(x * 1.0, n - 1)


class Model:
    def __init__(self, scale):
        self.scale = scale

    def run(self, x, n):
        if n == 0:
            return x
        return self.run(x, n - 1) * self.scale

    def __call__(self, x, n):
        if n == 0:
            return x
        return self(x, n - 1) * self.scale


def method(x, n):
    return Model(1.0).run(x, n)


def called_object(x, n):
    return Model(1.0)(x, n)


def _step(scale, x, n):
    if n == 0:
        return x
    return STEP(x, n - 1) * scale


STEP = functools.partial(_step, 1.0)


def partial(x, n):
    return STEP(x, n)


def closure(x, n):
    def inner(v, m):
        if m == 0:
            return v
        return inner(v, m - 1) * 1.0 + x * 0.0

    return inner(x, n)


def mutual(x, n):
    if n == 0:
        return x
    return _other(x, n - 1) * 1.0


def _other(x, n):
    return mutual(x * 1.0, n)


RECURSIONS = [plain, keywords, default_argument, arrays, method, called_object, partial, closure, mutual]


def main(names: list[str], depth: int, debug_nans: bool = False) -> None:
    """Print one line per function: its name, then its gradient or DepthLimitError."""
    for name in names:
        function = globals()[name]
        x = np.ones(2) if function is arrays else 0.5
        try:
            result = cpsgrad.grad(function, debug_nans=debug_nans)(x, depth)
            print(name, "result", float(np.sum(result)), flush=True)
        except cpsgrad.DepthLimitError:
            print(name, "DepthLimitError", flush=True)


if __name__ == "__main__":
    main(sys.argv[3:], int(sys.argv[1]), sys.argv[2] == "debug")
