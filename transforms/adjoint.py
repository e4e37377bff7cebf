"""Adjoint: inline each primitive's rule into the continuation program and emit the final source.

Per continuation, straight-line statements are emitted forward, then the tail (the shift: a
continuation call that returns the program's result and the adjoints of what it was handed), then
each statement's backward in reverse, inline. Variables reassigned in one frame get versions
(`y`, `y_1`, ...) so the backward reads the values the forward saw; adjoints are `<version>_d`.
An adjoint that nothing contributed to is never materialized (a symbolic zero), and backward code
whose output adjoint is zero is skipped. Branches merge their adjoints before the shared backward.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass, field

import libcst as cst
import numpy as np

from cpsgrad import runtime
from cpsgrad.errors import NoRuleError, UnsupportedError
from cpsgrad.rules.registry import TABLE, TEMPLATE_ADJOINT_SUFFIX, Rule
from cpsgrad.runtime import dispatch
from cpsgrad.transforms import calls, cps, fusion, naming, syntax, templates
from cpsgrad.transforms.activity import assignments
from cpsgrad.transforms.cps import Block, Branch, Call, Continuation, Jump, Program, Raise, Return
from cpsgrad.transforms.operators import binary_primitive, unary_primitive
from cpsgrad.transforms.resolve import Resolver

_RUNTIME = "cpsgrad_runtime"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MISSING = object()
_ZERO = "0.0"


@dataclass
class _Frame:
    """The versions in scope on one path through a continuation's body."""

    versions: dict[str, str]
    used: set[str]
    counters: dict[str, int] = field(default_factory=dict)
    unchecked: set[str] = field(default_factory=set)  # parameters a jump may pass unbound, not yet read

    def copy(self) -> _Frame:
        return _Frame(dict(self.versions), set(self.used), dict(self.counters), set(self.unchecked))


@dataclass
class _Backward:
    """What the backward of one forward statement needs."""

    kind: str  # "rule" | "copy" | "display" | "dict" | "attribute" | "index" | "unpack" | "softmax" | "logsumexp"
    target: str | list[str]
    sources: list  # renamed atoms
    rule: Rule | None = None
    bound: dict | None = None
    extra: dict = field(default_factory=dict)
    adjoints: dict[str, str] = field(default_factory=dict)  # active operand version -> adjoint
    lines: range = range(0)  # the forward's lines in the block's output
    origin: object = None  # the user's statement's SourceLocation (Lines: provenance)

    def source(self, atom) -> str | None:
        """The adjoint an operand accumulates into, or None when it is inactive or constant."""
        return self.adjoints.get(atom.value) if isinstance(atom, cst.Name) else None


class Lines(list):
    """The generated lines, each remembering where it came from (`origins`, aligned): the
    SourceLocation of the user's statement (or None) and the pass, "forward" or "backward",
    that the generator was emitting (`Generator.origin`). Only `cpsgrad.debug_nans` reads it."""

    def __init__(self, generator: Generator, lines=()):
        super().__init__(lines)
        self.generator = generator
        self.origins: list[tuple] = [generator.origin] * len(self)

    def append(self, line: str) -> None:
        super().append(line)
        self.origins.append(self.generator.origin)

    def extend(self, lines) -> None:
        lines = lines if isinstance(lines, Lines) else list(lines)
        super().extend(lines)
        self.origins.extend(lines.origins if isinstance(lines, Lines) else [self.generator.origin] * len(lines))

    def insert(self, index: int, line: str) -> None:
        super().insert(index, line)
        self.origins.insert(index, self.generator.origin)


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


