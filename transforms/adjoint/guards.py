"""Guards (transforms/regions.py): a statement of a try region, run inside a Python `try` of its
own. If it did not raise, the rest of the region's block follows (its forward, tail and backward)
and then the statement's own backward; if it raised, the jump to the handler, with the versions
from before the statement. Both paths then share the backward of what ran before it, merged as a
branch's are (tails.py).

A call of a user function is guarded until the callee enters the continuation it was handed:
the continuation is wrapped (`cpsgrad_runtime.entering`), and an exception out of the call
site is caught only if the wrapper was never entered (`cpsgrad_runtime.caught`); once it was,
the exception came from the rest of the program (or from the callee's backward) and goes on."""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import naming
from cpsgrad.transforms.adjoint.frames import Frame
from cpsgrad.transforms.adjoint.output import (
    Lines,
    assign,
    handler,
    if_else,
    kept,
    runtime_call,
    try_statement,
)
from cpsgrad.transforms.adjoint.records import Record
from cpsgrad.transforms.continuations import Block
from cpsgrad.transforms.regions import Guard


class Guards:
    """The Generator's guards (reads `normalized`, `namer`; uses the forward, tails and backward)."""

    def guard(self, tail: Guard, frame: Frame, lines: Lines) -> tuple[dict[str, str], bool]:
        before = frame.copy()
        before.versions[tail.error] = tail.error  # bound by the guard on the failed path
        after = frame.copy()
        records: list[Record] = []
        location = (self.normalized.location(tail.origin), "forward")
        self.origin = location
        ok_lines = Lines(self)  # what runs where the statement did not raise
        if tail.calls:  # the call's try, then what follows it into ok_lines (user_calls.py)
            self.check_reads(tail.origin.body[0].value, after, lines)
            ok_defined, ok_returns = self.call(tail.then.tail, after, lines, guard=tail, rest=ok_lines)
        else:
            if not tail.raises:
                lines.append(assign(tail.error, cst.Name("None")))
            body = Lines(self)
            if tail.raises:
                self.check_reads(tail.origin, after, body)
                body.append(kept(self.rename(tail.origin, after)))
            else:
                self.forward(tail.origin, after, body, records)
            self.origin = location
            caught = Lines(self, [assign(tail.error, cst.Name(tail.caught))])
            lines.append(try_statement(body, handler(tail.caught, caught)), location)
            if tail.raises:
                return self.block(tail.orelse, before, lines)
            ok = Block(tail.then.statements[1:], tail.then.tail)
            ok_defined, ok_returns = self.block(ok, after, ok_lines)
            if ok_returns:
                for record in reversed(records):
                    self.origin = (record.origin, "backward")
                    self.backward(record, ok_defined, ok_lines)
        failed_lines = Lines(self)
        failed_defined, failed_returns = self.block(tail.orelse, before, failed_lines)
        self.origin = (None, "backward")
        outer = self.visible_adjoints(frame)
        merged: set[str] = set()
        paths = ((ok_returns, ok_defined, ok_lines), (failed_returns, failed_defined, failed_lines))
        for returns, defined, _ in paths:
            if returns:
                merged |= set(defined) & outer
        self.merge(merged, paths)
        test = cst.Comparison(cst.Name(tail.error), [cst.ComparisonTarget(cst.Is(), cst.Name("None"))])
        lines.append(if_else(test, ok_lines, failed_lines, self.origin), location)
        return {adjoint: adjoint for adjoint in merged}, ok_returns or failed_returns

    def guarded_call(self, tail: Guard, handed: str, label: str, lines: Lines) -> str:
        """Before a guarded call: its continuation wrapped (`entering`), the error cleared."""
        entered = self.namer.fresh(naming.call_entered(label))
        lines.append(assign(entered, runtime_call("entering", cst.Name(handed))))
        lines.append(assign(tail.error, cst.Name("None")))
        return entered

    def guarded_call_try(self, tail: Guard, entered: str, call: Lines) -> cst.Try:
        """The call in a try: caught only if the callee never entered its continuation; the
        call's own backward (merges) then runs where it did not raise."""
        caught = runtime_call("caught", cst.Name(tail.caught), cst.Name(entered))
        return try_statement(call, handler(tail.caught, Lines(self, [assign(tail.error, caught)])))
