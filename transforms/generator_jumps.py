"""The loop body over a generator as a function: its jumps as the consumer's returns (transforms/generators.py).

The body returns `(flag, state, value)` to the generator's fold: `break` is flag 1 (the generator stops
where it is), `continue` flag 0 (the next value), a `return e` flag 2 with `e` (the consumer returns it
after the fold's call). A `break` or `continue` of a loop inside the body is its own.
"""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import generator_scopes as scopes
from cpsgrad.transforms import syntax


class Jumps(scopes.LoopDepth, scopes.Preserving):
    """The loop body's own `break`/`continue`, and every `return`, as the consumer's returns."""

    def __init__(self, state: cst.Tuple, positions, moved: dict):
        super().__init__(positions, moved)
        self.state = state
        self.depth = 0
        self.returns = False

    def _return(self, flag: str, value: cst.BaseExpression | None) -> cst.Return:
        value = value if value is not None else cst.Name("None")
        return cst.Return(cst.Tuple([cst.Element(cst.Integer(flag)), cst.Element(self.state), cst.Element(value)]))

    def leave_Break(self, original, updated):
        return updated if self.depth else self._return("1", None)

    def leave_Continue(self, original, updated):
        return updated if self.depth else self._return("0", None)

    def leave_Return(self, original, updated):
        self.returns = True
        return self._return("2", updated.value)


class PlainAppends(cst.CSTTransformer):
    """`cpsgrad_runtime.appended(items, v)` (a consumer's step, generator_consumers.py) -> `[*items, v]`,
    what it does, for the loop body's code run as plain Python (the derivative program appends in place)."""

    def leave_Call(self, original, updated):
        if syntax.dotted_name(updated.func) != "cpsgrad_runtime.appended":
            return updated
        items, value = (a.value for a in updated.args)
        return cst.List([cst.StarredElement(items), cst.Element(value)])
