"""CPS: cut a normalized function into continuations at join points and loops.

Every `if` whose branches both reach the code after it gets a join continuation (reified once,
called from each branch); every loop becomes a recursive continuation (its head) and the code
after it an exit continuation; `break`, `continue` and `return` become calls of those and of the
function's own continuation `k`. A continuation's parameters are the variables live at its entry
(in first-appearance order), except the function's parameters that are never reassigned, which
it reads from the enclosing frame. Branches on inactive values that contain no jumps stay inline.
A call of a user function with a differentiable argument ends its block too: the rest of the
block becomes the callee's continuation (`after_call_1`, whose first parameter is the call's
result), or the function's own `k` when the rest just returns the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import libcst as cst

from cpsgrad.transforms import attributes, naming, regions, syntax, writes
from cpsgrad.transforms.analysis.activity import assignments
from cpsgrad.transforms.containers import is_list_change
from cpsgrad.transforms.continuations import Block, Branch, Call, Continuation, ContinuationKind, Jump, Raise, Return
from cpsgrad.transforms.naming import Namer
from cpsgrad.transforms.normalize import Normalized

# ---- the continuation program (its blocks and tails: continuations.py) -----------------------


@dataclass
class Program:
    normalized: Normalized
    function: Continuation
    continuations: list[Continuation]
    invariants: list[str]  # parameters never reassigned: read from the enclosing frame
    active: set[str]
    order: list[str]  # every local name, in first-appearance order
    continuation_name: str  # the function's continuation parameter, `k`
    namer: Namer = field(repr=False, default=None)
    calls: list[Call] = field(default_factory=list)  # the calls of user functions, in order


# ---- liveness ---------------------------------------------------------------------------------


def _defined(statement) -> list[str]:
    return [name for targets, _ in assignments([statement]) for name in targets]


class _Liveness:
    def __init__(self, local_names: set[str]):
        self.local_names = local_names
        self.memo: dict[int, tuple[set[str], set[str]]] = {}  # id(small statement) -> (uses, defs)

    def uses(self, node: cst.CSTNode) -> set[str]:
        return {n for n in syntax.variables_read(node) if n in self.local_names}

    def facts(self, statement, small) -> tuple[set[str], set[str]]:
        """(names read, names assigned) by a simple statement, computed once."""
        key = id(small)
        if key not in self.memo:
            read = small.value if isinstance(small, (cst.Assign, cst.Expr)) else small
            self.memo[key] = (self.uses(read), set(_defined(statement)))
        return self.memo[key]

    def block(self, statements: list, after: set[str], exits: tuple[set[str], set[str]] | None) -> set[str]:
        live = set(after)
        for statement in reversed(statements):
            live = self.statement(statement, live, exits)
        return live

    def statement(self, statement, live: set[str], exits) -> set[str]:
        if isinstance(statement, cst.Try):
            return regions.liveness(self, statement, live, exits)
        if isinstance(statement, cst.If):
            then = self.block(statement.body.body, live, exits)
            orelse = self.block(statement.orelse.body.body, live, exits) if statement.orelse else live
            return self.facts(statement, statement.test)[0] | then | orelse
        if isinstance(statement, cst.While):
            head: set[str] = set()
            while True:
                new = self.block(statement.body.body, head, (live, head))
                if new == head:
                    return head
                head = new
        small = statement.body[0]
        if isinstance(small, cst.Break):
            return set(exits[0])
        if isinstance(small, cst.Continue):
            return set(exits[1])
        uses, defines = self.facts(statement, small)
        if isinstance(small, (cst.Return, cst.Raise)):
            return set(uses)
        return (live - defines) | uses


# ---- conversion -------------------------------------------------------------------------------


@dataclass
class _Context:
    after: Jump | Return
    after_live: set[str]
    exits: tuple[set[str], set[str]] | None = None
    break_to: Jump | Return | None = None
    continue_to: Jump | None = None
    region: regions.Region | None = None  # the try region the statements are in (regions.py)
    loop_region: regions.Region | None = None  # the region around the innermost loop


def _small(statement):
    return statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None


def _jumps(statements) -> bool:
    """Whether a block contains a loop, break, continue or return anywhere."""
    for statement in statements:
        if isinstance(statement, (cst.While, cst.Try)):
            return True
        if isinstance(statement, cst.If):
            if _jumps(statement.body.body) or (statement.orelse and _jumps(statement.orelse.body.body)):
                return True
        elif isinstance(_small(statement), (cst.Break, cst.Continue, cst.Return)):
            return True
    return False


def _is_return(statements) -> bool:
    """A block that is just `return atom`."""
    return len(statements) == 1 and isinstance(_small(statements[0]), cst.Return)


def _falls_through(statements) -> bool:
    for statement in statements:
        small = _small(statement)
        if isinstance(small, (cst.Break, cst.Continue, cst.Return, cst.Raise)):
            return False
        if isinstance(statement, cst.If) and statement.orelse is not None:
            if not _falls_through(statement.body.body) and not _falls_through(statement.orelse.body.body):
                return False
    return True


class _Converter:
    def __init__(self, normalized: Normalized, active: set[str], namer: Namer, user_calls: set[int]):
        self.normalized = normalized
        self.user_calls = user_calls
        self.calls: list[Call] = []
        self.active = active
        self.namer = namer
        definition = normalized.definition
        assigned = {n for targets, _ in assignments(definition.body.body) for n in targets}
        self.order = _first_appearance(normalized.parameters, definition)
        self.order += [name for name in regions.error_names(definition) if name not in self.order]
        self.locals = set(self.order)  # (the except names too: liveness memoizes what each statement reads)
        self.invariants = [p for p in normalized.parameters if p not in assigned]
        self.liveness = _Liveness(self.locals)
        self.continuations: list[Continuation] = []
        self.joins = 0
        self.call_number = 0

    def parameters(self, live: set[str]) -> list[str]:
        return [n for n in self.order if n in live and n not in self.invariants]

    def continuation(self, name: str, live: set[str], kind: ContinuationKind) -> Continuation:
        continuation = Continuation(self.namer.fresh(name), self.parameters(live), kind=kind)
        self.continuations.append(continuation)
        return continuation

    def inline(self, statement: cst.If) -> bool:
        """An if on an inactive test whose branches assign only inactive names and never jump."""
        if syntax.variables_read(statement.test) and any(
            n in self.active for n in syntax.variables_read(statement.test)
        ):
            return False
        branches = [statement.body.body] + ([statement.orelse.body.body] if statement.orelse else [])
        for branch in branches:
            if _jumps(branch):
                return False
            for targets, value in assignments(branch):
                if (
                    any(t in self.active for t in targets)
                    or writes.is_write(value)
                    or is_list_change(value)
                    or attributes.is_attribute_write(value)
                ):
                    return False  # (a write, a list change and an attribute write have a backward)
        return True

    def block(self, statements: list, context: _Context) -> Block:
        straight: list = []
        for position, statement in enumerate(statements):
            small = _small(statement)
            if isinstance(small, cst.Pass):  # an empty branch's placeholder (syntax.indented)
                continue
            converted = regions.hook(self, statement, statements[position + 1:], straight, context)
            if converted is not None:  # a try, or a statement that may raise inside one
                return converted
            if isinstance(small, cst.Break):
                return Block(straight, context.break_to)
            if isinstance(small, cst.Continue):
                return Block(straight, context.continue_to)
            if isinstance(small, cst.Return):
                return Block(straight, Return(small.value, statement))
            if isinstance(small, cst.Raise):
                return Block(straight, Raise(statement))
            rest = statements[position + 1:]
            if isinstance(statement, cst.If) and not self.inline(statement):
                return Block(straight, self.branch(statement, rest, context))
            if isinstance(statement, cst.While):
                return Block(straight, self.loop(statement, rest, context))
            if id(statement) in self.user_calls:
                return Block(straight, self.call(statement, rest, context))
            straight.append(statement)
        return Block(straight, context.after)

    def branch(self, statement: cst.If, rest: list, context: _Context) -> Branch:
        then = list(statement.body.body)
        orelse = list(statement.orelse.body.body) if statement.orelse else []
        join_live = self.liveness.block(rest, context.after_live, context.exits) | regions.live(context)
        inner = context
        join = None
        if rest and _is_return(rest):  # nothing worth a continuation: each branch returns itself
            then = then + rest if _falls_through(then) else then
            orelse = orelse + rest if _falls_through(orelse) else orelse
        elif rest and _falls_through(then) and _falls_through(orelse):
            self.joins += 1
            join = self.continuation(naming.join(self.joins), join_live, ContinuationKind.JOIN)
            inner = replace(context, after=Jump(join), after_live=set(join.parameters) | set(self.invariants))
        elif rest:
            then = then + rest if _falls_through(then) else then
            orelse = orelse + rest if _falls_through(orelse) else orelse
        result = Branch(statement.test, self.block(then, inner), self.block(orelse, inner), statement)
        if join is not None:
            join.body = self.block(rest, context)
        return result

    def loop(self, statement: cst.While, rest: list, context: _Context) -> Jump:
        label = self.normalized.loop_labels[id(statement)]
        after_live = self.liveness.block(rest, context.after_live, context.exits) | regions.live(context)
        head_live = self.liveness.statement(statement, after_live, context.exits) | regions.live(context)
        head = self.continuation(label, head_live, ContinuationKind.LOOP)
        exit_to: Jump | Return = context.after
        exit_continuation = None
        if rest and _is_return(rest) and context.region is None:
            exit_to = Return(_small(rest[0]).value, rest[0])
        elif rest:
            exit_continuation = self.continuation(naming.loop_exit(label), after_live, ContinuationKind.EXIT)
            exit_to = Jump(exit_continuation)
        loop_context = _Context(
            Jump(head), set(head.parameters) | set(self.invariants), (after_live, head_live), exit_to, Jump(head)
        )
        loop_context.region = loop_context.loop_region = context.region  # a loop inside a try region
        head.body = self.block(list(statement.body.body), loop_context)
        if exit_continuation is not None:
            exit_continuation.body = self.block(rest, context)
        return Jump(head)

    def call_label(self) -> str:
        """The next `call_N` whose continuation, adapter and dispatcher names are all free."""
        while True:
            self.call_number += 1
            label = naming.call_label(self.call_number)
            names = [label, naming.call_continuation(label), naming.call_adapter(label), naming.call_site(label)]
            if not any(name in self.namer.taken for name in names):
                for name in names:
                    self.namer.reserve(name)
                return label

    def call(self, statement: cst.SimpleStatementLine, rest: list, context: _Context) -> Call:
        target = statement.body[0].targets[0].target.value
        label = self.call_label()
        live = self.liveness.block(rest, context.after_live, context.exits) | regions.live(context)
        continuation = Continuation(
            naming.call_continuation(label),
            [target, *(p for p in self.parameters(live) if p != target)],
            kind=ContinuationKind.CALL,
        )
        self.continuations.append(continuation)
        tail = Call(statement, target, continuation, label)
        self.calls.append(tail)
        continuation.body = self.block(rest, context)
        returned = continuation.body.tail
        if (
            not continuation.body.statements
            and isinstance(returned, Return)
            and isinstance(returned.value, cst.Name)
            and returned.value.value == target
        ):
            self.continuations.remove(continuation)  # the rest only returns the result: hand over k
            tail.continuation = None
        return tail


def _first_appearance(parameters: list[str], definition: cst.FunctionDef) -> list[str]:
    order = list(parameters)
    seen = set(order)
    for targets, _ in assignments(definition.body.body):
        for name in targets:
            if name not in seen:
                seen.add(name)
                order.append(name)
    return order


def convert(normalized: Normalized, active: set[str], namer: Namer, user_calls: set[int] = frozenset()) -> Program:
    """Cut `normalized` into continuations (`user_calls`: ids of the statements calling user functions)."""
    converter = _Converter(normalized, active, namer, user_calls)
    continuation_name = namer.fresh(naming.CONTINUATION)
    function = Continuation(
        normalized.definition.name.value, list(normalized.parameters), kind=ContinuationKind.FUNCTION
    )
    function.body = converter.block(
        list(normalized.definition.body.body), _Context(Return(cst.Name("None"), normalized.definition), set())
    )
    return Program(
        normalized,
        function,
        converter.continuations,
        converter.invariants,
        active,
        converter.order,
        continuation_name,
        namer,
        converter.calls,
    )


def maybe_unbound(program: Program) -> dict[str, set[str]]:
    """Continuation name -> its parameters that some path may hand the sentinel
    `cpsgrad_runtime.unbound(name)` (a variable unbound where a jump passes it, or passed on
    from such a parameter without being assigned): reads of these are checked (adjoint/frames.py), so
    that they raise UnboundLocalError where Python would, not where the sentinel is first used."""
    found: dict[str, set[str]] = {c.name: set() for c in program.continuations}
    invariants = set(program.invariants)

    def walk(block: Block, bound: set[str]) -> bool:
        changed = False
        bound = set(bound)
        for statement in block.statements:
            bound.update(name for targets, _ in assignments([statement]) for name in targets)
        tail = block.tail
        if isinstance(tail, Call):
            bound.add(tail.target)
            tail = Jump(tail.continuation) if tail.continuation is not None else None
        if isinstance(tail, Jump):
            missing = {p for p in tail.target.parameters if p not in bound} - found[tail.target.name]
            found[tail.target.name] |= missing
            changed = bool(missing)
        elif isinstance(tail, Branch):  # a guard binds its error for the handler (regions.Guard)
            changed = walk(tail.then, bound)
            changed = walk(tail.orelse, bound | {getattr(tail, "error", None)}) or changed
        return changed

    changed = True
    while changed:
        changed = walk(program.function.body, set(program.function.parameters) | invariants)
        for continuation in program.continuations:
            bound = set(continuation.parameters) - found[continuation.name]
            changed = walk(continuation.body, bound | invariants) or changed
    return found


# ---- printing the CPS stage --------------------------------------------------------------------


def render(program: Program) -> str:
    """The CPS program without derivatives: what `cpsgrad show --stage cps` prints."""
    k = program.continuation_name
    lines = [f"def {naming.cps_function(program.function.name)}({', '.join([*program.function.parameters, k])}):"]
    for continuation in program.continuations:
        lines.append(f"    def {continuation.name}({', '.join(continuation.parameters)}):")
        _render_block(continuation.body, 2, lines, k, set(continuation.parameters) | set(program.invariants))
    _render_block(program.function.body, 1, lines, k, set(program.function.parameters))
    return "\n".join(lines) + "\n"


def _render_block(block: Block, depth: int, lines: list[str], k: str, bound: set[str]) -> None:
    """Print a block; a jump passes `cpsgrad_runtime.unbound(name)` for a variable unbound on this path."""
    pad = "    " * depth
    bound = set(bound)
    for statement in block.statements:
        bound.update(name for targets, _ in assignments([statement]) for name in targets)
        for line in syntax.code(statement).rstrip("\n").split("\n"):
            lines.append(pad + line)
    tail = block.tail
    if isinstance(tail, Call):  # the call, then the rest of the block as its continuation
        lines.append(pad + syntax.code(tail.statement).strip())
        bound.add(tail.target)
        tail = (
            Jump(tail.continuation) if tail.continuation is not None else Return(cst.Name(tail.target), tail.statement)
        )
    if isinstance(tail, Jump):
        arguments = [p if p in bound else f"cpsgrad_runtime.unbound({p!r})" for p in tail.target.parameters]
        lines.append(f"{pad}return {tail.target.name}({', '.join(arguments)})")
    elif isinstance(tail, Return):
        lines.append(f"{pad}return {k}({syntax.code(tail.value)})")
    elif isinstance(tail, Raise):
        lines.append(pad + syntax.code(tail.statement).strip())
    elif isinstance(tail, regions.Guard):
        regions.render(
            tail, depth, lines, bound, lambda block, depth, bound: _render_block(block, depth, lines, k, bound)
        )
    else:
        lines.append(f"{pad}if {syntax.code(tail.test)}:")
        _render_block(tail.then, depth + 1, lines, k, bound)
        lines.append(f"{pad}else:")
        _render_block(tail.orelse, depth + 1, lines, k, bound)
