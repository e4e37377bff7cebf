"""Normalize's forms of the list methods that change a list the function owns (transforms/analysis/lists.py
decides which lists: built in the function, seen by no other name while they change), each a new
value bound to the same name, as `append` and `pop` are:

    xs.extend(ys)          ->  t = list(ys); xs = cpsgrad_runtime.extended(xs, t)   (in place, as append)
    xs.insert(i, v)        ->  xs = cpsgrad_runtime.inserted_at(xs, i, v)
    xs.remove(v)           ->  xs = cpsgrad_runtime.removed_value(xs, v)
    xs.sort(key=k, ...)    ->  xs = sorted(xs, key=k, ...)
    xs.reverse()           ->  xs = cpsgrad_runtime.reversed_list(xs)

The call's value is None. Each new list costs O(length), as the method would; `extend`, like
`append` and `pop`, runs in place in the derivative program (transforms/adjoint/list_changes.py).
The rules are in cpsgrad/rules/containers.py.
"""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import syntax

METHODS = {"extend": (1, 1), "insert": (2, 2), "remove": (1, 1), "sort": (0, 0), "reverse": (0, 0), "clear": (0, 0)}
KEYWORDS = {"sort": frozenset({"key", "reverse"})}  # method -> the keywords it may take
_HELPERS = {"insert": "inserted_at", "remove": "removed_value", "reverse": "reversed_list"}


CHANGES = {  # in place in the final program
    "cpsgrad_runtime.appended": "append",
    "cpsgrad_runtime.removed": "pop",
    "cpsgrad_runtime.extended": "extend",
}


def is_list_change(value: cst.BaseExpression) -> bool:
    """Whether a core right-hand side is `cpsgrad_runtime.appended(...)` or `removed(...)`, which
    the derivative program runs in place (transforms/adjoint/list_changes.py)."""
    return isinstance(value, cst.Call) and syntax.dotted_name(value.func) in CHANGES


def changes_owned_list(normalizer, node: cst.Call) -> bool:
    """Whether `node` is `xs.append(v)`, `xs.pop()`, ... of a list transforms/analysis/lists.py lets change."""
    callee = node.func
    return (
        isinstance(callee, cst.Attribute)
        and isinstance(callee.value, cst.Name)
        and callee.value.value in normalizer.lists
        and callee.attr.value in MUTATIONS_OF_LISTS
    )


MUTATIONS_OF_LISTS = {"append": (1, 1), "pop": (0, 1), **METHODS}  # lists.MUTATIONS


def is_list_call(normalizer, node: cst.Call) -> bool:
    """Whether `node` calls a method of a local that always holds a list the function built."""
    callee = node.func
    return (
        isinstance(callee, cst.Attribute)
        and isinstance(callee.value, cst.Name)
        and callee.value.value in normalizer.list_locals
    )


def _runtime(name: str) -> cst.Attribute:
    return cst.Attribute(cst.Name("cpsgrad_runtime"), cst.Name(name))


def list_mutation(normalizer, items: cst.Name, method: str, node: cst.Call, out: list) -> cst.BaseExpression:
    """`xs.append(v)` -> `xs = cpsgrad_runtime.appended(xs, v)` (the call's value: None);
    `xs.pop(i)` -> `t = xs[i]; xs = cpsgrad_runtime.removed(xs, i)` (the value: t), for a
    list nothing else refers to (transforms/analysis/lists.py)."""
    if method not in ("append", "pop"):  # extend, insert, remove, sort, reverse
        return list_method(normalizer, items, method, node, out)
    arguments = [normalizer.atom(a.value, out) for a in node.args]
    helper = cst.Attribute(cst.Name("cpsgrad_runtime"), cst.Name("appended" if method == "append" else "removed"))
    if method == "append":
        normalizer.emit(
            out, syntax.assign(items.value, cst.Call(helper, [cst.Arg(items), cst.Arg(arguments[0])])), node
        )
        return cst.Name("None")
    index = arguments[0] if arguments else cst.UnaryOperation(cst.Minus(), cst.Integer("1"))
    element = normalizer.temporary_value(cst.Subscript(items, [cst.SubscriptElement(cst.Index(index))]), out, node)
    normalizer.emit(out, syntax.assign(items.value, cst.Call(helper, [cst.Arg(items), cst.Arg(index)])), node)
    return element


