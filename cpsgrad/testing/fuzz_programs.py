"""The fuzzer's programs: the module every drawn function is written after (`HEADER`), and
`FuzzProgram`, a drawn module with its arguments, run with only safe builtins."""

from __future__ import annotations

import builtins

from cpsgrad.testing.programs import Program

ENTRY = "f"

HEADER = '''\
import contextlib
import functools
import math

import numpy as np

G = 0.5
H = np.array([0.25, -0.5, 1.0])


def ident(g):
    return g


def twice(g):
    def wrapped(*args, **kwargs):
        return g(*args, **kwargs) * 2.0
    return wrapped


def helper(u, v=1.5):
    return u * v + math.sin(u)


class Box:
    def __init__(self, value):
        self.value = value

    def scaled(self, k):
        return self.value * k


'''
"""The module every drawn function is written after: names for it to use."""

# builtins a drawn program must not reach: they touch files, the terminal or the process
_UNSAFE_BUILTINS = ("open", "input", "breakpoint", "help", "exit", "quit", "exec", "eval", "compile", "__import__")
_SAFE_BUILTINS = {k: v for k, v in vars(builtins).items() if k not in _UNSAFE_BUILTINS}


class FuzzProgram(Program):
    """A drawn module (HEADER, then `f`) with the arguments to call `f` with."""

    def __init__(self, source: str, arguments: tuple, argnums: tuple[int, ...], origin: str):
        super().__init__(source, arguments, argnums, frozenset({origin}))
        self.origin = origin

    @property
    def function(self):
        function = super().function
        self._module.__builtins__ = _SAFE_BUILTINS
        return function

    @property
    def path(self) -> str:
        self.function  # noqa: B018  (imports the module)
        return self._path
