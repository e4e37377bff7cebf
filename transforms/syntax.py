"""Small constructors and predicates over libcst nodes shared by the passes."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

_EMPTY_MODULE = cst.Module([])
KEYWORD_CONSTANTS = frozenset({"True", "False", "None"})  # names to libcst, constants to Python
EQUAL = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))  # a keyword argument's `=`, unspaced


def code(node: cst.CSTNode) -> str:
    """The source text of a node."""
    return _EMPTY_MODULE.code_for_node(node)


def name(identifier: str) -> cst.Name:
    return cst.Name(identifier)


def assign(target: str, value: cst.BaseExpression) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(target))], value)])


def unpack(targets: Sequence[str], value: cst.BaseExpression) -> cst.SimpleStatementLine:
    comma = [cst.Comma()] if len(targets) == 1 else []  # `a, = t`, not `a = t`
    elements = [cst.Element(cst.Name(target), **({"comma": comma[0]} if comma else {})) for target in targets]
    tuple_target = cst.Tuple(elements, lpar=[], rpar=[])
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(tuple_target)], value)])


def indented(statements: Sequence[cst.BaseStatement]) -> cst.IndentedBlock:
    if not statements:
        statements = [cst.SimpleStatementLine([cst.Pass()])]
    return cst.IndentedBlock(list(statements))


def if_statement(
    test: cst.BaseExpression, body: Sequence[cst.BaseStatement], orelse: Sequence[cst.BaseStatement] = ()
) -> cst.If:
    return cst.If(test, indented(body), cst.Else(indented(orelse)) if orelse else None)


def negate(atom: cst.BaseExpression) -> cst.UnaryOperation:
    return cst.UnaryOperation(cst.Not(), atom)


def strip_parentheses(node: cst.BaseExpression) -> cst.BaseExpression:
    """`node` without its own parentheses, except an empty tuple's (`()` is nothing without them)."""
    if isinstance(node, cst.Tuple) and not node.elements:
        return node
    if getattr(node, "lpar", None):
        return node.with_changes(lpar=[], rpar=[])
    return node


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a chain of attribute reads on a name, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted_name(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


def is_constant(node: cst.BaseExpression) -> bool:
    if isinstance(
        node,
        (
            cst.Ellipsis,
            cst.Integer,
            cst.Float,
            cst.Imaginary,
            cst.SimpleString,
            cst.ConcatenatedString,
            cst.FormattedString,
        ),
    ):
        return True
    if isinstance(node, cst.Name):
        return node.value in KEYWORD_CONSTANTS
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return isinstance(node.expression, (cst.Integer, cst.Float, cst.Imaginary))
    return False


def is_atom(node: cst.BaseExpression) -> bool:
    """Names, constants and dotted reads (`math.pi`, `self.scale`): operands of the core language."""
    return is_constant(node) or dotted_name(node) is not None


def variables_read(node: cst.CSTNode) -> list[str]:
    """Names read as variables in `node`, in order (attribute names and keywords excluded)."""
    found: list[str] = []
    _read(node, found)
    return found


def _read(node: cst.CSTNode, found: list[str]) -> None:
    """A direct walk over the core language's nodes; anything else goes to a libcst visitor."""
    if isinstance(node, cst.Name):
        if node.value not in KEYWORD_CONSTANTS:
            found.append(node.value)
    elif isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)):
        return
    elif isinstance(node, cst.Attribute):
        _read(node.value, found)
    elif isinstance(node, cst.BinaryOperation):
        _read(node.left, found)
        _read(node.right, found)
    elif isinstance(node, cst.UnaryOperation):
        _read(node.expression, found)
    elif isinstance(node, cst.Comparison):
        _read(node.left, found)
        for target in node.comparisons:
            _read(target.comparator, found)
    elif isinstance(node, cst.Call):
        _read(node.func, found)
        for argument in node.args:
            _read(argument.value, found)
    elif isinstance(node, (cst.Tuple, cst.List)):
        for element in node.elements:
            _read(element.value, found)
    elif isinstance(node, cst.Dict):
        for element in node.elements:
            _read(element.key, found)
            _read(element.value, found)
    elif isinstance(node, cst.Subscript):
        _read(node.value, found)
        for element in node.slice:
            index = element.slice
            parts = [index.value] if isinstance(index, cst.Index) else [index.lower, index.upper, index.step]
            for part in parts:
                if part is not None:
                    _read(part, found)
    elif isinstance(node, cst.SimpleStatementLine):
        for small in node.body:
            _read(small, found)
    elif isinstance(node, (cst.Expr, cst.Return)):
        if node.value is not None:
            _read(node.value, found)
    elif isinstance(node, cst.Assign):
        _read(node.value, found)
    else:
        node.visit(_Reader(found))


class _Reader(cst.CSTVisitor):
    def __init__(self, found: list[str]):
        self.found = found

    def visit_Name(self, n: cst.Name) -> None:
        if n.value not in KEYWORD_CONSTANTS:
            self.found.append(n.value)

    def visit_Attribute(self, n: cst.Attribute) -> bool:
        n.value.visit(self)
        return False

    def visit_Arg(self, n: cst.Arg) -> bool:
        n.value.visit(self)
        return False

    def visit_AssignTarget(self, n: cst.AssignTarget) -> bool:
        return False


NOT_LITERAL = object()
_NAMED = {"True": True, "False": False, "None": None}


def literal_value(node: cst.BaseExpression):
    """A literal's value from libcst's own evaluation (not `ast.literal_eval`: CPython 3.11's
    AST constructor is not thread-safe, and programs are made in any thread), or NOT_LITERAL."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return NOT_LITERAL if value is None and not isinstance(node, cst.Integer) else value
    if isinstance(node, cst.Name) and node.value in _NAMED:
        return _NAMED[node.value]
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        inner = (
            literal_value(node.expression)
            if isinstance(node.expression, (cst.Integer, cst.Float, cst.Imaginary))
            else NOT_LITERAL
        )
        if inner is NOT_LITERAL:
            return NOT_LITERAL
        return -inner if isinstance(node.operator, cst.Minus) else +inner
    return NOT_LITERAL


def line(template: str, **values: cst.CSTNode) -> cst.BaseStatement:
    """One statement parsed from `template`, each placeholder name (by convention upper-case:
    `TARGET = ITEM`) replaced by the node `values` gives for it."""
    return substituted(cst.parse_statement(template + "\n"), values)


def substituted(node: cst.CSTNode, values: dict[str, cst.CSTNode]) -> cst.CSTNode:
    """`node` with each name that `values` has a node for replaced by that node."""
    return node.visit(_Placeholders(values))


class _Placeholders(cst.CSTTransformer):
    def __init__(self, values: dict[str, cst.CSTNode]):
        self.values = values

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self.values.get(original_node.value, updated_node)


def is_a(value: object, base: type) -> bool:
    """`isinstance(value, base)` for a libcst node class `base`, read from the value's class's MRO.
    libcst's node classes are ABCs, and an ABC's first negative check of a class walks every class
    below it (for cst.CSTNode all ~480 of them, 2 ms, once a process): the first transform paid
    for each such pair. libcst registers no virtual subclasses, so the MRO is the whole answer."""
    return base in type(value).__mro__
