"""What a statement binds and where control leaves a block: the questions normalize asks of the
user's source (which names are assigned, whether a branch ends in a jump)."""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import walk
from cpsgrad.transforms.naming import names_in


def binds(target: cst.BaseExpression, identifier: str) -> bool:
    if isinstance(target, cst.Name):
        return target.value == identifier
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(binds(e.value, identifier) for e in target.elements)
    return False


def ends_in_jump(statements) -> bool:
    """Whether a branch ends with return, raise, break or continue (never reaches what follows)."""
    if not statements:
        return False
    last = statements[-1]
    small = last.body[-1] if isinstance(last, cst.SimpleStatementLine) else last
    return isinstance(small, (cst.Return, cst.Raise, cst.Break, cst.Continue))


def assigned_names(definition: cst.FunctionDef) -> set[str]:
    """Names bound anywhere in a function body (assignments and loop targets)."""
    return assigned_in(definition.body)


def assigned_in(node: cst.CSTNode) -> set[str]:
    """Names bound anywhere in `node` (assignments and loop targets)."""
    found: set[str] = set()
    for inner in walk.nodes(node):
        if isinstance(inner, _BINDERS):
            found |= bound(inner.target)
    return found


def bound(target: cst.BaseExpression) -> set[str]:
    """The names an assignment target binds: not `x` of `x[i] = v` or `x.a = v`, which write into it."""
    if isinstance(target, (cst.Subscript, cst.Attribute)):
        return set()
    if isinstance(target, (cst.Tuple, cst.List)):
        return {name for element in target.elements for name in bound(element.value)}
    if isinstance(target, cst.StarredElement):
        return bound(target.value)
    return names_in(target)


_BINDERS = (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)


def jumps_out(node: cst.CSTNode) -> bool:
    """Whether a loop's `else` block breaks or continues (the loop around the loop): a break or
    continue not inside a loop of its own."""
    if isinstance(node, (cst.Break, cst.Continue)):
        return True
    return not isinstance(node, (cst.For, cst.While)) and any(jumps_out(child) for child in node.children)
