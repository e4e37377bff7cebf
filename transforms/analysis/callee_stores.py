"""Which parameters a user function may store a value into, as its caller's transform sees it.

A call of a user function for its effect, `f(obj, x)` with `x` differentiable, may keep `x` in
`obj` (`obj.w = x`, `obj.items.append(x)`): the caller must then take `obj` for differentiable, so
that its later reads get the gradient (transforms/attributes.py, `receivers`). Only the arguments
bound to parameters the callee may store into are taken so; the others (`fun` of `fun(*args)`, a
flag, a label) stay what they are. A parameter is stored into where the callee, through the
parameter or a name read from it (`t = p`, `p[i]`, `p.layer`, a loop over p):

- writes an attribute or an item (`p.w = v`, `p[k] = v`, `np.copyto(p, v)`, `p += v`: the core's
  `p = cpsgrad_runtime.<write>(p, ...)`), or calls `setattr(p, ...)`;
- calls a method of it with an argument (a user method may keep it in `self`; a list's, a
  dict's or an array's changing method: `append`, `update`, `fill`, ...);
- passes it to a user function that stores into the parameter it is bound to (analysed in turn),
  or to a callee not known (a local value, a star argument, a class, recursion);
- or a nested function, lambda or partial captures it (it may store into it when called).

Calling the parameter itself (`p(v)`, a function or bound method handed in) is not a store into
it: a function holds nothing its caller reads back as the parameter's value, and a bound method
that keeps `v` in its instance writes into an object the run's books follow (runtime/objects.py:
a read behind the gradient's back is refused when it runs).

Analysed once per code object (transforms/analysis/callee_analysis.py); what cannot be read or
analysed is None: not known, and the caller takes every argument for stored into.
"""

from __future__ import annotations

import inspect
import types

import libcst as cst

from cpsgrad.runtime.starred import spread
from cpsgrad.transforms import attributes, calls, containers, syntax, walk, writes
from cpsgrad.transforms.analysis.callee_analysis import analysed, assignments
from cpsgrad.transforms.code_keyed import ByCode

_STORED = ByCode()  # code object -> frozenset of the parameters it may store into, or None
_UNPLAIN = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_GENERATOR
# container methods that keep nothing
_READERS = frozenset({"get", "keys", "values", "items", "copy", "index", "count"})
_CLOSURES = frozenset({"cpsgrad_runtime.make_function", "cpsgrad_runtime.make_partial"})
_RUNTIME_VIEWS = frozenset({"cpsgrad_runtime.as_sequence", "tuple", "list"})


def stored_by(function) -> frozenset | None:
    """The parameters of `function` it (or a function it hands them to) may store a value into."""
    if not isinstance(function, types.FunctionType) or function.__code__.co_flags & _UNPLAIN:
        return None
    return analysed(function, _STORED, _stored, None)


def stored_arguments(function, call: cst.Call) -> list[str] | None:
    """The names passed by `call` (a core call of `function`) to parameters `function` may store
    into; None where that is not known (then every name passed may be)."""
    stored = stored_by(function)
    if stored is None or any(a.star for a in call.args):
        return None
    code = function.__code__
    found = []
    positional = [a for a in call.args if a.keyword is None]
    for position, argument in enumerate(positional):
        if position >= code.co_argcount or code.co_varnames[position] in stored:
            found.append(argument.value)
    for argument in call.args:
        if argument.keyword is not None and argument.keyword.value in stored:
            found.append(argument.value)
    return [a.value for a in found if isinstance(a, cst.Name)]


def _stored(function, normalized, resolver) -> frozenset:
    definition = normalized.definition
    parameters = list(normalized.parameters)
    found = list(assignments(definition.body.body))
    roots = {p: {p} for p in parameters}  # parameter -> the names read from it
    changed = True
    while changed:
        changed = False
        for _, value, targets in found:
            sources = _read_from(value)
            for names in roots.values():
                if sources & names and not set(targets) <= names:
                    names.update(targets)
                    changed = True
    stored = set()
    nested = _read_by_nested(definition)
    for parameter, names in roots.items():
        if names & nested or any(_stores(node, names, resolver) for node in walk.nodes(definition.body)):
            stored.add(parameter)
    return frozenset(stored)


def _read_from(value: cst.BaseExpression) -> set[str]:
    """The names `value` reads a part of, or is: `p`, `p[i]`, `p.attr`, `as_sequence(p)` and
    `tuple(p)` (p's items), a display holding p, a write's result (`cpsgrad_runtime.written(p, ...)`
    is p)."""
    if isinstance(value, (cst.Tuple, cst.List)):
        return {e.value.value for e in value.elements if isinstance(e.value, cst.Name)}
    if isinstance(value, cst.Call) and (
        syntax.dotted_name(value.func) in _RUNTIME_VIEWS or _is_store(value)
    ) and value.args:  # a copy's items are p's items: a store into them is one into p's
        value = value.args[0].value
    while isinstance(value, (cst.Subscript, cst.Attribute)):
        value = value.value
    return {value.value} if isinstance(value, cst.Name) else set()


def _is_store(value: cst.BaseExpression) -> bool:
    return writes.is_write(value) or attributes.is_attribute_write(value) or containers.is_list_change(value)


def _stores(node: cst.CSTNode, names: set[str], resolver) -> bool:
    """Whether `node` (a core call) may store a value into one of `names`."""
    if not isinstance(node, cst.Call):
        return False
    if _is_store(node):
        first = node.args[0].value if node.args else None
        return isinstance(first, cst.Name) and first.value in names
    callee = node.func
    if syntax.dotted_name(callee) in _CLOSURES:  # a nested function or partial capturing it may store into it
        return any(isinstance(a.value, cst.Name) and a.value.value in names for a in node.args)
    if isinstance(callee, cst.Attribute) and isinstance(callee.value, cst.Name) and callee.value.value in names:
        return bool(node.args) and callee.attr.value not in _READERS  # a method of it, given a value
    passed = [a for a in node.args if isinstance(a.value, cst.Name) and a.value.value in names]
    if not passed:
        return False
    if isinstance(callee, cst.Name) and callee.value == "setattr":
        return node.args[0] in passed
    if isinstance(callee, cst.Attribute) and not calls.user_method(callee.attr.value):
        return False  # xs.append(p), d.update(p), a.dot(p): a container's or an array's method keeps nothing in p
    if calls.classify(callee, resolver) != calls.USER:
        return False  # a rule or a primitive: numpy's in-place forms are the core's writes
    function = resolver.resolve(callee)
    if function is spread:  # f(*args, **kw): the callee (its first argument) is called, not stored into
        return any(a.value.value in names for a in node.args[1:] if isinstance(a.value, cst.Name))
    stored = stored_arguments(function, node) if function is not None else None
    return stored is None or any(a.value.value in stored for a in passed)


def _read_by_nested(definition: cst.FunctionDef) -> set[str]:
    """The names read inside the nested functions and lambdas of `definition`."""
    read = set()
    for node in walk.nodes(definition.body):
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            read |= {n.value for n in walk.nodes(node) if isinstance(n, cst.Name)}
    return read
