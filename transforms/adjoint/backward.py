"""The backward of each record (records.py) in the Python tier: the contributions of the output's
adjoint to the operands' adjoints, through `accumulate`; a rule's through rule_inlining.py."""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import syntax
from cpsgrad.transforms.adjoint import attributes as attribute_writes
from cpsgrad.transforms.adjoint import list_changes
from cpsgrad.transforms.adjoint.output import RUNTIME, ZERO, runtime_call
from cpsgrad.transforms.adjoint.records import (
    AttributeWrite,
    Copy,
    DictDisplay,
    Display,
    Field,
    Index,
    Logsumexp,
    Record,
    RuleCall,
    Softmax,
    Unpack,
    Write,
    index_node,
)


class Backward:
    """The Generator's backward statements."""

    def backward(self, record: Record, defined: dict[str, str], pad: str, lines: list[str]) -> None:
        """Emit `record`'s backward, where its output's adjoint is not the symbolic zero."""
        if isinstance(record, list_changes.ListChange):
            list_changes.backward(self, record, defined, pad, lines)
            return
        list_changes.settle(self, record, defined, pad, lines)  # a changed list's adjoint as others take it
        if isinstance(record, Unpack):
            self.unpack_backward(record, defined, pad, lines)
            return
        if isinstance(record, Write):
            self.write_backward(record, defined, pad, lines)
            return
        if isinstance(record, AttributeWrite):  # obj.w = v (adjoint/attributes.py)
            return attribute_writes.backward(self, record, defined, pad, lines)
        output = defined.get(self.adjoint(record.target))
        if output is None:
            return
        if isinstance(record, RuleCall):
            self.inline_rule(record, output, defined, pad, lines)
        else:
            _WRITERS[type(record)](self, record, output, defined, pad, lines)

    def unpack_backward(self, record: Unpack, defined: dict[str, str], pad: str, lines: list[str]) -> None:
        adjoints = [self.adjoint(v) for v in record.target]
        if not any(a in defined for a in adjoints):
            return
        source = record.source(record.value)
        if source is not None:
            parts = ", ".join(defined.get(a, ZERO) for a in adjoints)
            self.accumulate(source, f"{RUNTIME}.unpacked(({parts},))", defined, pad, lines)

    def write_backward(self, record: Write, defined: dict[str, str], pad: str, lines: list[str]) -> None:
        """Restore what the write overwrote; the written value's adjoint is the target's there
        (read first), and the target's before the write is the one after with that part dropped."""
        target = cst.Name(record.target)
        if record.update:
            restore = runtime_call("restore_update", target, cst.Name(record.saved))
        else:
            restore = runtime_call("restore", target, record.key, cst.Name(record.saved))
        lines.append(f"{pad}{syntax.code(restore)}")
        output = defined.get(self.adjoint(record.target))
        if output is None:
            return
        if record.update:  # all of x overwritten: its old value reaches v through `x op y`'s backward
            source = record.source(record.value)
            if source is not None:
                contribution = runtime_call("update_adjoint", cst.Name(output), target, record.value)
                self.accumulate(source, contribution, defined, pad, lines)
            return
        source = record.source(record.value)
        if source is not None:
            contribution = runtime_call("written_adjoint", cst.Name(output), target, record.key, record.value)
            self.accumulate(source, contribution, defined, pad, lines)
        source = record.source(record.container)
        if source is not None:
            contribution = runtime_call("overwritten_adjoint", cst.Name(output), target, record.key)
            self.accumulate(source, contribution, defined, pad, lines)
            if output == self.adjoint(record.target) and defined.get(output) == output:
                # the target's adjoint is the one before the write's now, maybe the same array: let go
                # of this name, so that later contributions add into it in place (a fill loop is O(n))
                lines.append(f"{pad}del {output}")
                del defined[output]

    def copy_backward(self, record: Copy, output: str, defined: dict[str, str], pad: str, lines: list[str]) -> None:
        source = record.source(record.value)
        if source is not None:
            self.accumulate(source, output, defined, pad, lines)

    def display_backward(
        self, record: Display, output: str, defined: dict[str, str], pad: str, lines: list[str]
    ) -> None:
        for position, element in enumerate(record.elements):
            source = record.source(element)
            if source is not None:
                self.accumulate(source, f"{RUNTIME}.item({output}, {position})", defined, pad, lines)

    def dict_backward(
        self, record: DictDisplay, output: str, defined: dict[str, str], pad: str, lines: list[str]
    ) -> None:
        keys = record.keys
        constants = _constant_values(keys)
        for position, element in enumerate(record.values):
            source = record.source(element)
            if source is None:
                continue
            if constants is None:
                listed = ", ".join(syntax.code(k) for k in keys)
                expression = f"{RUNTIME}.display_entry({output}, ({listed},), {position})"
            elif constants[position] in constants[position + 1:]:
                continue  # a later entry overwrote this one
            else:
                expression = f"{RUNTIME}.entry({output}, {syntax.code(keys[position])})"
            self.accumulate(source, expression, defined, pad, lines)

    def field_backward(self, record: Field, output: str, defined: dict[str, str], pad: str, lines: list[str]) -> None:
        source = record.source(record.owner)
        if source is not None:
            expression = f"{RUNTIME}.attribute_adjoint({syntax.code(record.owner)}, {record.name!r}, {output})"
            self.accumulate(source, expression, defined, pad, lines)

    def index_backward(self, record: Index, output: str, defined: dict[str, str], pad: str, lines: list[str]) -> None:
        source = record.source(record.container)
        if source is not None:
            contribution = runtime_call("index_adjoint", record.container, index_node(record), cst.Name(output))
            self.accumulate(source, contribution, defined, pad, lines)

    def softmax_backward(
        self, record: Softmax, output: str, defined: dict[str, str], pad: str, lines: list[str]
    ) -> None:
        statements = ", ".join(record.statements)
        logits = syntax.code(record.logits)
        if record.index is not None:
            probabilities = syntax.code(record.probabilities)
            lines.append(
                f"{pad}# {record.target} is the log of softmax({logits})[{record.index}] ({statements}): one backward"
            )
            expression = (
                f"{RUNTIME}.picked_log_softmax_adjoint({output}, {probabilities}, {record.index}, {record.axis})"
            )
        else:
            lines.append(f"{pad}# {record.target} is a softmax of {logits} ({statements}): one backward")
            expression = f"{RUNTIME}.softmax_adjoint({output}, {record.target}, {record.axis})"
        self.accumulate(record.source(record.logits), expression, defined, pad, lines)

    def logsumexp_backward(
        self, record: Logsumexp, output: str, defined: dict[str, str], pad: str, lines: list[str]
    ) -> None:
        statements = ", ".join(record.statements)
        logits = syntax.code(record.logits)
        lines.append(f"{pad}# {record.target} is log(sum(exp({logits}))) ({statements}): one backward")
        expression = f"{RUNTIME}.logsumexp_adjoint({output}, {record.exponentials}, {record.total})"
        self.accumulate(record.source(record.logits), expression, defined, pad, lines)


_WRITERS = {
    Copy: Backward.copy_backward,
    Display: Backward.display_backward,
    DictDisplay: Backward.dict_backward,
    Field: Backward.field_backward,
    Index: Backward.index_backward,
    Softmax: Backward.softmax_backward,
    Logsumexp: Backward.logsumexp_backward,
}


def _constant_values(keys: list) -> list | None:
    """The values of a dict display's keys when all are literals, else None."""
    values = []
    for key in keys:
        value = syntax.literal_value(key)
        if value is syntax.NOT_LITERAL:
            return None
        values.append(value)
    return values
