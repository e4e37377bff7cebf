"""Checks at run time: unbound variables, in-place writes, and user rules' backwards.

A variable that a path through the function leaves unbound raises `UnboundLocalError` where
Python would (`unbound_read`, `check_bound`); augmented assignment on an array is refused with
its location (`refuse_in_place`); a user rule's contributions are checked for shape, dtype and
`None`, and what its backward raises names the rule (`rule_contribution`, `rule_failed`).
"""

from __future__ import annotations

import numbers
import re

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


def check_in_place(result, target, where: str, rewrite: str) -> None:
    """`c += b` on an array nothing else shares is computed as `c = c + b`: the same values, unless
    numpy would cast the result into `c`'s dtype or the result broadcasts past `c`'s shape (in
    place, the first casts and the second raises); those are refused rather than computed otherwise."""
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
