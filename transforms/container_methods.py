"""Normalize's forms of the dict and list methods that change a container the function owns, and of
`del x[key]` (issue 15): each becomes the new contents as a new value bound to the same name, as
transforms/containers.py does for `extend`/`insert`/`remove` (the rules, in
cpsgrad/rules/container_methods.py and containers.py, give the old contents their adjoint):

    d.update(m, k=v)      ->  t1 = dict(m); t2 = merged(d, t1); t3 = {'k': v}; d = merged(t2, t3)
    d |= m                ->  t1 = dict(m); d = merged(d, t1)
    d.setdefault(k, v)    ->  d = with_default(d, k, v); t1 = d[k]           (the call's value: t1)
    d.pop(k)              ->  t1 = d[k]; d = without_item(d, k)              (KeyError as pop's; value t1)
    d.pop(k, default)     ->  t1 = d.get(k, default); d = without_key(d, k)
    d.clear(), xs.clear() ->  d = {}  (xs = [])
    del d[k], del xs[i:j] ->  d = without_item(d, k)

A change in place and a new value bound to the name cannot be told apart where nothing else can
see the container, so these apply under transforms/analysis/lists.py's rule: a local, not a parameter,
every assignment of which builds a new dict (a display, a comprehension, `dict(...)`) or list,
that no other name, container or function sees before a change (a view `d.keys()`, `d.values()`,
`d.items()` kept in a name counts; iterating one in a `for` whose body changes the dict does
not qualify, as Python raises there). Each change copies the container: O(its length).
"""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import attributes, starred, syntax, walk, writes
from cpsgrad.transforms.analysis import lists

DICT_METHODS = {"update": (0, 1), "setdefault": (1, 2), "pop": (1, 2), "clear": (0, 0)}  # (least, most) positional
_DICT_BUILDERS = (dict,)


def _runtime(name: str) -> cst.Attribute:
    return cst.Attribute(cst.Name("cpsgrad_runtime"), cst.Name(name))


class _DictUses(lists._Uses):
    """lists.py's visitor for dicts: a binding is fresh where it builds a dict; the changes are
    DICT_METHODS, `del d[k]` and `d |= m`; `get` and `copy` read; a view that is not iterated at
    once (or read by a primitive) escapes."""

    def builds_list(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, (cst.Dict, cst.DictComp)):
            return True
        if isinstance(value, cst.Call):
            callee = self.resolver.resolve(value.func)
            return any(callee is b for b in _DICT_BUILDERS)
        return False

    def binding(self, name: str) -> None:
        parent = self.ancestor(1)
        if isinstance(parent, cst.AugAssign) and isinstance(parent.operator, cst.BitOrAssign):
            self.mutations.setdefault(name, []).append((self.position, self.loops()))
            return
        super().binding(name)

    def visit_Name(self, node: cst.Name) -> None:
        parent, grandparent = self.ancestor(1), self.ancestor(2)
        if (
            id(node) not in self.targets
            and isinstance(parent, cst.Attribute)
            and parent.value is node
            and isinstance(grandparent, cst.Call)
            and grandparent.func is parent
        ):
            name, method = node.value, parent.attr.value
            if method in DICT_METHODS and _fits(grandparent, method):
                self.mutations.setdefault(name, []).append((self.position, self.loops()))
                return
            if method in ("get", "copy"):
                return
            great = self.ancestor(3)
            if method in ("keys", "values", "items"):
                if isinstance(great, cst.For) and great.iter is grandparent:
                    self.iterations.setdefault(name, []).append(id(great))
                    return
                if any(isinstance(a, cst.Return) for a in self.stack):
                    return  # nothing of this function runs after a return
                call = self.ancestor(4)
                if isinstance(great, cst.Arg) and isinstance(call, cst.Call) and great.keyword is None:
                    if lists._has_rule(self.resolver.resolve(call.func)):
                        return  # sum(d.values()): a primitive reads the view and keeps nothing
            self.refused.add(name)
            return
        super().visit_Name(node)


def _fits(call: cst.Call, method: str) -> bool:
    least, most = DICT_METHODS[method]
    positional = [a for a in call.args if a.keyword is None]
    return (
        least <= len(positional) <= most
        and not any(a.star for a in call.args)
        and (method == "update" or len(positional) == len(call.args))
    )


def _owned(normalizer) -> tuple[set, set]:
    """(dicts, lists) whose changes may become new values (see the module), cached on the normalizer."""
    found = getattr(normalizer, "_owned_containers", None)
    if found is None:
        definition = normalizer.source.definition
        parameters = {*normalizer.source.captured, *starred.parameter_names(definition.params)}
        bound_otherwise = {
            node.name.value
            for node in walk.nodes(definition.body)
            if isinstance(node, cst.AsName) and isinstance(node.name, cst.Name)
        }
        dicts = lists.functional_lists(definition, parameters, normalizer.resolver, _DictUses, DICT_METHODS)
        found = normalizer._owned_containers = (dicts - bound_otherwise, set(normalizer.lists) - bound_otherwise)
    return found


# ---- method calls --------------------------------------------------------------------------------


