"""The Generator: the final derivative program of one CPS program, continuation by continuation.
Per block, the straight-line statements forward (forward.py), then the tail (tails.py,
user_calls.py), then each record's backward in reverse (backward.py), fused where a group has one
(fused.py)."""

from __future__ import annotations

import libcst as cst

from cpsgrad import runtime
from cpsgrad.runtime import spread_sites
from cpsgrad.transforms import calls, cps, naming, syntax
from cpsgrad.transforms.adjoint import output
from cpsgrad.transforms.adjoint.accumulation import Accumulation
from cpsgrad.transforms.adjoint.backward import Backward
from cpsgrad.transforms.adjoint.forward import Forward
from cpsgrad.transforms.adjoint.frames import Frame, Versions
from cpsgrad.transforms.adjoint.fused import Fusion
from cpsgrad.transforms.adjoint.guards import Guards
from cpsgrad.transforms.adjoint.inactive import InactiveIf
from cpsgrad.transforms.adjoint.output import ZERO, Lines, Provenance
from cpsgrad.transforms.adjoint.records import Record
from cpsgrad.transforms.adjoint.rule_inlining import RuleInlining
from cpsgrad.transforms.adjoint.tails import Tails
from cpsgrad.transforms.adjoint.user_calls import UserCalls
from cpsgrad.transforms.analysis.activity import assignments
from cpsgrad.transforms.continuations import ContinuationKind
from cpsgrad.transforms.cps import Block, Branch, Call, Continuation, Jump, Program, Return
from cpsgrad.transforms.resolve import Resolver


class Generator(Versions, Forward, InactiveIf, Tails, Guards, UserCalls, Fusion, Backward, RuleInlining, Accumulation):
    """Generates the final derivative program of one CPS program. Its jobs are its bases, one
    module each; the state they share is set up here."""

    def __init__(
        self,
        program: Program,
        resolver: Resolver,
        differentiated: tuple[str, ...],
        numbers: set[str] = frozenset(),
        sites: list[calls.Site] = (),
        borrows: bool = False,
        captured: tuple[str, ...] = (),
    ):
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
        self.origin: tuple = (None, "forward")  # what the statements added now come from (Lines)
        self.provenance = Provenance()  # each statement's origin (output.render reads it)
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
            self.namespace[naming.call_site(site.label)] = spread_sites.site(
                site.callee_code, site.location, site.active, site.positional, site.keywords, site.callee_active,
                site.consumable,
            ).call

    def _adjoint_suffix(self) -> str:
        taken = self.namer.taken
        attempt = 0
        while any(name + naming.adjoint_suffix(attempt) in taken for name in taken):
            attempt += 1
        return naming.adjoint_suffix(attempt)

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

    def generate(self) -> cst.FunctionDef:
        """The program's entry function (`f__cps`), its continuations defined first, as a libcst
        tree; `provenance` then holds where each of its statements came from (output.render)."""
        function = self.program.function
        body = Lines(self)
        for continuation in self.program.continuations:
            self.origin = (None, "forward")
            inner = Lines(self)
            self.continuation(continuation, inner)
            body.append(output.function(continuation.name, continuation.parameters, inner), (None, "forward"))
        self.origin = (None, "forward")
        self.continuation(function, body)
        return output.function(naming.cps_function(function.name), [*function.parameters, self.k], body)

    def continuation(self, continuation: Continuation, lines: Lines) -> None:
        frame = Frame({p: p for p in continuation.parameters}, set(continuation.parameters))
        frame.unchecked = set(self.maybe_unbound.get(continuation.name, ()))
        defined, _ = self.block(continuation.body, frame, lines)
        if continuation.kind is ContinuationKind.FUNCTION:
            returned = list(self.differentiated)  # in the order argnums asked for
        else:
            returned = [p for p in continuation.parameters if self.is_active_variable(p)]
            returned += self.free_adjoints[continuation.name]
        values = [output.value_of(defined.get(self.adjoint(p), ZERO)) for p in returned]
        result = cst.Name(self.out)
        if values:
            lines.append(output.returning(output.bare_tuple([result, *values])))
        else:
            lines.append(output.returning(output.parenthesized_tuple([result])))

    def block(self, block: Block, frame: Frame, lines: Lines) -> tuple[dict[str, str], bool]:
        """Emit a block; return the adjoints defined at its end (each mapped to the variable that
        holds it: itself, or the adjoint it equals, a copy never emitted) and whether it returns."""
        records: list[Record] = []
        start = len(lines)
        for statement in block.statements:
            self.forward(statement, frame, lines, records)
        defined, returns = self.tail(block.tail, frame, lines)
        if not returns:
            return {}, False
        for record in reversed(self.fuse(records, lines, start)):
            self.origin = (record.origin, "backward")
            self.backward(record, defined, lines)
        return defined, True


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


_SEQUENCE_BUILDERS = (
    list,
    tuple,
    sorted,
    reversed,
    zip,
    enumerate,
    range,
    runtime.as_sequence,
    runtime.in_place_operand,  # a list's `+=` operand: a tuple or list, decided when it runs (transforms/augmented.py)
    runtime.appended,
    runtime.removed,
)


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
                or (
                    isinstance(value, cst.BinaryOperation)
                    and any(isinstance(o, cst.Name) and o.value in containers for o in (value.left, value.right))
                )
            ):
                containers.add(targets[0])
                changed = True
    return containers
