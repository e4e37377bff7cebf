"""A user object's method whose name is also a dict's, a list's or an array's (`r.get()`, `s.pop()`,
`m.sum()`), called on a name that surely holds an instance of a user class.

A call `y = v.name(...)` of a differentiable `v` is taken for the container's or the array's method
where `name` is one (transforms/calls.py: `user_method`, `container_method`): `d.get(k)` binds the
rule of `dict.get`. Where every assignment of `v` in the function constructs an instance of one
user class (`r = Reader(w)`) whose own `name` is a function, that reading is wrong (a NoRuleError
about dict.get for `r.get()`): the call becomes `t = v.name; y = t(...)`, a call of a bound method
as a value, which the call site dispatches to the method's program when it runs
(runtime/dispatch.py), as Python calls it.
"""

from __future__ import annotations

import types

import libcst as cst

from cpsgrad.transforms import calls, rewriting, syntax, walk
from cpsgrad.transforms.naming import Namer, names_in


def split(normalized, active: set[str], resolver) -> bool:
    """Rewrite those calls of `normalized` (of a differentiable receiver). Whether it changed."""
    classes = _instances(normalized, resolver)
    rewriter = _Split(normalized, active, classes)
    definition = normalized.definition.visit(rewriter)
    if not rewriter.changed:
        return False
    rewriting.replace(normalized, definition)
    return True


def _instances(normalized, resolver) -> dict[str, type]:
    """name -> the user class every assignment of it (and none of its parameters) constructs."""
    found: dict[str, set] = {}
    for node in walk.nodes(normalized.definition.body):
        if not isinstance(node, (cst.Assign, cst.AugAssign, cst.For, cst.NamedExpr)):
            continue
        parts = node.targets if isinstance(node, cst.Assign) else [node]
        targets = [n.value for part in parts for n in walk.nodes(part.target) if isinstance(n, cst.Name)]
        value = node.value if isinstance(node, cst.Assign) else None
        kind = None
        if len(targets) == 1 and isinstance(value, cst.Call):
            candidate = resolver.resolve(value.func)
            if calls._user_class(candidate):
                kind = candidate
        for target in targets:
            found.setdefault(target, set()).add(kind)
    return {
        name: next(iter(kinds)) for name, kinds in found.items()
        if len(kinds) == 1 and None not in kinds and name not in normalized.parameters
    }


class _Split(rewriting.Rewriter):
    def __init__(self, normalized, active: set[str], classes: dict[str, type]):
        super().__init__(normalized)
        self.active = active
        self.classes = classes
        self.namer = Namer(names_in(normalized.definition))
        self.changed = False

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body = []
        for before, statement in zip(original.body, updated.body, strict=True):
            call = _call_of(statement)
            callee = call.func if call is not None else None
            if not (
                isinstance(callee, cst.Attribute)
                and isinstance(callee.value, cst.Name)
                and callee.value.value in self.active
                and callee.value.value in self.classes
                and not calls.user_method(callee.attr.value)
                and isinstance(getattr(self.classes[callee.value.value], callee.attr.value, None), types.FunctionType)
            ):
                body.append(statement)
                continue
            method = self.namer.temporary()
            read = syntax.assign(method, callee)
            small = statement.body[0]
            called = call.with_changes(func=cst.Name(method))
            if isinstance(small, cst.Assign):
                computed = statement.with_changes(body=[small.with_changes(value=called)])
            else:  # for its effect: its result discarded, a user call like any other
                computed = syntax.assign(self.namer.temporary(), called)
            origin = self.normalized.origins.get(id(before))
            for new in (read, computed):
                self.normalized.origins[id(new)] = origin
            body += [read, computed]
            self.changed = True
        return updated.with_changes(body=body)


def _call_of(statement) -> cst.Call | None:
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    small = statement.body[0]
    value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
    return value if isinstance(value, cst.Call) else None