def method_call(normalizer, node: cst.Call, out: list) -> cst.BaseExpression | None:
    """The form of `d.update(...)`, `d.setdefault(...)`, `d.pop(...)`, `d.clear()` on a dict the
    function owns (the call's value); None for any other call. `obj.items.append(v)` on a plain
    object's list: transforms/attributes.py."""
    changed = attributes.list_method(normalizer, node, out)
    if changed is not None:
        return changed
    callee = node.func
    if not (isinstance(callee, cst.Attribute) and isinstance(callee.value, cst.Name)):
        return None
    name, method = callee.value.value, callee.attr.value
    if method not in DICT_METHODS or name not in _owned(normalizer)[0] or any(a.star for a in node.args):
        return None
    positional = [a for a in node.args if a.keyword is None]
    keywords = [a for a in node.args if a.keyword is not None]
    least, most = DICT_METHODS[method]
    if not least <= len(positional) <= most or (keywords and method != "update"):
        return None  # Python's own call raises its TypeError
    values = normalizer.in_order([normalizer.operand(a.value) for a in node.args], out)
    target = cst.Name(name)
    if method == "update":
        _update(
            normalizer,
            target,
            values[: len(positional)],
            list(zip(keywords, values[len(positional) :], strict=True)),
            out,
            node,
        )
        return cst.Name("None")
    if method == "clear":
        _rebind(normalizer, target, cst.Dict([]), out, node)
        return cst.Name("None")
    if method == "setdefault":
        default = values[1] if len(values) > 1 else cst.Name("None")
        _rebind(normalizer, target, cst.Call(_runtime("with_default"), _args(target, values[0], default)), out, node)
        return normalizer.temporary_value(_subscript(target, values[0]), out, node)
    if len(values) == 1:  # pop(k): KeyError as pop's
        value = normalizer.temporary_value(_subscript(target, values[0]), out, node)
        _rebind(normalizer, target, cst.Call(_runtime("without_item"), _args(target, values[0])), out, node)
    else:
        value = normalizer.temporary_value(cst.Call(cst.Attribute(target, cst.Name("get")), _args(*values)), out, node)
        _rebind(normalizer, target, cst.Call(_runtime("without_key"), _args(target, values[0])), out, node)
    return value


def _args(*values) -> list[cst.Arg]:
    return [cst.Arg(v) for v in values]


def _subscript(target: cst.Name, key: cst.BaseExpression) -> cst.Subscript:
    return cst.Subscript(target, [cst.SubscriptElement(cst.Index(key))])


def _update(normalizer, target: cst.Name, positional: list, keywords: list, out: list, node) -> None:
    """`target.update(positional, **keywords)` (its operands atoms already, in Python's order)."""
    parts = []
    if positional:
        parts.append(normalizer.temporary_value(cst.Call(normalizer.builtin("dict"), _args(positional[0])), out, node))
    if keywords:
        entries = [cst.DictElement(cst.SimpleString(repr(a.keyword.value)), v) for a, v in keywords]
        parts.append(normalizer.temporary_value(cst.Dict(entries), out, node))
    merged = target
    for position, part in enumerate(parts):
        value = cst.Call(_runtime("merged"), _args(merged, part))
        if position == len(parts) - 1:
            _rebind(normalizer, target, value, out, node)
        else:
            merged = normalizer.temporary_value(value, out, node)


def _rebind(normalizer, target: cst.Name, value: cst.BaseExpression, out: list, node) -> None:
    normalizer.emit(out, syntax.assign(target.value, value), node)


# ---- statements: del x[key], d |= m --------------------------------------------------------------


def deletable(node: cst.Del) -> bool:
    """Whether every target of a `del` is a subscript of a name (the fence lets those through)."""
    targets = [e.value for e in node.target.elements] if isinstance(node.target, cst.Tuple) else [node.target]
    return all(
        isinstance(t, cst.Subscript) and isinstance(syntax.strip_parentheses(t.value), cst.Name) for t in targets
    )


def statement(normalizer, node: cst.BaseSmallStatement, out: list) -> bool:
    """`del x[key]` and `d |= m` of a container the function owns, normalized into `out`; False for
    any other statement."""
    if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.BitOrAssign):
        target = node.target
        if isinstance(target, cst.Name) and target.value in _owned(normalizer)[0]:
            value = normalizer.atom(node.value, out)
            _update(normalizer, cst.Name(target.value), [value], [], out, node)
            return True
        return False
    if not isinstance(node, cst.Del):
        return False
    targets = [e.value for e in node.target.elements] if isinstance(node.target, cst.Tuple) else [node.target]
    dicts, owned_lists = _owned(normalizer)
    for target in targets:  # left to right, each deleted before the next is evaluated, as Python does
        name = syntax.strip_parentheses(target.value).value
        if name not in dicts and name not in owned_lists:
            normalizer.reject(
                target,
                f"del of an element of {name}",
                f"cpsgrad differentiates del x[key] where x is a list or dict the function builds itself (a display, "
                f"a comprehension, list(...), dict(...)), not a parameter, that no other name, container or "
                f"function sees before the change; {name} is not: build a new one instead "
                f"({{k: v for k, v in {name}.items() if k != key}}, {name}[:i] + {name}[i + 1:])",
            )
        parts = normalizer.in_order([normalizer.slice_part(e.slice) for e in target.slice], out)
        key = writes._key(normalizer, parts)
        _rebind(normalizer, cst.Name(name), cst.Call(_runtime("without_item"), _args(cst.Name(name), key)), out, node)
    return True
