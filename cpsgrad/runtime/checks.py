"""Checks at run time: unbound variables, in-place writes, and user rules' backwards.

A variable that a path through the function leaves unbound raises `UnboundLocalError` where
Python would (`unbound_read`, `check_bound`); augmented assignment on an array is refused with
its location (`refuse_in_place`), as is `x op= y` where `x op y` would compute otherwise
(`check_augmented`: runtime/augmented.py); a user rule's contributions are checked for shape, dtype and
`None`, and what its backward raises names the rule (`rule_contribution`, `rule_failed`).
"""

from __future__ import annotations

import numbers
import re
import types

import numpy as np

from cpsgrad.errors import RuleError, SourceLocation, UnsupportedError
from cpsgrad.kernels.device_array import DeviceArray


def refuse_in_place(value, where: str, rewrite: str, why: str) -> None:
    """Augmented assignment (`c += b`) on an array, a list, a dict (`d |= m`) or a set changes it in
    place, and every name sharing it sees the change; where another name, a view or the caller shares it (`why`, from
    transforms/analysis/aliasing.py), the derivative program cannot compute `c = c + b` instead, so it refuses."""
    if isinstance(value, (np.ndarray, list, dict, set)):  # their in-place operators change the object
        location, construct = _located(where)
        kind = "an array" if isinstance(value, np.ndarray) else f"a {type(value).__name__}"
        raise UnsupportedError(
            location, f"{construct} ({kind})",
            f"augmented assignment changes {kind} in place, and {why}, which cpsgrad does not differentiate; "
            f"write a new value: {rewrite}",
        )


_REBOUND = frozenset({float, int, bool, complex, tuple, str, list, dict, set})  # x op= y rebinds, or x is unshared


def check_in_place(result, target, where: str, rewrite: str) -> None:
    """`c += b` on an array nothing else shares is computed as `c = c + b`: the same values, unless
    numpy would cast the result into `c`'s dtype or the result broadcasts past `c`'s shape (in
    place, the first casts and the second raises); those are refused rather than computed otherwise.
    A target of another type whose in-place operator differs (a subclass of list, a user's `__iadd__`)
    is refused (`check_augmented`)."""
    if type(target) not in _REBOUND and type(target) is not np.ndarray:
        check_augmented(target, rewrite.split(" ", 4)[3], where)  # rewrite: "x = x op y"
    if type(target) is np.ndarray and (
        type(result) is not np.ndarray or result.dtype != target.dtype or result.shape != target.shape
    ):
        location, construct = _located(where)
        got = f"{np.dtype(getattr(result, 'dtype', type(result))).name}{list(np.shape(result))}"
        raise UnsupportedError(
            location, f"{construct} (an array)",
            f"in place, numpy would cast or broadcast the {got} result into the {target.dtype.name}"
            f"{list(target.shape)} array, which cpsgrad does not differentiate; write a new value with the type "
            f"you mean: {rewrite}, or .astype(...) it",
        )


_AUGMENTED = {  # the operator's text -> (in-place method, binary method)
    "+": ("__iadd__", "__add__"), "-": ("__isub__", "__sub__"), "*": ("__imul__", "__mul__"),
    "/": ("__itruediv__", "__truediv__"), "//": ("__ifloordiv__", "__floordiv__"), "%": ("__imod__", "__mod__"),
    "**": ("__ipow__", "__pow__"), "@": ("__imatmul__", "__matmul__"), "|": ("__ior__", "__or__"),
    "&": ("__iand__", "__and__"), "^": ("__ixor__", "__xor__"), "<<": ("__ilshift__", "__lshift__"),
    ">>": ("__irshift__", "__rshift__"),
}
_CONTAINERS = (list, dict, set)  # their in-place operators are C's: changed in place by writes.updated
_PLAIN = (list, dict, set, np.ndarray)


def check_augmented(target, operator: str, where: str = "", in_place: bool = False) -> None:
    """Refuse, located at `where`, a `target op= ...` that `target op ...` would get wrong (a user's
    in-place operator, a subclass rebound, another type changed in place: runtime/augmented.py)."""
    kind = type(target)
    special, binary = _AUGMENTED[operator]
    method = getattr(kind, special, None)
    if method is None or kind in _PLAIN:
        return
    if isinstance(method, types.FunctionType):  # written in Python: a user's __iadd__ (or collections.Counter's)
        why = f"{kind.__qualname__}.{special} is written in Python, which cpsgrad does not run for x {operator}= y"
        _refuse_augmented(target, where, why, f"call the method that does the work, or write x = x {operator} y")
    if not isinstance(target, _CONTAINERS):
        why = f"a {kind.__name__} changes in place under {operator}=, and cpsgrad changes arrays, lists, dicts, sets"
        _refuse_augmented(target, where, why, f"write a new value: x = x {operator} y")
    base = next(b for b in _CONTAINERS if isinstance(target, b))
    if getattr(kind, binary, None) is not getattr(base, binary, None):
        why = f"{kind.__qualname__} overrides {binary} but not {special}, and cpsgrad computes x {operator}= y with it"
        _refuse_augmented(target, where, why, f"write x = x {operator} y if a new value is meant")
    if not in_place:
        why = (
            f"{operator}= changes the {kind.__name__} (a subclass of {base.__name__}) in place, and cpsgrad would "
            f"bind x to a new plain {base.__name__} here"
        )
        rewrite = f"make x a plain {base.__name__} first (x = {base.__name__}(x)) if one will do"
        _refuse_augmented(target, where, why, rewrite)


