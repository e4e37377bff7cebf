"""Versions: the names a variable's successive values get in one continuation (`y`, `y_1`, ...),
so the backward reads what the forward saw, and their adjoints (`<version>_d`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from cpsgrad.transforms import naming, syntax
from cpsgrad.transforms.adjoint.output import Lines, call_line, runtime_call, string


@dataclass
class Frame:
    """The versions in scope on one path through a continuation's body."""

    versions: dict[str, str]
    used: set[str]
    counters: dict[str, int] = field(default_factory=dict)
    unchecked: set[str] = field(default_factory=set)  # parameters a jump may pass unbound, not yet read

    def copy(self) -> Frame:
        return Frame(dict(self.versions), set(self.used), dict(self.counters), set(self.unchecked))


class Renamer(cst.CSTTransformer):
    """Replace variable names (not attribute names or keywords) by expressions."""

    def __init__(self, mapping: dict[str, cst.BaseExpression]):
        self.mapping = mapping

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return True

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self.mapping.get(original.value, updated)


class Versions:
    """The Generator's naming of versions and adjoints (reads `namer`, `suffix`, `active`,
    `invariants`, `numbers`, `version_owner`, `resolver`, `program`)."""

    def adjoint(self, version: str) -> str:
        return version + self.suffix

    def new_version(self, frame: Frame, variable: str) -> str:
        if variable not in frame.versions and variable not in frame.used:
            candidate = variable
        else:
            counter = frame.counters.get(variable, 0)
            while True:
                counter += 1
                candidate = naming.version(variable, counter)
                if (
                    candidate not in self.namer.taken
                    and candidate not in frame.used
                    and self.adjoint(candidate) not in self.namer.taken
                ):
                    break
            frame.counters[variable] = counter
        frame.used.add(candidate)
        frame.versions[variable] = candidate
        frame.unchecked.discard(variable)
        self.version_owner[candidate] = variable
        return candidate

    def is_active_variable(self, variable: str) -> bool:
        return variable in self.active

    def check_reads(self, node: cst.CSTNode, frame: Frame, lines: Lines) -> None:
        """Before a statement reading a parameter that a jump may have passed unbound
        (cps.maybe_unbound), check it: UnboundLocalError where Python would raise it."""
        if not frame.unchecked:
            return
        for variable in syntax.variables_read(node):
            if variable in frame.unchecked:
                frame.unchecked.discard(variable)
                lines.append(call_line(runtime_call("check_bound", cst.Name(frame.versions.get(variable, variable)))))

    def rename(self, node: cst.CSTNode, frame: Frame, passed: bool = False) -> cst.CSTNode:
        """`node` reading the current versions; a variable bound on no path to here is read as
        `unbound_read(name)` (raises UnboundLocalError), or, `passed` to a continuation (which may
        not read it), as the sentinel `unbound(name)`."""
        mapping: dict[str, cst.BaseExpression] = {}
        for variable in syntax.variables_read(node):
            if variable in frame.versions:
                mapping[variable] = cst.Name(frame.versions[variable])
            elif variable in self.program.order and variable not in self.invariants:
                mapping[variable] = runtime_call("unbound" if passed else "unbound_read", string(variable))
        return node.visit(Renamer(mapping)) if mapping else node

    def owner(self, atom: cst.BaseExpression, frame: Frame) -> str | None:
        """The variable a renamed operand is a version of."""
        if not isinstance(atom, cst.Name):
            return None
        for variable, current in frame.versions.items():
            if current == atom.value:
                return variable
        return atom.value if atom.value in self.invariants else None

    def active_source(self, atom: cst.BaseExpression, frame: Frame) -> str | None:
        """The adjoint to accumulate into for a renamed operand, or None when it is inactive."""
        variable = self.owner(atom, frame)
        if variable is None or not self.is_active_variable(variable):
            return None
        return self.adjoint(atom.value)

    def holds_number(self, adjoint: str) -> bool:
        """Whether the adjoint named `adjoint` belongs to a variable that always holds a number."""
        version = adjoint[: -len(self.suffix)]
        return self.version_owner.get(version, version) in self.numbers

    def is_number(self, atom) -> bool:
        """Whether a renamed operand always holds a Python number (a literal, or a number variable)."""
        if isinstance(atom, (cst.Integer, cst.Float)):
            return True
        if isinstance(atom, cst.UnaryOperation) and isinstance(atom.expression, (cst.Integer, cst.Float)):
            return True
        if not isinstance(atom, cst.Name):
            return False
        variable = self.version_owner.get(atom.value, atom.value)
        return variable in self.numbers or variable in self.resolver.assumed
