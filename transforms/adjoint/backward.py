"""The backward of each record (records.py) in the Python tier: the contributions of the output's
adjoint to the operands' adjoints, through `accumulate`; a rule's through rule_inlining.py."""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import syntax
from cpsgrad.transforms.adjoint import attributes as attribute_writes
from cpsgrad.transforms.adjoint import list_changes
from cpsgrad.transforms.adjoint.output import (
    ZERO,
    Lines,
    call_line,
    delete,
    packed,
    runtime_call,
    string,
    value_of,
)
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

    def backward(self, record: Record, defined: dict[str, str], lines: Lines) -> None:
        """Emit `record`'s backward, where its output's adjoint is not the symbolic zero."""
        if isinstance(record, list_changes.ListChange):
            list_changes.backward(self, record, defined, lines)
            return
        list_changes.settle(self, record, defined, lines)  # a changed list's adjoint as others take it
        if isinstance(record, Unpack):
            self.unpack_backward(record, defined, lines)
            return
        if isinstance(record, Write):
            self.write_backward(record, defined, lines)
            return
        if isinstance(record, AttributeWrite):  # obj.w = v (adjoint/attributes.py)
            return attribute_writes.backward(self, record, defined, lines)
        output = defined.get(self.adjoint(record.target))
        if output is None:
            return
        if isinstance(record, RuleCall):
            self.inline_rule(record, output, defined, lines)
        else:
            _WRITERS[type(record)](self, record, output, defined, lines)

    def unpack_backward(self, record: Unpack, defined: dict[str, str], lines: Lines) -> None:
        adjoints = [self.adjoint(v) for v in record.target]
        if not any(a in defined for a in adjoints):
            return
        source = record.source(record.value)
        if source is not None:
            parts = packed([value_of(defined.get(a, ZERO)) for a in adjoints])
            self.accumulate(source, runtime_call("unpacked", parts), defined, lines)

    def write_backward(self, record: Write, defined: dict[str, str], lines: Lines) -> None:
        """Restore what the write overwrote; the written value's adjoint is the target's there
        (read first), and the target's before the write is the one after with that part dropped."""
        target = cst.Name(record.target)
        if record.update:
            restore = runtime_call("restore_update", target, cst.Name(record.saved))
        else:
            restore = runtime_call("restore", target, record.key, cst.Name(record.saved))
        lines.append(call_line(restore))
        output = defined.get(self.adjoint(record.target))
        if output is None:
            return
        if record.update:  # all of x overwritten: its old value reaches v through `x op y`'s backward
            source = record.source(record.value)
            if source is not None:
                contribution = runtime_call("update_adjoint", cst.Name(output), target, record.value)
                self.accumulate(source, contribution, defined, lines)
            return
        source = record.source(record.value)
        if source is not None:
            contribution = runtime_call("written_adjoint", cst.Name(output), target, record.key, record.value)
            self.accumulate(source, contribution, defined, lines)
        source = record.source(record.container)
        if source is not None:
            contribution = runtime_call("overwritten_adjoint", cst.Name(output), target, record.key)
            self.accumulate(source, contribution, defined, lines)
            if output == self.adjoint(record.target) and defined.get(output) == output:
                # the target's adjoint is the one before the write's now, maybe the same array: let go
                # of this name, so that later contributions add into it in place (a fill loop is O(n))
                lines.append(delete([output]))
                del defined[output]

    def copy_backward(self, record: Copy, output: str, defined: dict[str, str], lines: Lines) -> None:
        source = record.source(record.value)
        if source is not None:
            self.accumulate(source, cst.Name(output), defined, lines)

    def display_backward(
        self, record: Display, output: str, defined: dict[str, str], lines: Lines
    ) -> None:
        for position, element in enumerate(record.elements):
            source = record.source(element)
            if source is not None:
                item = runtime_call("item", cst.Name(output), cst.Integer(str(position)))
                self.accumulate(source, item, defined, lines)

    def dict_backward(
        self, record: DictDisplay, output: str, defined: dict[str, str], lines: Lines
    ) -> None:
        keys = record.keys
        constants = _constant_values(keys)
        for position, element in enumerate(record.values):
            source = record.source(element)
            if source is None:
                continue
            if constants is None:
                listed = packed(keys)
                expression = runtime_call("display_entry", cst.Name(output), listed, cst.Integer(str(position)))
            elif constants[position] in constants[position + 1:]:
                continue  # a later entry overwrote this one
            else:
                expression = runtime_call("entry", cst.Name(output), keys[position])
            self.accumulate(source, expression, defined, lines)

    def field_backward(self, record: Field, output: str, defined: dict[str, str], lines: Lines) -> None:
        source = record.source(record.owner)
        if source is not None:
            expression = runtime_call("attribute_adjoint", record.owner, string(record.name), cst.Name(output))
            self.accumulate(source, expression, defined, lines)

    def index_backward(self, record: Index, output: str, defined: dict[str, str], lines: Lines) -> None:
        source = record.source(record.container)
        if source is not None:
            contribution = runtime_call("index_adjoint", record.container, index_node(record), cst.Name(output))
            self.accumulate(source, contribution, defined, lines)

    def softmax_backward(
        self, record: Softmax, output: str, defined: dict[str, str], lines: Lines
    ) -> None:
        statements = ", ".join(record.statements)
        logits = syntax.code(record.logits)
        if record.index is not None:
            index = syntax.code(record.index)
            lines.comment(f"{record.target} is the log of softmax({logits})[{index}] ({statements}): one backward")
            expression = runtime_call(
                "picked_log_softmax_adjoint", cst.Name(output), record.probabilities, record.index, record.axis
            )
        else:
            lines.comment(f"{record.target} is a softmax of {logits} ({statements}): one backward")
            expression = runtime_call("softmax_adjoint", cst.Name(output), cst.Name(record.target), record.axis)
        self.accumulate(record.source(record.logits), expression, defined, lines)

    def logsumexp_backward(
        self, record: Logsumexp, output: str, defined: dict[str, str], lines: Lines
    ) -> None:
        statements = ", ".join(record.statements)
        logits = syntax.code(record.logits)
        lines.comment(f"{record.target} is log(sum(exp({logits}))) ({statements}): one backward")
        expression = runtime_call(
            "logsumexp_adjoint", cst.Name(output), cst.Name(record.exponentials), cst.Name(record.total)
        )
        self.accumulate(record.source(record.logits), expression, defined, lines)


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
