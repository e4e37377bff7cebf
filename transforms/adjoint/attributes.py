"""The adjoint pass's side of objects' attributes (transforms/attributes.py, runtime/objects.py):
the forward and backward of `obj_1 = set_attribute(obj, 'w', v)`, and the run-time checks after an
inactive attribute read and before an inactive call that runs as plain Python."""

from __future__ import annotations

import libcst as cst
import numpy as np

from cpsgrad import runtime
from cpsgrad.rules.registry import TABLE
from cpsgrad.transforms import attributes, calls, naming, syntax
from cpsgrad.transforms.adjoint.output import (
    RUNTIME,
    Lines,
    assign,
    call_line,
    parenthesized_tuple,
    runtime_call,
    string,
)
from cpsgrad.transforms.adjoint.records import AttributeWrite


def forward(generator, statement, variable: str, value: cst.Call, frame, lines: Lines, records: list) -> None:
    """`obj_1 = set_attribute(obj, 'w', v)`: what the attribute held saved first (a write of a
    differentiable value checked there), then the write; its record restores it."""
    first = len(lines)
    container, name, written = (a.value for a in value.args[:3])
    augmented = any(a.keyword is None for a in value.args[3:])  # obj.attr op= v
    keywords = [a for a in value.args if a.keyword is not None]  # fresh=True, method='append'

    adjoints = {}
    for atom in (container, written):
        source = generator.active_source(atom, frame) if isinstance(atom, cst.Name) else None
        if source is not None:
            adjoints[atom.value] = source
    version = generator.new_version(frame, variable)
    saved = generator.namer.fresh(naming.overwritten(version))
    active = cst.Name("True" if isinstance(written, cst.Name) and written.value in adjoints else "False")
    saving = runtime_call("overwritten_attribute", container, name, written, active, *[cst.Name("True")] * augmented)
    saving = saving.with_changes(args=[*saving.args, *keywords])
    lines.append(assign(saved, saving))
    lines.append(assign(version, value))
    location = generator.normalized.location(statement)
    records.append(
        AttributeWrite(
            version,
            adjoints,
            range(first, len(lines)),
            location,
            container=container,
            name=name,
            value=written,
            saved=saved,
        )
    )


def backward(generator, record: AttributeWrite, defined: dict[str, str], lines: Lines) -> None:
    """The attribute's adjoint now is the written value's (taken out of the books); the old value
    is put back; the name's own adjoint of the object passes through."""
    target = cst.Name(record.target)
    restore = runtime_call("restore_attribute", target, record.name, cst.Name(record.saved))
    source = record.source(record.value)
    if source is not None:
        generator.accumulate(source, restore, defined, lines)
    else:
        lines.append(call_line(restore))
    output = defined.get(generator.adjoint(record.target))
    source = record.source(record.container)
    if output is not None and source is not None:
        generator.accumulate(source, cst.Name(output), defined, lines)


def inactive(
    generator, value: cst.BaseExpression, lines: Lines, record=None, variable: str | None = None
) -> cst.BaseExpression:
    """An inactive statement's value, with the checks that keep objects' gradients from being lost
    (runtime/objects.py): after-the-fact reads of an attribute through a name no gradient reaches,
    and plain calls handed an object the run owns, are refused when they happen; a plain class
    called with no differentiable value makes an object the run owns (`owned(C(...))`). An active
    statement (`record`) is checked only where it reads an object's `__dict__`. A read `y = obj.m`
    whose `y` may share the array with what outlives it (`_escapes`) says so (`attribute_escapes`):
    a later `obj.m op= v` is then refused rather than computed as a new value."""
    read = isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name)
    # an object's attribute (not a module's; an array-named one is never taken for alone)
    plain = read and value.attr.value not in _ARRAY_NAMES and generator.resolver.resolve(value.value) is None
    keeps = plain and _escapes(generator, variable)  # `y = obj.m` where y may keep what it read
    only_indexes = keeps and not _escapes(generator, variable, lists=True)  # y[i], y[a:b]: a list's stays
    if record is not None:
        if read and value.attr.value == "__dict__":
            lines.append(call_line(runtime_call("unseen_attribute", cst.Name(value.value.value), string("__dict__"))))
        elif keeps:
            flag = [cst.Name("True")] if only_indexes else []
            escapes = runtime_call("attribute_escapes", cst.Name(value.value.value), string(value.attr.value), *flag)
            lines.append(call_line(escapes))
        return value
    if read:
        if plain:
            flags = ([cst.Name("True")] * (2 if only_indexes else 1)) if keeps else []
            unseen = runtime_call("unseen_attribute", cst.Name(value.value.value), string(value.attr.value), *flags)
            lines.append(call_line(unseen))
        return value
    if not isinstance(value, cst.Call) or syntax.dotted_name(value.func) == f"{RUNTIME}.set_attribute":
        return value
    primitive = generator.resolver.resolve(value.func)
    if _has_rule(primitive) or (primitive is not None and _library(primitive)):
        return value
    names = [a.value for a in value.args if isinstance(a.value, cst.Name) and not generator.is_number(a.value)]
    root = value.func
    while isinstance(root, cst.Attribute):
        root = root.value
    if isinstance(root, cst.Name) and generator.resolver.resolve(root) is None:
        names.append(root)  # the receiver of a method, or a function value (a closure may hold objects)
    if names:
        listed = parenthesized_tuple(names)
        lines.append(call_line(runtime_call("unseen_objects", listed, string(syntax.code(value.func)))))
    if isinstance(primitive, type) and primitive.__flags__ & _HEAP:
        return cst.Call(cst.Attribute(cst.Name(RUNTIME), cst.Name("owned")), [cst.Arg(value)])
    return value


def _escapes(generator, variable: str | None, lists: bool = False) -> bool:
    """Whether the name an attribute is read into may hold its array (`lists`: its list) past the
    statements that compute new values from it (transforms/attributes.consumed_names, once per
    function)."""
    if variable is None:
        return True
    key = "_consumed_lists" if lists else "_consumed_names"
    consumed = getattr(generator, key, None)
    if consumed is None:
        consumed = attributes.consumed_names(generator.normalized.definition, lists, generator.resolver)
        setattr(generator, key, consumed)
    return variable not in consumed


def _has_rule(primitive) -> bool:
    try:
        return primitive is not None and primitive in TABLE
    except TypeError:  # unhashable
        return False


def _library(value) -> bool:
    """numpy's, scipy's and cpsgrad's functions, and builtins that only look at an object's type or
    identity or print it (`type`, `isinstance`, `print`), never read its attributes as values."""
    module = getattr(value, "__module__", None) or ""
    if any(value is runs for runs in _RUNS_METHODS):  # a with's __enter__ and __exit__: the object's code
        return False
    return module.split(".", 1)[0] in calls.LIBRARIES or any(value is safe for safe in _LOOKING)


_RUNS_METHODS = (runtime.enter, runtime.exit_of, runtime.exit_with)


_LOOKING = (type, id, isinstance, issubclass, hasattr, callable, repr, str, print, len, format, hash, bool)
_HEAP = 1 << 9  # a class defined in Python
_ARRAY_NAMES = frozenset(dir(np.ndarray))
