"""Tails: how a block ends. A return hands the result to the continuation `k` and binds the
adjoint that comes back (the shift); a jump calls the next continuation; a branch emits both
blocks and merges their adjoints for the backward they share; a raise just raises. (A call of a
user function is user_calls.py.)"""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms.adjoint.frames import Frame
from cpsgrad.transforms.adjoint.output import ZERO, Lines, assign, call, if_else, kept, value_of
from cpsgrad.transforms.cps import Branch, Call, Jump, Raise, Return
from cpsgrad.transforms.regions import Guard


class Tails:
    """The Generator's tails (reads `k`, `out`, `free_adjoints`, `normalized`)."""

    def tail(self, tail, frame: Frame, lines: Lines) -> tuple[dict[str, str], bool]:
        # a tail's lines hand values on and bind the adjoints that come back
        self.origin = (
            self.normalized.location(getattr(tail, "statement", None) or getattr(tail, "origin", None)),
            "backward",
        )
        if isinstance(tail, Guard):  # a statement of a try region (guards.py)
            return self.guard(tail, frame, lines)
        if isinstance(tail, Raise):
            self.check_reads(tail.statement, frame, lines)
            lines.append(kept(self.rename(tail.statement, frame)))
            return {}, False
        if isinstance(tail, Return):
            self.check_reads(tail.value, frame, lines)
            value = self.rename(tail.value, frame)
            source = self.active_source(value, frame)
            handed = call(self.k, value)
            if source is None:
                lines.append(assign(self.out, first(handed)))
                return {}, True
            lines.append(assign([self.out, source], handed))
            return {source: source}, True
        if isinstance(tail, Jump):
            target = tail.target
            arguments = [self.rename(cst.Name(p), frame, passed=True) for p in target.parameters]
            results = [self.adjoint(frame.versions.get(p, p)) for p in target.parameters if self.is_active_variable(p)]
            results += [self.adjoint(p) for p in self.free_adjoints[target.name]]
            jump = call(target.name, *arguments)
            if not results:
                lines.append(assign(self.out, first(jump)))
            else:
                lines.append(assign([self.out, *results], jump))
            return {name: name for name in results}, True
        if isinstance(tail, Call):
            self.check_reads(tail.statement.body[0].value, frame, lines)
            return self.call(tail, frame, lines)
        self.check_reads(tail.test, frame, lines)
        return self.branch(tail, frame, lines)

    def branch(self, branch: Branch, frame: Frame, lines: Lines) -> tuple[dict[str, str], bool]:
        test = self.rename(branch.test, frame)
        origin = self.origin
        then_lines = Lines(self)
        then_defined, then_returns = self.block(branch.then, frame.copy(), then_lines)
        else_lines = Lines(self)
        else_defined, else_returns = self.block(branch.orelse, frame.copy(), else_lines)
        self.origin = (None, "backward")
        outer = self.visible_adjoints(frame)
        merged: set[str] = set()
        for returns, defined in ((then_returns, then_defined), (else_returns, else_defined)):
            if returns:
                merged |= set(defined) & outer
        self.merge(merged, ((then_returns, then_defined, then_lines), (else_returns, else_defined, else_lines)))
        lines.append(if_else(test, then_lines, else_lines, self.origin), origin)
        return {adjoint: adjoint for adjoint in merged}, then_returns or else_returns

    def merge(self, merged: set[str], paths) -> None:
        """At the end of each returning path (returns, defined, lines), the merged adjoints that
        path holds elsewhere or not at all (the symbolic zero) assigned."""
        for returns, defined, path_lines in paths:
            if returns:
                for adjoint in sorted(merged, key=self.adjoint_order):
                    value = defined.get(adjoint, ZERO)
                    if value != adjoint:
                        path_lines.append(assign(adjoint, value_of(value)))

    def visible_adjoints(self, frame: Frame) -> set[str]:
        visible = {self.adjoint(v) for v in frame.versions.values()}
        return visible | {self.adjoint(p) for p in self.invariants}

    def adjoint_order(self, adjoint: str) -> tuple:
        return (len(adjoint), adjoint)


def first(value: cst.BaseExpression) -> cst.Subscript:
    """`value[0]`."""
    return cst.Subscript(value, [cst.SubscriptElement(cst.Index(cst.Integer("0")))])
