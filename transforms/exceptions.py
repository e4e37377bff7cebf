"""Normalize `try` and `with` into the core language's one exception form (regions.py cuts it
into continuations):

    try:
        <core statements>
    except BaseException as try_1_error:     (optional)
        <the handlers' dispatch, in core statements>
    else:                                   (optional, with the except)
        <core statements>
    finally:                                (optional)
        <core statements>

The dispatch tries each `except E [as e]` in order: `t = cpsgrad_runtime.matches(try_1_error, E)`
(E evaluated then, as Python does), `if t: e = try_1_error; <handler>`, and re-raises
`try_1_error` when none matches; a bare `raise` in a handler is `raise try_1_error`. A `with`
is spelled out as the language reference does: `exit = exit_of(manager)`, `v =
enter(manager)`, then a try whose handler calls `exit_with(exit, error)` (re-raising unless it
swallows) and whose finally calls `exit(None, None, None)` unless the handler ran. The
normalized program is plain Python with the original's semantics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from cpsgrad.transforms import naming, syntax, walk

if TYPE_CHECKING:
    from cpsgrad.transforms.normalize import _Normalizer


def _runtime(helper: str, *arguments: cst.BaseExpression) -> cst.Call:
    return cst.Call(cst.Attribute(cst.Name("cpsgrad_runtime"), cst.Name(helper)), [cst.Arg(a) for a in arguments])


def statement(n: _Normalizer, node: cst.BaseCompoundStatement, out: list) -> None:
    """normalize.compound_statement's hook for `try` and `with` (anything else is refused)."""
    if not isinstance(node, (cst.Try, cst.With)):
        n.reject(node, type(node).__name__, "this statement is not supported")
    if not getattr(n, "exceptions_checked", False):
        n.exceptions_checked = True
        _check(n)
    before = set(n.assigned)
    if isinstance(node, cst.With):
        with_statement(n, node, list(node.items), out)
    else:
        try_statement(n, node, out)
    n.assigned = before


def _check(n: _Normalizer) -> None:
    """Refuse what cannot keep Python's meaning: a bare `raise` in a `finally` (it re-raises the
    exception propagating through it), and an `except ... as e` name used outside its handler
    (Python deletes it when the handler ends). Names bound by `as` are locals."""
    definition = n.source.definition
    handler_names: dict[str, list[cst.ExceptHandler]] = {}
    for node in walk.nodes(definition.body):
        if isinstance(node, cst.ExceptHandler) and node.name is not None:
            handler_names.setdefault(node.name.name.value, []).append(node)
        if isinstance(node, cst.WithItem) and node.asname is not None:
            bound = {inner.value for inner in walk.nodes(node.asname.name) if isinstance(inner, cst.Name)}
            n.locals |= bound
            n.reassigned |= bound
        if isinstance(node, cst.Try) and node.finalbody is not None:
            for inner in walk.nodes(node.finalbody):
                if isinstance(inner, cst.Raise) and inner.exc is None and not _inside_handler(inner, node.finalbody):
                    n.reject(
                        inner,
                        "bare raise in a finally clause",
                        "name the exception: catch it with `except BaseException as error:` and `raise error`",
                    )
    for name, handlers in handler_names.items():
        n.locals.add(name)
        n.reassigned.add(name)
        inside = {id(inner) for handler in handlers for inner in walk.nodes(handler)}
        for node in walk.nodes(definition.body):
            if isinstance(node, cst.Name) and node.value == name and id(node) not in inside:
                n.reject(
                    node,
                    f"the name {name} of `except ... as {name}` used outside its handler",
                    f"Python deletes {name} when the handler ends; copy it to another name inside the handler",
                )


def _inside_handler(raise_node: cst.Raise, block: cst.CSTNode) -> bool:
    return any(
        isinstance(node, cst.ExceptHandler) and any(inner is raise_node for inner in walk.nodes(node.body))
        for node in walk.nodes(block)
    )


