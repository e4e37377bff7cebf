"""Calls of user functions: which core calls are, and which Python function a called value runs.

A call that receives a differentiable value is one of three things:
  - a primitive with a rule (`math.sin(x)`, `x.sum()` of a local value): the rule is inlined;
  - a user call: a Python function (module-level, a method, an object's `__call__`, a
    `functools.partial`), or a value known only at run time (a parameter, a local object's
    method, an element of a container). The rest of the caller becomes the callee's
    continuation, and `runtime.dispatch` runs the callee's own derivative program;
  - anything else (a builtin or C function without a rule): the adjoint pass reports it.
Functions of the libraries cpsgrad has rules for (numpy, scipy, cpsgrad itself) are primitives
even where written in Python: a rule or an error, never their source transformed.
"""

from __future__ import annotations

import types
from dataclasses import dataclass

import libcst as cst
import numpy as np

from cpsgrad.errors import SourceLocation
from cpsgrad.rules.registry import TABLE
from cpsgrad.runtime.starred import spread
from cpsgrad.runtime.targets import LIBRARIES, Target, constructible, is_gradient, target  # noqa: F401  (re-exported)
from cpsgrad.transforms import exceptions, syntax
from cpsgrad.transforms.resolve import Resolver

RULE = "rule"
USER = "user"
PRIMITIVE = "primitive"

def array_method(callee: cst.BaseExpression, resolver: Resolver):
    """The numpy array method a call `x.name(...)` of a local value `x` stands for, if any."""
    if not (isinstance(callee, cst.Attribute) and isinstance(callee.value, cst.Name)):
        return None
    if resolver.resolve(callee) is not None or resolver.resolve(callee.value) is not None:
        return None  # a module's function (np.sum) or a global object's method
    method = getattr(np.ndarray, callee.attr.value, None)
    return method if method is not None and method in TABLE else None


#: Methods of dicts that a call `d.name(...)` of a differentiable local value `d` is bound to
#: (as `dict.name(d, ...)`), where numpy arrays have no method of that name.
CONTAINER_METHODS = {"values": dict.values, "items": dict.items, "keys": dict.keys, "get": dict.get}


def container_method(callee: cst.BaseExpression, resolver: Resolver):
    """The dict method a call `d.name(...)` of a local value `d` stands for, if any."""
    if not (isinstance(callee, cst.Attribute) and isinstance(callee.value, cst.Name)):
        return None
    if resolver.resolve(callee) is not None or resolver.resolve(callee.value) is not None:
        return None
    method = CONTAINER_METHODS.get(callee.attr.value)
    return method if method is not None and method in TABLE else None


def classify(callee: cst.BaseExpression, resolver: Resolver) -> str:
    """RULE, USER or PRIMITIVE (no rule) for the callee of a core call."""
    value = resolver.resolve(callee)
    if value is None:  # a local value, or a name not bound yet: known at run time
        return RULE if array_method(callee, resolver) is not None else USER
    if value in TABLE:
        return RULE
    if value is spread:  # f(*xs, **kw): bound by its dispatcher when it runs (runtime/spread_sites.py)
        return USER
    if type(value) is types.MethodType and value.__func__ in TABLE:  # a rule on the class's function
        return USER  # (Model.energy, rv_frozen.cdf): the call site binds the instance first at run time
    if target(value) is not None or is_gradient(value) or constructible(value) or _user_class(value):
        return USER  # a class of the user's: its __init__ a method, or refused saying why (runtime/objects.py)
    return PRIMITIVE


def _user_class(value) -> bool:
    return (
        isinstance(value, type)
        and bool(value.__flags__ & (1 << 9))  # defined in Python
        and (getattr(value, "__module__", "") or "").split(".", 1)[0] not in LIBRARIES
        and not issubclass(value, BaseException)
    )


def receiver(callee: cst.BaseExpression) -> str | None:
    """The name a dotted callee starts from (`obj` in `obj.method`), None for a plain name."""
    if not isinstance(callee, cst.Attribute):
        return None
    root = callee
    while isinstance(root, cst.Attribute):
        root = root.value
    return root.value if isinstance(root, cst.Name) else None


