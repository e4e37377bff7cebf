"""The generated program as a tree of libcst statements, each knowing where it came from,
rendered to text once.

Design. Every job of the Generator adds statements to a `Lines`: one block's body, a list of
libcst statements (`SimpleStatementLine`, `If`, `Try`, `FunctionDef`) in order. Indentation is
structure, never text: a job that opens a block (a branch, a guard's `try`, a call's adapter
`def`, a user rule's `try`) fills a child `Lines` and adds the compound statement made of it
(`Lines.block`). Statements of a fixed shape come from the builders below (`assign`, `add_into`,
`call_line`, ...) or from a template parsed once (`template`: `libcst.helpers`'
`parse_template_statement`, cached per text, then substituted); the user's own expressions and
statements go in as the nodes normalize made, renamed (frames.Renamer). Nothing is parsed back:
fusion (fused.py) reads the names a block's statements read from their nodes (`names_read`),
accumulation (accumulation.py) builds nodes.

Provenance: when a statement (or an `else`/`except` clause) is added, the generator's current
`origin` (the user's statement's SourceLocation, or None, and "forward" or "backward") is
registered for it (`Provenance`). `render` makes the program's text in one `Module` code
generation (pipeline.py assembles the module: the header comments, the wrapper, the entry
function) and, from where each registered node's code starts, the origin of every text line:
what `cpsgrad.debug_nans` and `show(annotate=True)` read. The text is then compiled as it is
(emit.py), so line numbers are those of the text `cpsgrad show` prints.

The records (records.py) hold operands and version names, no code: the Python tier renders them
here as statements; the compiled tier and forward mode will walk the same records and build their
own statements (or kernels), reusing this tree and its renderer or not.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.helpers import parse_template_statement

if TYPE_CHECKING:
    from cpsgrad.transforms.adjoint.generator import Generator

RUNTIME = "cpsgrad_runtime"  # the name generated code calls the run-time support by
ZERO = "0.0"  # the symbolic zero: an adjoint nothing contributed to
_NOWHERE = (None, "forward")


class Provenance(dict):
    """id(node) -> (node, origin) for the statements and clauses of one program (the node is
    kept so that its id stays its own)."""

    def add(self, node: cst.CSTNode, origin: tuple) -> None:
        self[id(node)] = (node, origin)


class Lines(list):
    """One block's statements, in order, each registered with the generator's `origin` at the
    time it was added. A comment (`comment`) goes over the next statement added."""

    def __init__(self, generator: Generator, statements: Sequence[cst.BaseStatement] = ()):
        super().__init__()
        self.generator = generator
        self.comments: list[cst.EmptyLine] = []
        for statement in statements:
            self.append(statement)

    def append(self, statement: cst.BaseStatement, origin: tuple | None = None) -> None:
        if self.comments:
            statement = statement.with_changes(leading_lines=[*self.comments, *statement.leading_lines])
            self.comments = []
        self.generator.provenance.add(statement, self.generator.origin if origin is None else origin)
        super().append(statement)

    def insert(self, index: int, statement: cst.BaseStatement) -> None:
        self.generator.provenance.add(statement, self.generator.origin)
        super().insert(index, statement)

    def extend(self, other: Lines) -> None:
        """Add `other`'s statements (registered already) and its pending comments."""
        for statement in other:
            if self.comments:
                self.append(statement, self.generator.provenance[id(statement)][1])
            else:
                super().append(statement)
        self.comments += other.comments

    def comment(self, text: str) -> None:
        self.comments.append(cst.EmptyLine(comment=cst.Comment(f"# {text}")))

    def block(self) -> cst.IndentedBlock:
        """These statements as an indented block (`pass` when there are none); comments left over
        close it."""
        body = list(self) or [line(cst.Pass())]
        return cst.IndentedBlock(body, footer=self.comments)


