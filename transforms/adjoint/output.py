"""The generated program's lines, each with where it came from."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:
    from cpsgrad.transforms.adjoint.generator import Generator

RUNTIME = "cpsgrad_runtime"  # the name generated code calls the run-time support by
ZERO = "0.0"  # the symbolic zero: an adjoint nothing contributed to


class Lines(list):
    """The generated lines, each remembering where it came from (`origins`, aligned): the
    SourceLocation of the user's statement (or None) and the pass, "forward" or "backward",
    that the generator was emitting (`Generator.origin`). Only `cpsgrad.debug_nans` reads it."""

    def __init__(self, generator: Generator, lines=()):
        super().__init__(lines)
        self.generator = generator
        self.origins: list[tuple] = [generator.origin] * len(self)

    def append(self, line: str) -> None:
        super().append(line)
        self.origins.append(self.generator.origin)

    def extend(self, lines) -> None:
        lines = lines if isinstance(lines, Lines) else list(lines)
        super().extend(lines)
        self.origins.extend(lines.origins if isinstance(lines, Lines) else [self.generator.origin] * len(lines))

    def insert(self, index: int, line: str) -> None:
        super().insert(index, line)
        self.origins.insert(index, self.generator.origin)


def target_list(names: list[str]) -> str:
    """Unpacking targets: `a, b`, and `a,` for one name (`a = t` would bind the whole tuple)."""
    return ", ".join(names) + ("," if len(names) == 1 else "")


def runtime_call(helper: str, *arguments: cst.BaseExpression) -> cst.Call:
    """`cpsgrad_runtime.<helper>(arguments)`, as a node."""
    return cst.Call(cst.Attribute(cst.Name(RUNTIME), cst.Name(helper)), [cst.Arg(a) for a in arguments])
