"""`x op= y` on a value that is not a number, as Python's in-place operator runs it.

cpsgrad computes `x op= y` as `x op y`, then rebinds x to it (nothing else shares x) or copies it
into x in place (`writes.updated`: the caller or another name shares x). That is Python's meaning
exactly when x's type has no in-place operator (numbers, tuples, strings) or has the one of a
numpy array, a list, a dict or a set, with two differences this module closes before the
operator runs (`in_place_operand`, transforms/augmented.py emits it):

- a list's `+=` takes any iterable (`xs += (v,)` extends by the tuple's items) and a dict's `|=`
  any mapping or iterable of pairs, where `+` and `|` take only a list or a dict: the operand is
  converted as the in-place operator converts it (`list(y)`, `dict(y)`), its adjoint converted back;
- a subclass of list, dict or set keeps its type and identity under its in-place operator, so it is
  changed in place (`writes.updated` does, where the update is in place); where cpsgrad would rebind
  it to the plain result, or the class defines its own in-place operator in Python (a user's
  `__iadd__`), or another type changes in place (a deque, an array subclass), it is refused with
  the statement's location rather than computed otherwise.
"""

from __future__ import annotations

from cpsgrad.runtime.checks import check_augmented
from cpsgrad.runtime.containers import sequence_adjoint
from cpsgrad.runtime.sequences import dict_of_adjoint


def in_place_operand(target, value, operator: str, where: str = "", in_place: bool = False):
    """The operand `target op value` is computed with, for `target op= value` (`operator` is "+",
    "|", ...; `in_place` when the generated code copies the result into `target`, else it rebinds):
    `list(value)` for a list's `+=` of another iterable, `dict(value)` for a dict's `|=` of
    another mapping or of pairs, else `value` itself; checked first (runtime/checks.py: `check_augmented`)."""
    check_augmented(target, operator, where, in_place)
    if operator == "+" and isinstance(target, list) and type(value) is not list:
        return list(value)
    if operator == "|" and isinstance(target, dict) and not isinstance(value, dict):
        return dict(value)
    return value


def in_place_mapping(target, value, operator: str, where: str = "", in_place: bool = False):
    """`in_place_operand` for a `|=`: a dict's operand is a mapping (the adjoint pass reads the
    other's result as a sequence)."""
    return in_place_operand(target, value, operator, where, in_place)


def in_place_operand_adjoint(value, operand, adjoint):
    """The adjoint of `value` from that of `in_place_operand(..., value, ...)`'s result `operand`."""
    if operand is value:
        return adjoint
    if isinstance(operand, dict):
        return dict_of_adjoint(value, adjoint)
    return sequence_adjoint(value, adjoint)  # a tuple's items, an array's rows, a dict's keys (none)
