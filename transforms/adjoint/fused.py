"""Fusion in the adjoint pass: a block's records with each group that has one backward
(transforms/fusion.py finds them: a softmax, a log-sum-exp written out) replaced by one record."""

from __future__ import annotations

import re

from cpsgrad.transforms import fusion
from cpsgrad.transforms.adjoint.records import Logsumexp, Record, RuleCall, Softmax, index_code

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Fusion:
    """The Generator's fusion of records (reads `is_number`)."""

    def fuse(self, records: list[Record], lines: list[str], start: int) -> list[Record]:
        """`records` with each group of statements that has one backward (transforms/fusion.py:
        a softmax or a log-sum-exp written out) replaced by that backward, at its last statement's place. What
        reads a version is read off the block's output from `start` (its statements, tail,
        branches and continuation calls): a name seen anywhere else keeps the group apart."""
        if not any(isinstance(record, RuleCall) and record.rule.template in fusion.LAST for record in records):
            return records
        read = [(index, set(_IDENTIFIER.findall(lines[index]))) for index in range(start, len(lines))]

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
                axis = "None" if group.axis is None else group.axis
                fused = Softmax(**common, logits=group.logits, axis=axis, statements=statements)
                if group.picked is not None:
                    fused.probabilities = group.picked.container
                    fused.index = index_code(group.picked)
            replaced[id(group.output)] = fused
        if not replaced:
            return records
        return [replaced.get(id(record), record) for record in records if replaced.get(id(record), record) is not None]
