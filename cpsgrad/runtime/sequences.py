"""`+` and `*` on tuples and lists holding differentiable values, and the containers' methods
that normalize writes as new values (transforms/containers.py).

The adjoint pass sends a `+` or `*` one of whose operands surely holds a tuple or list
(`Generator.containers`) to the rules of `concatenation` and `repetition` (cpsgrad/rules/
containers.py); the forward is the user's own operation. Python decides at run time what the
operator did, and so do the backward helpers: a concatenation (`list + list`, `tuple + tuple`)
hands each operand its part of the adjoint, a repetition (`xs * n`, `n * xs`) sums the copies'
adjoints into `xs`'s, and anything else (numpy read the sequence as an array: `array + [a, b]`)
is the ordinary operator's backward.
"""

from __future__ import annotations

import numpy as np

from cpsgrad.errors import UnsupportedError
from cpsgrad.runtime.adjoints import DictAdjoint, SequenceAdjoint, is_zero
from cpsgrad.runtime.broadcasting import reduced_product, unbroadcast

_ndarray = np.ndarray
_ADDS = (list.__add__, tuple.__add__)
_MULS = (list.__mul__, tuple.__mul__)


def concatenation(x, y):
    """`x + y` (the primitive the rules of a `+` on a sequence are filed under)."""
    return x + y


def repetition(x, y):
    """`x * y` (the primitive the rules of a `*` on a sequence are filed under)."""
    return x * y


def _concatenated(x, y) -> bool:
    """Whether Python's `x + y` concatenated two lists or two tuples."""
    method = getattr(type(x), "__add__", None)
    if method is list.__add__:
        return isinstance(y, list) and getattr(type(y), "__radd__", None) is None
    if method is tuple.__add__:
        return isinstance(y, tuple) and getattr(type(y), "__radd__", None) is None
    return False


def _parts(adjoint, length: int):
    """The adjoint of a sequence of `length` elements as a list of element adjoints."""
    if isinstance(adjoint, SequenceAdjoint):
        return list(adjoint)
    if type(adjoint) is _ndarray and adjoint.ndim >= 1 and adjoint.shape[0] == length:  # numpy read it
        return list(adjoint)
    raise TypeError(f"cpsgrad: the adjoint of a concatenated sequence is a {type(adjoint).__name__}")


def summand_adjoint(adjoint, x, y, right: bool):
    """The adjoint of `x` (`right=False`) or `y` from that of `x + y`."""
    like = y if right else x
    if is_zero(adjoint) or not _concatenated(x, y):
        return unbroadcast(adjoint, like)
    parts = _parts(adjoint, len(x) + len(y))
    part = parts[len(x) :] if right else parts[: len(x)]
    return SequenceAdjoint(unbroadcast(p, element) for p, element in zip(part, like, strict=True))


def _count(value) -> int | None:
    """The repeat count `value` stands for in a sequence repetition, or None."""
    if isinstance(value, (bool, int, np.integer)):
        return int(value)
    return None


def _repeated(sequence, count, sequence_left: bool) -> bool:
    """Whether Python's `sequence * count` (or `count * sequence`) repeated the sequence."""
    if getattr(type(sequence), "__mul__", None) not in _MULS or _count(count) is None:
        return False
    if sequence_left:
        return True
    return type(count) is int or type(count) is bool  # a numpy integer's __mul__ reads the list as an array


def factor_adjoint(adjoint, like, other, right: bool):
    """The adjoint of `like`, the left (`right=False`) or right operand of a `*` whose other
    operand is `other`, from that of the product."""
    if _repeated(like, other, not right):
        count = max(_count(other), 0)
        length = len(like)
        if is_zero(adjoint):
            return adjoint
        parts = _parts(adjoint, length * count)
        sums = [0.0] * length
        for copy in range(count):
            for position in range(length):
                sums[position] = sums[position] + parts[copy * length + position]
        return SequenceAdjoint(unbroadcast(p, element) for p, element in zip(sums, like, strict=True))
    if _repeated(other, like, right):  # `like` is the repeat count: no derivative
        return 0.0
    return reduced_product(adjoint, other, like)


