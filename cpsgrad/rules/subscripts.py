"""Rules for subscripts whose index is differentiable (transforms/subscripts.py): numpy's index
tricks `np.r_[...]`/`np.c_[...]` as `index_concatenate`, and the helpers that route any other
such subscript (`subscript_of`, `indexed`: no derivative in the index)."""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
from __future__ import annotations

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.rules.registry import not_differentiable, rule


@rule(cpsgrad_runtime.index_concatenate)
def index_concatenate(indexer, parts):
    y = cpsgrad_runtime.index_concatenate(indexer, parts)
    y_d = yield y
    parts_d += cpsgrad_runtime.index_concatenate_adjoint(y_d, indexer, parts)


not_differentiable(cpsgrad_runtime.indexed, "indexed")
not_differentiable(cpsgrad_runtime.subscript_of, "subscript_of")
