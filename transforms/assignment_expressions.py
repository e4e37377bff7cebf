"""Assignment expressions (`name := value`), lowered during normalize.

`(y := f(x)) > 0` becomes `y = f(x)` followed by the operation on `y`, where Python evaluates
the walrus: normalize flattens operands left to right, so the assignment statement lands exactly
where Python binds the name (a loop's test is normalized at the head of its body, so `while (n
:= n - 1) > 0` rebinds `n` on every iteration; a comprehension's condition runs inside the loop
it becomes, and binds the *enclosing* function's `y`, as Python's comprehensions do).

What makes this more than a statement: an operand read earlier in the same expression may name
what a later walrus rebinds (`y + (y := 2)`, `(y := 1) + (y := 2)`, `f(f := g)`). Python read
that operand before the walrus ran; normalize reads an atom where the operation uses it, after
the later operands' statements. So within a user statement holding a walrus, every read of a
name some walrus there rebinds is copied into a temporary where Python reads it (`stale`, called
by normalize's `atom` and for a callee) while a walrus on that name is still to come (the reads
inside the value of the last one excepted: they are used before it binds).

Refused: a walrus inside an f-string (normalize keeps f-strings whole, so the assignment would
be hidden from every later pass).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import libcst as cst

from cpsgrad.transforms import syntax

if TYPE_CHECKING:
    from cpsgrad.transforms.normalize import _Normalizer


def named(normalizer: _Normalizer, node: cst.NamedExpr, out: list) -> cst.BaseExpression:
    """`target := value`: `target = value` into `out`; the atom of the expression's value."""
    target = node.target
    if not isinstance(target, cst.Name):  # the grammar allows only a name; be explicit anyway
        normalizer.reject(node, "assignment expression (:=)", "assign to a plain name")
    state = _state(normalizer)
    key, _ = _statement(normalizer)
    state.inside.append(target.value)
    value = normalizer.simple(node.value, out)
    state.inside.pop()
    normalizer.emit(out, syntax.assign(target.value, value), node)
    normalizer.assigned.add(target.value)  # bound from here on: a later read needs no unbound check
    emitted = state.emitted.setdefault(key, {})
    emitted[target.value] = emitted.get(target.value, 0) + 1
    return cst.Name(target.value)


@dataclasses.dataclass
class _State:
    """What this module keeps on a normalizer (as its attribute `walrus`)."""

    counts: dict = dataclasses.field(default_factory=dict)  # id(user statement) -> {target: its walruses}
    emitted: dict = dataclasses.field(default_factory=dict)  # id(user statement) -> {target: normalized so far}
    inside: list = dataclasses.field(default_factory=list)  # the targets of the walruses whose value is normalized


def _state(normalizer: _Normalizer) -> _State:
    return vars(normalizer).setdefault("walrus", _State())


def stale(normalizer: _Normalizer, value: cst.BaseExpression) -> bool:
    """Whether the atom `value` is a name that a walrus of the statement being normalized may
    rebind after this read, before the read is used (so it must be copied where Python reads it):
    some walrus on it is still to come, other than the one whose value holds this read."""
    if not isinstance(value, cst.Name):
        return False
    key, counts = _statement(normalizer)
    state = _state(normalizer)
    remaining = counts.get(value.value, 0) - state.emitted.get(key, {}).get(value.value, 0)
    return remaining > 1 or remaining == 1 and value.value not in state.inside


def _statement(normalizer: _Normalizer) -> tuple[int, dict[str, int]]:
    """The innermost user statement being normalized (its id) and how many walruses bind each
    name in it, not counting the blocks of a compound statement (their statements are their own);
    the whole function when no statement is being normalized."""
    statement = normalizer.statements[-1] if normalizer.statements else None
    cache = _state(normalizer).counts
    key = id(statement)
    counts = cache.get(key)
    if counts is None:
        counts = cache[key] = {}
        finder = _Walruses(counts, prune=statement is not None)
        (statement or normalizer.source.definition).visit(finder)
    return key, counts


class _Walruses(cst.CSTVisitor):
    def __init__(self, counts: dict, prune: bool):
        self.counts = counts
        self.prune = prune

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if isinstance(node.target, cst.Name):
            self.counts[node.target.value] = self.counts.get(node.target.value, 0) + 1

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
        return not self.prune

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> bool:
        return not self.prune


class FStringWalrus(cst.CSTVisitor):
    """Finds an assignment expression inside an f-string (refused by the fence)."""

    def __init__(self):
        self.found: cst.NamedExpr | None = None

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if self.found is None:
            self.found = node
