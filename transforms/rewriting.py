"""Rewriting a normalized function after normalize (transforms/subscripts.py, transforms/writes.py):
the passes after it find a statement's origin and a loop's label by the node's id, so a rebuilt
node takes over the entries of the node it replaces, and the old definition is kept (its nodes'
ids stay theirs)."""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import syntax


class Rewriter(cst.CSTTransformer):
    """A transformer over `normalized.definition`'s statements (its `leave_SimpleStatementLine` or
    `leave_IndentedBlock` rewrites them) whose rebuilt nodes keep their way back."""

    def __init__(self, normalized):
        self.normalized = normalized

    def on_visit(self, node: cst.CSTNode) -> bool:
        """The passes rewrite whole core statements: the insides of a simple statement line and
        the atoms of an `if` or `while` are not visited, so a statement no pass changes is the
        very node it was (and costs nothing to walk past)."""
        if type(node) is cst.SimpleStatementLine or syntax.is_a(node, cst.BaseExpression):
            super().on_visit(node)
            return False
        return super().on_visit(node)

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):
        result = super().on_leave(original, updated)
        if result is not original and syntax.is_a(result, cst.CSTNode):  # a rebuilt node keeps its way back
            self.normalized.carry(original, result)
        return result


def replace(normalized, definition: cst.FunctionDef) -> None:
    """Make `definition` the normalized function's, keeping the one it replaces (origins are by id)."""
    normalized.superseded.append(normalized.definition)
    normalized.definition = definition