class Generator:
    """Generates the final derivative program of one CPS program."""

    def __init__(self, program: Program, resolver: Resolver, differentiated: tuple[str, ...], numbers: set[str] = frozenset(), sites: list[calls.Site] = (), borrows: bool = False, captured: tuple[str, ...] = ()):
        self.program = program
        self.numbers = numbers  # variables that always hold Python numbers: no broadcasting to undo
        self.version_owner: dict[str, str] = {}  # version name -> the variable it is a version of
        self.differentiated = differentiated
        self.resolver = resolver
        self.normalized = program.normalized
        self.active = program.active
        self.invariants = set(program.invariants)
        self.namer = program.namer
        for continuation in program.continuations:
            self.namer.reserve(continuation.name)
        self.suffix = self._adjoint_suffix()
        self.out = self.namer.fresh(naming.RESULT)
        self.k = program.continuation_name
        self.namespace: dict[str, object] = {}
        self.origin: tuple = (None, "forward")  # what the lines emitted now come from (Lines)
        self.origins: list[tuple] = []  # after generate: per line of its text, (SourceLocation | None, pass)
        self.free_adjoints = self._free_adjoints()
        self.maybe_unbound = cps.maybe_unbound(program)
        # in a program that other programs call (`borrows`), differentiated parameters never
        # reassigned: their adjoint's first contribution goes into what the caller lent for them
        # (cpsgrad_runtime.borrow); adjoint name -> parameter
        # (not what a closure captured: those adjoints go back in the closure's own)
        self.borrowers = {
            self.adjoint(p): p
            for p in differentiated
            if borrows and p in self.invariants and p not in captured and not self.holds_number(self.adjoint(p))
        }
        self.containers = _container_names(program.normalized.definition, resolver)
        for site in sites:  # each call of a user function runs through its dispatcher
            self.namespace[naming.call_site(site.label)] = dispatch.CallSite(site.callee_code, site.location, site.active, site.positional, site.keywords, site.callee_active).call

    # -- names -------------------------------------------------------------------------------
    def _adjoint_suffix(self) -> str:
        taken = self.namer.taken
        suffix = naming.ADJOINT_SUFFIX
        attempt = 0
        while any(name + suffix in taken for name in taken):
            attempt += 1
            suffix = f"_adj{attempt if attempt > 1 else ''}"
        return suffix

    def adjoint(self, version: str) -> str:
        return version + self.suffix

    def new_version(self, frame: _Frame, variable: str) -> str:
        if variable not in frame.versions and variable not in frame.used:
            candidate = variable
        else:
            counter = frame.counters.get(variable, 0)
            while True:
                counter += 1
                candidate = f"{variable}_{counter}"
                if candidate not in self.namer.taken and candidate not in frame.used and self.adjoint(candidate) not in self.namer.taken:
                    break
            frame.counters[variable] = counter
        frame.used.add(candidate)
        frame.versions[variable] = candidate
        frame.unchecked.discard(variable)
        self.version_owner[candidate] = variable
        return candidate

    def is_active_variable(self, variable: str) -> bool:
        return variable in self.active

    def check_reads(self, node: cst.CSTNode, frame: _Frame, pad: str, lines: list[str]) -> None:
        """Before a statement reading a parameter that a jump may have passed unbound
        (cps.maybe_unbound), check it: UnboundLocalError where Python would raise it."""
        if not frame.unchecked:
            return
        for variable in syntax.variables_read(node):
            if variable in frame.unchecked:
                frame.unchecked.discard(variable)
                lines.append(f"{pad}{_RUNTIME}.check_bound({frame.versions.get(variable, variable)})")

    def rename(self, node: cst.CSTNode, frame: _Frame, passed: bool = False) -> cst.CSTNode:
        """`node` reading the current versions; a variable bound on no path to here is read as
        `unbound_read(name)` (raises UnboundLocalError), or, `passed` to a continuation (which may
        not read it), as the sentinel `unbound(name)`."""
        mapping: dict[str, cst.BaseExpression] = {}
        for variable in syntax.variables_read(node):
            if variable in frame.versions:
                mapping[variable] = cst.Name(frame.versions[variable])
            elif variable in self.program.order and variable not in self.invariants:
                unbound = cst.Attribute(cst.Name(_RUNTIME), cst.Name("unbound" if passed else "unbound_read"))
                mapping[variable] = cst.Call(unbound, [cst.Arg(cst.SimpleString(repr(variable)))])
        return node.visit(Renamer(mapping)) if mapping else node

    def owner(self, atom: cst.BaseExpression, frame: _Frame) -> str | None:
        """The variable a renamed operand is a version of."""
        if not isinstance(atom, cst.Name):
            return None
        for variable, current in frame.versions.items():
            if current == atom.value:
                return variable
        return atom.value if atom.value in self.invariants else None

    def active_source(self, atom: cst.BaseExpression, frame: _Frame) -> str | None:
        """The adjoint to accumulate into for a renamed operand, or None when it is inactive."""
        variable = self.owner(atom, frame)
        if variable is None or not self.is_active_variable(variable):
            return None
        return self.adjoint(atom.value)

    # -- free adjoints -----------------------------------------------------------------------
    def _free_adjoints(self) -> dict[str, list[str]]:
        """Per continuation, the active invariants whose adjoints it returns (a fixpoint)."""
        active_invariants = [p for p in self.program.invariants if p in self.active]
        reads: dict[str, set[str]] = {}
        callees: dict[str, set[str]] = {}
        for continuation in self.program.continuations:
            names, targets = _block_reads(continuation.body)
            reads[continuation.name] = {n for n in names if n in active_invariants}
            callees[continuation.name] = targets
        changed = True
        while changed:
            changed = False
            for name in reads:
                for callee in callees[name]:
                    if not reads[callee] <= reads[name]:
                        reads[name] |= reads[callee]
                        changed = True
        return {name: [p for p in active_invariants if p in found] for name, found in reads.items()}

    # -- program -----------------------------------------------------------------------------
    def generate(self) -> str:
        function = self.program.function
        name = naming.cps_function(function.name)
        lines = Lines(self, [f"def {name}({', '.join([*function.parameters, self.k])}):"])
        for continuation in self.program.continuations:
            self.origin = (None, "forward")
            lines.append(f"    def {continuation.name}({', '.join(continuation.parameters)}):")
            self.continuation(continuation, 2, lines)
        self.origin = (None, "forward")
        self.continuation(function, 1, lines)
        if len(lines.origins) != len(lines):  # changed behind Lines' back: no provenance rather than a wrong one
            lines.origins = [(None, "forward")] * len(lines)
        self.origins = [origin for line, origin in zip(lines, lines.origins, strict=True) for _ in range(line.count("\n") + 1)]
        return "\n".join(lines) + "\n"

    def continuation(self, continuation: Continuation, depth: int, lines: list[str]) -> None:
        frame = _Frame({p: p for p in continuation.parameters}, set(continuation.parameters))
        frame.unchecked = set(self.maybe_unbound.get(continuation.name, ()))
        defined, _ = self.block(continuation.body, frame, depth, lines)
        if continuation.kind == "function":
            returned = list(self.differentiated)  # in the order argnums asked for
        else:
            returned = [p for p in continuation.parameters if self.is_active_variable(p)]
            returned += self.free_adjoints[continuation.name]
        values = [defined.get(self.adjoint(p), _ZERO) for p in returned]
        result = ", ".join([self.out, *values]) if values else f"({self.out},)"
        lines.append("    " * depth + f"return {result}")

    def block(self, block: Block, frame: _Frame, depth: int, lines: list[str]) -> tuple[dict[str, str], bool]:
        """Emit a block; return the adjoints defined at its end (each mapped to the variable that
        holds it: itself, or the adjoint it equals, a copy never emitted) and whether it returns."""
        pad = "    " * depth
        records: list[_Backward] = []
        start = len(lines)
        for statement in block.statements:
            self.forward(statement, frame, pad, lines, records)
        defined, returns = self.tail(block.tail, frame, depth, lines)
        if not returns:
            return {}, False
        for record in reversed(self.fuse(records, lines, start)):
            self.origin = (record.origin, "backward")
            self.backward(record, defined, pad, lines)
        return defined, True

    # -- tails -------------------------------------------------------------------------------
    def tail(self, tail, frame: _Frame, depth: int, lines: list[str]) -> tuple[dict[str, str], bool]:
        pad = "    " * depth
        # a tail's lines hand values on and bind the adjoints that come back
        self.origin = (self.normalized.location(getattr(tail, "statement", None) or getattr(tail, "origin", None)), "backward")
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

    def call(self, tail: Call, frame: _Frame, depth: int, lines: list[str]) -> tuple[dict[str, str], bool]:
        """A call of a user function: its dispatcher runs the callee's program with the rest of
        this block as the continuation. An adapter closure (`call_1_k`, defined here: the versions
        it captures are never reassigned) hands the callee the result's adjoint and packs this
        program's other adjoints into the opaque result the callee passes back."""
        pad = "    " * depth
        value = self.rename(tail.statement.body[0].value, frame)
        # the adjoints of the arguments, found before the result's new version hides them (h = f(h))
        sources = [self.active_source(value.func, frame)] if isinstance(value.func, cst.Name) else []  # a closure's environment
        sources += [self.active_source(a.value, frame) for a in value.args if a.keyword is None]
        sources += [self.active_source(a.value, frame) for a in value.args if a.keyword is not None]
        # each argument's adjoint, once, with the argument it belongs to: lent to the callee (only
        # arrays are ever lent, so not a number's: its adjoint is added back as a number)
        lendable: dict[str, str] = {}
        ordered = [a for a in value.args if a.keyword is None] + [a for a in value.args if a.keyword is not None]
        for argument in ordered:
            adjoint = self.active_source(argument.value, frame)
            if adjoint is not None and adjoint not in lendable and not self.holds_number(adjoint):
                lendable[adjoint] = syntax.code(argument.value)
        # every argument, repeats included: one passed twice is lent to neither parameter
        every = ", ".join(syntax.code(a.value) for a in ordered) + ("," if len(ordered) == 1 else "")
        extras: list[str] = []
        if tail.continuation is None:  # the rest just returns the result
            handed = self.k
        else:
            target = tail.continuation
            version = self.new_version(frame, tail.target)
            arguments = [syntax.code(self.rename(cst.Name(p), frame, passed=True)) for p in target.parameters]
            results = [self.adjoint(frame.versions.get(p, p)) for p in target.parameters if self.is_active_variable(p)]
            results += [self.adjoint(p) for p in self.free_adjoints[target.name]]
            extras = results[1:]
            jump = f"{target.name}({', '.join(arguments)})"
            # a parameter of this program passed on whose adjoint nothing after the call adds to:
            # what its caller lent for it, not borrowed yet, is passed on to the callee, whose
            # adjoint of it becomes this program's (received into it, never added)
            passed_on = [lendable[e] for e in lendable if e in self.borrowers and e not in extras and lendable[e] == self.borrowers[e]]
            if not extras and not passed_on and target.parameters == [tail.target]:
                handed = target.name
            else:
                handed = naming.call_adapter(tail.label)
                lines.append(f"{pad}def {handed}({version}):")
                passing = [f"{pad}    {_RUNTIME}.pass_on({parameter}, ({every}))" for parameter in passed_on]
                if extras:
                    lines.append(f"{pad}    {', '.join([self.out, *results])} = {jump}")
                    lines.extend(passing)
                    packed = [f"{_RUNTIME}.lend({e}, {lendable[e]}, ({every}))" if e in lendable else e for e in extras]
                    lines.append(f"{pad}    return ({', '.join([self.out, *packed])}), {results[0]}")
                elif passing:
                    returned = self.namer.fresh(f"{tail.label}_returned")
                    lines.append(f"{pad}    {returned} = {jump}")
                    lines.extend(passing)
                    lines.append(f"{pad}    return {returned}")
                else:
                    lines.append(f"{pad}    return {jump}")
        # the callee returns its adjoints in the order of the call's differentiable arguments
        # (positional, then keywords); one already defined is received apart, then added
        received: list[str] = []
        added: list[tuple[str, str]] = []
        for adjoint in sources:
            if adjoint is None:
                continue
            if adjoint in extras or adjoint in received:
                part = self.namer.fresh(f"{tail.label}_{adjoint}")
                added.append((adjoint, part))
                received.append(part)
            else:
                received.append(adjoint)
        head = f"({', '.join([self.out, *extras])})" if extras else self.out
        passed = [syntax.code(a.value) if a.keyword is None else f"{a.keyword.value}={syntax.code(a.value)}" for a in value.args]
        call = ", ".join([syntax.code(value.func), handed, *passed])
        lines.append(f"{pad}{', '.join([head, *received])} = {naming.call_site(tail.label)}({call})")
        parts = {part for _, part in added}
        defined = {name: name for name in [*extras, *received] if name not in parts}
        for adjoint, part in added:
            if adjoint in extras and adjoint in lendable:  # lent in the adapter: the loan ends here
                lines.append(f"{pad}{adjoint} = {_RUNTIME}.merge({adjoint}, {part}, {lendable.pop(adjoint)})")
            else:
                self.accumulate(adjoint, part, defined, pad, lines)
        return defined, True

    def branch(self, branch: Branch, frame: _Frame, depth: int, lines: list[str]) -> tuple[dict[str, str], bool]:
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
        for returns, defined, branch_lines in ((then_returns, then_defined, then_lines), (else_returns, else_defined, else_lines)):
            if returns:
                for adjoint in sorted(merged, key=self.adjoint_order):
                    value = defined.get(adjoint, _ZERO)
                    if value != adjoint:
                        branch_lines.append("    " * (depth + 1) + f"{adjoint} = {value}")
        lines.extend(then_lines)
        lines.append(f"{pad}else:")
        lines.extend(else_lines)
        return {adjoint: adjoint for adjoint in merged}, then_returns or else_returns

    def visible_adjoints(self, frame: _Frame) -> set[str]:
        visible = {self.adjoint(v) for v in frame.versions.values()}
        return visible | {self.adjoint(p) for p in self.invariants}

    def adjoint_order(self, adjoint: str) -> tuple:
        return (len(adjoint), adjoint)

    # -- forward statements ------------------------------------------------------------------
    def forward(self, statement, frame: _Frame, pad: str, lines: list[str], records: list[_Backward]) -> None:
        location = self.normalized.location(statement)
        self.origin = (location, "forward")
        if isinstance(statement, cst.If):
            self.inline_if(statement, frame, pad, lines)
            return
        small = statement.body[0]
        self.check_reads(small.value, frame, pad, lines)
        if isinstance(small, cst.Expr):
            value = self.rename(small.value, frame)
            if isinstance(value, cst.Call) and any(self.active_source(a, frame) for a in _operands(value)):
                self.check_effect(statement, small.value, value)
            lines.append(pad + syntax.code(self.rename(statement, frame)).strip())
            return
        value = self.rename(small.value, frame)
        target = small.targets[0].target
        if isinstance(target, cst.Tuple):  # a, b = t
            variables = [e.value.value for e in target.elements]
            source = self.active_source(value, frame) if isinstance(value, cst.Name) else None
            versions = [self.new_version(frame, v) for v in variables]
            lines.append(f"{pad}{_targets(versions)} = {syntax.code(value)}")
            if source is not None and any(self.is_active_variable(v) for v in variables):
                records.append(_Backward("unpack", versions, [value], adjoints={value.value: source}, origin=location))
            return
        variable = target.value
        first = len(lines)
        self.guard_in_place(statement, variable, value, pad, lines)
        record = None
        if self.is_active_variable(variable):
            record = self.record(statement, small.value, value, frame)
        version = self.new_version(frame, variable)
        lines.append(f"{pad}{version} = {syntax.code(value)}")
        if record is not None:
            record.target = version
            record.origin = location
            record.lines = range(first, len(lines))
            records.append(record)

    def inline_if(self, statement: cst.If, frame: _Frame, pad: str, lines: list[str]) -> None:
        """An inactive if kept as it is: every name it assigns gets one new version."""
        self.check_reads(statement.test, frame, pad, lines)
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
        self.inline_if_lines(statement, before, final, pad, lines)

    def inline_if_lines(self, statement: cst.If, before: _Frame, final: dict[str, str], pad: str, lines: list[str]) -> None:
        self.check_reads(statement.test, before, pad, lines)
        lines.append(f"{pad}if {syntax.code(self.rename(statement.test, before))}:")
        self.inline_branch(statement.body.body, before.copy(), final, pad + "    ", lines)
        if statement.orelse is not None:
            lines.append(f"{pad}else:")
            self.inline_branch(statement.orelse.body.body, before.copy(), final, pad + "    ", lines)
        else:
            copies = [(v, before.versions[v]) for v in final if v in before.versions and before.versions[v] != final[v]]
            if copies:
                lines.append(f"{pad}else:")
                for variable, version in copies:
                    lines.append(f"{pad}    {final[variable]} = {version}")

    def inline_branch(self, statements, frame: _Frame, final: dict[str, str], pad: str, lines: list[str]) -> None:
        written: set[str] = set()
        start = len(lines)
        for statement in statements:
            if isinstance(statement, cst.If):
                inner_assigned = {t for targets, _ in assignments([statement]) for t in targets}
                inner_final = {v: final[v] for v in inner_assigned}
                self.inline_if_lines(statement, frame, inner_final, pad, lines)
                for variable in inner_assigned:
                    frame.versions[variable] = final[variable]
                written |= inner_assigned
                continue
            small = statement.body[0]
            self.check_reads(small.value if isinstance(small, (cst.Assign, cst.Expr)) else small, frame, pad, lines)
            if isinstance(small, cst.Assign):
                value = self.rename(small.value, frame)
                target = small.targets[0].target
                variables = [e.value.value for e in target.elements] if isinstance(target, cst.Tuple) else [target.value]
                if len(variables) == 1:
                    self.guard_in_place(statement, variables[0], value, pad, lines)
                for variable in variables:
                    frame.versions[variable] = final[variable]
                written |= set(variables)
                names = [final[v] for v in variables]
                lines.append(f"{pad}{_targets(names) if isinstance(target, cst.Tuple) else names[0]} = {syntax.code(value)}")
            else:
                lines.append(pad + syntax.code(self.rename(statement, frame)).strip())
        for variable, version in final.items():
            if variable not in written and variable in frame.versions and frame.versions[variable] != version:
                lines.append(f"{pad}{version} = {frame.versions[variable]}")
        if len(lines) == start:
            lines.append(f"{pad}pass")

    def guard_in_place(self, statement, variable: str, value: cst.BaseExpression, pad: str, lines: list[str]) -> None:
        """`c += b` is `c = c + b` here, which an array would do in place: where `c` may be an
        array, a check refuses that at run time instead of computing something else."""
        origin = self.normalized.origins.get(id(statement))
        if not isinstance(origin, cst.AugAssign) or variable in self.numbers or not isinstance(value, cst.BinaryOperation):
            return
        where = f"{self.normalized.location(statement)}: {syntax.code(origin).strip()}"
        target = syntax.code(origin.target)
        operator = syntax.code(origin.operator).strip()[:-1]
        rewrite = f"{target} = {target} {operator} {syntax.code(origin.value)}"
        lines.append(f"{pad}{_RUNTIME}.refuse_in_place({syntax.code(value.left)}, {where!r}, {rewrite!r})")

    def record(self, statement, original: cst.BaseExpression, value: cst.BaseExpression, frame: _Frame) -> _Backward | None:
        """The backward record of an active assignment, or None when it has no backward."""
        adjoints = {a.value: self.active_source(a, frame) for a in _operands(value) if isinstance(a, cst.Name)}
        adjoints = {version: adjoint for version, adjoint in adjoints.items() if adjoint is not None}
        if not adjoints:
            return None
        if isinstance(value, cst.BinaryOperation) and any(self.owner(a, frame) in self.containers for a in (value.left, value.right)):
            self.fail(statement, f"operator {syntax.code(value.operator).strip()} on a sequence", "concatenating or repeating differentiable tuples and lists is not supported yet; build the sequence element by element")
        record = self.record_kind(statement, original, value)
        if record is not None:
            record.adjoints = adjoints
        return record

    def record_kind(self, statement, original: cst.BaseExpression, value: cst.BaseExpression) -> _Backward | None:
        if isinstance(value, cst.Attribute):  # x.T: the attribute's rule, with x as its argument
            descriptor = getattr(np.ndarray, value.attr.value, None)
            label = f".{value.attr.value}"
            if descriptor is None:  # p.W: a field of a NamedTuple or a dataclass instance
                return _Backward("attribute", "", [value.value], extra={"name": value.attr.value})
            if descriptor not in TABLE:
                self.fail(statement, f"attribute {syntax.code(original)} of a differentiable value", f"no derivative rule for the attribute {label}; cpsgrad knows numpy arrays' attributes (T, shape, ...)", NoRuleError)
            return self.rule_record(statement, descriptor, label, [value.value], {})
        if syntax.is_atom(value):
            return _Backward("copy", "", [value])
        if isinstance(value, (cst.Tuple, cst.List)):
            return _Backward("display", "", [e.value for e in value.elements])
        if isinstance(value, cst.Dict):
            return _Backward("dict", "", [e.value for e in value.elements], extra={"keys": [e.key for e in value.elements]})
        if isinstance(value, cst.Subscript):
            return _Backward("index", "", [value.value], extra={"index": [e.slice for e in value.slice]})
        if isinstance(value, cst.BinaryOperation):
            primitive = binary_primitive(value.operator)
            return self.rule_record(statement, primitive, syntax.code(value.operator).strip(), [value.left, value.right], {})
        if isinstance(value, cst.UnaryOperation):
            primitive = unary_primitive(value.operator)
            return self.rule_record(statement, primitive, syntax.code(value.operator).strip(), [value.expression], {})
        if isinstance(value, cst.Call):
            positional, keywords = _call_arguments(value)
            method = self.method(original.func)
            if method is not None:  # x.sum(axis=0): the rule of np.ndarray.sum, called as (x, axis=0)
                receiver = value.func.value
                return self.rule_record(statement, method, syntax.code(original.func), [receiver, *positional], keywords)
            primitive = self.callee(statement, original.func)
            return self.rule_record(statement, primitive, syntax.code(original.func), positional, keywords)
        self.fail(statement, syntax.code(value), "this operation is not differentiable")
        return None

    def method(self, callee: cst.BaseExpression):
        """The numpy array method (or, for a name arrays lack, the dict method) a call
        `x.name(...)` of a differentiable local value `x` stands for, if any."""
        return calls.array_method(callee, self.resolver) or calls.container_method(callee, self.resolver)

    def callee(self, statement, callee: cst.BaseExpression):
        """The primitive a call of a differentiable value names, or a clear error."""
        primitive = self.resolver.resolve(callee)
        if primitive is not None:
            return primitive
        label = syntax.code(callee)
        if isinstance(callee, cst.Attribute) and syntax.dotted_name(callee.value) is not None and self.resolver.resolve(callee.value) is None:
            self.fail(statement, f"method call {label}", _METHOD_ADVICE, UnsupportedError)
        self.fail(statement, f"call of {label}", f"{label} is computed at run time and receives a differentiable value only through its receiver; pass the value as an argument", NoRuleError)

    def check_effect(self, statement, original: cst.Call, value: cst.Call) -> None:
        """A call made for its effect on a differentiable value: only non-differentiable primitives
        (print, ...) may take one; anything else could change a value behind the gradient's back."""
        label = syntax.code(original.func)
        effect = f"call of {label} for its effect"
        if calls.classify(original.func, self.resolver) == calls.USER:
            if calls.receiver(original.func) is not None and self.resolver.resolve(original.func) is None:
                self.callee(statement, original.func)  # a method of a local value: refused as such
            self.fail(statement, effect, f"{label} receives a differentiable value and its result is discarded; assign the result (y = {label}(...)) to differentiate through the call", UnsupportedError)
        primitive = self.callee(statement, original.func)
        positional, keywords = _call_arguments(value)
        for rule in TABLE.rules_for(primitive):
            if rule.bind(tuple(positional), keywords) is not None and not rule.differentiable:
                return
        self.fail(statement, effect, f"{label} receives a differentiable value and its result is discarded; cpsgrad cannot see what it changes. Assign its result, or keep differentiable values out of it", UnsupportedError)

    def rule_record(self, statement, primitive, label: str, positional: list, keywords: dict) -> _Backward | None:
        for rule in TABLE.rules_for(primitive):
            bound = rule.bind(tuple(positional), keywords)
            if bound is not None:
                if not rule.differentiable:
                    return None
                return _Backward("rule", "", [], rule=rule, bound=bound)
        self.fail(statement, f"call of {label}", _no_rule_advice(primitive, label, bool(TABLE.rules_for(primitive))), NoRuleError)
        return None

    def fail(self, statement, construct: str, advice: str, error=UnsupportedError):
        raise error(self.normalized.location(statement), construct, advice)

    # -- fusion ------------------------------------------------------------------------------
    def fuse(self, records: list[_Backward], lines: list[str], start: int) -> list[_Backward]:
        """`records` with each group of statements that has one backward (transforms/fusion.py:
        a softmax or a log-sum-exp written out) replaced by that backward, at its last statement's place. What
        reads a version is read off the block's output from `start` (its statements, tail,
        branches and continuation calls): a name seen anywhere else keeps the group apart."""
        if not any(record.kind == "rule" and record.rule.template in fusion.LAST for record in records):
            return records
        read = [(index, set(_IDENTIFIER.findall(lines[index]))) for index in range(start, len(lines))]

        def private(version: str, members: list[_Backward]) -> bool:
            own = {index for member in members for index in member.lines}
            return not any(version in names for index, names in read if index not in own)

        replaced: dict[int, _Backward | None] = {}
        for group in fusion.groups(records, private):
            source = next((m.adjoints[group.logits.value] for m in group.members if group.logits.value in m.adjoints), None)
            if source is None or self.is_number(group.logits):
                continue
            for member in group.members:
                replaced[id(member)] = None
            extra = {"statements": [member.target for member in group.members]}
            if isinstance(group, fusion.Logsumexp):
                extra.update(exponentials=group.exponentials, total=group.total)
                kind = "logsumexp"
            else:
                extra["axis"] = "None" if group.axis is None else group.axis
                if group.picked is not None:
                    extra["probabilities"] = group.picked.sources[0]
                    extra["index"] = _index_code(group.picked)
                kind = "softmax"
            replaced[id(group.output)] = _Backward(kind, group.output.target, [group.logits], adjoints={group.logits.value: source}, extra=extra, origin=group.output.origin)
        if not replaced:
            return records
        return [replaced.get(id(record), record) for record in records if replaced.get(id(record), record) is not None]

    # -- backward statements -----------------------------------------------------------------
    def accumulate(self, adjoint: str, expression: str, defined: dict[str, str], pad: str, lines: list[str]) -> None:
        """Add `expression` to `adjoint`: assign the first contribution, add later ones. A first
        contribution that is another (complete) adjoint is not copied: `adjoint` aliases it."""
        current = defined.get(adjoint)
        if current == adjoint and self.holds_number(adjoint):
            lines.append(f"{pad}{adjoint} += {expression}")
        elif current == adjoint:  # in place only where nothing else holds the array (an adjoint may be shared)
            lines.append(f"{pad}{adjoint} = {_accumulation(adjoint, expression)}")
        elif current is not None:
            lines.append(f"{pad}{adjoint} = {current} + {expression}")
            defined[adjoint] = adjoint
        elif expression in self.adjoint_values(defined):
            defined[adjoint] = expression
        elif adjoint in self.borrowers:  # a parameter's first: into what the caller lent, if it did
            borrowed = f"{_RUNTIME}.borrow({self.borrowers[adjoint]})"
            lines.append(f"{pad}{adjoint} = {_accumulation(borrowed, expression)}")
            defined[adjoint] = adjoint
        else:
            lines.append(f"{pad}{adjoint} = {expression}")
            defined[adjoint] = adjoint

    @staticmethod
    def adjoint_values(defined: dict[str, str]) -> set[str]:
        return set(defined.values())

    def backward(self, record: _Backward, defined: dict[str, str], pad: str, lines: list[str]) -> None:
        if record.kind == "unpack":
            adjoints = [self.adjoint(v) for v in record.target]
            if not any(a in defined for a in adjoints):
                return
            source = record.source(record.sources[0])
            if source is not None:
                parts = ", ".join(defined.get(a, _ZERO) for a in adjoints)
                self.accumulate(source, f"{_RUNTIME}.unpacked(({parts},))", defined, pad, lines)
            return
        output = defined.get(self.adjoint(record.target))
        if output is None:
            return
        if record.kind == "copy":
            source = record.source(record.sources[0])
            if source is not None:
                self.accumulate(source, output, defined, pad, lines)
        elif record.kind == "display":
            for position, element in enumerate(record.sources):
                source = record.source(element)
                if source is not None:
                    self.accumulate(source, f"{_RUNTIME}.item({output}, {position})", defined, pad, lines)
        elif record.kind == "dict":
            keys = record.extra["keys"]
            constants = _constant_values(keys)
            for position, element in enumerate(record.sources):
                source = record.source(element)
                if source is None:
                    continue
                if constants is None:
                    listed = ", ".join(syntax.code(k) for k in keys)
                    expression = f"{_RUNTIME}.display_entry({output}, ({listed},), {position})"
                elif constants[position] in constants[position + 1:]:
                    continue  # a later entry overwrote this one
                else:
                    expression = f"{_RUNTIME}.entry({output}, {syntax.code(keys[position])})"
                self.accumulate(source, expression, defined, pad, lines)
        elif record.kind == "attribute":
            source = record.source(record.sources[0])
            if source is not None:
                expression = f"{_RUNTIME}.attribute_adjoint({syntax.code(record.sources[0])}, {record.extra['name']!r}, {output})"
                self.accumulate(source, expression, defined, pad, lines)
        elif record.kind == "softmax":  # a group's one backward (fuse)
            statements = ", ".join(record.extra["statements"])
            logits, axis = syntax.code(record.sources[0]), record.extra["axis"]
            if "index" in record.extra:
                probabilities = syntax.code(record.extra["probabilities"])
                lines.append(f"{pad}# {record.target} is the log of softmax({logits})[{record.extra['index']}] ({statements}): one backward")
                expression = f"{_RUNTIME}.picked_log_softmax_adjoint({output}, {probabilities}, {record.extra['index']}, {axis})"
            else:
                lines.append(f"{pad}# {record.target} is a softmax of {logits} ({statements}): one backward")
                expression = f"{_RUNTIME}.softmax_adjoint({output}, {record.target}, {axis})"
            self.accumulate(record.source(record.sources[0]), expression, defined, pad, lines)
        elif record.kind == "logsumexp":  # a group's one backward (fuse)
            statements = ", ".join(record.extra["statements"])
            logits = syntax.code(record.sources[0])
            lines.append(f"{pad}# {record.target} is log(sum(exp({logits}))) ({statements}): one backward")
            expression = f"{_RUNTIME}.logsumexp_adjoint({output}, {record.extra['exponentials']}, {record.extra['total']})"
            self.accumulate(record.source(record.sources[0]), expression, defined, pad, lines)
        elif record.kind == "index":
            container = record.sources[0]
            source = record.source(container)
            if source is not None:
                expression = f"{_RUNTIME}.index_adjoint({syntax.code(container)}, {_index_code(record)}, {output})"
                self.accumulate(source, expression, defined, pad, lines)
        else:
            self.inline_rule(record, output, defined, pad, lines)

    def inline_rule(self, record: _Backward, output: str, defined: dict[str, str], pad: str, lines: list[str]) -> None:
        rule = record.rule
        _, outputs, output_adjoints, _ = rule.parts
        if len(outputs) == 1:
            mapping: dict[str, cst.BaseExpression] = {outputs[0]: cst.Name(record.target), output_adjoints[0]: cst.Name(output)}
        else:  # `a_d, b_d = yield a, b`: the call returned a tuple, its adjoint has one part each
            mapping = {}
            for position, (name, adjoint) in enumerate(zip(outputs, output_adjoints, strict=True)):
                mapping[name] = cst.parse_expression(f"{record.target}[{position}]")
                mapping[adjoint] = cst.parse_expression(f"{_RUNTIME}.item({output}, {position})")
        checked = not rule.trusted  # a user's rule: its output adjoints materialized, its contributions checked
        if checked:
            label = syntax.code(cst.SimpleString(repr(rule.label)))
        if checked and not self.holds_number(self.adjoint(record.target)):
            values = [cst.Name(record.target)] if len(outputs) == 1 else [mapping[name] for name in outputs]
            for adjoint, value in zip(output_adjoints, values, strict=True):
                mapping[adjoint] = cst.parse_expression(f"{_RUNTIME}.rule_adjoint({syntax.code(mapping[adjoint])}, {syntax.code(value)})")
        defaults = templates.defaults(rule)
        accumulators: dict[str, str | None] = {}
        for parameter in rule.signature.parameters:
            atom = record.bound.get(parameter)
            if atom is not None:
                mapping[parameter] = templates.parenthesized(atom)
            elif parameter in defaults:  # omitted at the call: the template's default stands in
                mapping[parameter] = defaults[parameter]
            accumulators[parameter + TEMPLATE_ADJOINT_SUFFIX] = None if atom is None else record.source(atom)
        steps = templates.kept_steps(rule, {name for name, adjoint in accumulators.items() if adjoint is not None})
        locals_ = {name: self.local_name(f"{record.target}_{name}") for step in steps for name in step.names}
        mapping.update({name: cst.Name(alias) for name, alias in locals_.items()})
        mapping.update(self.template_globals(rule, set(mapping) | set(accumulators), steps))
        renamer = Renamer(mapping)
        # numbers in and a number out (not np.full(3, a)): no broadcasting happened to undo
        numbers_only = self.holds_number(self.adjoint(record.target)) and all(self.is_number(a) for a in record.bound.values())
        start = len(lines)
        for step in steps:
            value = templates.without_unbroadcast(step.value) if numbers_only else step.value
            code = syntax.code(value.visit(renamer))
            if step.names:  # a backward local, computed once for the accumulations below
                lines.append(f"{pad}{syntax.code(step.target.visit(renamer))} = {code}")
                continue
            if checked:
                parameter = step.accumulator[: -len(TEMPLATE_ADJOINT_SUFFIX)]
                like = syntax.code(mapping[parameter])
                code = f"{_RUNTIME}.rule_contribution({code}, {like}, {label}, {parameter!r})"
            self.accumulate(accumulators[step.accumulator], code, defined, pad, lines)
        if locals_:  # what the locals hold is the adjoints' alone now: later sums may add in place
            lines.append(f"{pad}del {', '.join(locals_.values())}")
        if checked and len(lines) > start:  # whatever the rule's backward raises names the rule
            for position in range(start, len(lines)):  # in place: Lines keeps each line's origin
                lines[position] = "    " + lines[position]
            lines.insert(start, f"{pad}try:")
            lines.append(f"{pad}except Exception as error:")
            lines.append(f"{pad}    {_RUNTIME}.rule_failed({label}, error)")

    def local_name(self, base: str) -> str:
        """A fresh name for a template's backward local, never one that reads as an adjoint."""
        name = self.namer.fresh(base)
        while name.endswith(self.suffix):
            name = self.namer.numbered(base)
        return name

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

    def template_globals(self, rule: Rule, local: set[str], steps: list) -> dict[str, cst.BaseExpression]:
        """Bind the module names a template's kept `steps` and defaults read into the namespace."""
        aliases: dict[str, cst.BaseExpression] = {}
        for name in templates.reads(rule, steps):
            if name in local:
                continue
            value = rule.globals.get(name, getattr(builtins, name, _MISSING))
            if value is _MISSING:
                continue
            alias = name
            shadowed = name in self.namer.taken and self.resolver.lookup(name) is not value
            if shadowed or self.namespace.get(name, value) is not value:
                alias = f"{name}__rule"
                aliases[name] = cst.Name(alias)
            self.namespace[alias] = value
        return aliases


