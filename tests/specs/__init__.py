"""The rule tables' specs, shared by the checkers in tests/test_rules_arrays.py.

`tests/test_rules_arrays.py` holds the checkers and the specs of the first rule families; each
further family (linear algebra, scipy.special, ...) declares its own in a module of this package,
as module-level lists under the same names (`SPECS`, `KINKS`, `ZERO_CASES`), and `gather` adds
them to the checkers' tables. The coverage tests then require every rule in `cpsgrad/rules/numpy/`
and `cpsgrad/rules/scipy/` to have a spec and a symbolic-zero case, wherever it is declared.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

FLOAT = "float"  # an input that is a Python float, not an array
GRID = 2.0**-3  # spacing of the grid inputs that must stay clear of ties and kinks


@dataclass(frozen=True)
class Spec:
    """One operation under test: `function(*inputs, w) == np.sum(op(*inputs) * w)`."""

    name: str
    function: Callable
    shapes: tuple  # one per input: a shape, or FLOAT
    domain: tuple = (-2.0, 2.0)  # (low, high) for every input, or one (low, high) per input
    apart: bool = False  # inputs on a grid, distinct within and across inputs
    dtypes: tuple[str, ...] = ("float64", "float32")

    def domains(self) -> list[tuple[float, float]]:
        if isinstance(self.domain[0], tuple):
            return list(self.domain)
        return [self.domain] * len(self.shapes)


@dataclass(frozen=True)
class Kink:
    """A function and its jax.numpy transcription, at inputs on a kink or a tie."""

    name: str
    function: Callable
    jax_function: Callable
    arguments: tuple
    argnums: tuple[int, ...] = (0,)


S = Spec
M = (3, 4)  # the usual matrix
SPREAD = np.array([[6.0, 0.0, 0.0, 0.0], [0.0, 4.0, 0.0, 0.0], [0.0, 0.0, 2.0, 0.0]])  # singular values 6, 4, 2
P = (0.2, 2.0)  # a positive domain
UNIT = (-0.9, 0.9)


def gather(name: str) -> list:
    """The list `name` of every module in this package, in the modules' alphabetical order."""
    found: list = []
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        found += getattr(importlib.import_module(f"{__name__}.{module.name}"), name, [])
    return found


# ---- the symbolic zero: a result computed but not used (see test_rules_arrays.py) -------------


def unused(op):
    def f(x, flag):
        y = op(x)
        if flag:
            return np.sum(y)
        return np.sum(x)

    return f


def unused_with(op, constant):
    def f(x, flag):
        y = op(x, constant)
        if flag:
            return np.sum(y)
        return np.sum(x)

    return f


def unused_pair(op):
    def f(x, z, flag):
        y = op(x, z)
        if flag:
            return np.sum(y)
        return np.sum(x)

    return f
