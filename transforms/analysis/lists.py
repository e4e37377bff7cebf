"""Lists whose `append` and `pop` normalize may rewrite into new values.

`xs.append(v)` changes the list object, and every name, container or function holding the same
object sees the change; the derivative program keeps each version of a value for the backward,
so it cannot follow a change in place. For a list that nothing but its own name can see, a
change in place and a new value bound to the same name cannot be told apart, so normalize writes
`xs = cpsgrad_runtime.appended(xs, v)` and `v = xs[i]; xs = cpsgrad_runtime.removed(xs, i)`
(the derivative program runs those two in place, undone in its backward: runtime/list_changes.py).

A name qualifies when (a static, flow-insensitive check on the user's source):
  - it is a local, not a parameter, and every assignment to it builds a new list: a display
    `[...]`, a list comprehension, `list(...)` or `sorted(...)`, bound to it alone (no unpacking,
    no loop target);
  - its only methods called are `append(v)`, `pop()` or `pop(i)`, transforms/containers.py's
    (`extend`, `insert`, `remove`, `sort`, `reverse`, `clear`) and `del xs[i]`, `del xs[i:j]`
    (and `copy`, `index`, `count`, which change nothing); transforms/container_methods.py runs the
    same check for dicts;
  - no other reference to the list it holds can be used after an append or pop: wherever it is
    copied to another name, put in a container, passed to a function without a rule (a user
    function may keep it) or combined by `and`/`or`/`if-else`, no append or pop follows (later
    in the text, or in a loop around both). Reading it (`xs[i]`, `len(xs)`, `sum(xs)`,
    `np.stack(xs)`, any primitive with a rule), returning it, and iterating it in a `for` loop
    whose body does not append to it or pop from it are always fine.
Any other append or pop keeps Python's own call: it works on lists that carry no gradient, and
the adjoint pass refuses it where a gradient would have to flow through it.
"""

from __future__ import annotations

import libcst as cst

from cpsgrad import runtime
from cpsgrad.rules.registry import TABLE
from cpsgrad.transforms import containers, walk
from cpsgrad.transforms.resolve import Resolver

MUTATIONS = containers.MUTATIONS_OF_LISTS  # method -> (least, most) positional arguments
_HARMLESS_METHODS = frozenset({"copy", "index", "count"})
_FRESH_BUILDERS = (list, sorted)
_ALIASING = (iter, reversed, zip, enumerate, map, filter, runtime.as_sequence)  # results refer to their argument
_COPIES = (list, tuple, dict, set, frozenset, sorted)  # `list(xs)`, `dict(d)`: a new container of the items, now


