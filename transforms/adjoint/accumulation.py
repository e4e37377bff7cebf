"""Accumulation: adding a contribution into an adjoint. The first contribution is assigned (or,
when it is another complete adjoint, aliased: no copy), later ones added, in place where nothing
else holds the array; a parameter's first goes into what the caller lent for it."""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import syntax
from cpsgrad.transforms.adjoint.output import RUNTIME


class Accumulation:
    """The Generator's accumulation (reads `borrowers`, `holds_number`)."""

    def accumulate(
        self, adjoint: str, contribution: Contribution, defined: dict[str, str], pad: str, lines: list[str]
    ) -> None:
        """Add `contribution` to `adjoint`: assign the first contribution, add later ones. A first
        contribution that is another (complete) adjoint is not copied: `adjoint` aliases it."""
        expression = contribution if isinstance(contribution, str) else syntax.code(contribution)
        current = defined.get(adjoint)
        if current == adjoint and self.holds_number(adjoint):
            lines.append(f"{pad}{adjoint} += {expression}")
        elif current == adjoint:  # in place only where nothing else holds the array (an adjoint may be shared)
            lines.append(f"{pad}{adjoint} = {_accumulation(adjoint, contribution, expression)}")
        elif current is not None:
            lines.append(f"{pad}{adjoint} = {current} + {expression}")
            defined[adjoint] = adjoint
        elif expression in self.adjoint_values(defined):
            defined[adjoint] = expression
        elif adjoint in self.borrowers:  # a parameter's first: into what the caller lent, if it did
            borrowed = f"{RUNTIME}.borrow({self.borrowers[adjoint]})"
            lines.append(f"{pad}{adjoint} = {_accumulation(borrowed, contribution, expression)}")
            defined[adjoint] = adjoint
        else:
            lines.append(f"{pad}{adjoint} = {expression}")
            defined[adjoint] = adjoint

    @staticmethod
    def adjoint_values(defined: dict[str, str]) -> set[str]:
        return set(defined.values())


Contribution = str | cst.BaseExpression  # an expression's code (opaque), or its node
_IN_PLACE = {f"{RUNTIME}.index_adjoint": "accumulate_index", f"{RUNTIME}.matmul_left": "accumulate_matmul_left"}


def _accumulation(total: str, contribution: Contribution, expression: str) -> str:
    """`accumulate(total, expression)`, in the form that adds in place without a full-size
    temporary where the contribution (as a node) is one: an `x[i]` read's adjoint (into the
    elements) or a `W @ h` product's (BLAS into the total)."""
    if isinstance(contribution, cst.Call):
        in_place = _IN_PLACE.get(syntax.dotted_name(contribution.func))
        if in_place is not None:
            arguments = ", ".join(syntax.code(argument.value) for argument in contribution.args)
            return f"{RUNTIME}.{in_place}({total}, {arguments})"
    return f"{RUNTIME}.accumulate({total}, {expression})"
