"""Tuples, lists, dicts, NamedTuples and dataclass instances holding differentiable values:
the adjoints of their methods (`values`, `items`, `get`), of attribute reads and construction of
records, of `append`/`pop` on a list the function builds, and of the builtins over sequences
(`sum`, `max`, `math.prod`, `math.dist`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from cpsgrad.errors import UnsupportedError
from cpsgrad.runtime import objects
from cpsgrad.runtime.adjoints import DictAdjoint, SequenceAdjoint, item
from cpsgrad.runtime.elementwise import divide
from cpsgrad.runtime.starred import rows_adjoint


def values_adjoint(container, adjoint):
    """The adjoint of a dict from that of `tuple(container.values())` (`for v in d.values()`)."""
    _require_dict(container, "values")
    if isinstance(adjoint, SequenceAdjoint):
        return DictAdjoint(zip(container, adjoint, strict=True))
    return 0.0


def items_adjoint(container, adjoint):
    """The adjoint of a dict from that of `tuple(container.items())`: each pair's second part."""
    _require_dict(container, "items")
    if isinstance(adjoint, SequenceAdjoint):
        return DictAdjoint((key, item(pair, 1)) for key, pair in zip(container, adjoint, strict=True))
    return 0.0


def get_adjoint(container, key, adjoint):
    """The adjoint of a dict from that of `container.get(key, default)` (a missing key: zero)."""
    _require_dict(container, "get")
    return DictAdjoint({key: adjoint}) if key in container else 0.0


def get_default_adjoint(container, key, adjoint):
    """The adjoint of the default of `container.get(key, default)`: the result's when key is missing."""
    return 0.0 if key in container else adjoint


def _require_dict(container, method: str) -> None:
    if not isinstance(container, dict):
        raise UnsupportedError(
            None, f"method call .{method}() of a {type(container).__name__}",
            f"cpsgrad differentiates .{method}() of dicts only; call it on a dict",
        )


def attribute_adjoint(value, name: str, adjoint):
    """The adjoint of a NamedTuple or a dataclass instance when only its field `name` was read:
    a `SequenceAdjoint` for a NamedTuple (its fields in order), a `DictAdjoint` of field names
    for a dataclass."""
    fields = getattr(type(value), "_fields", None)
    if isinstance(value, tuple) and fields is not None:
        parts = [0.0] * len(value)
        parts[fields.index(name)] = adjoint
        return SequenceAdjoint(parts)
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and name in _field_names(type(value)):
        return DictAdjoint({name: adjoint})
    if isinstance(value, dict) and name in value and getattr(value, name, None) is value[name]:
        return DictAdjoint({name: adjoint})  # a dict whose keys read as attributes: scipy's OdeResult
    if objects.is_plain_object(value):  # its attributes' adjoints are kept with it (runtime/objects.py)
        return objects.attribute_adjoint(value, name, adjoint)
    raise UnsupportedError(
        None, f"attribute .{name} of a differentiable {type(value).__name__}",
        "cpsgrad differentiates attribute reads of NamedTuples, dataclass instances (their fields) "
        "and numpy arrays only; pass the value itself, or a tuple or dict of values",
    )


def _field_names(kind: type) -> frozenset:
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = frozenset(f.name for f in dataclasses.fields(kind))
    return names


_FIELD_NAMES: dict[type, frozenset] = {}


def construct(kind: type, positional: tuple, keywords: tuple, names: tuple):
    """`kind(*positional, **dict(zip(names, keywords)))`: a NamedTuple or dataclass built
    from differentiable values (the call's form in derivative programs)."""
    return kind(*positional, **dict(zip(names, keywords, strict=True)))


def constructed_positional(kind: type, count: int, adjoint) -> SequenceAdjoint | float:
    """The adjoints of the first `count` positional arguments of `kind(...)` from the instance's."""
    if not isinstance(adjoint, (SequenceAdjoint, DictAdjoint)):
        return 0.0
    fields = kind._fields if hasattr(kind, "_fields") else [f.name for f in dataclasses.fields(kind) if f.init]
    return SequenceAdjoint([_field_adjoint(kind, adjoint, fields[i]) for i in range(count)])