def merged(left, right) -> dict:
    """`{**left, **right}`: a new dict (TypeError as Python's for a value that is not a mapping)."""
    return {**left, **right}


def merged_adjoint(adjoint, left, right, is_right: bool):
    """The adjoint of `left` (`is_right=False`) or `right` from that of `merged(left, right)`:
    the entries each contributed (a key of both is `right`'s)."""
    if not isinstance(adjoint, DictAdjoint):
        return 0.0
    if is_right:
        return DictAdjoint({key: adjoint[key] for key in right.keys() if key in adjoint})
    return DictAdjoint({key: adjoint[key] for key in left.keys() if key in adjoint and key not in right})


def dict_of_adjoint(source, adjoint):
    """The adjoint of `source` from that of `dict(source)`: a mapping's entries, or a list or
    tuple of pairs' values (a key given twice: only its last pair's); an iterator is refused."""
    if not isinstance(adjoint, DictAdjoint):
        return 0.0
    if hasattr(source, "keys"):
        return DictAdjoint({key: adjoint[key] for key in source.keys() if key in adjoint})
    if isinstance(source, (list, tuple)):
        last = {pair[0]: position for position, pair in enumerate(source)}
        return SequenceAdjoint(
            SequenceAdjoint((0.0, adjoint.get(pair[0], 0.0))) if last[pair[0]] == position else 0.0
            for position, pair in enumerate(source)
        )
    raise UnsupportedError(
        None,
        f"dict(...) of a {type(source).__name__} holding differentiable values",
        "cpsgrad differentiates dict(mapping) and dict of a list or tuple of pairs; build it with a comprehension "
        "{k: v for k, v in pairs}",
    )


# ---- list methods on a list the function owns, as new lists (transforms/containers.py) ---------


def _insert_position(items: list, index) -> int:
    """Where `items.insert(index, v)` puts `v` (Python clamps the index to the list)."""
    position = index.__index__()
    length = len(items)
    if position < 0:
        position = max(length + position, 0)
    return min(position, length)


def inserted_at(items: list, index, value) -> list:
    """`items.insert(index, value)` as a new list."""
    position = _insert_position(items, index)
    return [*items[:position], value, *items[position:]]


def inserted_at_adjoint(items: list, index, adjoint):
    """The adjoint of `items` from that of `inserted_at(items, index, value)`."""
    if not isinstance(adjoint, SequenceAdjoint):
        return 0.0
    position = _insert_position(items, index)
    return SequenceAdjoint([*adjoint[:position], *adjoint[position + 1 :]])


def inserted_value_adjoint(items: list, index, adjoint):
    """The adjoint of `value` from that of `inserted_at(items, index, value)`."""
    if not isinstance(adjoint, SequenceAdjoint):
        return 0.0
    return adjoint[_insert_position(items, index)]


def _value_position(items: list, value) -> int:
    for position, element in enumerate(items):
        if element is value or element == value:  # list.remove's test
            return position
    raise ValueError("list.remove(x): x not in list")


def removed_value(items: list, value) -> list:
    """`items.remove(value)` as a new list (ValueError as Python's when no element equals it)."""
    position = _value_position(items, value)
    return [*items[:position], *items[position + 1 :]]


def removed_value_adjoint(items: list, value, adjoint):
    """The adjoint of `items` from that of `removed_value(items, value)`: zero where it was."""
    if not isinstance(adjoint, SequenceAdjoint):
        return 0.0
    position = _value_position(items, value)
    return SequenceAdjoint([*adjoint[:position], 0.0, *adjoint[position:]])


def reversed_list(items: list) -> list:
    """`items.reverse()` as a new list."""
    return items[::-1]