class _Uses(cst.CSTVisitor):
    def __init__(self, resolver: Resolver, parameters: set[str]):
        self.resolver = resolver
        self.parameters = parameters
        self.stack: list[cst.CSTNode] = []
        self.position = 0
        self.bound: dict[str, list[bool]] = {}  # name -> per binding, whether it builds a new list
        self.mutations: dict[str, list[tuple[int, frozenset]]] = {}  # name -> (position, loops around)
        self.escapes: dict[str, list[tuple[int, frozenset]]] = {}
        self.iterations: dict[str, list[int]] = {}  # name -> ids of the for loops iterating it
        self.refused: set[str] = set()
        self.targets: set[int] = set()  # ids of Name nodes that are assignment targets

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.stack.append(node)
        self.position += 1
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self._targets(target.target)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
            self._targets(node.target)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()
        super().on_leave(original_node)

    def _targets(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.targets.add(id(target))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._targets(element.value)

    def loops(self) -> frozenset:
        """The loops whose every iteration runs the node on top of the stack."""
        found = []
        for index, ancestor in enumerate(self.stack[:-1]):
            child = self.stack[index + 1]
            if isinstance(ancestor, cst.For) and child is ancestor.body:
                found.append(id(ancestor))
            elif isinstance(ancestor, cst.While) and (child is ancestor.body or child is ancestor.test):
                found.append(id(ancestor))
        return frozenset(found)

    def ancestor(self, depth: int) -> cst.CSTNode | None:
        return self.stack[-1 - depth] if len(self.stack) > depth else None

    def visit_Name(self, node: cst.Name) -> None:
        name = node.value
        if id(node) in self.targets:
            self.binding(name)
            return
        parent = self.ancestor(1)
        grandparent = self.ancestor(2)
        if isinstance(parent, cst.Attribute):
            if parent.value is not node:
                return  # `obj.xs` names an attribute, not the variable
            method = parent.attr.value
            if isinstance(grandparent, cst.Call) and grandparent.func is parent:
                if method in MUTATIONS:
                    least, most = MUTATIONS[method]
                    arguments = grandparent.args
                    keywords = containers.KEYWORDS.get(method, frozenset())
                    positional = [a for a in arguments if a.keyword is None]
                    if least <= len(positional) <= most and all(
                        not a.star and (a.keyword is None or a.keyword.value in keywords) for a in arguments
                    ):
                        self.mutations.setdefault(name, []).append((self.position, self.loops()))
                        return
                elif method in _HARMLESS_METHODS:
                    return
            self.refused.add(name)
            return
        if isinstance(parent, cst.Subscript) and parent.value is node:
            if self.deleted(parent):  # del xs[i]: a change (transforms/container_methods.py)
                self.mutations.setdefault(name, []).append((self.position, self.loops()))
            return
        if isinstance(
            parent, (cst.Comparison, cst.ComparisonTarget, cst.BinaryOperation, cst.UnaryOperation, cst.Expr)
        ):
            return
        if isinstance(parent, (cst.If, cst.While)) or (isinstance(parent, cst.IfExp) and parent.test is node):
            return
        if isinstance(parent, cst.BooleanOperation) and self.tested(1):
            return  # `while xs and n > 0:`: only its truth is used
        if any(isinstance(a, cst.Return) for a in self.stack):
            return  # nothing of this function runs after a return
        if isinstance(parent, cst.For) and parent.iter is node:
            self.iterations.setdefault(name, []).append(id(parent))
            return
        if isinstance(parent, cst.StarredDictElement) or (
            isinstance(parent, cst.StarredElement) and isinstance(grandparent, (cst.List, cst.Tuple, cst.Set))
        ):
            return  # `{**d}`, `[*xs]`: the items copied into a new display, no reference to the container kept
        if isinstance(parent, cst.Arg) and isinstance(grandparent, cst.Call) and parent.keyword is None:
            callee = self.resolver.resolve(grandparent.func)
            great = self.ancestor(3)
            if (
                callee is not None
                and any(callee is c for c in _COPIES)
                and len(grandparent.args) == 1
                and not parent.star
            ):
                return  # a copy made now: later changes of the container do not reach it
            if callee is not None and any(callee is a for a in _ALIASING):
                if isinstance(great, cst.For) and great.iter is grandparent:
                    self.iterations.setdefault(name, []).append(id(great))
                    return
            elif callee is not None and _has_rule(callee):
                return  # a primitive reads it and keeps no reference
        self.escapes.setdefault(name, []).append((self.position, self.loops()))

    def tested(self, depth: int) -> bool:
        """Whether the and/or at `depth` above is, through more and/or, the test of an if or while."""
        while isinstance(self.ancestor(depth + 1), cst.BooleanOperation):
            depth += 1
        above = self.ancestor(depth + 1)
        return isinstance(above, (cst.If, cst.While)) and above.test is self.ancestor(depth)

    def deleted(self, subscript: cst.Subscript) -> bool:
        """Whether `subscript` is a target of the `del` statement around it."""
        statement = self.ancestor(2)
        if isinstance(statement, cst.Element):
            statement = self.ancestor(4)
        return isinstance(statement, cst.Del)

    def binding(self, name: str) -> None:
        parent = self.ancestor(1)
        statement = self.ancestor(2)
        fresh = False
        if isinstance(parent, cst.AssignTarget) and isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            fresh = self.builds_list(statement.value)
        elif isinstance(parent, cst.AnnAssign) and parent.value is not None:
            fresh = self.builds_list(parent.value)
        self.bound.setdefault(name, []).append(fresh)

    def builds_list(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, (cst.List, cst.ListComp)):
            return True
        if isinstance(value, cst.Call):
            callee = self.resolver.resolve(value.func)
            return any(callee is b for b in _FRESH_BUILDERS)
        return False


def _has_rule(callee) -> bool:
    try:
        return callee in TABLE
    except TypeError:  # unhashable
        return False


def _may_mutate(node: cst.CSTNode, methods=MUTATIONS) -> bool:
    """Whether `node` is a call `name.method(...)` of a method in `methods`, or a `del`."""
    return (
        type(node) is cst.Call and type(node.func) is cst.Attribute and type(node.func.value) is cst.Name
        and node.func.attr.value in methods
    ) or type(node) is cst.Del


def functional_lists(
    definition: cst.FunctionDef, parameters: set[str], resolver: Resolver, uses_class=None, methods=MUTATIONS
) -> set[str]:
    """The local names whose `append` and `pop` calls may become new values (see the module);
    with `uses_class` and `methods`, the dicts whose methods may (transforms/container_methods.py)."""
    if not any(_may_mutate(node, methods) for node in walk.nodes(definition.body)):
        return set()  # no `name.append(...)` or `name.pop(...)`: no name to find (not worth the visit)
    uses = (uses_class or _Uses)(resolver, parameters)
    definition.body.visit(uses)
    found: set[str] = set()
    for name, mutations in uses.mutations.items():
        if name in parameters or name in uses.refused or not uses.bound.get(name) or not all(uses.bound[name]):
            continue
        conflict = any(
            later > position or loops & around
            for position, loops in uses.escapes.get(name, [])
            for later, around in mutations
        )
        conflict = conflict or any(loop in around for loop in uses.iterations.get(name, []) for _, around in mutations)
        if not conflict:
            found.add(name)
    return found


def list_locals(definition: cst.FunctionDef, parameters: set[str], resolver: Resolver) -> set[str]:
    """The local names (not parameters) every assignment of which builds a new list: a method
    call on one is a list's, never an array's (`xs.sort()` is list.sort, not a write)."""
    if not any(_may_mutate(node) for node in walk.nodes(definition.body)):
        return set()
    uses = _Uses(resolver, parameters)
    definition.body.visit(uses)
    return {name for name, fresh in uses.bound.items() if fresh and all(fresh) and name not in parameters}

