"""Normalize's in-place writes: `x[key] = v`, `x[key] op= v`, and the numpy calls that write into
an array (`np.copyto(x, v)`, `x.fill(v)`, `x.sort()`, a ufunc's `out=x`), each into the core
statement `x = cpsgrad_runtime.written(x, key, v)` (or `copied_into(x, v)`); `np.add.at`,
`np.put`, `np.putmask`, `np.place`, `np.fill_diagonal` with a key that does the call
(transforms/ufunc_writes.py).

The write changes the array in place, exactly as the original does: every name and view sharing
it sees the change. Assigning the result back to `x` makes the write a definition of `x` for the
passes after normalize (a new version, with the adjoint after the write its own), and the adjoint
pass gives it its backward (a `Write` record: save what is overwritten, restore it, hand the
written value the target's adjoint). transforms/analysis/aliasing.py then refuses the programs where some
other name would read the changed array behind the gradient's back.
"""

from __future__ import annotations

import libcst as cst
import numpy as np

from cpsgrad.transforms import attributes, rewriting, syntax, ufunc_writes
from cpsgrad.transforms.naming import Namer, names_in

RUNTIME = "cpsgrad_runtime"
WRITERS = ("written", "copied_into", "updated")  # the runtime functions a write statement calls


def is_write(value: cst.BaseExpression) -> bool:
    """Whether a core right-hand side is a write (`cpsgrad_runtime.written(x, key, v)`, ...)."""
    return isinstance(value, cst.Call) and syntax.dotted_name(value.func) in _DOTTED


_DOTTED = frozenset(f"{RUNTIME}.{name}" for name in WRITERS)


def write_parts(value: cst.Call) -> tuple[cst.BaseExpression, cst.BaseExpression, cst.BaseExpression]:
    """(target, key, value) of a write call; `copied_into(x, v)` and `updated(x, v)` write `x[...]`."""
    arguments = [a.value for a in value.args]
    if len(arguments) == 2:
        return arguments[0], cst.Ellipsis(), arguments[1]
    return arguments[0], arguments[1], arguments[2]


def subscript_assignment(normalizer, target: cst.Subscript, value, out: list, origin: cst.CSTNode) -> None:
    """`x[key] = value`: the value first, then the key's parts, as Python evaluates them."""
    if isinstance(target, cst.Attribute):  # obj.attr = value (transforms/attributes.py)
        return attributes.assignment(normalizer, target, value, out, origin)
    atom = normalizer.atom(value, out)
    name = _written_name(normalizer, target)
    parts = normalizer.in_order([normalizer.slice_part(e.slice) for e in target.slice], out)
    _emit_write(normalizer, name, _key(normalizer, parts), atom, out, origin)


def augmented_subscript(normalizer, node: cst.AugAssign, operator: cst.BaseBinaryOp, out: list) -> None:
    """`x[key] op= value`: the key, then `t = x[key]`, the value, `t op value`, and the write
    (Python's order: the subscript is read before the value is evaluated)."""
    if isinstance(node.target, cst.Attribute):  # obj.attr op= value (transforms/attributes.py)
        return attributes.augmented(normalizer, node, operator, out)
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
    return _key_value(parts, normalizer.builtin("slice"))


def _key_value(parts: list, slice_: cst.BaseExpression) -> cst.BaseExpression:
    """The key value of subscript parts (Index or Slice), slices built by calling `slice_`."""
    values = []
    for part in parts:
        if isinstance(part, cst.Index):
            values.append(part.value)
        else:
            bounds = [cst.Name("None") if b is None else b for b in (part.lower, part.upper, part.step)]
            values.append(cst.Call(slice_, [cst.Arg(b) for b in bounds]))
    return values[0] if len(values) == 1 else cst.Tuple([cst.Element(value) for value in values])


# -- numpy's calls that write into an array ------------------------------------------------------

_REFUSED_FUNCTIONS = {
    np.random.shuffle: "np.random.shuffle({})",
}
_REFUSED_METHODS = frozenset({"partition", "resize", "itemset", "setfield", "shuffle"})