def render(module: cst.Module, provenance: Provenance) -> tuple[str, tuple]:
    """`module`'s code (exactly `module.code`) and, per line of it, the origin of the registered
    statement or clause whose code the line is part of ((None, "forward") for none)."""
    state = _Marking(module.default_indent, module.default_newline, provenance)
    module._codegen(state)
    tokens = state.tokens
    origins: list[tuple] = []
    marks = state.marks
    marks.append((len(tokens), _NOWHERE))
    current, position, upto = _NOWHERE, 0, marks[0][0]
    for index, token in enumerate(tokens):
        while index >= upto:
            current = marks[position][1]
            position += 1
            upto = marks[position][0]
        if "\n" in token:
            origins.extend([current] * token.count("\n"))
    return "".join(tokens), tuple(origins)


_EXPRESSION: dict[type, bool] = {}  # node type -> whether it is an expression (an ABC check, once a type)


class _Marking(CodegenState):
    """Code generation that notes where each registered node's tokens begin. An expression that
    spans lines (the user's parenthesized call, a template's) keeps its continuation lines where
    they were written, under the wrapper's indentation alone (as `syntax.code` of the expression
    placed in the wrapper writes them), not moved to the depth of the block it is in."""

    def __init__(self, indent: str, newline: str, provenance: Provenance):
        super().__init__(default_indent=indent, default_newline=newline)
        self.provenance = provenance
        self.marks: list[tuple[int, tuple]] = []
        self.expressions = 0  # how deep in expressions the code generation is
        self.blank = False  # an empty line inside an expression: not indented

    def before_codegen(self, node: cst.CSTNode) -> None:
        found = self.provenance.get(id(node))
        if found is not None and found[0] is node:
            self.marks.append((len(self.tokens), found[1]))
        kind = type(node)
        expression = _EXPRESSION.get(kind)
        if expression is None:
            expression = _EXPRESSION[kind] = cst.BaseExpression in kind.__mro__  # not issubclass: syntax.is_a
        if expression:
            self.expressions += 1
        elif self.expressions and kind is cst.EmptyLine:
            self.blank = node.comment is None and not node.whitespace.value

    def after_codegen(self, node: cst.CSTNode) -> None:
        if _EXPRESSION[type(node)]:
            self.expressions -= 1

    def add_indent_tokens(self) -> None:
        if not self.expressions:
            self.tokens.extend(self.indent_tokens)
        elif not self.blank:
            self.tokens.extend(self.indent_tokens[:1])
        self.blank = False


# ---- builders: the statements of a fixed shape


def line(*small: cst.BaseSmallStatement) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(list(small))


def kept(statement: cst.BaseStatement) -> cst.BaseStatement:
    """A statement of the user's (renamed) as the program holds it: without the blank lines or
    comments above it, its own comment kept."""
    if isinstance(statement, cst.SimpleStatementLine) and statement.trailing_whitespace.comment is None:
        return statement.with_changes(leading_lines=(), trailing_whitespace=cst.TrailingWhitespace())
    return statement.with_changes(leading_lines=()) if statement.leading_lines else statement


def value_of(text: str) -> cst.BaseExpression:
    """An adjoint's holder as an expression: its name, or the symbolic zero."""
    return cst.Float(ZERO) if text == ZERO else cst.Name(text)


def target_of(names: str | Sequence[str]) -> cst.BaseAssignTargetExpression:
    """`a`, or unpacking targets `a, b` (`a,` for one name: `a = t` would bind the whole tuple)."""
    if isinstance(names, str):
        return cst.Name(names)
    return bare_tuple([cst.Name(n) for n in names])


def bare_tuple(elements: Sequence[cst.BaseExpression]) -> cst.Tuple:
    """`a, b` without parentheses (`a,` for one)."""
    return cst.Tuple([cst.Element(e) for e in elements], lpar=[], rpar=[])


def parenthesized_tuple(elements: Sequence[cst.BaseExpression]) -> cst.Tuple:
    """`(a, b)`, `(a,)`."""
    return cst.Tuple([cst.Element(e) for e in elements])


def packed(elements: Sequence[cst.BaseExpression]) -> cst.Tuple:
    """`(a, b,)`: a tuple display with a comma after every element."""
    return cst.Tuple([*(cst.Element(e) for e in elements[:-1]), cst.Element(elements[-1], comma=cst.Comma())])


