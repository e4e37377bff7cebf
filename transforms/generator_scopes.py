"""What a loop over a generator reads and binds: the scope questions transforms/generators.py asks of
the consumer's source (names bound before the loop, read after it, in order of appearance)."""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import syntax
from cpsgrad.transforms.naming import names_in


def shadowed(func: cst.BaseExpression, local: set[str]) -> bool:
    return isinstance(func, cst.Name) and func.value in local


def statements(block) -> list:
    if isinstance(block, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(block.body)]
    return list(block.body)


def children(node: cst.CSTNode):
    return [c for c in node.children if syntax.is_a(c, cst.CSTNode)]


def calls(root: cst.CSTNode):
    """The calls in `root`, not inside nested definitions (lifted and checked when they are transformed)."""
    pending = [root]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Call):
            yield node
        pending += [c for c in children(node) if not isinstance(c, (cst.FunctionDef, cst.Lambda))]


class LoopDepth:
    """A transformer mixin counting the `for` and `while` loops it is inside (`self.depth`, which
    the class sets to 0): a loop's own `break`s and `return`s are those at depth 0."""

    def visit_For(self, node) -> None:
        self.depth += 1

    def leave_For(self, original, updated):
        self.depth -= 1
        return updated

    def visit_While(self, node) -> None:
        self.depth += 1

    def leave_While(self, original, updated):
        self.depth -= 1
        return updated


class Preserving(cst.CSTTransformer):
    """A transformer that keeps every node it does not change (libcst rebuilds each one), so file
    positions keyed by node still find them; a node rebuilt around a change gets its original's
    position (`moved`, laid over the source's positions)."""

    def __init__(self, positions, moved: dict):
        super().__init__()
        self.positions = positions
        self.moved = moved
        self.changed: list[bool] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.changed.append(False)
        return super().on_visit(node)

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        changed = self.changed.pop()
        if result is updated and not changed:
            return original
        if self.changed:
            self.changed[-1] = True
        if syntax.is_a(result, cst.CSTNode) and original in self.positions:
            self.moved.setdefault(result, self.positions[original])
        return result


def walk_all(root: cst.CSTNode):
    """Every node of `root`, nested definitions' bodies excepted."""
    pending = [root]
    while pending:
        node = pending.pop()
        yield node
        pending += [c for c in children(node) if not isinstance(c, (cst.FunctionDef, cst.Lambda))]


def inside_loop(root: cst.CSTNode, anchor: cst.CSTNode) -> bool:
    for node in walk_all(root):
        if isinstance(node, (cst.For, cst.While)) and node is not anchor and contains(node, anchor):
            return True
    return False


def bound_in_text_before(root: cst.CSTNode, start: tuple[int, int], positions) -> set[str]:
    """The names some binding (assignment, loop target, :=, `as`) written before `start` binds."""
    found: set[str] = set()
    for node in walk_all(root):
        where = positions.get(node) if hasattr(positions, "get") else None
        if where is None or (where.start.line, where.start.column) >= start:
            continue
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
            found |= names_in(node.target)
        elif isinstance(node, (cst.AsName,)):
            found |= names_in(node.name)
    return found


def names_after(root: cst.CSTNode, end: tuple[int, int], positions) -> set[str]:
    """The names mentioned at or after `end`."""
    found: set[str] = set()
    for node in walk_all(root):
        where = positions.get(node) if isinstance(node, cst.Name) else None
        if where is not None and (where.start.line, where.start.column) >= end:
            found.add(node.value)
    return found


def nested(statements: list):
    for statement in statements:
        pending = [statement]
        while pending:
            node = pending.pop()
            if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                yield node
                continue
            pending += children(node)


def in_order(nodes: list) -> list[str]:
    found: dict[str, None] = {}

    def visit(node):
        if isinstance(node, cst.Name):
            found.setdefault(node.value)
        elif isinstance(node, cst.Attribute):
            visit(node.value)  # not the attribute's name
            return
        for child in children(node):
            visit(child)

    for node in nodes:
        visit(node)
    return list(found)


def names_outside(root: cst.CSTNode, anchor: cst.CSTNode, kept: tuple) -> list[str]:
    """The names `root` mentions outside `anchor` (but in `kept`, the parts of it that are not the loop's body)."""
    found: list[str] = []
    pending = [root]
    while pending:
        node = pending.pop()
        if node is anchor:
            pending += [k for k in kept if k is not None]
            continue
        if isinstance(node, cst.Name):
            found.append(node.value)
        pending += children(node)
    return found


def contains(root: cst.CSTNode, target: cst.CSTNode) -> bool:
    pending = [root]
    while pending:
        node = pending.pop()
        if node is target:
            return True
        pending += children(node)
    return False


def blocks(statement: cst.CSTNode) -> list[list]:
    """The statement lists directly inside a compound statement."""
    found = []
    for child in children(statement):
        if isinstance(child, cst.IndentedBlock):
            found.append(list(child.body))
        elif isinstance(child, cst.If):
            found.append([child])
        elif isinstance(child, (cst.Else, cst.ExceptHandler, cst.Finally)):
            found += blocks(child)
        elif isinstance(child, cst.ExceptStarHandler):
            found += blocks(child)
    return found


def bound_before(statements: list, anchor: cst.CSTNode) -> set[str]:
    """The names certainly bound when `anchor` starts: assigned by plain statements before it,
    in its block and the blocks around it (none of those inside a branch or loop before it)."""
    bound: set[str] = set()
    for statement in statements:
        if statement is anchor:
            return bound
        if contains(statement, anchor):
            for block in blocks(statement):
                if any(contains(s, anchor) for s in block):
                    return bound | bound_before(block, anchor)
            return bound
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            bound.add(statement.name.value)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    bound |= {n for t in small.targets for n in target_names(t.target)}
                elif isinstance(small, cst.AnnAssign) and small.value is not None or isinstance(small, cst.AugAssign):
                    bound |= target_names(small.target)
                bound |= walrus_bound(small)
    return bound


_LATER = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def walrus_bound(node: cst.CSTNode) -> set[str]:
    """The names `node`'s assignment expressions bind whenever it runs (`a = f(b := 2.0)`): not
    those under the right of `and`/`or`, a conditional expression's branches, a comparison's
    later operands, a lambda or a comprehension, which may not run."""
    found: set[str] = set()
    if isinstance(node, cst.NamedExpr):
        found |= target_names(node.target)
        children = [node.value]
    elif isinstance(node, _LATER):
        return found
    elif isinstance(node, cst.BooleanOperation):
        children = [node.left]
    elif isinstance(node, cst.IfExp):
        children = [node.test]
    elif isinstance(node, cst.Comparison):
        children = [node.left, *node.comparisons[:1]]
    else:
        children = node.children
    for child in children:
        found |= walrus_bound(child)
    return found


def target_names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {n for e in target.elements for n in target_names(e.value)}
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return set()


def assigned_first(body: list, name: str) -> bool:
    """Whether the first statement of the loop body that mentions `name` is a plain assignment
    of it that does not read it (so each iteration binds it before any read)."""
    for statement in body:
        if name not in names_in(statement):
            continue
        if isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assign):
            small = statement.body[0]
            binds = any(name in target_names(t.target) for t in small.targets)
            return binds and name not in names_in(small.value)
        return False
    return False