def constructed_keywords(kind: type, names: tuple, adjoint) -> SequenceAdjoint | float:
    """The adjoints of the keyword arguments `names` of `kind(...)` from the instance's."""
    if not isinstance(adjoint, (SequenceAdjoint, DictAdjoint)):
        return 0.0
    return SequenceAdjoint([_field_adjoint(kind, adjoint, name) for name in names])


def _field_adjoint(kind: type, adjoint, name: str):
    if isinstance(adjoint, SequenceAdjoint):  # a NamedTuple's: its fields in order
        return adjoint[kind._fields.index(name)]
    return adjoint.get(name, 0.0)


def appended(items: list, value) -> list:
    """`items.append(value)` as a new list (normalize's form of an append to a list that nothing
    else refers to: see transforms/analysis/lists.py); the derivative program appends in place instead
    (runtime/list_changes.py)."""
    return [*items, value]


def appended_adjoint(items: list, adjoint):
    """The adjoint of `items` from that of `appended(items, value)`: all but the last element's."""
    if isinstance(adjoint, SequenceAdjoint):
        return SequenceAdjoint(adjoint[: len(items)])
    return 0.0


def removed(items: list, index) -> list:
    """`items` without `items[index]` (cpsgrad's form of `items.pop(index)`; the element itself
    is read first as `items[index]`, which raises IndexError as pop would)."""
    position = range(len(items))[index]
    return [*items[:position], *items[position + 1:]]


def removed_adjoint(items: list, index, adjoint):
    """The adjoint of `items` from that of `removed(items, index)`: a zero where the element was."""
    if not isinstance(adjoint, SequenceAdjoint):
        return 0.0
    position = range(len(items))[index]
    return SequenceAdjoint([*adjoint[:position], 0.0, *adjoint[position:]])


def split_ties(values: Sequence, chosen, adjoint) -> SequenceAdjoint:
    """`max`/`min` backward: the adjoint split equally among the elements equal to the result."""
    ties = [value == chosen for value in values]
    if not any(ties):  # the result is NaN: so is every element's share
        return SequenceAdjoint([math.nan] * len(ties))
    share = adjoint / sum(ties)
    return SequenceAdjoint([share if tie else 0.0 for tie in ties])


def product_adjoint(values: Sequence, adjoint) -> SequenceAdjoint:
    """`math.prod` backward: each element's adjoint is the product of the others (zeros allowed)."""
    parts = []
    for position in range(len(values)):
        others = 1.0
        for other, value in enumerate(values):
            if other != position:
                others = others * value
        parts.append(adjoint * others)
    return SequenceAdjoint(parts)


def distance_adjoint(point: Sequence, other: Sequence, distance, adjoint) -> SequenceAdjoint:
    """`math.dist` backward for one point: (point - other) / distance, scaled."""
    return SequenceAdjoint(divide(adjoint * (a - b), distance) for a, b in zip(point, other, strict=True))


def zip_length(strict: bool, *lengths: int) -> int:
    """How many items `zip(..., strict=strict)` yields over sequences of these lengths."""
    if strict and len(set(lengths)) > 1:
        raise ValueError(f"zip() arguments have different lengths {lengths}")
    return min(lengths)


def sequence_adjoint(iterable, adjoint):
    """The adjoint of `iterable` from that of `list(iterable)` (or `tuple`, or a loop's snapshot):
    the same, but for a dict, whose items there are its keys (no gradient), and for an array,
    whose items are its rows (their adjoints stacked back into one array)."""
    if isinstance(iterable, np.ndarray):
        return rows_adjoint(iterable, adjoint)
    return 0.0 if isinstance(iterable, dict) else adjoint


def as_sequence(iterable) -> Sequence:
    """Something indexable with the same items: ranges, lists and tuples as they are."""
    if isinstance(iterable, (list, tuple, range, np.ndarray)):
        return iterable
    return tuple(iterable)