def user_calls(definition: cst.FunctionDef, active: set[str], resolver: Resolver) -> set[int]:
    """The core statements `y = f(...)` that call a user function with a differentiable argument
    (by id). A method of a differentiable value (`values.append(x)`) is not one: the adjoint pass
    refuses it."""
    found: set[int] = set()
    for statement in _simple_statements(definition.body.body):
        small = statement.body[0]
        if not (isinstance(small, cst.Assign) and isinstance(small.value, cst.Call)):
            continue
        call = small.value
        callee_active = is_callee_active(call.func, active)
        if not callee_active and not any(isinstance(a.value, cst.Name) and a.value.value in active for a in call.args):
            continue
        if receiver(call.func) in active and not object_method(call.func, active):
            continue
        if classify(call.func, resolver) == USER:
            found.add(id(statement))
    return found


def object_method(callee: cst.BaseExpression, active: set[str]) -> bool:
    """`obj.method` of a differentiable local `obj` that is not a method of numpy arrays or of the
    builtin containers: a method of the user's object, called with its instance differentiated."""
    return (
        isinstance(callee, cst.Attribute)
        and isinstance(callee.value, cst.Name)
        and callee.value.value in active
        and user_method(callee.attr.value)
    )


def user_method(name: str) -> bool:
    """A method name that is not one of numpy arrays' or lists' or a dict method with a rule
    (those of a differentiable value have rules, or are refused with the rule)."""
    if name == "__init__":  # super().__init__(...), base.__init__(self, ...): the object's own
        return True
    return not hasattr(np.ndarray, name) and not hasattr(list, name) and name not in CONTAINER_METHODS


def is_callee_active(callee: cst.BaseExpression, active: set[str]) -> bool:
    """Whether the called value is differentiable: a closure over differentiable values, an
    object's `__call__`, or a method of a differentiable object (`obj.method`)."""
    return (isinstance(callee, cst.Name) and callee.value in active) or object_method(callee, active)


def _simple_statements(statements):
    for statement in statements:
        if isinstance(statement, cst.If):
            yield from _simple_statements(statement.body.body)
            if statement.orelse is not None:
                yield from _simple_statements(statement.orelse.body.body)
        elif isinstance(statement, cst.While):
            yield from _simple_statements(statement.body.body)
        elif isinstance(statement, cst.Try):
            yield from _simple_statements(exceptions.parts(statement))
        elif isinstance(statement, cst.SimpleStatementLine):
            yield statement


@dataclass
class Site:
    """One call of a user function in a transformed function, as the transform saw it."""

    label: str  # call_1: names its continuation after_call_1, its adapter call_1_k, its dispatcher call_1_site
    statement: cst.SimpleStatementLine  # target = callee(arguments)
    location: SourceLocation | None
    callee: object | None  # what the callee named when the transform ran (None: a local value)
    positional: int  # how many positional arguments the call passes
    keywords: tuple[str, ...]  # the names of its keyword arguments, in order
    active: tuple[int, ...]  # which arguments (positional, then keywords) are differentiable
    kinds: tuple[str, ...]  # per argument, what the caller knows of it (transforms.analysis.kinds)
    callee_active: bool = False  # the called value is differentiable (a closure over active values)
    consumable: tuple[bool, ...] = ()  # per argument: the callee may write into it (transforms/analysis/aliasing.py)

    @property
    def call(self) -> cst.Call:
        return self.statement.body[0].value

    @property
    def callee_code(self) -> str:
        return syntax.code(self.call.func)


def bound_parameters(code: types.CodeType, call: cst.Call) -> list[tuple[str | None, cst.Arg]] | None:
    """Each argument of `call` (its positional arguments first, then its keywords, the order
    aliasing.consent counts them in) with the parameter of `code` Python binds it to: by position
    among the positional parameters, by name among those and the keyword-only ones; None for a
    positional argument past them or a keyword naming none (a `*args` or `**kwargs` would take
    it). None for the whole call where an argument is starred (`*xs`, `**kw`: unknown until it runs)."""
    if any(a.star for a in call.args):
        return None
    positional = [a for a in call.args if a.keyword is None]
    keywords = [a for a in call.args if a.keyword is not None]
    named = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    bound: list[tuple[str | None, cst.Arg]] = []
    for position, argument in enumerate(positional):
        bound.append((code.co_varnames[position] if position < code.co_argcount else None, argument))
    for argument in keywords:
        bound.append((argument.keyword.value if argument.keyword.value in named else None, argument))
    return bound
