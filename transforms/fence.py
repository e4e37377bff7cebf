"""The fence: reject, before anything else runs, every construct cpsgrad does not differentiate.

Each rejection names the file, line and column, the construct, and what to write instead.
"""

from __future__ import annotations

import libcst as cst

from cpsgrad.errors import UnsupportedError
from cpsgrad.transforms import assignment_expressions, container_methods
from cpsgrad.transforms.source import FunctionSource

# node type -> (construct name, what to do instead)
_REJECTED: dict[type, tuple[str, str]] = {
    cst.TryStar: ("try/except* statement", "exception groups are not supported; catch the group with except"),
    cst.Yield: (
        "yield",
        "a differentiated function cannot be a generator (grad needs one value); differentiate a function "
        "that consumes it (s = sum(gen(...)), for v in gen(...): ...). A generator is differentiated only "
        "iterated where it is called, by its name: a module-level function, a closure of an enclosing function "
        "or a def of the consuming function, not one passed as an argument (docs/python-support.md, Generators)",
    ),
    cst.Await: ("await", "coroutines cannot be differentiated; write synchronous code"),
    cst.Global: (
        "global statement",
        "global writes are not differentiable; pass the value as an argument and return the new one",
    ),
    cst.Nonlocal: (
        "nonlocal statement",
        "nonlocal writes are not differentiable; pass the value as an argument and return the new one",
    ),
    cst.Del: ("del statement", "remove the del; names go out of scope when the function returns"),
    cst.ClassDef: ("class definition", "define the class at module level"),
    cst.Import: ("import statement", "import at module level"),
    cst.ImportFrom: ("import statement", "import at module level"),
    cst.Match: ("match statement", "write it as if/elif"),
}


class Fence(cst.CSTVisitor):
    """Collects the first unsupported construct of a function body and raises it."""

    def __init__(self, source: FunctionSource):
        self.source = source

    def reject(self, node: cst.CSTNode, construct: str, advice: str) -> None:
        raise UnsupportedError(self.source.location(node), construct, advice)

    def on_visit(self, node: cst.CSTNode) -> bool:
        rejected = _REJECTED.get(type(node))
        if rejected is not None and not (type(node) is cst.Del and container_methods.deletable(node)):
            self.reject(node, *rejected)
        return super().on_visit(node)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == "cpsgrad_runtime" and node in self.source.positions:  # not the passes' own (generators.py)
            self.reject(node, "the name cpsgrad_runtime", "it is reserved for cpsgrad's generated code; rename it")

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        """A nested def is checked when it is transformed (on its first differentiated call);
        here only what its definition itself does."""
        if node.asynchronous is not None:
            self.reject(node, "nested async def", "coroutines cannot be differentiated; write a plain def")
        if node.decorators:
            self.reject(
                node.decorators[0],
                "decorator on a nested def",
                "apply the decorator by a call after the def (g = decorator(g))",
            )
        self._check_parameters(node.params)
        for default in _defaults(node.params):
            default.visit(self)
        node.body.visit(_Writes(self))
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self._check_parameters(node.params)
        for default in _defaults(node.params):
            default.visit(self)
        return False

    def _check_parameters(self, params: cst.Parameters) -> None:
        """Every form of parameter is supported (`*args` a tuple, `**kwargs` a dict)."""

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        walrus = assignment_expressions.FStringWalrus()
        node.visit(walrus)
        if walrus.found is not None:
            self.reject(walrus.found, "assignment expression (:=) in an f-string", "assign it on a line before")

    def visit_For(self, node: cst.For) -> None:
        if node.asynchronous is not None:
            self.reject(node, "async for", "write a plain for loop")
        self._check_targets(node.target, loop=True)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._check_targets(target.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check_targets(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._check_targets(node.target)

    def _check_targets(self, target: cst.BaseExpression, loop: bool = False) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:  # a, *rest = xs: transforms/starred.py
                self._check_targets(element.value, loop)
        elif isinstance(target, cst.Subscript):
            if loop:
                self.reject(
                    target, "loop target that writes into an element", "loop over a name and assign in the body"
                )
            # x[key] = v: a write in place (transforms/writes.py, checked by transforms/analysis/aliasing.py)
        elif isinstance(target, cst.Attribute):  # obj.attr = v: transforms/attributes.py
            if loop:
                self.reject(target, "loop target that is an attribute", "loop over a name and assign in the body")
        elif not isinstance(target, cst.Name):
            self.reject(target, "assignment target", "assign to a plain name")


class _Writes(cst.CSTVisitor):
    """`nonlocal` in a nested def: it would write the enclosing function's variables, which
    cpsgrad's closures capture as values."""

    def __init__(self, fence: Fence):
        self.fence = fence

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.fence.reject(node, *_REJECTED[cst.Nonlocal])


def _defaults(params: cst.Parameters) -> list[cst.BaseExpression]:
    return [p.default for p in (*params.posonly_params, *params.params, *params.kwonly_params) if p.default is not None]


def check(source: FunctionSource) -> None:
    """Raise `UnsupportedError` at the first construct of `source` that cpsgrad rejects."""
    for statement in source.definition.body.body:
        statement.visit(Fence(source))