_METHOD_ADVICE = (
    "cpsgrad differentiates the methods of numpy arrays, values/items/keys/get of dicts, and append and pop of a list "
    "the function builds itself (a display or list(...)) that is not a parameter and that no other name, container or "
    "user function sees before them; other methods (extend, insert, sort, ...) are not supported yet: build a new "
    "tuple or list instead; an array's in-place methods (x.sort(), x.fill(v), ...) are not differentiated: use np.sort(x)"
)

def _accumulation(total: str, expression: str) -> str:
    """`accumulate(total, expression)`, in the form that adds in place without a full-size
    temporary where the expression is one: an `x[i]` read's adjoint (into the elements) or a
    `W @ h` product's (BLAS into the total)."""
    indexed = _helper_arguments(expression, "index_adjoint")
    if indexed is not None:
        return f"{_RUNTIME}.accumulate_index({total}, {indexed})"
    product = _helper_arguments(expression, "matmul_left")
    if product is not None:
        return f"{_RUNTIME}.accumulate_matmul_left({total}, {product})"
    return f"{_RUNTIME}.accumulate({total}, {expression})"


def _helper_arguments(expression: str, helper: str) -> str | None:
    """The arguments of `expression` when it is exactly one `cpsgrad_runtime.<helper>(...)` call."""
    if not expression.startswith(f"{_RUNTIME}.{helper}("):
        return None
    node = cst.parse_expression(expression)
    if not isinstance(node, cst.Call) or syntax.dotted_name(node.func) != f"{_RUNTIME}.{helper}":
        return None
    return ", ".join(syntax.code(argument.value) for argument in node.args)


