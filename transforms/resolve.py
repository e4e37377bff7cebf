"""Resolve the callee of a core call to the Python object it names when the transform runs."""

from __future__ import annotations

import builtins
import types

import libcst as cst

from cpsgrad import runtime
from cpsgrad.transforms import syntax

_MISSING = object()


class Resolver:
    """Looks dotted names up the way the user's function would: closure, globals, builtins."""

    def __init__(self, function: types.FunctionType, local_names: set[str], assume_global_numbers: bool = False):
        self.function = function
        self.local_names = local_names
        # A module global holding a Python number when the function is transformed may be taken
        # for a number (`kinds`); the names so taken are recorded, and the program is transformed
        # again when one of them no longer holds a number (`pipeline.Transformed.holds`).
        self.assume_global_numbers = assume_global_numbers
        self.assumed: set[str] = set()
        # Every callable or module a dotted name resolved to (the rule inlined for `sin(x)`, the
        # module of `np.sum`, a user function a call was classified by): the program depends on
        # them, so it holds only while each name still names the same object (`binding_guard`).
        self.bindings: dict[str, object] = {}
        # names a pass gave the program, not the user's function (transforms/written_arguments.py):
        # they name the same object as long as the names they were made from do
        self.extra: dict[str, object] = {}
        code = function.__code__
        cells = function.__closure__ or ()
        self.closure = dict(zip(code.co_freevars, cells, strict=True))

    def lookup(self, identifier: str):
        if identifier in self.local_names:
            return _MISSING
        if identifier == "cpsgrad_runtime":  # the name normalize's own calls use
            return runtime
        if identifier in self.extra:
            return self.extra[identifier]
        if identifier in self.closure:
            try:
                return self.closure[identifier].cell_contents
            except ValueError:
                return _MISSING
        if identifier in self.function.__globals__:
            return self.function.__globals__[identifier]
        return getattr(builtins, identifier, _MISSING)

    def assumable_global(self, identifier: str):
        """The value of the module global `identifier` when its kind may be assumed (a top-level
        program, a name neither local nor free), else None; `kinds` decides and records."""
        if not self.assume_global_numbers or identifier in self.local_names or identifier in self.closure:
            return None
        return self.function.__globals__.get(identifier)

    def resolve(self, callee: cst.BaseExpression):
        """The object a dotted callee names, or None when it is a local value or not found."""
        dotted = syntax.dotted_name(callee)
        if dotted is None:
            return None
        first, *rest = dotted.split(".")
        value = self.lookup(first)
        for attribute in rest:
            if value is _MISSING:
                break
            value = getattr(value, attribute, _MISSING)
        if value is _MISSING:
            return None
        if (
            first != "cpsgrad_runtime"
            and first not in self.local_names
            and first not in self.extra
            and (callable(value) or isinstance(value, types.ModuleType))
        ):
            self.bindings[dotted] = value
        return value


def _bound_method(value) -> bool:
    if type(value) is types.MethodType:
        return True
    return (
        type(value) is types.BuiltinMethodType
        and value.__self__ is not None
        and not isinstance(value.__self__, types.ModuleType)
    )


def binding_guard(
    function: types.FunctionType,
    bindings: dict[str, object],
    checks: tuple[str, ...] | list[str] = (),
    values: dict | None = None,
):
    """A function of no arguments saying whether each dotted name in `bindings` still names
    the object it named (looked up as `function` would: its closure, its globals, builtins), and
    each expression of `checks` (over the names in `values`, and `G`, the globals) is true; None
    when there is nothing to check. Made once per program, called on each run (identity checks:
    a dict read or an attribute read each)."""
    if not bindings and not checks:
        return None
    code = function.__code__
    cells = dict(zip(code.co_freevars, function.__closure__ or (), strict=True))
    namespace: dict[str, object] = {"G": function.__globals__, "M": _MISSING, **(values or {})}
    checks = list(checks)
    for index, (dotted, value) in enumerate(sorted(bindings.items())):
        first, *rest = dotted.split(".")
        if first in cells:
            namespace[f"c{index}"] = cells[first]
            expression = f"c{index}.cell_contents"
        else:
            namespace[f"b{index}"] = getattr(builtins, first, _MISSING)
            expression = f"G.get({first!r}, b{index})"
        for attribute in rest:
            expression = f"getattr({expression}, {attribute!r}, M)"
        namespace[f"v{index}"] = value
        # a method bound to an object (`scipy.stats.norm.logpdf`) is a new object at each read:
        # equal (the same instance and function) is the same
        checks.append(f"{expression} {'==' if _bound_method(value) else 'is'} v{index}")
    text = (
        "def holds():\n    try:\n        return "
        + " and ".join(checks)
        + "\n    except ValueError:  # an empty cell\n        return False\n"
    )
    exec(compile(text, f"<cpsgrad binding guard of {function.__qualname__}>", "exec"), namespace)  # noqa: S102
    return namespace["holds"]
