"""Scans of a normalized function's core statements that the aliasing analysis (aliasing.py)
starts from: its writes, its user calls handed arrays, its `x op= y` updates."""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import writes
from cpsgrad.transforms.analysis.callee_analysis import assignments


def calls_with_arrays(statements, user_calls: set[int], numbers: set[str]) -> bool:
    """Whether a user call passes a variable that may hold an array (one it could write into)."""
    return any(
        id(statement) in user_calls
        and any(isinstance(a.value, cst.Name) and a.value.value not in numbers for a in value.args)
        for statement, value, _ in assignments(statements)
    )


def has_writes(statements) -> bool:
    return any(writes.is_write(value) for _, value, _ in assignments(statements))


def update_statements(normalized, statements, numbers: set[str]) -> set[int]:
    """The core statements `x = x op y` of a user's `x op= y` where x may be an array."""
    found = set()
    for statement, value, targets in assignments(statements):
        origin = normalized.origins.get(id(statement))
        if (
            isinstance(origin, cst.AugAssign)
            and isinstance(origin.target, cst.Name)
            and isinstance(value, cst.BinaryOperation)
            and targets[0] == origin.target.value  # not the `t = x op y` a rewrite into `updated` left
            and targets[0] not in numbers
        ):
            found.add(id(statement))
    return found
