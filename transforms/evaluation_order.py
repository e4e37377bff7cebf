"""Python's order of evaluation kept where normalize hoists operands into temporaries.

Normalize computes each operand of an operation into a temporary, left to right, before the
operation (`t1 = f(x); t2 = A ^ t1`). An operand that is only *read* (a name, a dotted read) is
not hoisted, so it would be read after the operands right of it ran: wrong when one of those
is a call that rebinds the global (`A ^ f()` with `f` doing `global A; A = ...`), and the wrong
error when the name is unbound now (Python's NameError comes first). `in_order` copies such a
read into a temporary before the later operands' statements, only when they could change or
pre-empt it: a call of anything but a primitive (a rule's function, a builtin, a ufunc), or a
name that is unbound now. Module attributes (`np.pi`) are not copied: calls between do not
rebind modules' constants.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING

import libcst as cst

from cpsgrad.rules import registry
from cpsgrad.transforms import syntax, walk
from cpsgrad.transforms.resolve import _MISSING, Resolver

if TYPE_CHECKING:
    from cpsgrad.transforms.normalize import _Normalizer


def in_order(normalizer: _Normalizer, parts: list, out: list) -> list:
    """The operands `parts` (each a function of `out` flattening one operand into it) as atoms,
    with Python's order of evaluation kept: a global read (`A` in `A ^ f()`, `g + h(x)`) that
    a later operand's statements could change or pre-empt (a call of a user function, which
    may rebind it; a name unbound now, whose NameError comes first) is copied before them."""
    values, ends = [], []
    for part in parts:
        values.append(part(out))
        ends.append(len(out))
    for i in reversed(range(len(values) - 1)):
        later = out[ends[i]:]
        if later and read_live(normalizer, values[i]) and may_go_first(normalizer, later, values[i]):
            copy: list = []
            values[i] = normalizer.temporary_value(
                values[i], copy, normalizer.statements[-1] if normalizer.statements else values[i]
            )
            out[ends[i]:ends[i]] = copy
    return values


def read_live(normalizer: _Normalizer, value: cst.BaseExpression) -> bool:
    """Whether an atom reads a global or free variable (`A`, `cfg.scale`), looked up when it
    runs; not a module's attribute (`np.pi`: modules are not rebound by the calls between)."""
    dotted = syntax.dotted_name(value)
    if dotted is None:
        return False
    root = dotted.split(".")[0]
    if root in normalizer.locals or root == "cpsgrad_runtime":
        return False
    if root not in normalizer.user_names:
        return False  # one of this pass's temporaries
    if "." in dotted and isinstance(normalizer.resolver.lookup(root), types.ModuleType):
        return unbound(normalizer.resolver, dotted)
    return True


def may_go_first(normalizer: _Normalizer, statements: list, value: cst.BaseExpression) -> bool:
    """Whether the statements after a read of `value` could change or pre-empt it: `value` is
    unbound now, or they call something that is not a primitive."""
    resolver = normalizer.resolver
    if unbound(resolver, syntax.dotted_name(value)):
        return True
    return any(
        isinstance(node, cst.Call)
        and not _opaque(resolver.resolve(node.func) if syntax.dotted_name(node.func) is not None else None)
        for statement in statements
        for node in walk.nodes(statement)
    )


def _opaque(callee) -> bool:
    """Whether a call of `callee` runs no user code that could rebind a global: a primitive with
    a rule, a builtin function or type, a numpy ufunc."""
    if callee is None:
        return False
    if callee in registry.TABLE:
        return True
    return (
        isinstance(callee, (types.BuiltinFunctionType, types.BuiltinMethodType))
        or type(callee).__name__ == "ufunc"
        or (isinstance(callee, type) and callee.__module__ == "builtins")
    )


def unbound(resolver: Resolver, dotted: str) -> bool:
    """Whether the dotted name names nothing now, looked up as the function would (its read
    raises NameError or AttributeError)."""
    first, *rest = dotted.split(".")
    value = resolver.lookup(first)
    for attribute in rest:
        if value is _MISSING:
            break
        value = getattr(value, attribute, _MISSING)
    return value is _MISSING
