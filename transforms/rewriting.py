"""Rewriting a normalized function after normalize (transforms/subscripts.py, transforms/writes.py):
the passes after it find a statement's origin and a loop's label by the node's id, so a rebuilt
node takes over the entries of the node it replaces, and the old definition is kept (its nodes'
ids stay theirs)."""

from __future__ import annotations

import libcst as cst


class Rewriter(cst.CSTTransformer):
    """A transformer over `normalized.definition` whose rebuilt nodes keep their way back."""

    def __init__(self, normalized):
        self.normalized = normalized

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):
        result = super().on_leave(original, updated)
        if result is not original and isinstance(result, cst.CSTNode):  # a rebuilt node keeps its way back
            self.normalized.carry(original, result)
        return result


def replace(normalized, definition: cst.FunctionDef) -> None:
    """Make `definition` the normalized function's, keeping the one it replaces (origins are by id)."""
    normalized.superseded.append(normalized.definition)
    normalized.definition = definition
