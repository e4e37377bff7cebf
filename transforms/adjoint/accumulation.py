"""Accumulation: adding a contribution into an adjoint. The first contribution is assigned (or,
when it is another complete adjoint, aliased: no copy), later ones added, in place where nothing
else holds the array; a parameter's first goes into what the caller lent for it. Contributions
and the statements made of them are nodes."""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import syntax
from cpsgrad.transforms.adjoint.output import RUNTIME, Lines, add_into, assign, runtime_call


class Accumulation:
    """The Generator's accumulation (reads `borrowers`, `holds_number`)."""

    def accumulate(self, adjoint: str, contribution: cst.BaseExpression, defined: dict[str, str], lines: Lines) -> None:
        """Add `contribution` to `adjoint`: assign the first contribution, add later ones. A first
        contribution that is another (complete) adjoint is not copied: `adjoint` aliases it."""
        current = defined.get(adjoint)
        if current == adjoint and self.holds_number(adjoint):
            lines.append(add_into(adjoint, contribution))
        elif current == adjoint:  # in place only where nothing else holds the array (an adjoint may be shared)
            lines.append(assign(adjoint, _accumulation(cst.Name(adjoint), contribution)))
        elif current is not None:
            lines.append(assign(adjoint, cst.BinaryOperation(cst.Name(current), cst.Add(), contribution)))
            defined[adjoint] = adjoint
        elif isinstance(contribution, cst.Name) and contribution.value in self.adjoint_values(defined):
            defined[adjoint] = contribution.value
        elif adjoint in self.borrowers:  # a parameter's first: into what the caller lent, if it did
            borrowed = runtime_call("borrow", cst.Name(self.borrowers[adjoint]))
            lines.append(assign(adjoint, _accumulation(borrowed, contribution)))
            defined[adjoint] = adjoint
        else:
            lines.append(assign(adjoint, contribution))
            defined[adjoint] = adjoint

    @staticmethod
    def adjoint_values(defined: dict[str, str]) -> set[str]:
        return set(defined.values())


_IN_PLACE = {f"{RUNTIME}.index_adjoint": "accumulate_index", f"{RUNTIME}.matmul_left": "accumulate_matmul_left"}


def _accumulation(total: cst.BaseExpression, contribution: cst.BaseExpression) -> cst.Call:
    """`accumulate(total, contribution)`, in the form that adds in place without a full-size
    temporary where the contribution is one: an `x[i]` read's adjoint (into the elements) or a
    `W @ h` product's (BLAS into the total)."""
    if isinstance(contribution, cst.Call):
        in_place = _IN_PLACE.get(syntax.dotted_name(contribution.func))
        if in_place is not None:
            return runtime_call(in_place, total, *(argument.value for argument in contribution.args))
    return runtime_call("accumulate", total, contribution)
