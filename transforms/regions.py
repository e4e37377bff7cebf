"""CPS of a normalized `try` (transforms/exceptions.py): guarded regions.

In CPS the code after a try runs inside the continuation its body calls, so a Python `try`
around the body would also catch what the rest of the program raises. Here no continuation call
is ever inside a Python `try`: each statement of the body that may raise is *guarded* on its own
(a `Guard` tail):

    try_1_error = None
    try:
        y_1 = 1.0 / t1                      # the statement's forward, and nothing else
    except BaseException as try_1_caught:
        try_1_error = try_1_caught
    if try_1_error is None:
        <the rest of the body, its tail, its backward>; <the statement's backward>
    else:
        <jump to the handler continuation try_1_except(try_1_error, live...)>
    <the backward of what ran before the statement>

so an exception is caught only where one of the body's own statements raised it, and the
backward that follows is that of the statements that ran. A `raise` in the region is guarded the
same way (it jumps to the handler). The body's blocks (branches, loops inside it, joins) are
converted in a context carrying the `Region`: its handler, and what a jump out of it runs first
(the finally body); what the handler reads is live throughout the region. A `finally` is a
region of its own around the body, the handler and the else: its handler runs the finally body
then re-raises; a `return`, `break` or `continue` leaving it runs the finally body first; the
fall-through runs it before the code after the try (`after_try_N`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import libcst as cst

from cpsgrad.errors import UnsupportedError
from cpsgrad.transforms import naming, syntax, walk
from cpsgrad.transforms.analysis.activity import assignments

if TYPE_CHECKING:
    from cpsgrad.transforms.cps import _Context, _Converter, _Liveness

from cpsgrad.transforms.continuations import Block, Branch, Continuation, ContinuationKind, Jump, Raise, Return

MAX_NESTED_GUARDS = 16  # guards nested in one another (each an `if` deeper) before the rest is a continuation


@dataclass(eq=False)
class Region:
    handler: Continuation  # where an exception of a guarded statement goes; its first parameter is the error
    error: str
    caught: str  # the name `except BaseException as` binds in a guard
    leaving: list  # the statements a jump out of the region runs first (a finally body)
    outer: object  # the _Context at the try
    live: set[str] = field(default_factory=set)  # read by the handler (and those around): live everywhere inside


@dataclass
class Guard(Branch):
    """A statement of a region that may raise: `then` begins with it (or is its raise), `orelse`
    jumps to the region's handler with the error."""

    error: str = ""
    caught: str = ""
    raises: bool = False
    calls: bool = False  # the statement calls a user function (then's tail is the cps.Call)

    @property
    def statement(self):
        return self.origin


def error_names(definition: cst.FunctionDef) -> list[str]:
    """The names normalized trys bind their exception to (`except BaseException as try_1_error`)."""
    return [
        node.name.name.value
        for node in walk.nodes(definition.body)
        if isinstance(node, cst.ExceptHandler) and node.name is not None and isinstance(node.name.name, cst.Name)
    ]


def live(context: _Context) -> set[str]:
    region = getattr(context, "region", None)
    return set(region.live) if region is not None else set()


def _small(statement):
    return statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None


def _may_raise(small) -> bool:
    if isinstance(small, cst.Raise) or isinstance(small, cst.Expr):
        return True
    return isinstance(small, cst.Assign) and not syntax.is_constant(small.value)


def hook(c: _Converter, statement, rest: list, straight: list, context: _Context) -> Block | None:
    """cps._Converter.block's hook: a try, or a statement inside a region; None: as usual."""
    if isinstance(statement, cst.Try):
        return convert(c, statement, rest, straight, context)
    region = context.region
    if region is None:
        return None
    small = _small(statement)
    if isinstance(small, (cst.Break, cst.Continue, cst.Return)):
        return leave(c, statement, straight, context)
    if isinstance(statement, cst.If):  # never inline: its statements are guarded one by one
        return Block(straight, c.branch(statement, rest, context))
    if small is None or not _may_raise(small):
        return None
    test = cst.Comparison(cst.Name(region.error), [cst.ComparisonTarget(cst.Is(), cst.Name("None"))])
    failed = Block([], Jump(region.handler))
    if id(statement) in c.user_calls:  # guarded until the callee enters its continuation (guards.py)
        then = Block([], c.call(statement, rest, context))
        return Block(straight, Guard(test, then, failed, statement, region.error, region.caught, False, True))
    if isinstance(small, cst.Raise):
        then = Block([], Raise(statement))
    else:
        depth = getattr(c, "guard_depth", 0)
        if depth >= MAX_NESTED_GUARDS and rest:  # the rest as a continuation: indentation stays bounded
            c.guard_depth = 0
            ok = Block([], _target(c, naming.region_name(region.error, "next"), rest, context)[0])
        else:
            c.guard_depth = depth + 1
            ok = c.block(rest, context)
        c.guard_depth = depth
        then = Block([statement, *ok.statements], ok.tail)
    raises = isinstance(small, cst.Raise)
    return Block(straight, Guard(test, then, failed, statement, region.error, region.caught, raises))


