"""The continuation program's parts (cps.py builds them, adjoint/ writes them out): blocks of
straight-line core statements, each ending in one tail, and the continuations they make up."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import libcst as cst


@dataclass
class Jump:
    """A tail call of a continuation, passing the current values of its parameters."""

    target: Continuation


@dataclass
class Return:
    value: cst.BaseExpression
    origin: cst.CSTNode


@dataclass
class Raise:
    statement: cst.SimpleStatementLine


@dataclass
class Branch:
    test: cst.BaseExpression
    then: Block
    orelse: Block
    origin: cst.CSTNode


@dataclass
class Call:
    """A call of a user function (`target = callee(arguments)`) handed a continuation: the rest
    of the block (`continuation`, its first parameter `target`), or None for the function's `k`."""

    statement: cst.SimpleStatementLine
    target: str
    continuation: Continuation | None
    label: str


@dataclass
class Block:
    """Straight-line core statements (and inline ifs), then one tail."""

    statements: list
    tail: Jump | Return | Raise | Branch | Call


class ContinuationKind(enum.Enum):
    """What a continuation is: the join after a branch, a loop's head or exit, the rest after a
    call of a user function, or the function itself."""

    JOIN = "join"
    LOOP = "loop"
    EXIT = "exit"
    CALL = "call"
    FUNCTION = "function"


@dataclass(eq=False)
class Continuation:
    name: str
    parameters: list[str]
    body: Block | None = None
    kind: ContinuationKind = ContinuationKind.JOIN


__all__ = ["Block", "Branch", "Call", "Continuation", "ContinuationKind", "Jump", "Raise", "Return"]
