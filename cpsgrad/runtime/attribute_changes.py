"""`obj.attr op= v` and `obj.items.append(v)` (and extend, pop) on an attribute holding an array
or a list, which Python changes in place (runtime/objects.py's writes; transforms/attributes.py).

Every name holding the array or list sees an in-place change. cpsgrad writes the attribute a new
value instead, whose adjoint the run's books keep as for any write: the same only where the object
holds it alone. The books' `alone` set says so per object and attribute: a write of a fresh value
(`fresh=True`: arithmetic, a numpy constructor, a display) adds it, as does a plain `__init__`'s
array or list that nothing else references (`held_alone`, by the reference count right after the
call returned); another write, a read into a name that may keep it (`attribute_escapes`) and a
plain call handed the object (`unseen_objects`) take it away. An attribute named like an array's
(`.data`, `.T`) is never taken for alone (its reads are not all seen). Where the object does not
hold it alone, the change is refused when it runs, except a list nothing differentiable is in,
which is changed in place as Python does (`changed_in_place`).
"""

from __future__ import annotations

import sys

import numpy as np

from cpsgrad.errors import UnsupportedError

_ARRAY_NAMES = frozenset(dir(np.ndarray))


def held_alone(value) -> set:
    """The attributes of `value` (just built by a plain `__init__`, which has returned) holding an
    array or a list that nothing but the object's `__dict__` references."""
    found = set()
    attributes = value.__dict__
    for name in list(attributes):
        kind = type(attributes[name])
        if kind is list or (kind is np.ndarray and attributes[name].base is None):
            if sys.getrefcount(attributes[name]) <= _ALONE_COUNT and name not in _ARRAY_NAMES:
                found.add((id(value), name))
    return found


def _held_once_count() -> int:
    """What `sys.getrefcount(attributes[name])` says of a value only a dict holds (measured, as
    interpreters count their stack's references differently); 0 (nothing is taken for alone)
    where a second name would not show."""
    attributes = {"a": np.zeros(1)}
    alone = sys.getrefcount(attributes["a"])
    other = attributes["a"]
    shared = sys.getrefcount(attributes["a"])
    del other
    return alone if shared > alone else 0


_ALONE_COUNT = _held_once_count()


def in_place(state, target, name: str, value, active: bool) -> None:
    """`target.name op= v` where the attribute holds an array: numpy changes that array in place,
    and every name holding it sees the change. Computed here as a new array `value` (whose
    gradient the books keep), which is the same only where no name holds the old one: the object
    holds it alone (written fresh, `self.m = np.zeros(n)`, and not read out into a name that
    keeps it since, `attribute_escapes`), and the result has its dtype and shape (in place, numpy
    casts or refuses another)."""
    old = target.__dict__.get(name)
    kind = type(old).__name__
    if type(old) is list and (id(target), name) in state.alone and name not in _ARRAY_NAMES:
        if type(value) is not list:  # obj.items += (v,): Python extends; as a new value `+` would raise
            raise UnsupportedError(
                None,
                f"augmented assignment to .{name} holding a list",
                f"with a {type(value).__name__}: write obj.{name} = obj.{name} + list(values)",
            )
        return
    if type(old) is list and type(value) is list and not active and not carries(state, target, name):
        state.changed_lists.add((id(target), name))  # nothing differentiable (obj.items += [...]): in place
        return
    if type(old) is not np.ndarray or (id(target), name) not in state.alone or name in _ARRAY_NAMES:
        where = "a list" if isinstance(old, list) else f"a {kind}"
        raise UnsupportedError(
            None,
            f"augmented assignment to .{name} holding {where}",
            f"Python changes the {kind} in place, and another name may hold it (it was written from a name, "
            f"an argument or a view, or read out since): every name holding it would see the change, which cpsgrad "
            f"does not differentiate; write obj.{name} = obj.{name} + value (a new value), or write a copy into "
            f"it first (obj.{name} = np.array(value), obj.{name} = value.copy())",
        )
    if type(value) is not np.ndarray or value.dtype != old.dtype or value.shape != old.shape:
        got = f"{np.dtype(getattr(value, 'dtype', type(value))).name}{list(np.shape(value))}"
        raise UnsupportedError(
            None,
            f"augmented assignment to .{name} holding a {old.dtype.name}{list(old.shape)} array",
            f"in place, numpy would cast or broadcast the {got} result into the array, which cpsgrad does not "
            f"differentiate; write a new value with the type you mean: obj.{name} = obj.{name} + value",
        )


def carries(state, target, name: str) -> bool:
    """Whether the attribute holds (or may hold) a differentiable value: written with one, or a
    differentiated argument's."""
    return (id(target), name) in state.carriers or id(target) in state.arguments


def changed_in_place(state, target, name: str, value) -> bool:
    """`set_attribute`'s half of a list changed in place (`in_place` or `overwritten_attribute`
    said so): its items become `value`'s, and the object keeps the list itself."""
    key = (id(target), name)
    if key not in state.changed_lists:
        return False
    state.changed_lists.discard(key)
    getattr(target, name)[:] = value
    return True


def attribute_list(kind: type, name: str, method: str) -> None:
    """Before `obj.name.method(...)` written as a new list (transforms/attributes.list_method):
    the attribute holds a list (`kind`); a deque's, an array's or another object's is refused."""
    if kind is not list:
        raise UnsupportedError(
            None,
            f"method call .{name}.{method}(...) on a {kind.__name__}",
            f"cpsgrad differentiates append, extend and pop() of a list an object's attribute holds, and .{name} holds "
            f"a {kind.__name__}; call the method on a local name (items = obj.{name}; items.{method}(...)) or write "
            f"the attribute anew (obj.{name} = obj.{name} + [v])",
        )
