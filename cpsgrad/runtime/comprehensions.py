"""The helpers of comprehensions and the builtin higher-order functions (sorted, max and min
with a key, zip, enumerate), which transforms/comprehensions.py turns into loops.
"""

from __future__ import annotations

from cpsgrad.errors import UnsupportedError
from cpsgrad.runtime.adjoints import DictAdjoint, SequenceAdjoint, item
from cpsgrad.runtime.containers import split_ties


def inserted(container: dict, key, value) -> dict:
    """`container` with `key` set to `value`, as a new dict (cpsgrad's form of the insert a dict
    comprehension makes into the dict it builds)."""
    return {**container, key: value}


def inserted_adjoint(key, adjoint):
    """The adjoint of `d` from that of `inserted(d, key, value)`: all but `key`'s (overwritten)."""
    if isinstance(adjoint, DictAdjoint) and key in adjoint:
        return DictAdjoint((k, v) for k, v in adjoint.items() if k != key)
    return adjoint


def _require_sized(items, function: str) -> None:
    if not hasattr(items, "__len__"):
        raise UnsupportedError(
            None, f"{function}() of an iterator of differentiable values",
            f"make it a list first: {function}(list(...))",
        )


def sorted_adjoint(items, key, reverse: bool, adjoint):
    """The adjoint of `items` from that of `sorted(items, key=key, reverse=reverse)`: each
    element's adjoint goes back through the permutation (the same stable sort, of positions)."""
    if not isinstance(adjoint, SequenceAdjoint):
        return 0.0
    _require_sized(items, "sorted")
    order = sorted(range(len(items)), key=_keyed(items, key), reverse=reverse)
    parts = [0.0] * len(items)
    for position, source in enumerate(order):
        parts[source] = adjoint[position]
    return SequenceAdjoint(parts)


def chosen_adjoint(items, key, extremum, chosen, adjoint):
    """The adjoint of `items` from that of `max(items, key=key)` (`extremum` is max or min):
    all of it to the element returned, the first of the best as Python chooses; without a key,
    split among ties as `max(items)` does."""
    if key is None:
        return split_ties(items, chosen, adjoint)
    _require_sized(items, extremum.__name__)
    position = extremum(range(len(items)), key=_keyed(items, key))
    parts = [0.0] * len(items)
    parts[position] = adjoint
    return SequenceAdjoint(parts)


def _keyed(items, key):
    if key is None:
        return items.__getitem__
    return lambda position: key(items[position])


def zipped_adjoint(items, position: int, adjoint):
    """The adjoint of argument `position` of `zip(...)` from that of the pairs it yielded."""
    if not isinstance(adjoint, SequenceAdjoint):
        return 0.0
    _require_sized(items, "zip")
    parts = [item(pair, position) for pair in adjoint]
    return SequenceAdjoint(parts + [0.0] * (len(items) - len(parts)))


def enumerated_adjoint(adjoint):
    """The adjoint of `items` from that of `enumerate(items)`: each pair's second part."""
    if not isinstance(adjoint, SequenceAdjoint):
        return 0.0
    return SequenceAdjoint(item(pair, 1) for pair in adjoint)
