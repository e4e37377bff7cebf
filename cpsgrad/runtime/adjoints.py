"""The adjoints of containers and the symbolic zero.

A tuple's or list's adjoint is a `SequenceAdjoint` (one adjoint per element), a dict's or a
record's a `DictAdjoint` (one per key or field); `0.0` is the symbolic zero of anything
(`is_zero`). The helpers here build such adjoints from an element's (`one_hot`, `entry`, ...).
"""

from __future__ import annotations

from collections.abc import Sequence

from cpsgrad.errors import UnsupportedError

SEQUENCE_ADVICE = (
    "cpsgrad differentiates + and * on tuples and lists where an operand is one the function builds (a display, "
    "list(...), tuple(...)), and decides when it runs what the operator did; write list(xs) + ys, or the display "
    "[*xs, *ys]"
)


class SequenceAdjoint(tuple):
    """The adjoint of a tuple or list: one adjoint per element; `0.0` stands for all zeros.

    `+` adds elementwise (tuple `+` would concatenate), and `0.0 + adjoint` is the adjoint.
    """

    __slots__ = ()

    def __add__(self, other):
        if isinstance(other, SequenceAdjoint):
            return SequenceAdjoint(a + b for a, b in zip(self, other, strict=True))
        if isinstance(other, (int, float)) and other == 0:
            return self
        return NotImplemented

    __radd__ = __add__

    def __mul__(self, other):
        raise UnsupportedError(None, "repetition of a differentiable tuple or list", SEQUENCE_ADVICE)

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return f"SequenceAdjoint({tuple(self)!r})"


class DictAdjoint(dict):
    """The adjoint of a dict (or of a dataclass's fields): one adjoint per key read; a key that
    is absent stands for zeros, and `0.0` stands for all zeros.

    `+` merges, adding the adjoints of the keys both sides hold, and `0.0 + adjoint` is the
    adjoint. Generated code never changes one in place (`+` builds a new one).
    """

    __slots__ = ()

    def __add__(self, other):
        if isinstance(other, DictAdjoint):
            if not other:
                return self
            if not self:
                return other
            merged = DictAdjoint(self)
            for key, value in other.items():
                merged[key] = merged[key] + value if key in merged else value
            return merged
        if isinstance(other, (int, float)) and other == 0:
            return self
        return NotImplemented

    __radd__ = __add__

    def __repr__(self) -> str:
        return f"DictAdjoint({dict(self)!r})"


def entry(adjoint, key):
    """The adjoint of the value stored under `key` in a dict whose adjoint is `adjoint`."""
    if isinstance(adjoint, DictAdjoint):
        return adjoint.get(key, 0.0)
    return 0.0


def display_entry(adjoint, keys: tuple, position: int):
    """`entry` for element `position` of a dict display `{k0: v0, k1: v1, ...}` whose keys are
    known only at run time: a key repeated later in the display was overwritten (zero adjoint)."""
    key = keys[position]
    if any(later == key for later in keys[position + 1:]):
        return 0.0
    return entry(adjoint, key)


def item(adjoint, position: int):
    """The adjoint of element `position` of a container whose adjoint is `adjoint`."""
    if isinstance(adjoint, SequenceAdjoint):
        return adjoint[position]
    return 0.0


def one_hot(container: Sequence, index, adjoint) -> SequenceAdjoint | float:
    """The adjoint of `container` when only `container[index]` was read (an index or a slice)."""
    length = len(container)
    positions = range(length)[index]
    parts = [0.0] * length
    if isinstance(positions, range):
        for source, value in zip(positions, item_list(adjoint, len(positions)), strict=True):
            parts[source] = parts[source] + value
    else:
        parts[positions] = adjoint
    return SequenceAdjoint(parts)


def item_list(adjoint, length: int) -> list:
    if isinstance(adjoint, SequenceAdjoint):
        return list(adjoint)
    return [0.0] * length


def reverse(adjoint):
    """The adjoint of `xs` from that of `reversed(xs)` (element order turned back)."""
    return SequenceAdjoint(adjoint[::-1]) if isinstance(adjoint, SequenceAdjoint) else adjoint


def unpacked(adjoints: Sequence) -> SequenceAdjoint:
    """The adjoint of a container unpacked into names whose adjoints are `adjoints`."""
    return SequenceAdjoint(adjoints)


def repeated(length: int, adjoint) -> SequenceAdjoint:
    """The adjoint of a container each of whose `length` elements was added once (`sum`)."""
    return SequenceAdjoint([adjoint] * length)


def is_zero(adjoint) -> bool:
    """Whether `adjoint` is the symbolic zero (a Python `0.0` standing for any shape)."""
    return type(adjoint) is float and adjoint == 0.0