def list_method(normalizer, items: cst.Name, method: str, node: cst.Call, out: list) -> cst.BaseExpression:
    """The new-value form of `items.<method>(...)` (see the module); the call's value."""
    if method == "clear":  # a new empty list
        normalizer.emit(out, syntax.assign(items.value, cst.List([])), node)
        return cst.Name("None")
    values = normalizer.in_order([normalizer.operand(a.value) for a in node.args], out)
    positional = [v for v, a in zip(values, node.args, strict=True) if a.keyword is None]
    keywords = [cst.Arg(v, keyword=a.keyword) for v, a in zip(values, node.args, strict=True) if a.keyword]
    if method == "extend":
        added = normalizer.temporary_value(cst.Call(normalizer.builtin("list"), [cst.Arg(positional[0])]), out, node)
        value = cst.Call(_runtime("extended"), [cst.Arg(items), cst.Arg(added)])  # in place (adjoint/list_changes.py)
    elif method == "sort":
        value = cst.Call(normalizer.builtin("sorted"), [cst.Arg(items), *keywords])
    else:
        value = cst.Call(_runtime(_HELPERS[method]), [cst.Arg(items), *(cst.Arg(v) for v in positional)])
    normalizer.emit(out, syntax.assign(items.value, value), node)
    return cst.Name("None")


# ---- dicts: `{**d, "k": v}` and `dict(...)` (new dicts: nothing is changed in place) --------------


def dict_display(normalizer, node: cst.Dict, out: list) -> cst.BaseExpression:
    """`{k1: v1, **d, k2: v2}` -> `t1 = {k1: v1}; t2 = cpsgrad_runtime.merged(t1, d); t3 = {k2: v2};
    merged(t2, t3)`, each part evaluated where Python evaluates it (keys and values in order, a
    `**` mapping unpacked when it is reached)."""
    merged = None
    pending: list = []

    def flush():
        nonlocal merged
        if pending or merged is None:
            part = normalizer.temporary_value(cst.Dict(list(pending)), out, node)
            pending.clear()
            merged = part if merged is None else _merge(normalizer, merged, part, out, node)

    for element in node.elements:
        if isinstance(element, cst.StarredDictElement):
            flush()
            mapping = normalizer.atom(element.value, out)
            merged = _merge(normalizer, merged, mapping, out, node)
        else:
            key, value = normalizer.in_order([normalizer.operand(element.key), normalizer.operand(element.value)], out)
            pending.append(cst.DictElement(key, value))
    if pending:
        flush()
    return merged


def _merge(normalizer, left, right, out: list, node) -> cst.Name:
    call = cst.Call(_runtime("merged"), [cst.Arg(left), cst.Arg(right)])
    return normalizer.temporary_value(call, out, node)


def dict_call(normalizer, node: cst.Call, out: list) -> cst.BaseExpression | None:
    """`dict(k=v, ...)` -> `{"k": v, ...}`; `dict(m, k=v)` -> `t = dict(m); merged(t, {"k": v})`;
    `dict(m)` stays (its rule: cpsgrad/rules/containers.py); None for any other call."""
    if not normalizer.is_builtin(node.func, "dict") or any(a.star for a in node.args):
        return None
    keywords = [a for a in node.args if a.keyword is not None]
    positional = [a for a in node.args if a.keyword is None]
    if not keywords or len(positional) > 1:
        return None
    values = normalizer.in_order([normalizer.operand(a.value) for a in node.args], out)
    entries = [
        cst.DictElement(cst.SimpleString(repr(a.keyword.value)), v)
        for a, v in zip(node.args, values, strict=True)
        if a.keyword is not None
    ]
    display = cst.Dict(entries)
    if not positional:
        return display
    first = normalizer.temporary_value(cst.Call(node.func, [cst.Arg(values[0])]), out, node)
    return cst.Call(_runtime("merged"), [cst.Arg(first), cst.Arg(normalizer.temporary_value(display, out, node))])

