"""Calls made for their effect (the result discarded) that receive a differentiable value:
`print(x)`, `logging.info("%s", x)`, `plt.plot(x)`, `LOG.append(float(x))`, `recorder.add(x)`.

Such a call cannot contribute to the gradient through its result, so it runs as Python runs it
(never transformed: a logging or plotting library need not be differentiable), with each
differentiable argument passed through `cpsgrad_runtime.frozen` (runtime/effects.py): numbers,
numpy scalars, strings and tuples of them as they are, an array as a read-only view of itself
(a callee writing into it raises numpy's "assignment destination is read-only" where it writes,
instead of changing a value the backward pass reads), and anything else (a list, a dict, an
object the callee could change) refused at run time with the reason.

What could still carry a gradient past the program is a value the callee keeps and the function
reads back: `LOG.append(x)` followed by `LOG[-1] * w`, or a helper storing it in a global the
function reads, would read a constant. So the callee must be a library's function or method
(print, logging, plotting): a user function or method, and a method of a list, dict or set, are
refused (`_refuse_keepers`); and the call is refused where the object it is called on, or a
non-number argument, is read again in the function.
"""

from __future__ import annotations

import types

import libcst as cst

from cpsgrad.errors import UnsupportedError
from cpsgrad.runtime.effects import OBSERVERS
from cpsgrad.runtime.effects import installed as _installed
from cpsgrad.runtime.effects import keeps as _keeps
from cpsgrad.transforms import calls, syntax, walk


def effect_line(generator, statement, original: cst.Call, value: cst.Call, frame) -> cst.Call | None:
    """The forward call of `value` (a renamed call for its effect with a differentiable
    operand), or None to keep it as it is; raises where it is refused."""
    resolver = generator.resolver
    label = syntax.code(original.func)
    construct = f"call of {label} for its effect"
    root = calls.receiver(original.func)
    if generator.active_source(_root_node(value.func), frame) is not None:
        if root is not None:  # a method of a differentiable value (x.fill(0.0), values.append(x))
            generator.callee(statement, original.func)
        raise UnsupportedError(
            generator.normalized.location(statement),
            construct,
            f"{label} is a differentiable value (or a method of one) called for its effect; cpsgrad cannot "
            f"see what it changes: assign its result",
        )
    checked = _refuse_keepers(generator, statement, original.func, label, construct)
    kept = [root] if root is not None else []
    kept += [
        o.value.value
        for o, a in zip(original.args, value.args, strict=True)
        if isinstance(o.value, cst.Name)
        and not generator.is_number(a.value)
        and generator.active_source(a.value, frame) is None  # a differentiable one is frozen instead
    ]
    definition = generator.normalized.definition
    names, defining = _sources(definition, kept)
    for name in names:
        if not isinstance(resolver.lookup(name), (types.ModuleType, types.FunctionType, type)) and _read_again(
            definition, name, {id(statement), *defining}
        ):
            raise UnsupportedError(
                generator.normalized.location(statement),
                construct,
                f"{label} receives a differentiable value and the function reads {name} again: what the call "
                f"may keep or write there would be read back as a constant, without its gradient; pass the "
                f"value on as an argument or return it instead",
            )
    arguments = [
        a.with_changes(value=_frozen(a.value)) if generator.active_source(a.value, frame) is not None else a
        for a in value.args
    ]
    func = _observed(value.func) if checked else value.func
    return value.with_changes(func=func, args=arguments)


