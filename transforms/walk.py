"""Fast read-only walks over libcst trees, for the analyses that only collect.

A `CSTVisitor` dispatches two hooks (visit and leave, by attribute and by node) per node and
per child field, and rebuilds nothing: most of the transform's time went there when an analysis
only needed the set of names in a subtree. These walks read a node's dataclass fields directly
(every child of a libcst node is one of its fields, a node or a sequence of nodes), so they see
exactly the nodes a visitor would, with none of its dispatch. Whitespace and comments, which
never hold a name or a statement, are not entered.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst

_FIELDS: dict[type, tuple[str, ...]] = {}
# nodes with no name, statement or expression below them (whitespace, comments, punctuation
# and operators: tokens): not entered
_TOKENS = (
    cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace, cst.EmptyLine,
    cst.Comment, cst.Newline, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket,
    cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.Comma, cst.Dot, cst.Colon,
    cst.Semicolon, cst.AssignEqual, cst.ImportStar, cst.ParamStar, cst.ParamSlash,
    cst.BaseBinaryOp, cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseUnaryOp, cst.BaseAugOp,
)
_ENTERED: dict[type, bool] = {}  # type -> whether a value of it is a node to enter (libcst's
# node classes are ABCs: an isinstance per value would cost more than the walk)


def _fields(kind: type) -> tuple[str, ...]:
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind))
    return names


def _entered(kind: type) -> bool:
    entered = _ENTERED.get(kind)
    if entered is None:
        mro = kind.__mro__  # not issubclass: an ABC's check of a class it has not seen is slow
        entered = _ENTERED[kind] = cst.CSTNode in mro and not any(token in mro for token in _TOKENS)
    return entered


def nodes(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`root` and every node below it (not tokens: whitespace, comments, punctuation,
    operators), parents before children."""
    stack = [root]
    pop, push, entered = stack.pop, stack.append, _ENTERED.get
    while stack:
        node = pop()
        yield node
        for name in _FIELDS.get(type(node)) or _fields(type(node)):
            value = getattr(node, name)
            kind = type(value)
            if kind is tuple or kind is list:
                for item in value:
                    if entered(type(item)) or (type(item) not in _ENTERED and _entered(type(item))):
                        push(item)
            elif entered(kind) or (kind not in _ENTERED and _entered(kind)):
                push(value)


def names(root: cst.CSTNode) -> set[str]:
    """Every identifier mentioned anywhere in `root` (names and attribute names)."""
    name = cst.Name
    return {node.value for node in nodes(root) if type(node) is name}
