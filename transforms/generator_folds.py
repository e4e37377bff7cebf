"""A generator function as a fold: the program a consumer's loop over it calls (transforms/generators.py).

A module-level generator `def gen(xs, w): for x in xs: yield x * w` consumed by `for v in
gen(xs, w): <body>` runs lazily, interleaved with the body: each `yield` hands one value to the
body, and the generator resumes only when the body asks for the next. So the generator drives
the loop: it becomes an ordinary function taking the loop body as a function (`consumer`), the
body's read-only values (`consumer_env`) and the loop state the body changes (`consumer_state`):

    def gen(consumer, consumer_env, consumer_state, xs, w):
        for x in xs:
            consumer_flag, consumer_state, consumer_value = consumer(x * w, consumer_env, consumer_state)
            if consumer_flag:
                return consumer_flag, consumer_state, consumer_value
        return 0, consumer_state, None

The body returns flag 0 (next value, please), 1 (`break`) or 2 (`return consumer_value` from
the consumer's function); a flag stops the generator where it is, as Python leaves a generator
suspended. Every call here is an ordinary call of a user function, so gradients flow through
the yielded values to what the generator read (the calls' protocol, docs/design.md).
`yield from xs` is a loop yielding each element (a call of a generator: its own fold, through
the consumer's rewrite in the fold's normalize).
"""

from __future__ import annotations

import collections
import dataclasses
import inspect
import types

import libcst as cst

from cpsgrad.errors import SourceLocation, UnsupportedError
from cpsgrad.runtime.closures import DEFINITIONS, Definition
from cpsgrad.transforms import source as source_module
from cpsgrad.transforms.bindings import ends_in_jump
from cpsgrad.transforms.generator_scopes import Preserving
from cpsgrad.transforms.naming import Namer, names_in

ATTRIBUTE = "__cpsgrad_fold__"
_NESTED = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


def is_generator_function(value) -> bool:
    return isinstance(value, types.FunctionType) and inspect.isgeneratorfunction(value)


def fold_definition(generator: types.FunctionType, at: SourceLocation | None) -> Definition:
    """The Definition of `generator`'s fold (made once per code object, kept on the function)."""
    held = generator.__dict__.get(ATTRIBUTE)
    if held is not None and held[0] is generator.__code__:
        return held[1]
    code = generator.__code__
    if code.co_freevars:
        raise UnsupportedError(
            at,
            f"generator {generator.__qualname__} defined inside a function",
            "define the generator at module level and pass what it reads from the enclosing function as arguments",
        )
    read = source_module.read(generator)
    names = Namer(names_in(read.definition))
    fresh = {key: names.fresh(key) for key in _KEYS}
    rewriter = _Fold(read, fresh, names)
    body = read.definition.body.visit(rewriter)
    # bound before any loop of the body: a `yield from` loop's body hands them back (generators.py)
    statements = [cst.parse_statement(f"{fresh['consumer_flag']}, {fresh['consumer_value']} = 0, None"), *body.body]
    if not ends_in_jump(statements):
        statements.append(cst.parse_statement(f"return 0, {fresh['consumer_state']}, None"))
    leading = [cst.Param(cst.Name(fresh[k])) for k in ("consumer", "consumer_env", "consumer_state")]
    params = read.definition.params
    if params.posonly_params:  # the consumer's three first, as positional-only as the generator's own
        params = params.with_changes(posonly_params=(*leading, *params.posonly_params))
    else:
        params = params.with_changes(params=(*leading, *params.params))
    definition = cst.FunctionDef(cst.Name(code.co_name), params, body.with_changes(body=statements))
    compiled = _compile(definition, generator.__globals__, f"<cpsgrad fold of {generator.__qualname__}>")
    kwdefaults = generator.__kwdefaults__ or {}
    made = Definition(
        code=compiled,
        globals=generator.__globals__,
        name=code.co_name,
        qualname=generator.__qualname__,
        captured=(),
        own=None,
        positional_defaults=len(generator.__defaults__ or ()),
        keyword_defaults=tuple(p.name.value for p in params.kwonly_params if p.name.value in kwdefaults),
        source=dataclasses.replace(
            read, definition=definition, positions=collections.ChainMap(rewriter.moved, read.positions)
        ),
        location=read.location(read.definition) or SourceLocation(read.filename, read.first_line, 1),
    )
    DEFINITIONS[compiled] = made
    generator.__dict__[ATTRIBUTE] = (code, made)
    return made