def in_place_call(normalizer, node: cst.Call, out: list) -> cst.BaseExpression | None:
    """`np.copyto(x, v)`, `x.fill(v)`, `x.sort(...)` and `f(..., out=x)` of a local array `x` as
    writes (the call's value: None, or `x` for `out=`); the other numpy calls that change an
    array in place are refused with the rewrite; None for any other call."""
    callee = node.func
    keywords = [a.keyword.value for a in node.args if a.keyword is not None]
    if (
        isinstance(callee, cst.Attribute)
        and _local(normalizer, callee.value)
        and not normalizer.resolver.resolve(callee)
    ):
        target, method = callee.value.value, callee.attr.value
        if method == "fill" and len(node.args) == 1 and not keywords:
            value = normalizer.atom(node.args[0].value, out)
            _emit_write(normalizer, target, cst.Ellipsis(), value, out, node)
            return cst.Name("None")
        if method == "sort" and set(keywords) <= {"axis", "kind", "order"}:
            arguments = [cst.Arg(callee.value)] + [
                cst.Arg(normalizer.atom(a.value, out), keyword=a.keyword) for a in node.args
            ]
            ordered = normalizer.temporary_value(cst.Call(_numpy(normalizer, "sort"), arguments), out, node)
            _emit_write(normalizer, target, cst.Ellipsis(), ordered, out, node)
            return cst.Name("None")
        if method == "put":  # x.put(ind, v, mode=...): np.put (transforms/ufunc_writes.py)
            return ufunc_writes.method_put(normalizer, node, out)
        if method in _REFUSED_METHODS:
            _refuse(normalizer, node, f"{target}.{method}(...)", target)
        return None
    function = normalizer.resolver.resolve(callee)
    keyed = ufunc_writes.keyed_call(normalizer, node, function, out)  # np.add.at, np.put, np.putmask, ...
    if keyed is not None:
        return keyed
    first = node.args[0].value if node.args else None
    if function is np.copyto and first is not None and _local(normalizer, first) and not keywords:
        values = [normalizer.atom(a.value, out) for a in node.args]
        call = cst.Call(
            cst.Attribute(cst.Name(RUNTIME), cst.Name("copied_into")), [cst.Arg(values[0]), cst.Arg(values[1])]
        )
        normalizer.emit(out, syntax.assign(first.value, call), node)
        return cst.Name("None")
    if function in _REFUSED_FUNCTIONS and first is not None and _local(normalizer, first):
        _refuse(normalizer, node, _REFUSED_FUNCTIONS[function].format(first.value), first.value)
    written = [a for a in node.args if a.keyword is not None and a.keyword.value == "out"]
    if (
        written
        and _local(normalizer, written[0].value)
        and (isinstance(function, np.ufunc) or str(getattr(function, "__module__", None) or "").startswith("numpy"))
    ):
        target = written[0].value.value
        rest = [a for a in node.args if a is not written[0]]
        result = normalizer.temporary_value(normalizer.call(node.with_changes(args=rest), out), out, node)
        call = cst.Call(
            cst.Attribute(cst.Name(RUNTIME), cst.Name("copied_into")), [cst.Arg(cst.Name(target)), cst.Arg(result)]
        )
        normalizer.emit(out, syntax.assign(target, call), node)
        return cst.Name(target)
    return None


