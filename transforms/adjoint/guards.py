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

from cpsgrad.transforms import naming, syntax
from cpsgrad.transforms.adjoint.frames import Frame
from cpsgrad.transforms.adjoint.output import RUNTIME, ZERO, Lines
from cpsgrad.transforms.adjoint.records import Record
from cpsgrad.transforms.continuations import Block
from cpsgrad.transforms.regions import Guard


class Guards:
    """The Generator's guards (reads `normalized`, `namer`; uses the forward, tails and backward)."""

    def guard(self, tail: Guard, frame: Frame, depth: int, lines: list[str]) -> tuple[dict[str, str], bool]:
        pad = "    " * depth
        before = frame.copy()
        before.versions[tail.error] = tail.error  # bound by the guard on the failed path
        after = frame.copy()
        records: list[Record] = []
        self.origin = (self.normalized.location(tail.origin), "forward")
        if tail.calls:
            self.check_reads(tail.origin.body[0].value, after, pad, lines)
            ok_defined, ok_returns = self.call(tail.then.tail, after, depth, lines, guard=tail)
            ok_lines = lines  # the call's own lines end inside `if error is None:`
        else:
            if not tail.raises:
                lines.append(f"{pad}{tail.error} = None")
            lines.append(f"{pad}try:")
            if tail.raises:
                self.check_reads(tail.origin, after, pad + "    ", lines)
                lines.append(pad + "    " + syntax.code(self.rename(tail.origin, after)).strip())
            else:
                self.forward(tail.origin, after, pad + "    ", lines, records)
            self.origin = (self.normalized.location(tail.origin), "forward")
            lines.append(f"{pad}except BaseException as {tail.caught}:")
            lines.append(f"{pad}    {tail.error} = {tail.caught}")
            if tail.raises:
                return self.block(tail.orelse, before, depth, lines)
            lines.append(f"{pad}if {tail.error} is None:")
            ok_lines = Lines(self)
            ok = Block(tail.then.statements[1:], tail.then.tail)
            ok_defined, ok_returns = self.block(ok, after, depth + 1, ok_lines)
            if ok_returns:
                for record in reversed(records):
                    self.origin = (record.origin, "backward")
                    self.backward(record, ok_defined, pad + "    ", ok_lines)
        failed_lines = Lines(self)
        failed_defined, failed_returns = self.block(tail.orelse, before, depth + 1, failed_lines)
        self.origin = (None, "backward")
        outer = self.visible_adjoints(frame)
        merged: set[str] = set()
        paths = ((ok_returns, ok_defined, ok_lines), (failed_returns, failed_defined, failed_lines))
        for returns, defined, _ in paths:
            if returns:
                merged |= set(defined) & outer
        for returns, defined, path_lines in paths:
            if returns:
                for adjoint in sorted(merged, key=self.adjoint_order):
                    value = defined.get(adjoint, ZERO)
                    if value != adjoint:
                        path_lines.append("    " * (depth + 1) + f"{adjoint} = {value}")
        if ok_lines is not lines:
            lines.extend(ok_lines)
        elif lines[-1].endswith(f"if {tail.error} is None:"):  # a call with no backward of its own
            lines.append("    " * (depth + 1) + "pass")
        lines.append(f"{pad}else:")
        lines.extend(failed_lines)
        return {adjoint: adjoint for adjoint in merged}, ok_returns or failed_returns

    def guarded_call(self, tail: Guard, handed: str, label: str, pad: str, lines: list[str]) -> str:
        """Before a guarded call: its continuation wrapped, and the `try:` around the call line."""
        entered = self.namer.fresh(f"{naming.call_adapter(label)}_entered")
        lines.append(f"{pad}{entered} = {RUNTIME}.entering({handed})")
        lines.append(f"{pad}{tail.error} = None")
        lines.append(f"{pad}try:")
        return entered

    def guarded_call_end(self, tail: Guard, entered: str, pad: str, lines: list[str]) -> str:
        """After the call line: caught only if the callee never entered its continuation; the
        call's own backward (merges) then runs where it did not raise."""
        outer = pad[:-4]
        lines.append(f"{outer}except BaseException as {tail.caught}:")
        lines.append(f"{pad}{tail.error} = {RUNTIME}.caught({tail.caught}, {entered})")
        lines.append(f"{outer}if {tail.error} is None:")
        return pad
