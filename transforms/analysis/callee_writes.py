"""Which parameters a user function writes into, as its caller's transform sees it.

A function that passes its own parameter `p` to a user function `g` writing into it writes into
`p` too: its caller is asked in turn (transforms/analysis/aliasing.py, `consent`). To know whether `g`
writes into the parameter the argument is bound to, `g` is read, normalized and analysed here
as the pipeline's front does (every parameter taken for differentiable, no number kinds: the
widest set of writes), cached per code object. Anything that cannot be read, normalized or
analysed, recursion, and calls whose binding is not plain (star arguments, `*args` parameters,
methods) give None: not known, and the caller then refuses the write at run time if it happens.
"""

from __future__ import annotations

import inspect
import types

import libcst as cst

from cpsgrad.transforms import calls, written_arguments
from cpsgrad.transforms.analysis import activity, aliasing
from cpsgrad.transforms.analysis.callee_analysis import analysed
from cpsgrad.transforms.code_keyed import ByCode

_WRITTEN = ByCode()  # code object -> frozenset of the parameter names it may write into, or None
_UNPLAIN = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_GENERATOR  # bound otherwise: not known


def written_by(function) -> frozenset | None:
    """The parameters of `function` whose arrays it (or a function it passes them to) may write into."""
    if isinstance(function, types.FunctionType) and function.__code__.co_flags & _UNPLAIN:
        return None
    return analysed(function, _WRITTEN, _written, None)


def _written(function, normalized, resolver) -> frozenset:
    written_arguments.rewrite(normalized, resolver, written_by)  # as the pipeline does: its callees' variants
    active = activity.active_names(normalized.definition, set(normalized.parameters), resolver)
    user_calls = calls.user_calls(normalized.definition, active, resolver)
    aliasing.check(normalized, active, set(), resolver, user_calls, writes_into)
    return frozenset(normalized.written_parameters)


def writes_into(function, call: cst.Call, position: int) -> bool:
    """Whether the call's argument at `position` (its positional arguments first, then its
    keywords, as aliasing.consent counts them) is bound to a parameter `function` may write into;
    False where that is not known."""
    written = written_by(function)
    bound = calls.bound_parameters(function.__code__, call) if written else None
    if bound is None:
        return False
    parameter = bound[position][0]
    return parameter is not None and parameter in written
