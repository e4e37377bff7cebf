"""Generators consumed inside an expression, hoisted onto a statement of their own (before generators.py
rewrites the consumer statements into loops over the generator's fold).

    y = acc * 2.0 + max(gen(x))       ->    t = acc * 2.0        (what Python evaluated before the call)
                                            max_gen = max(gen(x))
                                            y = t + max_gen

A consumer (`sum`, `list`, `tuple`, `next`, `min`, `max`, `any`, `all`, `sorted`) of a generator call is
hoisted only where Python evaluates it unconditionally (not under the right of `and`/`or`, a branch of
`x if c else y`, a later comparison of a chain, a comprehension, a lambda, an `elif` or `while` test), and
what Python evaluates before it in the statement is hoisted before it, in order: each maximal operand
completed before the consumer starts becomes a temporary, so no value is read after the generator ran
where Python read it before (a global the generator may rebind, an attribute or element it may write).
Kept as they are: constants, parameters (no callee rebinds them: `nonlocal` and `del` are refused; other
names are copied, as one may be unbound yet, whose error comes before the generator runs),
module attributes, and callees that are names or module attributes (resolved when the code is
transformed, as every call is). A consumer that cannot be hoisted so stays where it is and is refused,
located, by generators.py ("generator call in this position").
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable

import libcst as cst

from cpsgrad.transforms import generator_scopes as scopes
from cpsgrad.transforms import naming, syntax

_OPAQUE = (cst.Lambda, cst.GeneratorExp, cst.ListComp, cst.SetComp, cst.DictComp, cst.FormattedString)


class _Stop(Exception):
    """An expression the hoisting does not take (the consumer is left in place, and refused)."""


@dataclasses.dataclass
class Hoister:
    """`consumer(call)`: the form's name when `call` is a consumer of a generator call, else None;
    `is_local(name)`: a name certainly bound when the statement runs (a parameter: `del` is refused) that no
    callee can rebind (`nonlocal` is refused); `is_module_read(node)`: a module or a module's attribute;
    `fresh(base)`: a new name."""

    consumer: Callable[[cst.Call], str | None]
    is_local: Callable[[str], bool]
    is_module_read: Callable[[cst.BaseExpression], bool]
    fresh: Callable[[str], str]
    positions: dict
    moved: dict

    made: set = dataclasses.field(default_factory=set)

    def statement(self, line: cst.SimpleStatementLine | cst.If | cst.For, anchor: cst.CSTNode) -> list | None:
        """The statements `line` (`anchor` before its body was rewritten) becomes: the hoisted ones, then
        `line` rewritten; or None."""
        if isinstance(line, cst.SimpleStatementLine):
            if len(line.body) != 1:
                return None
            small = line.body[0]
            if isinstance(small, cst.AugAssign) and not isinstance(small.target, cst.Name):
                return None  # the target's parts are evaluated first: left in place
            if not isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Expr)):
                return None
            if (
                small.value is None
                or self._whole(small.value)
                and not isinstance(small, (cst.AugAssign, cst.AnnAssign))
            ):
                return None  # already a consumer statement of its own
            key, root = "value", small.value
        elif isinstance(line, cst.If):
            key, root = "test", line.test
        else:
            key, root = "iter", line.iter  # `for v in gen(...)` (and enumerate/zip of one) holds no consumer
        hoisted: list = []
        if isinstance(line, cst.SimpleStatementLine) and isinstance(line.body[0], cst.AugAssign):
            hoisted.append(None)  # `s += ...` reads s first (an unbound one raises before the generator runs)
        try:
            while (found := self._first(root)) is not None:
                root = self._hoist(root, found, hoisted, line)
        except _Stop:
            return None
        if hoisted[:1] == [None]:
            target = line.body[0].target
            hoisted[0] = None if len(hoisted) == 1 or self._kept(target) else self._read_first(target, anchor)
        hoisted = [h for h in hoisted if h is not None]
        if not hoisted:
            return None
        if isinstance(line, cst.SimpleStatementLine):
            rebuilt = line.with_changes(body=[line.body[0].with_changes(value=root)])
        else:
            rebuilt = line.with_changes(**{key: root})
        if anchor in self.positions:
            self.moved.setdefault(rebuilt, self.positions[anchor])
        return [*hoisted, rebuilt]

    def _whole(self, node: cst.BaseExpression) -> str | None:
        node = syntax.strip_parentheses(node)
        return self.consumer(node) if isinstance(node, cst.Call) else None

    def _first(self, root: cst.BaseExpression):
        """The first consumer Python evaluates in `root` unconditionally, with the maximal operands
        completed before it (in order), or None; _Stop when the first one is conditional."""
        done: list = []
        for node, conditional in _order(root, False, self):
            if node is None:
                continue
            if isinstance(node, tuple):
                call = node[1]
                if conditional:
                    raise _Stop
                return call, [d for d in done if not any(d is not o and scopes.contains(o, d) for o in done)]
            done.append(node)
        return None

    def _hoist(self, root, found, hoisted: list, line) -> cst.BaseExpression:
        call, before = found
        replacements = {}
        for node in before:
            if self._kept(node):
                continue
            if _callee_of(root, node):
                if isinstance(node, cst.Name):
                    continue  # resolved when transformed, as every callee is
                raise _Stop  # a computed callee (`get()(sum(gen(x)))`, `obj.m(...)`): left in place
            name = self.fresh("before_" + (self.consumer(call) or "generator"))
            self.made.add(name)
            hoisted.append(self._assign(name, node, node))
            replacements[node] = cst.Name(name)
        form = self.consumer(call)
        consumed = syntax.strip_parentheses(call.args[0].value)
        if isinstance(consumed, cst.GeneratorExp):  # over a generator call (generator_comprehensions.py)
            consumed = syntax.strip_parentheses(consumed.for_in.iter)
        generator = syntax.dotted_name(consumed.func) or "generator"
        name = self.fresh(naming.hoisted_consumer(form, generator))
        self.made.add(name)
        hoisted.append(self._assign(name, call, call))
        replacements[call] = cst.Name(name)
        return root.visit(_Replace(replacements, self.positions, self.moved))

    def _assign(self, name: str, value: cst.BaseExpression, anchor) -> cst.SimpleStatementLine:
        statement = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)])
        if anchor in self.positions:
            self.moved.setdefault(statement, self.positions[anchor])
        return statement

    def _read_first(self, target: cst.Name, anchor) -> cst.SimpleStatementLine:
        name = self.fresh(naming.read_before(target.value))
        self.made.add(name)
        return self._assign(name, target, anchor)

    def _kept(self, node: cst.BaseExpression) -> bool:
        """Whether reading `node` after the consumer gives what Python read before it."""
        if syntax.is_constant(node):
            return True
        if isinstance(node, cst.Name) and (node.value in self.made or self.is_local(node.value)):
            return True
        return syntax.dotted_name(node) is not None and self.is_module_read(node)


def _callee_of(root: cst.CSTNode, node: cst.CSTNode) -> bool:
    return any(isinstance(c, cst.Call) and c.func is node for c in scopes.walk_all(root))


def _order(node: cst.BaseExpression, conditional: bool, hoister: Hoister):
    """(node, conditional) for each node of an expression, each when Python finishes evaluating it
    (post-order in evaluation order); a consumer of a generator call as ("consumer", call) in its place.
    Leaves: names, dotted reads, constants; opaque (evaluated whole, lazily or not at all): lambdas,
    comprehensions, f-strings."""
    if isinstance(node, cst.Call) and hoister.consumer(node) is not None:
        if any(a.star for a in node.args):
            raise _Stop
        yield ("consumer", node), conditional
        return
    if syntax.dotted_name(node) is not None or syntax.is_constant(node) or isinstance(node, _OPAQUE):
        yield node, conditional
        return
    parts: list = []
    lazy: list = []
    if isinstance(node, cst.BinaryOperation):
        parts = [node.left, node.right]
    elif isinstance(node, cst.UnaryOperation):
        parts = [node.expression]
    elif isinstance(node, cst.BooleanOperation):
        parts, lazy = [node.left], [node.right]
    elif isinstance(node, cst.Comparison):
        parts = [node.left, node.comparisons[0].comparator]
        lazy = [c.comparator for c in node.comparisons[1:]]
    elif isinstance(node, cst.IfExp):
        parts, lazy = [node.test], [node.body, node.orelse]
    elif isinstance(node, cst.Call):
        if any(a.star for a in node.args):
            raise _Stop  # `f(*xs, ...)` iterates xs while it builds the arguments
        parts = [node.func, *(a.value for a in node.args)]
    elif isinstance(node, cst.Attribute):
        parts = [node.value]
    elif isinstance(node, cst.Subscript):
        parts = [node.value]
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index):
                parts.append(index.value)
            else:
                parts += [p for p in (index.lower, index.upper, index.step) if p is not None]
    elif isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        if any(isinstance(e, cst.StarredElement) for e in node.elements):
            raise _Stop
        parts = [e.value for e in node.elements]
    elif isinstance(node, cst.Dict):
        if any(not isinstance(e, cst.DictElement) for e in node.elements):
            raise _Stop
        parts = [p for e in node.elements for p in (e.key, e.value)]
    else:
        raise _Stop  # walrus, await, yield, ...: left in place
    for part in parts:
        yield from _order(part, conditional, hoister)
    for part in lazy:
        yield from _order(part, True, hoister)
    yield node, conditional


class _Replace(scopes.Preserving):
    def __init__(self, replacements: dict, positions, moved: dict):
        super().__init__(positions, moved)
        self.replacements = replacements

    def on_visit(self, node) -> bool:
        if node in self.replacements:
            self.changed.append(False)
            return False
        return super().on_visit(node)

    def on_leave(self, original, updated):
        if original in self.replacements:
            self.changed.pop()
            if self.changed:
                self.changed[-1] = True
            return self.replacements[original]
        return super().on_leave(original, updated)


def hoist_all(definition: cst.FunctionDef, hoister: Hoister) -> cst.FunctionDef:
    """`definition` with the consumers of generator calls inside expressions hoisted."""
    return definition.visit(_Statements(hoister))


class _Statements(scopes.Preserving):
    def __init__(self, hoister: Hoister):
        super().__init__(hoister.positions, hoister.moved)
        self.hoister = hoister
        self.depth = 0
        self.elifs: set[int] = set()

    def visit_FunctionDef(self, node) -> bool:
        self.depth += 1
        return self.depth == 1  # the differentiated function's own body only

    def leave_FunctionDef(self, original, updated):
        self.depth -= 1
        return updated

    def visit_If(self, node) -> None:
        if isinstance(node.orelse, cst.If):
            self.elifs.add(id(node.orelse))  # its test runs only if this one's is false: not hoisted

    def visit_Lambda(self, node) -> bool:
        return False

    def leave_SimpleStatementLine(self, original, updated):
        return self._replaced(original, updated)

    def leave_For(self, original, updated):
        return self._replaced(original, updated)

    def leave_If(self, original, updated):
        if id(original) in self.elifs:
            return updated
        return self._replaced(original, updated)

    def _replaced(self, original, updated):
        result = self.hoister.statement(updated, original)
        return updated if result is None else cst.FlattenSentinel(result)


def module_read(resolver) -> Callable[[cst.BaseExpression], bool]:
    def check(node: cst.BaseExpression) -> bool:
        dotted = syntax.dotted_name(node)
        root = dotted.split(".")[0]
        value = resolver.lookup(root)
        return isinstance(value, types.ModuleType) or "." not in dotted and _builtin(resolver, root)

    return check


def _builtin(resolver, name: str) -> bool:
    import builtins

    return getattr(builtins, name, None) is not None and resolver.resolve(cst.Name(name)) is getattr(builtins, name)
