"""Normalize's in-place writes: `x[key] = v`, `x[key] op= v`, and the numpy calls that write into
an array (`np.copyto(x, v)`, `x.fill(v)`, `x.sort()`, a ufunc's `out=x`), each into the core
statement `x = cpsgrad_runtime.written(x, key, v)` (or `copied_into(x, v)`).

The write changes the array in place, exactly as the original does: every name and view sharing
it sees the change. Assigning the result back to `x` makes the write a definition of `x` for the
passes after normalize (a new version, with the adjoint after the write its own), and the adjoint
pass gives it its backward (a `Write` record: save what is overwritten, restore it, hand the
written value the target's adjoint). transforms/aliasing.py then refuses the programs where some
other name would read the changed array behind the gradient's back.
"""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import syntax

RUNTIME = "cpsgrad_runtime"
WRITERS = ("written", "copied_into")  # the runtime functions a write statement calls


def is_write(value: cst.BaseExpression) -> bool:
    """Whether a core right-hand side is a write (`cpsgrad_runtime.written(x, key, v)`, ...)."""
    return isinstance(value, cst.Call) and syntax.dotted_name(value.func) in _DOTTED


_DOTTED = frozenset(f"{RUNTIME}.{name}" for name in WRITERS)


def write_parts(value: cst.Call) -> tuple[cst.BaseExpression, cst.BaseExpression, cst.BaseExpression]:
    """(target, key, value) of a write call; `copied_into(x, v)` writes `x[...]`."""
    arguments = [a.value for a in value.args]
    if len(arguments) == 2:
        return arguments[0], cst.Ellipsis(), arguments[1]
    return arguments[0], arguments[1], arguments[2]


def subscript_assignment(normalizer, target: cst.Subscript, value, out: list, origin: cst.CSTNode) -> None:
    """`x[key] = value`: the value first, then the key's parts, as Python evaluates them."""
    atom = normalizer.atom(value, out)
    name = _written_name(normalizer, target)
    parts = normalizer.in_order([normalizer.slice_part(e.slice) for e in target.slice], out)
    _emit_write(normalizer, name, _key(normalizer, parts), atom, out, origin)


def augmented_subscript(normalizer, node: cst.AugAssign, operator: cst.BaseBinaryOp, out: list) -> None:
    """`x[key] op= value`: the key, then `t = x[key]`, the value, `t op value`, and the write
    (Python's order: the subscript is read before the value is evaluated)."""
    target = node.target
    name = _written_name(normalizer, target)
    parts = normalizer.in_order([normalizer.slice_part(e.slice) for e in target.slice], out)
    current = normalizer.temporary_value(
        cst.Subscript(cst.Name(name), [cst.SubscriptElement(part) for part in parts]), out, node
    )
    operand = normalizer.atom(node.value, out)
    updated = normalizer.temporary_value(cst.BinaryOperation(current, operator, operand), out, node)
    _emit_write(normalizer, name, _key(normalizer, parts), updated, out, node)


def _emit_write(normalizer, name: str, key, value, out: list, origin: cst.CSTNode) -> None:
    call = cst.Call(
        cst.Attribute(cst.Name(RUNTIME), cst.Name("written")),
        [cst.Arg(cst.Name(name)), cst.Arg(key), cst.Arg(value)],
    )
    normalizer.emit(out, syntax.assign(name, call), origin)


def _written_name(normalizer, target: cst.Subscript) -> str:
    """The local variable `x` of a write `x[key] = ...`, or a refusal naming what to write instead."""
    base = syntax.strip_parentheses(target.value)
    if isinstance(base, cst.Name) and base.value in normalizer.locals:
        return base.value
    if isinstance(base, cst.Name):
        normalizer.reject(
            target,
            "assignment into an element of a global or free variable",
            f"{base.value} is not a local variable of the function: cpsgrad differentiates writes into the "
            f"function's own arrays; copy it first ({base.value}_copy = {base.value}.copy()) and write into the copy",
        )
    if isinstance(base, cst.Subscript):
        normalizer.reject(
            target,
            "assignment into an element of an element (x[i][j] = v)",
            "write into the array with one subscript (x[i, j] = v), or name the element first and write into it "
            "when nothing reads the outer value afterwards",
        )
    normalizer.reject(
        target,
        "assignment into an element of an expression",
        "writes into an object's attribute or a computed value are not supported yet; assign the array to a "
        "local name first",
    )


def _key(normalizer, parts: list) -> cst.BaseExpression:
    """The subscript's parts as the key value `x[key]` passes: `i`, `(i, slice(1, 3, None))`."""
    values = [part.value if isinstance(part, cst.Index) else _slice(normalizer, part) for part in parts]
    if len(values) == 1:
        return values[0]
    return cst.Tuple([cst.Element(value) for value in values])


def _slice(normalizer, part: cst.Slice) -> cst.Call:
    bounds = [part.lower, part.upper, part.step]
    return cst.Call(normalizer.builtin("slice"), [cst.Arg(cst.Name("None") if b is None else b) for b in bounds])
