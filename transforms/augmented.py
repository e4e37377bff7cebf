"""`x op= y` on a name that may hold a container: the operand as Python's in-place operator takes it.

Normalize computes `x op= y` as `x = x op y`, and transforms/analysis/aliasing.py leaves it so
(rebound: nothing else shares x) or rewrites it into `t = x op y; x = cpsgrad_runtime.updated(x, t)`
(changed in place). Both differ from Python where x's in-place operator is not its binary one: a
list's `+=` extends by any iterable (`xs += (v,)`), a dict's `|=` takes pairs, a subclass of list
keeps its type and identity, a user class's `__iadd__` runs instead of `__add__`. After the
analysis, each such `x op y` of a name that may not be a number whose operand may need it takes
its right operand from `cpsgrad_runtime.in_place_operand(x, y, op, where, in_place)`
(cpsgrad/runtime/augmented.py): the operand converted as the in-place operator converts it, and a
located refusal of what would be computed otherwise; one changed in place is preceded by that
check alone (`check_augmented`), and a plain one is checked after it by `check_in_place`, which
the adjoint pass emits anyway. Where x is a number the statement is left as it is.
"""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import rewriting, syntax
from cpsgrad.transforms.naming import Namer, names_in

RUNTIME = "cpsgrad_runtime"


def guard_operands(normalized, numbers: set[str]) -> bool:
    """Give each `x op y` of a user's `x op= y` (x not a number) its checked operand. Whether it changed."""
    rewriter = _Operands(normalized, numbers)
    definition = normalized.definition.visit(rewriter)
    if not rewriter.changed:
        return False
    rewriting.replace(normalized, definition)
    return True


def _operation(normalized, statement, numbers: set[str]):
    """(x, the `x op y` value) of a core statement computing a user's `x op= y`, or None."""
    origin = normalized.origins.get(id(statement))
    if not (isinstance(origin, cst.AugAssign) and isinstance(origin.target, cst.Name)):
        return None
    if not (isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assign)):
        return None
    value, name = statement.body[0].value, origin.target.value
    if name in numbers or not isinstance(value, cst.BinaryOperation):
        return None
    if not (isinstance(value.left, cst.Name) and value.left.value == name):
        return None
    return name, value


class _Operands(rewriting.Rewriter):
    def __init__(self, normalized, numbers: set[str]):
        super().__init__(normalized)
        self.numbers = numbers
        self.namer = Namer(names_in(normalized.definition))
        self.changed = False

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body = []
        for before, statement in zip(original.body, updated.body, strict=True):
            found = _operation(self.normalized, before, self.numbers)
            if found is None:
                body.append(statement)
                continue
            name, value = found
            origin = self.normalized.origins[id(before)]
            target = statement.body[0].targets[0].target.value
            in_place = target != name  # `t = x op y` before `x = updated(x, t)` (transforms/writes.py)
            where = f"{self.normalized.location(before)}: {syntax.code(origin).strip()}"
            operator = syntax.code(origin.operator).strip()[:-1]
            flags = [cst.SimpleString(repr(operator)), cst.SimpleString(repr(where)), cst.Name(str(in_place))]
            computed = statement
            if _converted(origin):  # the operand as the in-place operator takes it
                operand = self.namer.temporary()
                function = "in_place_mapping" if operator == "|" else "in_place_operand"
                checked = syntax.assign(operand, _runtime(function, cst.Name(name), value.right, *flags))
                computed = statement.with_changes(
                    body=[statement.body[0].with_changes(value=value.with_changes(right=cst.Name(operand)))]
                )
            elif in_place:  # only checked: a list display's operand stays one (the adjoint pass reads it as a list)
                checked = cst.SimpleStatementLine([cst.Expr(_runtime("check_augmented", cst.Name(name), *flags))])
            else:  # the plain `x = x op y` is checked after it (runtime/checks.py: check_in_place)
                body.append(statement)
                continue
            for new in (checked, computed):
                self.normalized.origins[id(new)] = origin
            if id(before) in self.normalized.in_place:  # the plain `x = x op y`: checked after, as before
                self.normalized.in_place[id(computed)] = self.normalized.in_place[id(before)]
            body += [checked, computed]
            self.changed = True
        return updated.with_changes(body=body)


_ITERABLES = frozenset({"tuple", "range", "zip", "map", "filter", "reversed", "enumerate", "iter", "set", "sorted"})


def _converted(origin: cst.AugAssign) -> bool:
    """Whether the operand of `x += y` / `x |= y` may be an iterable that a list's `+=` (a dict's
    `|=`) takes and its `+` (`|`) does not: a tuple display, a generator expression, a call of a
    builtin that makes one; a name is taken as it is (a list, or an array: the common case)."""
    value = syntax.strip_parentheses(origin.value)
    if not isinstance(origin.operator, (cst.AddAssign, cst.BitOrAssign)):
        return False
    if isinstance(value, (cst.Tuple, cst.GeneratorExp, cst.Set, cst.SetComp)):
        return True
    if isinstance(origin.operator, cst.BitOrAssign) and isinstance(value, (cst.List, cst.ListComp)):
        return True  # pairs
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in _ITERABLES


def _runtime(function: str, *arguments: cst.BaseExpression) -> cst.Call:
    return cst.Call(cst.Attribute(cst.Name(RUNTIME), cst.Name(function)), [cst.Arg(a) for a in arguments])
