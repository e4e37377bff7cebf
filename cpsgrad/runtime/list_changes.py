"""`xs.append(v)` and `xs.pop(i)` on a list the function owns, in place, at Python's cost.

Normalize writes them `xs = cpsgrad_runtime.appended(xs, v)` and `t = xs[i]; xs =
cpsgrad_runtime.removed(xs, i)` (transforms/containers.py; transforms/analysis/lists.py decides which
lists qualify). The adjoint pass gives each such statement a `ListChange` record
(transforms/adjoint/list_changes.py), whose forward changes the list itself, as Python does, and
whose backward undoes the change after every later statement's backward has run (so the backward
of what ran before sees the list as it was then), exactly as an in-place write is saved and
restored (runtime/writes.py):

    xs_1 = cpsgrad_runtime.append_in_place(xs, t1)          # xs.append(t1); xs_1 is xs
    ...  k(...) ...
    cpsgrad_runtime.unappend(xs_1)                          # xs_1.pop(): the list before the append
    t1_d = cpsgrad_runtime.last_adjoint(xs_1_d)             # the element's adjoint
    xs_d = cpsgrad_runtime.popped_adjoint(xs_1_d)           # the rest: popped in place, O(1)

A list's adjoint is then a `ListAdjoint`: a Python list, one adjoint an element, which the
backward of each append pops (and of each pop re-inserts a zero into) in place where nothing else
holds it (CPython's reference count says so, as `accumulate` decides), so n appends cost O(n) in
all. A `ListAdjoint` is only ever the adjoint of a list these records change; the adjoint pass
hands any other consumer a `SequenceAdjoint` of it (`settled`), so nothing else sees one.
"""

from __future__ import annotations

import sys

from cpsgrad.errors import UnsupportedError
from cpsgrad.runtime.adjoints import SequenceAdjoint
from cpsgrad.runtime.writes import _note_written

_getrefcount = sys.getrefcount


class ListAdjoint(list):
    """The adjoint of a list changed in place by appends and pops: one adjoint an element, changed
    in place only by this module's helpers (where nothing else holds it). `+` adds elementwise
    into a new one; `0.0` is its zero, as for every adjoint."""

    __slots__ = ()

    def __add__(self, other):
        if isinstance(other, (SequenceAdjoint, ListAdjoint)):
            return ListAdjoint([_add(a, b) for a, b in zip(self, other, strict=True)])
        if isinstance(other, (int, float)) and other == 0:
            return self
        return NotImplemented

    __radd__ = __add__
    __iadd__ = __add__  # never list.extend

    def __mul__(self, other):
        raise UnsupportedError(None, "repetition of a differentiable list's adjoint", "this is a cpsgrad bug")

    __rmul__ = __imul__ = __mul__

    def __repr__(self) -> str:
        return f"ListAdjoint({list(self)!r})"


def _add(a, b):
    if type(b) is float and b == 0.0:
        return a
    if type(a) is float and a == 0.0:
        return b
    return a + b


def settled(adjoint):
    """The adjoint as every other helper takes it: a `ListAdjoint` becomes a `SequenceAdjoint`."""
    return SequenceAdjoint(adjoint) if type(adjoint) is ListAdjoint else adjoint


def _own(adjoint, exclusive: bool) -> ListAdjoint:
    """`adjoint` itself where it is a ListAdjoint nothing else holds, else a new ListAdjoint of it."""
    if exclusive and type(adjoint) is ListAdjoint:
        return adjoint
    return ListAdjoint(adjoint)


# -- append --------------------------------------------------------------------------------------


def append_in_place(items: list, value) -> list:
    """`items.append(value)`, then `items` itself (remembered for the run's end: runtime/writes.py)."""
    _note_written(items)
    items.append(value)
    return items


def unappend(items: list) -> None:
    """Undo `append_in_place`: the list as it was before the append."""
    items.pop()


def last_adjoint(adjoint):
    """The adjoint of the element the append added: the list's adjoint's last."""
    if isinstance(adjoint, (SequenceAdjoint, ListAdjoint)):
        return adjoint[-1]
    return 0.0


def popped_adjoint(adjoint):
    """The list's adjoint before the append: the one after without its last element, popped in
    place where nothing else holds it (the caller's variable, this parameter and getrefcount's
    argument: a count of 3), else a new ListAdjoint."""
    exclusive = _getrefcount(adjoint) == 3
    if not isinstance(adjoint, (SequenceAdjoint, ListAdjoint)):
        return 0.0
    if exclusive and type(adjoint) is ListAdjoint:
        adjoint.pop()
        return adjoint
    return ListAdjoint(adjoint[:-1])


# -- extend --------------------------------------------------------------------------------------


def extended(items: list, added: list) -> list:
    """`items.extend(added)` as a new list (normalize's form; the derivative program extends in place)."""
    return [*items, *added]


def extending(items: list) -> int:
    """The length of `items` before `extend_in_place` (what its backward truncates back to)."""
    _note_written(items)
    return len(items)


def extend_in_place(items: list, added: list) -> list:
    """`items.extend(added)`, then `items` itself."""
    items.extend(added)
    return items


def unextend(items: list, length: int) -> None:
    """Undo `extend_in_place`: the list as long as it was."""
    del items[length:]


def tail_adjoint(adjoint, length: int):
    """The adjoint of the list `extend` added: the list adjoint's elements from `length` on."""
    if isinstance(adjoint, (SequenceAdjoint, ListAdjoint)):
        return SequenceAdjoint(adjoint[length:])
    return 0.0


def truncated_adjoint(adjoint, length: int):
    """The list's adjoint before the extend: its first `length` elements, cut in place where
    nothing else holds it (as `popped_adjoint`)."""
    exclusive = _getrefcount(adjoint) == 3
    if not isinstance(adjoint, (SequenceAdjoint, ListAdjoint)):
        return 0.0
    if exclusive and type(adjoint) is ListAdjoint:
        del adjoint[length:]
        return adjoint
    return ListAdjoint(adjoint[:length])


# -- pop -------------------------------------------------------------------------------------------


def popping(items: list, index) -> tuple:
    """What `items.pop(index)` is about to remove: (its position, the element)."""
    position = range(len(items))[index]  # an IndexError as pop's (the element was read first)
    return position, items[position]


def remove_in_place(items: list, popped: tuple) -> list:
    """`items.pop(index)` (at the position `popping` found), then `items` itself."""
    _note_written(items)
    del items[popped[0]]
    return items


def unremove(items: list, popped: tuple) -> None:
    """Undo `remove_in_place`: the element back at its position."""
    items.insert(popped[0], popped[1])


def reinserted_adjoint(adjoint, popped: tuple):
    """The list's adjoint before the pop: the one after with a zero where the element was (the
    element's own adjoint reaches the list through the read `t = xs[i]` that came before the pop)."""
    exclusive = _getrefcount(adjoint) == 3
    if not isinstance(adjoint, (SequenceAdjoint, ListAdjoint)):
        return 0.0
    adjoint = _own(adjoint, exclusive)
    adjoint.insert(popped[0], 0.0)
    return adjoint


# -- reads of an element -------------------------------------------------------------------------


def accumulate_item(total: ListAdjoint, exclusive: bool, container, index, contribution):
    """`accumulate_index` of a ListAdjoint (runtime/accumulation.py): an int index adds into the
    element in place (O(1)) where nothing else holds `total`; anything else adds a new one."""
    if exclusive and type(index) is int and type(container) is list and len(container) == len(total):
        position = range(len(total))[index]
        total[position] = _add(total[position], contribution)
        return total
    return None