_KEYS = ("consumer", "consumer_env", "consumer_state", "consumer_flag", "consumer_value")


def _compile(definition: cst.FunctionDef, globals_: dict, filename: str) -> types.CodeType:
    text = cst.Module(body=[definition]).code
    module = compile(text, filename, "exec")
    return next(c for c in module.co_consts if isinstance(c, types.CodeType))


class _Fold(Preserving):
    """`yield v` -> the consumer's call and the stop test; `return r` -> `return 0, state, r`."""

    def __init__(self, read, fresh: dict[str, str], names: Namer):
        super().__init__(read.positions, {})
        self.read = read
        self.names = names
        self.fresh = fresh
        self.guarded = 0  # try/with blocks entered

    def reject(self, node, construct: str, advice: str):
        raise UnsupportedError(self.read.location(node), construct, advice)

    def visit_FunctionDef(self, node) -> bool:
        self.reject(node, "nested function in a generator", "define it at module level and call it")
        return False

    def visit_Lambda(self, node) -> bool:
        self.reject(node, "lambda in a generator", "define a module-level function and call it")
        return False

    def visit_Try(self, node) -> None:
        self.guarded += 1

    def leave_Try(self, original, updated):
        self.guarded -= 1
        return updated

    def visit_With(self, node) -> None:
        self.guarded += 1

    def leave_With(self, original, updated):
        self.guarded -= 1
        return updated

    def visit_Yield(self, node) -> None:
        if self.guarded:
            self.reject(
                node,
                "yield inside try or with",
                "a generator stopped early would run its finally/__exit__ when it is closed, which is not modelled; "
                "move the yield out of the try/with (compute the values inside, yield them after)",
            )

    def leave_SimpleStatementLine(self, original, updated):
        out: list[cst.BaseStatement] = []
        pending: list[cst.BaseSmallStatement] = []
        for small in original.body:  # nothing in a simple statement is rewritten: the originals keep their positions
            replaced = self.small(small)
            if replaced is None:
                pending.append(small)
                continue
            if pending:
                out.append(original.with_changes(body=pending))
                pending = []
            out += replaced
        if not out:
            return updated
        if pending:
            out.append(original.with_changes(body=pending))
        return cst.FlattenSentinel(out)

    def small(self, node: cst.BaseSmallStatement) -> list | None:
        f = self.fresh
        if isinstance(node, cst.Expr) and isinstance(node.value, cst.Yield):
            value = node.value.value
            if isinstance(value, cst.From):
                item = self.names.fresh("item")  # one a loop: each is its own loop body's (generators.py)
                loop = cst.For(cst.Name(item), value.item, cst.IndentedBlock(self.handed(cst.Name(item))))
                return [loop]
            return self.handed(value if value is not None else cst.Name("None"))
        if isinstance(node, cst.Return):
            value = node.value if node.value is not None else cst.Name("None")
            state = cst.Name(f["consumer_state"])
            return [
                cst.SimpleStatementLine(
                    [cst.Return(cst.Tuple([cst.Element(cst.Integer("0")), cst.Element(state), cst.Element(value)]))]
                )
            ]
        for inner in _yields(node):
            self.reject(
                inner,
                "yield used as a value"
                if isinstance(inner, cst.Yield) and not isinstance(inner.value, cst.From)
                else "yield from used as a value",
                "a for loop sends nothing into a generator and ignores what yield from returns; "
                "write `yield v` as a statement",
            )
        return None

    def handed(self, value: cst.BaseExpression) -> list:
        f = self.fresh
        call = cst.parse_statement(
            f"{f['consumer_flag']}, {f['consumer_state']}, {f['consumer_value']} = "
            f"{f['consumer']}(VALUE, {f['consumer_env']}, {f['consumer_state']})"
        )
        call = call.visit(_Substitute({"VALUE": value}))
        stop = cst.parse_statement(
            f"if {f['consumer_flag']}:\n    return {f['consumer_flag']}, {f['consumer_state']}, {f['consumer_value']}\n"
        )
        return [call, stop]


def _yields(node: cst.CSTNode):
    for inner in _walk(node):
        if isinstance(inner, cst.Yield):
            yield inner


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        if not isinstance(child, _NESTED):
            yield from _walk(child)


class _Substitute(cst.CSTTransformer):
    """Placeholders (upper-case names) in a parsed template -> the user's nodes."""

    def __init__(self, values: dict):
        self.values = values

    def leave_Name(self, original, updated):
        return self.values.get(original.value, updated)
