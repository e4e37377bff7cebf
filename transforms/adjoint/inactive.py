"""An inactive `if` (no differentiable value assigned in it) kept as it is, in the forward pass:
every name it assigns gets one new version, bound on every path."""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms.adjoint import attributes as attribute_writes
from cpsgrad.transforms.adjoint.frames import Frame
from cpsgrad.transforms.adjoint.output import Lines, assign, if_else, kept
from cpsgrad.transforms.analysis.activity import assignments


class InactiveIf:
    """The Generator's inline ifs."""

    def inline_if(self, statement: cst.If, frame: Frame, lines: Lines) -> None:
        """An inactive if kept as it is: every name it assigns gets one new version."""
        self.check_reads(statement.test, frame, lines)
        unchecked = set(frame.unchecked)  # the branches check their own reads (inline_branch)
        assigned: list[str] = []
        for targets, _ in assignments([statement]):
            assigned += [t for t in targets if t not in assigned]
        previous = {v: frame.versions.get(v) for v in assigned}
        for variable in assigned:
            self.new_version(frame, variable)
        final = {v: frame.versions[v] for v in assigned}
        before = frame.copy()
        before.unchecked = set(unchecked)
        frame.unchecked |= unchecked & set(assigned)  # the new version may be the old one, unbound
        for variable, version in previous.items():
            if version is None:
                before.versions.pop(variable, None)
            else:
                before.versions[variable] = version
        self.inline_if_lines(statement, before, final, lines)

    def inline_if_lines(self, statement: cst.If, before: Frame, final: dict[str, str], lines: Lines) -> None:
        self.check_reads(statement.test, before, lines)
        test = self.rename(statement.test, before)
        origin = self.origin
        then = Lines(self)
        self.inline_branch(statement.body.body, before.copy(), final, then)
        orelse = None
        if statement.orelse is not None:
            orelse = Lines(self)
            self.inline_branch(statement.orelse.body.body, before.copy(), final, orelse)
        else:
            copies = [(v, before.versions[v]) for v in final if v in before.versions and before.versions[v] != final[v]]
            if copies:
                orelse = Lines(self, [assign(final[variable], cst.Name(version)) for variable, version in copies])
        lines.append(if_else(test, then, orelse, origin), origin)

    def inline_branch(self, statements, frame: Frame, final: dict[str, str], lines: Lines) -> None:
        written: set[str] = set()
        for statement in statements:
            if isinstance(statement, cst.If):
                inner_assigned = {t for targets, _ in assignments([statement]) for t in targets}
                inner_final = {v: final[v] for v in inner_assigned}
                self.inline_if_lines(statement, frame, inner_final, lines)
                for variable in inner_assigned:
                    frame.versions[variable] = final[variable]
                written |= inner_assigned
                continue
            small = statement.body[0]
            self.check_reads(small.value if isinstance(small, (cst.Assign, cst.Expr)) else small, frame, lines)
            if isinstance(small, cst.Assign):
                value = attribute_writes.inactive(self, self.rename(small.value, frame), lines)  # checked
                target = small.targets[0].target
                variables = (
                    [e.value.value for e in target.elements] if isinstance(target, cst.Tuple) else [target.value]
                )
                if len(variables) == 1:
                    self.guard_in_place(statement, variables[0], value, lines)
                for variable in variables:
                    frame.versions[variable] = final[variable]
                written |= set(variables)
                names = [final[v] for v in variables]
                lines.append(assign(names if isinstance(target, cst.Tuple) else names[0], value))
                if len(variables) == 1:
                    self.check_in_place(statement, value, names[0], lines)
            else:
                if isinstance(small, cst.Expr):  # a plain call handed an object: checked (adjoint/attributes.py)
                    attribute_writes.inactive(self, self.rename(small.value, frame), lines)
                lines.append(kept(self.rename(statement, frame)))
        for variable, version in final.items():
            if variable not in written and variable in frame.versions and frame.versions[variable] != version:
                lines.append(assign(version, cst.Name(frame.versions[variable])))