def try_statement(n: _Normalizer, node: cst.Try, out: list) -> None:
    error = n.namer.fresh(naming.region_part("try", _number(n), "error"))
    body = n.block(node.body.body)
    handlers = []
    if node.handlers:
        n.locals.add(error)
        dispatch = [cst.SimpleStatementLine([cst.Raise(cst.Name(error))])]
        for handler in reversed(node.handlers):
            dispatch = _handler(n, handler, error, dispatch)
        handlers = [
            cst.ExceptHandler(
                syntax.indented(dispatch), type=n.builtin("BaseException"), name=cst.AsName(cst.Name(error))
            )
        ]
    orelse = cst.Else(syntax.indented(n.block(node.orelse.body.body))) if node.orelse is not None else None
    final = cst.Finally(syntax.indented(n.block(node.finalbody.body.body))) if node.finalbody is not None else None
    n.emit(out, cst.Try(syntax.indented(body), handlers, orelse, final), node)


def _number(n: _Normalizer) -> int:
    n.exception_regions = getattr(n, "exception_regions", 0) + 1
    return n.exception_regions


def _handler(n: _Normalizer, handler: cst.ExceptHandler, error: str, otherwise: list) -> list:
    """`except E as e: body`, falling back to `otherwise`, as core statements."""
    dispatch: list = []
    kinds = n.builtin("BaseException") if handler.type is None else n.atom(handler.type, dispatch)
    test = n.temporary_value(_runtime("matches", cst.Name(error), kinds), dispatch, handler)
    caught: list = []
    if handler.name is not None:
        n.emit(caught, syntax.assign(handler.name.name.value, cst.Name(error)), handler)
    outer = getattr(n, "handled", None)
    n.handled = cst.Name(error)  # a bare `raise` in the handler re-raises the error
    try:
        caught += n.block(handler.body.body)
    finally:
        n.handled = outer
    n.emit(dispatch, syntax.if_statement(test, caught, otherwise), handler)
    return dispatch


def with_statement(n: _Normalizer, node: cst.With, items: list, out: list) -> None:
    """`with a as x, b as y: body` is `with a as x: with b as y: body`."""
    if node.asynchronous is not None:
        n.reject(node, "async with", "write a plain with statement")
    item = items[0]
    number = _number(n)
    manager = n.atom(item.item, out)
    exit_name = n.namer.fresh(naming.region_part("with", number, "exit"))
    is_open = n.namer.fresh(naming.region_part("with", number, "open"))
    error = n.namer.fresh(naming.region_part("with", number, "error"))
    n.locals |= {exit_name, is_open, error}
    n.emit(out, syntax.assign(exit_name, _runtime("exit_of", manager)), node)
    entered = _runtime("enter", manager)
    if item.asname is not None:
        n.assignment([item.asname.name], entered, out, node)
    else:
        n.temporary_value(entered, out, node)
    n.emit(out, syntax.assign(is_open, cst.Name("True")), node)
    body: list = []
    if len(items) > 1:
        with_statement(n, node, items[1:], body)
    else:
        body = n.block(node.body.body)
    handler: list = []
    n.emit(handler, syntax.assign(is_open, cst.Name("False")), node)
    swallowed = n.temporary_value(_runtime("exit_with", cst.Name(exit_name), cst.Name(error)), handler, node)
    reraise = cst.SimpleStatementLine([cst.Raise(cst.Name(error))])
    n.emit(handler, syntax.if_statement(syntax.negate(swallowed), [reraise]), node)
    final: list = []
    none = cst.Name("None")
    closing: list = []
    n.temporary_value(cst.Call(cst.Name(exit_name), [cst.Arg(none), cst.Arg(none), cst.Arg(none)]), closing, node)
    n.emit(final, syntax.if_statement(cst.Name(is_open), closing), node)
    handlers = [
        cst.ExceptHandler(syntax.indented(handler), type=n.builtin("BaseException"), name=cst.AsName(cst.Name(error)))
    ]
    n.emit(out, cst.Try(syntax.indented(body), handlers, None, cst.Finally(syntax.indented(final))), node)


def parts(statement: cst.Try) -> list:
    """Every statement of a normalized try, in source order (for the analyses that collect)."""
    found = list(statement.body.body)
    for handler in statement.handlers:
        found += handler.body.body
    if statement.orelse is not None:
        found += statement.orelse.body.body
    if statement.finalbody is not None:
        found += statement.finalbody.body.body
    return found
