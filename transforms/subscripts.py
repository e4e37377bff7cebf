"""Subscripts whose index is differentiable: `np.r_[x, y]`, `obj[v]` of a user class.

Indexing an array, a list, a tuple or a dict with a differentiable value is piecewise constant
in the index (an int, a slice, a key): only the indexed value gets an adjoint. But a subscript is
a call of `type(obj).__getitem__`, and two kinds of it compute from the index itself:
- numpy's index tricks `np.r_[a, b, ...]` and `np.c_[a, b, ...]` concatenate the index's
  elements; they become `cpsgrad_runtime.index_concatenate(np.r_, (a, b, ...))`, whose rule
  hands each element its piece of the adjoint;
- any other subscript of a value that carries no gradient itself, `obj[v]`, becomes a call
  `cpsgrad_runtime.subscript_of(obj)(v)`: the bound `__getitem__` of a user class (differentiated
  like any method) or, for the builtin containers and numpy arrays, an indexing primitive with no
  derivative. Anything else is refused at run time, naming the call.

Runs after activity (it needs to know which indices are differentiable); the pipeline runs
activity again on what it returns.
"""

from __future__ import annotations

import libcst as cst
import numpy as np

from cpsgrad.errors import UnsupportedError
from cpsgrad.transforms import rewriting, syntax, walk
from cpsgrad.transforms.naming import Namer, names_in
from cpsgrad.transforms.normalize import Normalized
from cpsgrad.transforms.resolve import Resolver

INDEX_CONCATENATORS = (np.r_, np.c_)


def rewrite(normalized: Normalized, active: set[str], resolver: Resolver) -> bool:
    """Rewrite `normalized` in place (its definition and origins) as above; whether it changed."""
    rewriter = _Rewriter(normalized, active, resolver)
    if not any(rewriter.rewritten(node) for node in walk.nodes(normalized.definition)):
        return False  # nothing to rewrite: the transformer (a rebuild of every node) is not run
    definition = normalized.definition.visit(rewriter)
    if not rewriter.changed:
        return False
    rewriting.replace(normalized, definition)
    return True


def _runtime(name: str) -> cst.Attribute:
    return cst.Attribute(cst.Name("cpsgrad_runtime"), cst.Name(name))


class _Rewriter(rewriting.Rewriter):
    def __init__(self, normalized: Normalized, active: set[str], resolver: Resolver):
        super().__init__(normalized)
        self.active = active
        self.resolver = resolver
        self.namer = Namer(names_in(normalized.definition))
        self.changed = False

    def differentiable_index(self, subscript: cst.Subscript) -> bool:
        return any(name in self.active for element in subscript.slice for name in syntax.variables_read(element.slice))

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body = [new for statement in updated.body for new in self.statement(statement)]
        unchanged = len(body) == len(updated.body) and all(a is b for a, b in zip(body, updated.body, strict=True))
        return updated if unchanged else updated.with_changes(body=body)

    def rewritten(self, statement: cst.CSTNode) -> bool:
        """Whether `statement` is one `statement` rewrites (or refuses): `name = value[index]`
        with a differentiable index into a value that carries no gradient."""
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return False
        small = statement.body[0]
        if not isinstance(small, cst.Assign) or not isinstance(small.value, cst.Subscript):
            return False
        subscript = small.value
        if not self.differentiable_index(subscript):
            return False
        # an array or container indexed: the index is an int, a slice, a key
        return not any(name in self.active for name in syntax.variables_read(subscript.value))

    def statement(self, statement: cst.BaseStatement) -> list[cst.BaseStatement]:
        if not self.rewritten(statement):
            return [statement]
        small = statement.body[0]
        subscript = small.value
        origin = self.normalized.origins.get(id(statement))
        out: list[cst.BaseStatement] = []
        indexer = self.resolver.resolve(subscript.value)
        elements = [element.slice for element in subscript.slice]
        if any(indexer is concatenator for concatenator in INDEX_CONCATENATORS):
            parts = self.temporary(
                cst.Tuple([cst.Element(self.part(e, statement, origin, out)) for e in elements]), origin, out
            )
            value = cst.Call(_runtime("index_concatenate"), [cst.Arg(subscript.value), cst.Arg(parts)])
        else:
            if len(elements) == 1 and isinstance(elements[0], cst.Index):
                index = elements[0].value
            elif all(isinstance(e, cst.Index) for e in elements):
                index = self.temporary(cst.Tuple([cst.Element(e.value) for e in elements]), origin, out)
            else:
                raise UnsupportedError(
                    self.normalized.location(statement), "slice bound computed from a differentiable value",
                    "a slice's bounds carry no derivative, and an object's own __getitem__ given one is not "
                    "differentiated; compute the bound as an int first (int(...), len(...), .shape)",
                )
            method = self.temporary(
                cst.Call(_runtime("subscript_of"), [cst.Arg(subscript.value)]), origin, out, "getitem"
            )
            value = cst.Call(method, [cst.Arg(index)])
        replaced = statement.with_changes(body=[small.with_changes(value=value)])
        self.normalized.origins[id(replaced)] = origin
        out.append(replaced)
        self.changed = True
        return out

    def part(self, element: cst.BaseSlice, statement, origin, out: list) -> cst.BaseExpression:
        """An element of `np.r_[...]`: a value as it is; a slice (a range of constants, `1:3`)
        as the slice object numpy receives, made by a statement of its own."""
        if isinstance(element, cst.Index):
            if isinstance(element.value, cst.SimpleString):
                raise UnsupportedError(
                    self.normalized.location(statement), "np.r_/np.c_ directive string",
                    "a directive ('r', '0,2', ...) among differentiable values is not supported; "
                    "use np.concatenate, np.stack or np.column_stack",
                )
            return element.value
        bounds = [element.lower, element.upper, element.step]
        if any(name in self.active for bound in bounds if bound is not None for name in syntax.variables_read(bound)):
            raise UnsupportedError(
                self.normalized.location(statement), "slice bound computed from a differentiable value",
                "a range in np.r_/np.c_ carries no derivative; compute its bounds as ints first",
            )
        made = cst.Call(
            cst.Attribute(_runtime("builtins"), cst.Name("slice")),
            [cst.Arg(bound if bound is not None else cst.Name("None")) for bound in bounds],
        )
        return self.temporary(made, origin, out)

    def temporary(self, value: cst.BaseExpression, origin, out: list, base: str | None = None) -> cst.Name:
        name = self.namer.fresh(base) if base else self.namer.temporary()
        statement = syntax.assign(name, value)
        self.normalized.origins[id(statement)] = origin
        out.append(statement)
        return cst.Name(name)
