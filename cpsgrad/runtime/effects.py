"""The differentiable arguments of a call made for its effect (`print(x)`, `plt.plot(x)`,
`LOG.append(x)`: transforms/effects.py), handed over so that the callee cannot change them."""

from __future__ import annotations

import collections
import sys
import sysconfig
import types

import numpy as np

from cpsgrad.errors import UnsupportedError

_IMMUTABLE = (float, int, bool, complex, str, bytes, type(None), np.generic)

OBSERVERS: set = set()  # functions declared to only look at what they are given (`observer`)


def observer(function):
    """Declare that `function` only looks at the values it is given (a logging or plotting helper
    of your own): called for its effect with differentiable values, it runs as Python with them
    frozen, like print or a library's function, instead of being refused as something that could
    keep them. Returns `function`, so it works as a decorator."""
    OBSERVERS.add(function)
    return function


def frozen(value):
    """`value` as a call made for its effect may receive it: numbers, numpy scalars and strings
    as they are, a tuple of such values as a tuple, an array as a read-only view of itself (a
    write into it raises); anything the callee could change is refused (the location is added
    by the API from the generated line)."""
    if isinstance(value, _IMMUTABLE):
        return value
    if type(value) is np.ndarray:
        view = value.view()
        view.flags.writeable = False
        return view
    if type(value) is tuple:
        return tuple(frozen(element) for element in value)
    raise UnsupportedError(
        None,
        f"{type(value).__name__} holding a differentiable value passed to a call for its effect",
        "the callee could change it, behind the gradient's back; pass the numbers or arrays it needs "
        "(a tuple of them, float(x), x.copy()), or assign the call's result",
    )


_LIBRARY_PATHS = tuple(
    {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    | {sysconfig.get_paths(vars={"base": sys.base_prefix})["stdlib"]}
)


def installed(value) -> bool:
    """Whether `value` is a builtin or comes from the standard library or an installed package."""
    function = getattr(value, "__func__", value)
    module = sys.modules.get(getattr(function, "__module__", None) or "")
    if module is None:
        return isinstance(value, (types.BuiltinFunctionType, types.BuiltinMethodType))
    path = getattr(module, "__file__", None)
    return path is None or path.startswith(_LIBRARY_PATHS)


def keeps(value) -> bool:
    """A method of a list, dict, set or deque, which keeps what it is given."""
    return isinstance(getattr(value, "__self__", None), (list, dict, set, collections.deque))


def observed(method):
    """`method`, a method of what a library's call returned (`logging.getLogger(name).debug`), about to
    be called for its effect with differentiable values: known only now, it must be what a call for
    its effect may be (transforms/effects.py): a library's function or one declared an observer, and
    not a method of a list, dict or set (which would keep the value); else refused."""
    if (method in OBSERVERS or installed(method)) and not keeps(method):
        return method
    name = getattr(method, "__qualname__", type(method).__name__)
    raise UnsupportedError(
        None,
        f"call of {name} for its effect on a differentiable value",
        f"{name} is not a library's function (or it keeps what it is given); call it after the differentiated "
        f"function returns, or, if it only looks at the values, declare it: cpsgrad.observer",
    )