def _local(normalizer, node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value in normalizer.locals


def _numpy(normalizer, name: str) -> cst.BaseExpression:
    """`np.<name>` for code this pass adds, through the runtime (the user's module may not import numpy)."""
    return cst.Attribute(cst.Attribute(cst.Name(RUNTIME), cst.Name("numpy")), cst.Name(name))


def _refuse(normalizer, node: cst.Call, call: str, target: str) -> None:
    normalizer.reject(
        node,
        f"call that changes an array in place ({call})",
        f"cpsgrad differentiates writes into arrays written as {target}[key] = value, {target}.fill(v), "
        f"{target}.sort(), np.copyto({target}, v), np.put({target}, ...), np.add.at({target}, ...) or "
        f"out={target}; write it one of those ways, or compute a new array",
    )


# -- `x op= y` into a parameter's array: in place, as numpy does -----------------------------------


def rewrite_updates(normalized, updates: set[int], aliases: dict[int, dict] | None = None) -> bool:
    """Rewrite each core `x = x op y` of a user's `x op= y` in `updates` (by id: transforms/
    aliasing.py found x's array is the caller's, or another name's that reads it later) into
    `t = x op y; x = cpsgrad_runtime.updated(x, t)`: an array changed in place (the caller sees it,
    as in Python), a number rebound; then, for each name of `aliases[id]` that held x's value (a view
    or base of x follows when the next analysis finds the write),
    `a = cpsgrad_runtime.alias_after_update(a, x, where, rewrite)`: the array itself where it
    changed in place, the old value where it was rebound. Whether it changed."""
    if not updates:
        return False
    rewriter = _Updates(normalized, updates, aliases or {})
    definition = normalized.definition.visit(rewriter)
    rewriting.replace(normalized, definition)
    return True


def rebind_after_writes(normalized, names: dict[int, dict[str, str]]) -> bool:
    """After each write `x = written(x, key, v)` in `names` (by id), for each of its names `a`: `a = x`
    where a is x's very array on every path ("copy", transforms/analysis/aliasing.py), so its later reads take
    the write's gradient (Python's `c = a; c[0] = v; a` reads the changed array), or
    `a = cpsgrad_runtime.alias_after_write(a, x, where)` where an `x op= y` between may have rebound
    instead ("checked": x itself if a is x, a number kept, anything else refused). Whether it changed."""
    if not names:
        return False
    definition = normalized.definition.visit(_Rebinds(normalized, names))
    rewriting.replace(normalized, definition)
    return True


class _Rebinds(rewriting.Rewriter):
    def __init__(self, normalized, names: dict[int, dict]):
        super().__init__(normalized)
        self.names = names
        self.namer = Namer(names_in(normalized.definition))

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body = []
        for before, statement in zip(original.body, updated.body, strict=True):
            body.append(statement)
            for name, how in sorted(self.names.get(id(before), {}).items(), key=lambda item: item[0]):
                target = cst.Name(statement.body[0].targets[0].target.value)
                where = cst.SimpleString(
                    repr(
                        f"{self.normalized.location(before)}: "
                        f"{syntax.code(self.normalized.origins[id(before)]).strip()}"
                    )
                )
                if how == "copy":
                    new = [syntax.assign(name, target)]
                elif how == "checked":
                    new = [syntax.assign(name, _runtime_call("alias_after_write", cst.Name(name), target, where))]
                elif how[0] == "view":  # name = x[key] before the write into x: taken again, checked
                    key = _subscript_key(how[1])
                    new = [syntax.assign(name, _runtime_call("view_after_write", cst.Name(name), target, key, where))]
                else:  # the base of the view written: written with the view's values, checked
                    key, checked = _subscript_key(how[1]), self.namer.temporary()
                    new = [
                        syntax.assign(checked, _runtime_call("checked_view", target, cst.Name(name), key, where)),
                        syntax.assign(name, _runtime_call("written", cst.Name(name), key, cst.Name(checked))),
                    ]
                    self.normalized.base_writes.add(id(new[1]))  # its read of the stale base is meant
                for rebinding in new:
                    self.normalized.origins[id(rebinding)] = self.normalized.origins.get(id(before))
                body += new
        return updated.with_changes(body=body)


def _runtime_call(name: str, *arguments: cst.BaseExpression) -> cst.Call:
    return cst.Call(cst.Attribute(cst.Name(RUNTIME), cst.Name(name)), [cst.Arg(a) for a in arguments])


def _subscript_key(subscript: cst.Subscript) -> cst.BaseExpression:
    """The key `x[key]` passes, as a value (slice from the runtime's builtins: the user may shadow it)."""
    builtin = cst.Attribute(cst.Attribute(cst.Name(RUNTIME), cst.Name("builtins")), cst.Name("slice"))
    return _key_value([element.slice for element in subscript.slice], builtin)


class _Updates(rewriting.Rewriter):
    def __init__(self, normalized, updates: set[int], aliases: dict[int, dict]):
        super().__init__(normalized)
        self.updates = updates
        self.aliases = aliases
        self.namer = Namer(names_in(normalized.definition))

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body = []
        for before, statement in zip(original.body, updated.body, strict=True):
            if id(before) not in self.updates:
                body.append(statement)
                continue
            small = statement.body[0]
            origin = self.normalized.origins.get(id(before))
            temporary = self.namer.temporary()
            computed = syntax.assign(temporary, small.value)
            name = small.targets[0].target.value
            call = cst.Call(
                cst.Attribute(cst.Name(RUNTIME), cst.Name("updated")),
                [cst.Arg(cst.Name(name)), cst.Arg(cst.Name(temporary))],
            )
            written = syntax.assign(name, call)
            new = [computed, written]
            aliases = sorted(n for n, how in self.aliases.get(id(before), {}).items() if how in ("copy", "checked"))
            if aliases:
                where = f"{self.normalized.location(before)}: {syntax.code(origin).strip()}"
                operator = syntax.code(origin.operator).strip()[:-1]
                rewrite = f"{name} = {name} {operator} {syntax.code(origin.value)}"
                for alias in aliases:
                    arguments = [
                        cst.Name(alias),
                        cst.Name(name),
                        cst.SimpleString(repr(where)),
                        cst.SimpleString(repr(rewrite)),
                    ]
                    call = cst.Call(
                        cst.Attribute(cst.Name(RUNTIME), cst.Name("alias_after_update")),
                        [cst.Arg(a) for a in arguments],
                    )
                    new.append(syntax.assign(alias, call))
            for statement_ in new:
                self.normalized.origins[id(statement_)] = origin
            body += new
        return updated.with_changes(body=body)