def leave(c: _Converter, statement, straight: list, context: _Context) -> Block | None:
    """A return, break or continue leaving the region: the region's leaving statements first (a
    finally body, unguarded by the region), then the jump from the context around it."""
    region = context.region
    small = _small(statement)
    if not isinstance(small, cst.Return) and region is context.loop_region:
        return None  # a loop inside the region: the jump stays inside
    if isinstance(small, cst.Return) and isinstance(small.value, cst.Name):
        if any(small.value.value in targets for targets, _ in assignments(region.leaving)):
            raise UnsupportedError(
                c.normalized.location(statement),
                f"return of {small.value.value}, which the finally clause assigns",
                "Python returns the value from before the finally clause ran; return a copy made before it",
            )
    outer = c.block([*region.leaving, statement], region.outer)
    return Block(straight + outer.statements, outer.tail)


def _target(c: _Converter, name: str, statements: list, context: _Context):
    """Where control goes to run `statements` in `context`: a tail and what is live there."""
    if not statements:
        return context.after, context.after_live
    found = c.liveness.block(statements, context.after_live, context.exits) | live(context)
    continuation = c.continuation(name, found, ContinuationKind.JOIN)
    continuation.body = c.block(statements, context)
    return Jump(continuation), set(continuation.parameters) | set(c.invariants)


def _handler(c: _Converter, name: str, error: str, statements: list, context: _Context) -> Continuation:
    if error not in c.locals:  # a variable like any other, passed on to the continuations that read it
        c.order.append(error)
        c.locals.add(error)
    found = c.liveness.block(statements, context.after_live, context.exits) | live(context)
    continuation = Continuation(
        c.namer.fresh(name), [error, *c.parameters(found - {error})], kind=ContinuationKind.JOIN
    )
    c.continuations.append(continuation)
    continuation.body = c.block(statements, context)
    return continuation


def convert(c: _Converter, statement: cst.Try, rest: list, straight: list, context: _Context) -> Block:
    c.tries = getattr(c, "tries", 0) + 1
    error = statement.handlers[0].name.name.value if statement.handlers else naming.try_error(c.tries)
    label = naming.try_label(error)
    final = list(statement.finalbody.body.body) if statement.finalbody is not None else []
    orelse = list(statement.orelse.body.body) if statement.orelse is not None else []
    after, after_live = _target(c, naming.region_after(label), final + rest, context)
    region_context = replace(context, after=after, after_live=after_live)
    if final:  # the finally region: its handler runs the finally body, then re-raises
        raised = c.namer.fresh(naming.region_name(label, "raised"))
        reraise = cst.SimpleStatementLine([cst.Raise(cst.Name(raised))])
        c.normalized.origins[id(reraise)] = c.normalized.origins.get(id(statement), statement)
        handler = _handler(c, naming.region_name(label, "finally"), raised, [*final, reraise], context)
        region = Region(handler, raised, c.namer.fresh(naming.region_name(raised, "caught")), final, context)
        region.live = set(handler.parameters[1:]) | live(context)
        region_context = replace(region_context, region=region)
    body_after, body_live = _target(c, naming.region_name(label, "else"), orelse, region_context)
    body_context = replace(region_context, after=body_after, after_live=body_live)
    if statement.handlers:
        handler = _handler(
            c, naming.region_name(label, "except"), error, list(statement.handlers[0].body.body), region_context
        )
        region = Region(handler, error, c.namer.fresh(naming.region_name(error, "caught")), [], region_context)
        region.live = set(handler.parameters[1:]) | live(region_context)
        body_context = replace(body_context, region=region)
    body = c.block(list(statement.body.body), body_context)
    return Block(straight + body.statements, body.tail)


def liveness(lv: _Liveness, statement: cst.Try, after: set[str], exits) -> set[str]:
    """What is live before a try: conservatively, what any of its paths reads (an exception may
    leave the body anywhere, so what its handlers read is live throughout)."""
    final = list(statement.finalbody.body.body) if statement.finalbody is not None else []
    through = lv.block(final, after, exits)
    found = lv.block(final, set(), exits)
    if exits:
        found |= lv.block(final, set(exits[0]) | set(exits[1]), exits)
    for handler in statement.handlers:
        found |= lv.block(list(handler.body.body), through, exits)
    orelse = lv.block(list(statement.orelse.body.body), through, exits) if statement.orelse is not None else through
    return found | lv.block(list(statement.body.body), orelse, exits)


def render(tail: Guard, depth: int, lines: list[str], bound: set[str], block) -> None:
    """The CPS stage's guard (cps.render; `block` renders a block)."""
    pad = "    " * depth
    if not tail.raises:
        lines.append(f"{pad}{tail.error} = None")
    lines.append(f"{pad}try:")
    lines.append(pad + "    " + syntax.code(tail.origin).strip())
    lines.append(f"{pad}except BaseException as {tail.caught}:")
    lines.append(f"{pad}    {tail.error} = {tail.caught}")
    if tail.raises:
        block(tail.orelse, depth, bound | {tail.error})
        return
    lines.append(f"{pad}if {tail.error} is None:")
    ok = Block(tail.then.statements[1:], tail.then.tail)
    if tail.calls:  # the call was the statement: its continuation follows
        call = tail.then.tail
        ok = Block(
            [], Jump(call.continuation) if call.continuation is not None else Return(cst.Name(call.target), None)
        )
    block(ok, depth + 1, bound | _bound_by(tail.origin))
    lines.append(f"{pad}else:")
    block(tail.orelse, depth + 1, bound | {tail.error})


def _bound_by(statement) -> set[str]:
    return {name for targets, _ in assignments([statement]) for name in targets}