def _refuse_keepers(generator, statement, callee: cst.BaseExpression, label: str, construct: str) -> bool:
    """A user function or method, or a method of a list, dict or set, could keep the value where
    the function (or code it calls) reads it back later as a constant, without its gradient
    (`CACHE[k] = v` in a helper, `LOG.append(x)` summed later): refused. Builtins and functions of
    installed libraries and the standard library (print, logging, plotting) run, and so do functions
    declared `cpsgrad.observer`. True where that is checked at run time: a method of what a library's
    call returned (`logging.getLogger(name).debug`, normalize's `t1 = logging.getLogger(name)`)."""
    value = generator.resolver.resolve(callee)
    if value is not None and (value in OBSERVERS or _installed(value)) and not _keeps(value):
        return False
    if value is None and of_library_result(generator, callee):
        return True  # cpsgrad_runtime.observed checks the method it is
    if value is None and calls.receiver(callee) is not None:
        generator.callee(statement, callee)  # a method of a local value: refused as such
    raise UnsupportedError(
        generator.normalized.location(statement),
        construct,
        f"{label} receives a differentiable value and could keep it where the function, or code it calls, "
        "reads it back later without its gradient; collect the values in a local list and return or use "
        "them, make the call after the differentiated function returns, or, if it only looks at them, "
        f"declare it: cpsgrad.observer({label})",
    )


def of_library_result(generator, callee: cst.BaseExpression) -> bool:
    """Whether `callee` is a method (`t1.debug`) of a name every assignment of which, in the normalized
    function, is the result of a call of a library's function (`t1 = logging.getLogger(name)`).
    `generator` is anything with the function's `normalized` and its `resolver`."""
    if not (isinstance(callee, cst.Attribute) and isinstance(callee.value, cst.Name)):
        return False
    name = callee.value.value
    values = [
        node.body[0].value
        for node in walk.nodes(generator.normalized.definition.body)
        if isinstance(node, cst.SimpleStatementLine)
        and isinstance(node.body[0], cst.Assign)
        and any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.body[0].targets)
    ]
    if not values or name in generator.normalized.parameters:
        return False
    for value in values:
        if not isinstance(value, cst.Call) or syntax.dotted_name(value.func) is None:
            return False
        function = generator.resolver.resolve(value.func)
        if function is None or isinstance(function, type) or not _installed(function):
            return False  # a constructor (list(...), dict(...)) makes what its methods would change
    return True


def _observed(func: cst.BaseExpression) -> cst.Call:
    helper = cst.Attribute(cst.Name("cpsgrad_runtime"), cst.Name("observed"))
    return cst.Call(helper, [cst.Arg(func)])


def _frozen(atom: cst.BaseExpression) -> cst.Call:
    helper = cst.Attribute(cst.Name("cpsgrad_runtime"), cst.Name("frozen"))
    return cst.Call(helper, [cst.Arg(atom)])


def _root_node(callee: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(callee, cst.Attribute):
        callee = callee.value
    return callee


def _sources(definition: cst.FunctionDef, names: list[str]) -> tuple[list[str], set[int]]:
    """`names` and, for each that normalize's temporaries hold (`t1 = self.buffer`), the names
    read where it is assigned, transitively; and those assignments (by id)."""
    assigned: dict[str, list[cst.SimpleStatementLine]] = {}
    for node in walk.nodes(definition.body):
        if isinstance(node, cst.SimpleStatementLine) and isinstance(node.body[0], cst.Assign):
            for target in node.body[0].targets:
                if isinstance(target.target, cst.Name):
                    assigned.setdefault(target.target.value, []).append(node)
    found: list[str] = []
    defining: set[int] = set()
    pending = list(names)
    while pending:
        name = pending.pop()
        if name in found:
            continue
        found.append(name)
        if _temporary(name):
            for line in assigned.get(name, []):
                defining.add(id(line))
                pending += syntax.variables_read(line)
    return found, defining


def _temporary(name: str) -> bool:
    return name.startswith("t") and name[1:].isdigit()


def _read_again(definition: cst.FunctionDef, name: str, skipped: set[int]) -> bool:
    """Whether `name` is read in the (normalized) function outside the statements `skipped`."""
    return any(
        isinstance(node, cst.SimpleStatementLine) and id(node) not in skipped and name in syntax.variables_read(node)
        for node in walk.nodes(definition.body)
    )
