"""Set displays, lowered during normalize: `{a, b, c}` -> `t = (a, b, c); s = set(t)`.

Sets are not differentiable values (unordered, deduplicated: an element's adjoint has no place
to go), so a set is built by a call of the builtin `set` (`normalizer.builtin`, safe from a user's
own `set`), which has no derivative rule: a set of ints, strings or tuples of them runs as Python,
and one holding a differentiable value is a NoRuleError at its line whose advice says that sets
are not differentiable (rules/registry.advice). The elements are evaluated left to right into the
tuple first, as Python evaluates a display; `set(tuple)` keeps the first of equal elements, as a
display does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:
    from cpsgrad.transforms.normalize import _Normalizer


def display(normalizer: _Normalizer, node: cst.Set, out: list) -> cst.BaseExpression:
    """`{a, b}`: its elements into a tuple (normalized into `out`), then `set(tuple)`."""
    elements = normalizer.atom(cst.Tuple([cst.Element(e.value) for e in node.elements]), out)
    return cst.Call(normalizer.builtin("set"), [cst.Arg(elements)])