def _no_rule_advice(primitive, label: str, has_rules: bool) -> str:
    if has_rules:
        return f"no derivative rule for {label} fits these arguments; see cpsgrad.rule to add one"
    return f"no derivative rule for {label}; declare one with @cpsgrad.rule({label})"


def _targets(names: list[str]) -> str:
    """Unpacking targets: `a, b`, and `a,` for one name (`a = t` would bind the whole tuple)."""
    return ", ".join(names) + ("," if len(names) == 1 else "")


def _index_code(record: _Backward) -> str:
    """The index of an "index" record as code: `i`, or `(slice(None, None, None), j)`."""
    parts = [syntax.code(i.value) if isinstance(i, cst.Index) else _slice_code(i) for i in record.extra["index"]]
    return parts[0] if len(parts) == 1 else f"({', '.join(parts)})"


def _slice_code(index: cst.Slice) -> str:
    parts = [syntax.code(p) if p is not None else "None" for p in (index.lower, index.upper, index.step)]
    return f"slice({', '.join(parts)})"


def _constant_values(keys: list) -> list | None:
    """The values of a dict display's keys when all are literals, else None."""
    values = []
    for key in keys:
        value = syntax.literal_value(key)
        if value is syntax.NOT_LITERAL:
            return None
        values.append(value)
    return values