def assign(targets: str | Sequence[str] | cst.BaseAssignTargetExpression, value: cst.BaseExpression):
    """`targets = value` (a name, a list of names to unpack into, or a target node)."""
    # str and list tested first: a first isinstance of a str against cst.CSTNode (an ABC) walks
    # all of libcst's node classes (2 ms, once a process)
    target = target_of(targets) if isinstance(targets, (str, list, tuple)) else targets
    return line(cst.Assign([cst.AssignTarget(target)], value))


def add_into(name: str, value: cst.BaseExpression) -> cst.SimpleStatementLine:
    """`name += value`."""
    return line(cst.AugAssign(cst.Name(name), cst.AddAssign(), value))


def call_line(call: cst.BaseExpression) -> cst.SimpleStatementLine:
    return line(cst.Expr(call))


def delete(names: Sequence[str]) -> cst.SimpleStatementLine:
    """`del a, b`."""
    target = cst.Name(names[0]) if len(names) == 1 else bare_tuple([cst.Name(n) for n in names])
    return line(cst.Del(target))


def returning(value: cst.BaseExpression) -> cst.SimpleStatementLine:
    return line(cst.Return(value))


def string(value: str) -> cst.SimpleString:
    """A string literal, written as Python's repr writes it."""
    return cst.SimpleString(repr(value))


def runtime_call(helper: str, *arguments: cst.BaseExpression) -> cst.Call:
    """`cpsgrad_runtime.<helper>(arguments)`, as a node."""
    return cst.Call(cst.Attribute(cst.Name(RUNTIME), cst.Name(helper)), [cst.Arg(a) for a in arguments])


def call(function: str | cst.BaseExpression, *arguments: cst.BaseExpression | cst.Arg) -> cst.Call:
    """`function(arguments)`."""
    func = cst.Name(function) if isinstance(function, str) else function
    return cst.Call(func, [a if isinstance(a, cst.Arg) else cst.Arg(a) for a in arguments])


def if_else(
    test: cst.BaseExpression, then: Lines, orelse: Lines | None = None, else_origin: tuple | None = None
) -> cst.If:
    """`if test: then else: orelse`; the `else` clause registered with `else_origin`."""
    clause = None
    if orelse is not None:
        clause = cst.Else(orelse.block())
        then.generator.provenance.add(clause, else_origin or then.generator.origin)
    return cst.If(test, then.block(), orelse=clause)


def function(name: str, parameters: Sequence[str], body: Lines) -> cst.FunctionDef:
    """`def name(parameters): body`."""
    return cst.FunctionDef(
        cst.Name(name), cst.Parameters([cst.Param(cst.Name(p)) for p in parameters]), body.block()
    )


def handler(caught: str | None, body: Lines, origin: tuple | None = None) -> cst.ExceptHandler:
    """`except BaseException as caught: body` (`Exception as error` for a rule's), registered."""
    kind, name = ("Exception", "error") if caught is None else ("BaseException", caught)
    clause = cst.ExceptHandler(body.block(), type=cst.Name(kind), name=cst.AsName(cst.Name(name)))
    body.generator.provenance.add(clause, origin or body.generator.origin)
    return clause


def try_statement(body: Lines, clause: cst.ExceptHandler) -> cst.Try:
    return cst.Try(body.block(), [clause])


@cache
def _parsed(text: str) -> cst.BaseStatement:
    return parse_template_statement(text)


def template(text: str, **values: cst.CSTNode) -> cst.BaseStatement:
    """A statement of a fixed shape: `text` with placeholders spelled `__name__` (names, so that
    the text parses alone: through libcst.helpers' parse_template_statement, once per text), each
    filled with `values[name]`."""
    return _parsed(text).visit(_Fill(values))


class _Fill(cst.CSTTransformer):
    """Fill a parsed template's `__name__` placeholders."""

    def __init__(self, values: dict):
        self.values = {f"__{name}__": value for name, value in values.items()}

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self.values.get(original.value, updated)
