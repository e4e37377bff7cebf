"""The forward and backward of `xs = cpsgrad_runtime.appended(xs, v)` and `xs =
cpsgrad_runtime.removed(xs, i)` (normalize's forms of `xs.append(v)` and `xs.pop(i)` on a list the
function owns): the list changes in place, as in Python, and the backward undoes the change, as a
write's restores what it overwrote (cpsgrad/runtime/list_changes.py says why and what runs).

    xs_1 = cpsgrad_runtime.append_in_place(xs, t1)             xs_1_popped = cpsgrad_runtime.popping(xs, i)
                                                               xs_1 = cpsgrad_runtime.remove_in_place(xs, xs_1_popped)
    ... k(...) ...                                             ... k(...) ...
    cpsgrad_runtime.unappend(xs_1)                             cpsgrad_runtime.unremove(xs_1, xs_1_popped)
    t1_d = cpsgrad_runtime.last_adjoint(xs_1_d)                xs_d = cpsgrad_runtime.reinserted_adjoint(xs_1_d, ...)
    xs_d = cpsgrad_runtime.popped_adjoint(xs_1_d)              del xs_1_d
    del xs_1_d

Every such statement has a record, active or not (the backward of what ran before must see the
list as it was). The adjoint of a list so changed may be a `ListAdjoint`, which only these
backwards take: any other record defining a version of such a list settles its adjoint first
(`settle`: a `SequenceAdjoint` of it), so no other helper ever receives one.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import libcst as cst

from cpsgrad.transforms import naming, syntax, walk
from cpsgrad.transforms.adjoint.output import Lines, assign, call_line, delete, runtime_call
from cpsgrad.transforms.adjoint.records import Record
from cpsgrad.transforms.containers import CHANGES, is_list_change


class Change(enum.Enum):
    """Which change: `appended(xs, v)`, `extended(xs, ys)` or `removed(xs, i)` (a pop)."""

    APPEND = "append"
    EXTEND = "extend"
    POP = "pop"


@dataclass
class ListChange(Record):
    """`xs_1 = appended(xs, v)` / `removed(xs, i)` changed in place: `xs_1` is `xs`."""

    kind: Change = Change.APPEND
    container: cst.BaseExpression | None = None
    value: cst.BaseExpression | None = None  # the appended value (append), the added list (extend)
    saved: str = ""  # the (position, element) a pop removed, the length before an extend


def changed_lists(generator) -> frozenset:
    """The variables some `appended`/`removed` statement of the function changes (cached)."""
    found = getattr(generator, "_changed_lists", None)
    if found is None:
        found = frozenset(
            node.targets[0].target.value
            for node in walk.nodes(generator.normalized.definition.body)
            if isinstance(node, cst.Assign)
            and isinstance(node.targets[0].target, cst.Name)
            and is_list_change(node.value)
        )
        generator._changed_lists = found
    return found


def forward(generator, statement, variable: str, value: cst.Call, frame, lines: Lines, records: list):
    """The in-place forward of a list change, and its record (made whether or not it is active)."""
    first = len(lines)
    kind = Change(CHANGES[syntax.dotted_name(value.func)])
    container, operand = (a.value for a in value.args)
    adjoints = {}
    for atom in (container,) if kind is Change.POP else (container, operand):
        source = generator.active_source(atom, frame) if isinstance(atom, cst.Name) else None
        if source is not None:
            adjoints[atom.value] = source
    version = generator.new_version(frame, variable)
    saved = ""
    if kind is Change.APPEND:
        lines.append(assign(version, runtime_call("append_in_place", container, operand)))
    elif kind is Change.EXTEND:
        saved = generator.namer.fresh(naming.list_length(version))
        lines.append(assign(saved, runtime_call("extending", container)))
        lines.append(assign(version, runtime_call("extend_in_place", container, operand)))
    else:
        saved = generator.namer.fresh(naming.list_popped(version))
        lines.append(assign(saved, runtime_call("popping", container, operand)))
        lines.append(assign(version, runtime_call("remove_in_place", container, cst.Name(saved))))
    location = generator.normalized.location(statement)
    records.append(
        ListChange(
            version,
            adjoints,
            range(first, len(lines)),
            location,
            kind=kind,
            container=container,
            value=None if kind is Change.POP else operand,
            saved=saved,
        )
    )


def backward(generator, record: ListChange, defined: dict[str, str], lines: Lines) -> None:
    """Undo the change; the appended element's adjoint is the list's last, the list's before the
    change the one after without it (or with a zero where the popped element was)."""
    target = cst.Name(record.target)
    if record.kind is Change.APPEND:
        lines.append(call_line(runtime_call("unappend", target)))
    elif record.kind is Change.EXTEND:
        lines.append(call_line(runtime_call("unextend", target, cst.Name(record.saved))))
    else:
        lines.append(call_line(runtime_call("unremove", target, cst.Name(record.saved))))
    output = defined.get(generator.adjoint(record.target))
    if output is None:
        return
    if record.kind is not Change.POP:
        source = record.source(record.value)
        if source is not None:
            if record.kind is Change.APPEND:
                added = runtime_call("last_adjoint", cst.Name(output))
            else:
                added = runtime_call("tail_adjoint", cst.Name(output), cst.Name(record.saved))
            generator.accumulate(source, added, defined, lines)
    source = record.source(record.container)
    if source is not None:
        mine = generator.adjoint(record.target)
        others = [a for a, holder in defined.items() if holder == output and a not in (output, mine)]
        held = cst.Name(output)
        if others:  # another adjoint is this same value (an alias the generator kept): never change it in place
            held = runtime_call("settled", held)
        if record.kind is Change.APPEND:
            rest = runtime_call("popped_adjoint", held)
        elif record.kind is Change.EXTEND:
            rest = runtime_call("truncated_adjoint", held, cst.Name(record.saved))
        else:
            rest = runtime_call("reinserted_adjoint", held, cst.Name(record.saved))
        generator.accumulate(source, rest, defined, lines)
        if output == mine and defined.get(output) == output and not others:
            lines.append(delete([output]))  # the list's adjoint lives on in the source's: let go of this name
            del defined[output]


def settle(generator, record: Record, defined: dict[str, str], lines: Lines) -> None:
    """Before the backward of any other record defining a version of a changed list: its adjoint
    as a `SequenceAdjoint` (`cpsgrad_runtime.settled`), so no other helper receives a ListAdjoint."""
    changed = changed_lists(generator)
    if not changed:
        return
    targets = record.target if isinstance(record.target, list) else [record.target]
    for version in targets:
        if generator.version_owner.get(version, version) not in changed:
            continue
        holder = defined.get(generator.adjoint(version))
        if holder is not None:
            lines.append(assign(holder, runtime_call("settled", cst.Name(holder))))
