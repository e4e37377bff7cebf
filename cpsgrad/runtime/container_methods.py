"""The dict and list methods that change a container the function owns, and `del x[key]`, as new
values (transforms/container_methods.py writes them; a change in place and a new value cannot be
told apart where nothing else sees the container): `with_default` (`setdefault`), `without_item`
(`del x[key]`, `pop(k)`), `without_key` (`pop(k, default)`); `update` is `merged`
(runtime/sequences.py). Their rules are in cpsgrad/rules/container_methods.py.
"""

from __future__ import annotations

from cpsgrad.errors import UnsupportedError
from cpsgrad.runtime.adjoints import DictAdjoint, SequenceAdjoint, entry, item_list


def _kind(target, what: str) -> type:
    kind = type(target)
    if kind is not dict and kind is not list:
        raise UnsupportedError(
            None,
            f"{what} of a {kind.__name__}",
            "cpsgrad differentiates these changes of a dict or list the function builds itself; build a new value",
        )
    return kind


def with_default(target: dict, key, value) -> dict:
    """The contents after `target.setdefault(key, value)`, as a new dict."""
    if _kind(target, "setdefault") is not dict:
        raise AttributeError("'list' object has no attribute 'setdefault'")
    new = dict(target)
    new.setdefault(key, value)
    return new


def with_default_adjoint(target: dict, key, adjoint):
    """The adjoint of `target` from that of `with_default(target, key, value)`."""
    if not isinstance(adjoint, DictAdjoint):
        return 0.0
    return adjoint if key in target else DictAdjoint({k: v for k, v in adjoint.items() if k != key})


def with_default_value_adjoint(target: dict, key, adjoint):
    """The adjoint of the default: the entry's, where the key was missing (and so inserted)."""
    return 0.0 if key in target else entry(adjoint, key)


def without_item(target, key):
    """The contents after `del target[key]` (a dict's key, a list's index or slice), as a new value;
    KeyError or IndexError as Python's."""
    new = _kind(target, "del x[key]")(target)
    del new[key]
    return new


def without_key(target: dict, key) -> dict:
    """The contents after `target.pop(key, default)`: without the key where it is there."""
    if _kind(target, "pop") is not dict:
        raise TypeError("pop expected at most 1 argument, got 2")
    new = dict(target)
    new.pop(key, None)
    return new


def without_item_adjoint(target, key, adjoint):
    """The adjoint of `target` from that of `without_item(target, key)`: nothing for what was deleted."""
    if type(target) is dict:
        if not isinstance(adjoint, DictAdjoint):
            return 0.0
        return DictAdjoint({k: v for k, v in adjoint.items() if k != key})
    if not isinstance(adjoint, SequenceAdjoint):
        return 0.0
    positions = range(len(target))[key]
    deleted = set(positions) if type(positions) is range else {positions}
    rest = iter(item_list(adjoint, len(target) - len(deleted)))
    return SequenceAdjoint(0.0 if position in deleted else next(rest) for position in range(len(target)))