def _operands(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(value, cst.Attribute):  # x.T reads x (math.pi reads nothing local: not a Name)
        return [value.value]
    if syntax.is_atom(value):
        return [value]
    if isinstance(value, (cst.Tuple, cst.List)):
        return [e.value for e in value.elements]
    if isinstance(value, cst.Dict):  # keys are not differentiable
        return [e.value for e in value.elements]
    if isinstance(value, cst.Subscript):
        return [value.value]
    if isinstance(value, cst.BinaryOperation):
        return [value.left, value.right]
    if isinstance(value, cst.UnaryOperation):
        return [value.expression]
    if isinstance(value, cst.Call):
        receiver = value.func
        while isinstance(receiver, cst.Attribute):  # `l.pop` reads `l`; `math.sin` reads nothing local
            receiver = receiver.value
        return [a.value for a in value.args] + ([receiver] if receiver is not value.func else [])
    if isinstance(value, cst.Attribute):
        return [value.value]
    return []


def _call_arguments(call: cst.Call) -> tuple[list[cst.BaseExpression], dict[str, cst.BaseExpression]]:
    """A call's positional arguments and keyword arguments, to bind to a rule's signature."""
    positional = [a.value for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    return positional, keywords


def _block_reads(block: Block | None) -> tuple[set[str], set[str]]:
    """(names read, continuations jumped to) in a block and its branches."""
    names: set[str] = set()
    targets: set[str] = set()
    if block is None:
        return names, targets
    for statement in block.statements:
        names.update(syntax.variables_read(statement))
    tail = block.tail
    if isinstance(tail, Call):
        names.update(syntax.variables_read(tail.statement))
        if tail.continuation is not None:
            targets.add(tail.continuation.name)
    elif isinstance(tail, Jump):
        targets.add(tail.target.name)
    elif isinstance(tail, Return):
        names.update(syntax.variables_read(tail.value))
    elif isinstance(tail, Branch):
        for part in (tail.then, tail.orelse):
            more_names, more_targets = _block_reads(part)
            names |= more_names
            targets |= more_targets
    return names, targets


_SEQUENCE_BUILDERS = (list, tuple, sorted, reversed, zip, enumerate, range, runtime.as_sequence, runtime.appended, runtime.removed)


def _container_names(definition: cst.FunctionDef, resolver: Resolver) -> set[str]:
    """Names that surely hold a tuple or list built in the function (displays, list(...)); a
    slice may be an array's, so operators on slices are checked at run time instead
    (`cpsgrad_runtime.unbroadcast` refuses a concatenated sequence)."""
    found = assignments(definition.body.body)
    containers: set[str] = set()
    changed = True
    while changed:
        changed = False
        for targets, value in found:
            if not isinstance(targets, list) or targets[0] in containers:  # unpacking binds elements
                continue
            if (
                isinstance(value, (cst.Tuple, cst.List))
                or (isinstance(value, cst.Call) and any(resolver.resolve(value.func) is b for b in _SEQUENCE_BUILDERS))
                or (isinstance(value, cst.Name) and value.value in containers)
                or (isinstance(value, cst.BinaryOperation) and any(isinstance(o, cst.Name) and o.value in containers for o in (value.left, value.right)))
            ):
                containers.add(targets[0])
                changed = True
    return containers
