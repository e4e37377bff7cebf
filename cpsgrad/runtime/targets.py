"""Which Python function a called value runs (a function, a method with its instance, an
object's `__call__`, a partial, a nested function's closure), for the call sites of user
functions (`dispatch`) and the transform's static callees alike.

Functions of the libraries cpsgrad has rules for (numpy, scipy, cpsgrad itself) are primitives
even where written in Python: a rule or an error, never their source transformed.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from dataclasses import dataclass

from cpsgrad.runtime.closures import DEFINITIONS, captured_values

LIBRARIES = frozenset({"numpy", "scipy", "cpsgrad"})


@dataclass(frozen=True)
class Target:
    """The Python function a called value runs, and what it binds before the call's arguments."""

    function: types.FunctionType
    prefix: tuple = ()  # a bound method's instance, a partial's arguments
    keywords: tuple = ()  # a partial's keyword arguments, as (name, value) pairs
    captured: tuple | None = None  # a nested function's captured values (its program's first parameters)
    # the partials called, innermost first, when their bound arguments are differentiable (each a
    # layer of the called value's adjoint: a partial of a partial of a function or closure)
    partials: tuple = ()
    instance: bool = False  # prefix[0] is the instance a method is bound to (differentiated with the callee)


def is_gradient(value) -> bool:
    """A `cpsgrad.grad` or `value_and_grad` wrapper (differentiating it would be nested reverse mode)."""
    return getattr(value, "__cpsgrad_gradient__", False) is True


def target(value) -> Target | None:
    """The Python function `value` runs when called, or None when it is not one cpsgrad can
    transform (a builtin, a C function, a class, a library's function)."""
    if isinstance(value, types.FunctionType):
        if value.__code__ in DEFINITIONS:
            return Target(value, captured=captured_values(value))
        return None if _library(value) or is_gradient(value) else Target(value)
    if isinstance(value, types.MethodType):
        inner = target(value.__func__)
        if inner is None:
            return None
        return Target(inner.function, (value.__self__, *inner.prefix), inner.keywords, inner.captured, instance=True)
    if isinstance(value, functools.partial):
        inner = target(value.func)
        if inner is None:
            return None
        # layers over a plain function or closure (not a method's bound instance) are differentiable
        bound = sum(len(p.args) for p in inner.partials), sum(len(p.keywords) for p in inner.partials)
        layered = (len(inner.prefix), len(inner.keywords)) == bound
        partials = (*inner.partials, value) if layered else ()
        keywords = (*inner.keywords, *value.keywords.items())
        return Target(inner.function, (*inner.prefix, *value.args), keywords, inner.captured, partials)
    if isinstance(value, type):
        return None
    call = next((c.__dict__["__call__"] for c in type(value).__mro__ if "__call__" in c.__dict__), None)
    if isinstance(call, types.FunctionType) and not _library(call):
        return Target(call, (value,), instance=True)
    return None


def constructible(value) -> bool:
    """A NamedTuple class or a dataclass without `__post_init__`: constructing one from
    differentiable values is differentiated (its fields are exactly the values passed)."""
    if not isinstance(value, type):
        return False
    if issubclass(value, tuple) and hasattr(value, "_fields"):
        return True
    return dataclasses.is_dataclass(value) and not hasattr(value, "__post_init__")


def _library(function: types.FunctionType) -> bool:
    """A library's function, but for cpsgrad's own written to be differentiated as source (the
    explicit tangents of cpsgrad/rules/tangents.py, which second derivatives run through)."""
    if getattr(function, "__cpsgrad_source__", False):
        return False
    module = getattr(function, "__module__", None) or ""
    return module.split(".", 1)[0] in LIBRARIES
