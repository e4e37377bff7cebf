"""Tails: how a block ends. A return hands the result to the continuation `k` and binds the
adjoint that comes back (the shift); a jump calls the next continuation; a branch emits both
blocks and merges their adjoints for the backward they share; a raise just raises. (A call of a
user function is user_calls.py.)"""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import syntax
from cpsgrad.transforms.adjoint.frames import Frame
from cpsgrad.transforms.adjoint.output import ZERO, Lines
from cpsgrad.transforms.cps import Branch, Call, Jump, Raise, Return
from cpsgrad.transforms.regions import Guard


class Tails:
    """The Generator's tails (reads `k`, `out`, `free_adjoints`, `normalized`)."""

    def tail(self, tail, frame: Frame, depth: int, lines: list[str]) -> tuple[dict[str, str], bool]:
        pad = "    " * depth
        # a tail's lines hand values on and bind the adjoints that come back
        self.origin = (
            self.normalized.location(getattr(tail, "statement", None) or getattr(tail, "origin", None)),
            "backward",
        )
        if isinstance(tail, Guard):  # a statement of a try region (guards.py)
            return self.guard(tail, frame, depth, lines)
        if isinstance(tail, Raise):
            self.check_reads(tail.statement, frame, pad, lines)
            lines.append(pad + syntax.code(self.rename(tail.statement, frame)).strip())
            return {}, False
        if isinstance(tail, Return):
            self.check_reads(tail.value, frame, pad, lines)
            value = self.rename(tail.value, frame)
            source = self.active_source(value, frame)
            call = f"{self.k}({syntax.code(value)})"
            if source is None:
                lines.append(f"{pad}{self.out} = {call}[0]")
                return {}, True
            lines.append(f"{pad}{self.out}, {source} = {call}")
            return {source: source}, True
        if isinstance(tail, Jump):
            target = tail.target
            arguments = [syntax.code(self.rename(cst.Name(p), frame, passed=True)) for p in target.parameters]
            results = [self.adjoint(frame.versions.get(p, p)) for p in target.parameters if self.is_active_variable(p)]
            results += [self.adjoint(p) for p in self.free_adjoints[target.name]]
            call = f"{target.name}({', '.join(arguments)})"
            if not results:
                lines.append(f"{pad}{self.out} = {call}[0]")
            else:
                lines.append(f"{pad}{', '.join([self.out, *results])} = {call}")
            return {name: name for name in results}, True
        if isinstance(tail, Call):
            self.check_reads(tail.statement.body[0].value, frame, pad, lines)
            return self.call(tail, frame, depth, lines)
        self.check_reads(tail.test, frame, pad, lines)
        return self.branch(tail, frame, depth, lines)

    def branch(self, branch: Branch, frame: Frame, depth: int, lines: list[str]) -> tuple[dict[str, str], bool]:
        pad = "    " * depth
        lines.append(f"{pad}if {syntax.code(self.rename(branch.test, frame))}:")
        then_lines = Lines(self)
        then_defined, then_returns = self.block(branch.then, frame.copy(), depth + 1, then_lines)
        else_lines = Lines(self)
        else_defined, else_returns = self.block(branch.orelse, frame.copy(), depth + 1, else_lines)
        self.origin = (None, "backward")
        outer = self.visible_adjoints(frame)
        merged: set[str] = set()
        for returns, defined in ((then_returns, then_defined), (else_returns, else_defined)):
            if returns:
                merged |= set(defined) & outer
        for returns, defined, branch_lines in (
            (then_returns, then_defined, then_lines),
            (else_returns, else_defined, else_lines),
        ):
            if returns:
                for adjoint in sorted(merged, key=self.adjoint_order):
                    value = defined.get(adjoint, ZERO)
                    if value != adjoint:
                        branch_lines.append("    " * (depth + 1) + f"{adjoint} = {value}")
        lines.extend(then_lines)
        lines.append(f"{pad}else:")
        lines.extend(else_lines)
        return {adjoint: adjoint for adjoint in merged}, then_returns or else_returns

    def visible_adjoints(self, frame: Frame) -> set[str]:
        visible = {self.adjoint(v) for v in frame.versions.values()}
        return visible | {self.adjoint(p) for p in self.invariants}

    def adjoint_order(self, adjoint: str) -> tuple:
        return (len(adjoint), adjoint)
