"""The cheap test before transforms/generators.py's pass: whether a function may call a generator
function at all, read from its code objects and the values its names hold, before any tree is walked.
Most functions call none, and the pass (four walks of the tree) is then skipped."""

from __future__ import annotations

import builtins
import inspect
import types
import warnings

from cpsgrad.runtime.closures import DEFINITIONS
from cpsgrad.transforms import generator_folds

_DEPTH = 4  # attributes followed from a name: `a.b.c.gen(...)`


def may_call_a_generator(function: types.FunctionType) -> bool:
    """Whether `function` may call a generator function this module rewrites the loops over: one
    it defines (a nested generator `def`, or a name its Definition received holding one), or one a
    name it reads (its globals, builtins, closure cells and attributes of them, up to `_DEPTH` deep,
    as the resolver finds them) holds. False means no call resolves to one (a cheap test from
    the code objects, before the tree is walked); True, that the full pass must look."""
    code = function.__code__
    nested = DEFINITIONS.get(code)
    if nested is not None and generator_folds.GENERATOR_NAMES.get(nested):
        return True
    names: set[str] = set()
    codes = [code]
    while codes:
        current = codes.pop()
        names.update(current.co_names, current.co_freevars)
        for constant in current.co_consts:
            if isinstance(constant, types.CodeType):
                if constant.co_flags & inspect.CO_GENERATOR and constant.co_name != "<genexpr>":
                    return True  # a nested generator def (or a lambda's yield)
                codes.append(constant)
    cells = dict(zip(code.co_freevars, function.__closure__ or (), strict=True))
    values = []
    for name in names:
        if name in cells:
            try:
                values.append(cells[name].cell_contents)
            except ValueError:
                continue
        elif name in function.__globals__:
            values.append(function.__globals__[name])
        elif hasattr(builtins, name):
            values.append(getattr(builtins, name))
    with warnings.catch_warnings():  # a module's deprecated attribute (`np.str`) read for the test
        warnings.simplefilter("ignore")
        return _holds_a_generator(values, names)


def _holds_a_generator(values: list, names: set[str]) -> bool:
    seen: set[int] = set()
    for _ in range(_DEPTH):
        found = []
        for value in values:
            if id(value) in seen:
                continue
            seen.add(id(value))
            if generator_folds.is_generator_function(value):
                return True
            if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, int, float, str, bool)):
                continue
            for name in names:
                attribute = _attribute(value, name)
                if attribute is not _ABSENT:
                    found.append(attribute)
        values = found
    return any(generator_folds.is_generator_function(value) for value in values)


_ABSENT = object()


def _attribute(value, name: str):
    """`value.name` as the resolver reads it (getattr) for a module or a class; for any other
    object the attribute its class or instance dict holds, a static method's function (no
    property or `__getattr__` is run for the test)."""
    if isinstance(value, (types.ModuleType, type)):
        try:
            return getattr(value, name, _ABSENT)
        except Exception:  # noqa: BLE001 - a module's lazy __getattr__ failing: nothing found there
            return _ABSENT
    try:
        found = inspect.getattr_static(value, name, _ABSENT)
    except Exception:  # noqa: BLE001
        return _ABSENT
    if isinstance(found, (staticmethod, classmethod)):
        return found.__func__
    return found
