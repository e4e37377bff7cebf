"""Fusion in the adjoint pass: a block's records with each group that has one backward
(transforms/fusion.py finds them: a softmax, a log-sum-exp written out) replaced by one record."""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import fusion, walk
from cpsgrad.transforms.adjoint.records import Logsumexp, Record, RuleCall, Softmax, index_node


class Fusion:
    """The Generator's fusion of records (reads `is_number`)."""

    def fuse(self, records: list[Record], lines: list[cst.BaseStatement], start: int) -> list[Record]:
        """`records` with each group of statements that has one backward (transforms/fusion.py:
        a softmax or a log-sum-exp written out) replaced by that backward, at its last statement's place. What
        reads a version is read off the block's output from `start` (its statements, tail,
        branches and continuation calls, as nodes): a name used anywhere else keeps the group apart."""
        if not any(isinstance(record, RuleCall) and record.rule.template in fusion.LAST for record in records):
            return records
        read = [(index, names_used(lines[index])) for index in range(start, len(lines))]

        def private(version: str, members: list[Record]) -> bool:
            own = {index for member in members for index in member.lines}
            return not any(version in names for index, names in read if index not in own)

        replaced: dict[int, Record | None] = {}
        for group in fusion.groups(records, private):
            source = next(
                (m.adjoints[group.logits.value] for m in group.members if group.logits.value in m.adjoints), None
            )
            if source is None or self.is_number(group.logits):
                continue
            for member in group.members:
                replaced[id(member)] = None
            statements = [member.target for member in group.members]
            common = {
                "target": group.output.target,
                "adjoints": {group.logits.value: source},
                "origin": group.output.origin,
            }
            if isinstance(group, fusion.Logsumexp):
                fused = Logsumexp(
                    **common,
                    logits=group.logits,
                    exponentials=group.exponentials,
                    total=group.total,
                    statements=statements,
                )
            else:
                axis = cst.Name("None") if group.axis_node is None else group.axis_node
                fused = Softmax(**common, logits=group.logits, axis=axis, statements=statements)
                if group.picked is not None:
                    fused.probabilities = group.picked.container
                    fused.index = index_node(group.picked)
            replaced[id(group.output)] = fused
        if not replaced:
            return records
        return [replaced.get(id(record), record) for record in records if replaced.get(id(record), record) is not None]


def names_used(statement: cst.CSTNode) -> set[str]:
    """The variables a statement (and every statement inside it) reads or binds: its names, but
    not attribute names (`a.b` uses `a` alone) or keywords (`f(x=y)` uses `f` and `y`)."""
    skipped = set()
    found = set()
    for node in walk.nodes(statement):
        if type(node) is cst.Name:
            if id(node) not in skipped:
                found.add(node.value)
        elif type(node) is cst.Attribute:
            skipped.add(id(node.attr))
        elif type(node) is cst.Arg and node.keyword is not None:
            skipped.add(id(node.keyword))
    return found