def _refuse_augmented(target, where: str, why: str, rewrite: str):
    location, construct = _located(where)
    raise UnsupportedError(location, f"{construct} (a {type(target).__name__})", f"{why}; {rewrite}")


def _located(where: str) -> tuple[SourceLocation | None, str]:
    """`where` is "file:line:col: statement" (adjoint.guard_in_place): the error is located."""
    found = re.match(r"(.*?):(\d+):(\d+): (.*)", where, flags=re.DOTALL)
    if not found:
        return None, where
    return SourceLocation(found[1], int(found[2]), int(found[3])), found[4]


class Unbound:
    """Passed for a variable not bound on the path taken; any use raises as Python would."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<unbound {self.name}>"

    def _raise(self, *args):
        raise UnboundLocalError(f"cannot access local variable '{self.name}' where it is not associated with a value")

    __bool__ = __float__ = __int__ = __index__ = __iter__ = __len__ = __getitem__ = _raise
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _raise
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _raise
    __pow__ = __rpow__ = __neg__ = __pos__ = __abs__ = __lt__ = __le__ = __gt__ = __ge__ = _raise
    __eq__ = __ne__ = __contains__ = __round__ = __trunc__ = __floor__ = __ceil__ = _raise
    __matmul__ = __rmatmul__ = __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _raise
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = __invert__ = __divmod__ = __rdivmod__ = _raise
    __call__ = __str__ = __format__ = __complex__ = __reversed__ = _raise
    __array_ufunc__ = __array_function__ = _raise  # np.sin(v), np.sum(v)
    __hash__ = None

    def __getattr__(self, attribute: str):  # only attributes it lacks: v.real, v.shape
        if attribute.startswith("__") and attribute.endswith("__"):  # copy, pickle, numpy probing
            raise AttributeError(attribute)
        self._raise()

    def check(self):
        """Raise: the program's result is this unbound variable."""
        self._raise()


def unbound(name: str) -> Unbound:
    return Unbound(name)


def check_bound(value) -> None:
    """A continuation's read of a parameter some jump passes unbound (the sentinel): raise as
    Python would, where it reads the variable."""
    if type(value) is Unbound:
        value._raise()


def unbound_read(name: str):
    """A read of a local variable that no path has bound yet: raise as Python would, at the read."""
    Unbound(name)._raise()


def rule_adjoint(adjoint, value):
    """A user rule's output adjoint: the symbolic zero `0.0` standing for an array's zeros
    becomes those zeros, so that the rule may index it, read its shape, ..."""
    if type(adjoint) is float and adjoint == 0.0:
        if isinstance(value, np.ndarray) and value.dtype.kind in "fc":
            return np.zeros_like(value)
        if isinstance(value, np.floating):
            return value.dtype.type(0.0)
    return adjoint


def _described(value) -> str:
    if isinstance(value, (np.ndarray, DeviceArray)):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, np.generic):
        return f"a numpy {value.dtype} scalar"
    return f"{type(value).__name__} {value!r}"[:120]


def rule_contribution(contribution, like, rule: str, parameter: str):
    """A user rule's contribution to the adjoint of its input `like` (parameter `parameter`),
    checked: not None; of `like`'s shape for an array, a real scalar for a number."""
    problem = None
    if contribution is None:
        problem = "needs a value"
    elif isinstance(like, (np.ndarray, DeviceArray)):
        shape = getattr(contribution, "shape", None)
        if isinstance(contribution, numbers.Number) and not isinstance(contribution, numbers.Real) or (
            isinstance(contribution, (np.ndarray, np.generic)) and contribution.dtype.kind not in "fiub"
        ):
            problem = "must be real"
        elif shape is None and not isinstance(contribution, numbers.Real):
            problem = f"must be an array of shape {like.shape}"
        elif shape is not None and tuple(shape) != like.shape or shape is None and like.shape != ():
            problem = f"must have its input's shape {like.shape}"
    elif isinstance(like, numbers.Real) and not isinstance(like, bool):
        if isinstance(contribution, (np.ndarray, DeviceArray)):
            if contribution.shape != () or contribution.dtype.kind not in "fiub":
                problem = "must be a real scalar"
        elif not isinstance(contribution, numbers.Real) or isinstance(contribution, bool):
            problem = "must be a real scalar"
    if problem is not None:
        raise RuleError(
            f"rule {rule}: its backward contributed {_described(contribution)} to {parameter}_d, "
            f"the adjoint of {parameter}, which is {_described(like)}; a contribution {problem}"
        )
    return contribution


def rule_failed(rule: str, error: Exception):
    """A user rule's backward raised `error`: raise a RuleError naming the rule (a RuleError
    from rule_contribution as it is)."""
    if isinstance(error, RuleError):
        raise error
    raise RuleError(f"rule {rule}: its backward raised {type(error).__name__}: {error}") from error
