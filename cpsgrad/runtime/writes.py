"""In-place writes: `x[key] = v` as generated code runs it, and its backward.

Normalize turns `x[i, 1:3] = v` into `x = cpsgrad_runtime.written(x, (i, slice(1, 3, None)), v)`:
the same object, changed in place, so every name and view sharing it sees the change as in
Python (transforms/writes.py; transforms/analysis/aliasing.py refuses the programs where a name or view
read later would see it behind the gradient's back). The derivative program saves only what the
write overwrites (`overwritten`) and puts it back in the backward pass (`restore`), after
everything that ran later has had its backward: the backward of what ran before then reads the
values it saw. The adjoint of the written value is read from the target's (`written_adjoint`),
and the overwritten part's adjoint is dropped (`overwritten_adjoint`, in place where nothing
else holds the adjoint: a loop filling an n-element array costs O(n) in all).

Arrays take any numpy index (ints, slices, `...`, `None`, integer arrays, masks; where an integer
array repeats a position, the value written last is the one kept, and only it gets the adjoint);
lists an int or a slice of the same length as the value; dicts a key. A key that is a
`keyed_writes.KeyedWrite` (`np.add.at`, `np.put`, `np.putmask`, `np.place`, `np.fill_diagonal`)
does the work itself.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from cpsgrad.errors import UnsupportedError
from cpsgrad.runtime import keyed_writes, objects
from cpsgrad.runtime.adjoints import DictAdjoint, SequenceAdjoint, is_zero
from cpsgrad.runtime.broadcasting import shaped_like, unbroadcast
from cpsgrad.runtime.checks import _located
from cpsgrad.runtime.indexing import _is_basic, index_adjoint

_ndarray = np.ndarray
_getrefcount = sys.getrefcount
_MISSING = object()  # a dict key the write added: restoring removes it
_Keyed = keyed_writes.KeyedWrite
_CONTAINERS = (list, dict, set)
_books = threading.local()  # per thread: what the run written so far (`open_writes`)


def open_writes():
    """Start a run (`cpsgrad.api`): the values written from here on are put back in their final
    state when it ends (`close_writes`). Returns what to hand `close_writes`."""
    outer = (getattr(_books, "written", None), getattr(_books, "final", None), objects.open_objects())
    _books.written, _books.final = {}, None
    return outer


def keep_final_writes() -> None:
    """The forward pass has ended (the reset continuation): copy what every value written holds
    now, which the backward's restores will undo."""
    objects.keep_final_objects()  # and what objects' attributes hold (runtime/objects.py)
    written_now = getattr(_books, "written", None)
    if written_now:
        _books.final = [(target, _snapshot(target)) for target in written_now.values()]


def close_writes(outer) -> None:
    """End the run: every value written holds what the original left in it, as after Python's run."""
    for target, final in getattr(_books, "final", None) or ():
        _fill(target, final)
    objects.close_objects(outer[2])
    _books.written, _books.final = outer[:2]


def _note_written(target) -> None:
    """Remember `target` for the run's end (`keep_final_writes`, `close_writes`)."""
    written_now = getattr(_books, "written", None)
    if written_now is not None:
        written_now.setdefault(id(target), target)


def _snapshot(target):
    return (
        target.copy()
        if type(target) is _ndarray
        else next(b for b in _CONTAINERS if isinstance(target, b)).copy(target)
    )


def written(target, key, value):
    """`target[key] = value`, then `target` itself (the same object)."""
    if isinstance(key, _Keyed):
        key.write(target, value)
        return target
    if type(target) is list and type(key) is slice and len(range(len(target))[key]) != len(value):
        raise UnsupportedError(
            None,
            "slice assignment that changes a list's length",
            "cpsgrad differentiates a slice assignment into a list when the value has the slice's length; "
            "build the new list with + instead",
        )
    target[key] = value
    return target


def copied_into(target, value):
    """`np.copyto(target, value)` (numpy's 'same_kind' casting, as a ufunc's `out=` has), then
    `target`: what `np.copyto(x, v)` and `np.add(a, b, out=x)` do to `x`."""
    np.copyto(target, value, casting="same_kind")
    return target


def updated(target, value):
    """`x op= y` into a value the caller shares, as Python runs it: an array changed in place to
    `value` (`x op y`, cast as numpy's in-place operators cast: 'same_kind'); a list (`xs += ys`,
    `xs *= n`), a dict (`d |= m`) or a set given `value`'s contents in place, as their in-place
    operators do (a subclass of them too: transforms/augmented.py refused it where its operator is
    not the base's); `x` itself returned. A number (or any other value) is rebound to `value`, as
    Python rebinds it."""
    if type(target) is _ndarray:
        np.copyto(target, value, casting="same_kind")
        return target
    if isinstance(target, _CONTAINERS):  # a subclass too, as its C operator does (runtime/augmented.py)
        _fill(target, value)
        return target
    return value


def _fill(target, value) -> None:
    """Give `target` (an array, or a list, dict or set, a subclass too) `value`'s contents in place,
    by the base class's own methods (a subclass's overrides are not run, as its C operators run none)."""
    if type(target) is _ndarray:
        target[...] = value
    elif isinstance(target, list):
        list.__setitem__(target, slice(None), value)
    else:
        base = dict if isinstance(target, dict) else set
        base.clear(target)
        base.update(target, value)


def alias_after_update(alias, target, where: str = "", rewrite: str = ""):
    """`alias` again after `target op= value` (`target = updated(target, ...)`, transforms/analysis/aliasing.py),
    where `alias` shared `target`'s value before: Python changed an array in place, so the alias is
    the updated target itself (the same object: its gradient goes to the target after the update);
    a number or a tuple was rebound, so the alias keeps its old value. A list, dict or set is changed
    in place by `updated` too (the alias is the target); another value that Python changes in place
    (a subclass of list, a user class's `__iadd__`) that the update rebound is refused: the alias
    would miss the change."""
    if alias is target or isinstance(alias, (int, float, complex, tuple, str, np.generic)):
        return alias
    location, construct = _located(where)
    raise UnsupportedError(
        location,
        f"{construct} (a {type(alias).__name__})",
        f"augmented assignment changes the {type(alias).__name__} in place, and another name shares it and is "
        f"read after the change, which cpsgrad does not differentiate; write a new value: {rewrite}",
    )


def alias_after_write(alias, target, where: str = ""):
    """`alias` again after a write into `target` (transforms/analysis/aliasing.py), where an `x op= y` before it
    may have rebound `target` instead of changing it in place: the target itself where `alias` is it
    (Python's alias sees the write), a number kept; anything else (an array or list the alias may
    share memory with) is refused."""
    if alias is target or isinstance(alias, (int, float, complex, np.generic)):
        return alias
    location, construct = _located(where)
    raise UnsupportedError(
        location,
        f"{construct} (a write into a {type(target).__name__} another name may share)",
        "a name that shared this value before an augmented assignment rebound it is read after the write, "
        "which cpsgrad does not differentiate; copy the value (.copy()) before writing into it",
    )


def _same_view(view, base, key):
    """`base[key]` where `view` is exactly it: the same memory, shape and strides (a basic subscript of
    an array); None otherwise, as where they share no memory (a copy: a list's slice, a numpy scalar)."""
    if type(view) is not _ndarray or type(base) is not _ndarray or not np.may_share_memory(view, base):
        return None
    again = base[key]
    same = (
        type(again) is _ndarray
        and again.__array_interface__["data"][0] == view.__array_interface__["data"][0]
        and again.shape == view.shape
        and again.strides == view.strides
    )
    return again if same else None


def _shares(view, base) -> bool:
    return type(view) is _ndarray and type(base) is _ndarray and np.shares_memory(view, base)


def view_after_write(view, base, key, where: str = ""):
    """`r = x[key]` again after a write into x (transforms/analysis/identities.py): where r is that view of x,
    x[key] (a new view of the same memory, its gradient x's after the write); where r shares no
    memory with x (a numpy scalar, a list's slice: copies), r itself; anything between is refused."""
    again = _same_view(view, base, key)
    if again is not None:
        return again
    if not _shares(view, base):
        return view
    location, construct = _located(where)
    raise UnsupportedError(
        location, f"{construct} (a view read after the write)",
        "a name that is a part of the written array is read after the write, and it is no longer the part "
        "its subscript names; read the array itself, or copy the part (.copy()) before writing",
    )


def view_adjoint(adjoint, view, base, key, result, to_base: bool):
    """The adjoint `view_after_write(view, base, key)` and `checked_view` hand on: to `base` at `key`
    where the result is not `view` (taken from the base), else all to `view`."""
    if (result is not view) is not to_base:
        return 0.0
    return index_adjoint(base, key, adjoint) if to_base else adjoint


def checked_view(view, base, key, where: str = ""):
    """What `base[key] = ...` writes after a write into `view` (transforms/analysis/identities.py: Python's base
    sees a write into its view): `view` where it is exactly `base[key]`; `base[key]` itself (the write
    then changes nothing) where they share no memory (a copy, or `x op= y` rebound a number); anything
    between is refused."""
    if _same_view(view, base, key) is not None:
        return view
    if not _shares(view, base):
        return base[key]
    location, construct = _located(where)
    raise UnsupportedError(
        location, f"{construct} (a write into a view, its base read after it)",
        "the written value is not the part of the array its subscript names (a copy, or the subscript "
        "changed); write into the array itself (x[key] = ...), or copy the part (.copy()) first",
    )


def alias_adjoint(adjoint, alias, target, to_target: bool):
    """The adjoint `alias_after_update(alias, target)` hands on: all to the target where the update was
    in place (`alias is target`), else all to the old alias; nothing to the other."""
    if (alias is target) is to_target:
        return adjoint
    return 0.0


def overwritten_update(target):
    """What `updated(target, ...)` is about to overwrite: all of an array, a list, a dict or a
    set (a shallow copy); nothing of a number."""
    if type(target) is _ndarray:
        _note_written(target)
        return target.copy()
    if isinstance(target, _CONTAINERS):
        _note_written(target)
        return next(base for base in _CONTAINERS if isinstance(target, base)).copy(target)  # a plain copy
    return None


def restore_update(target, saved) -> None:
    if saved is not None:
        _fill(target, saved)


def update_adjoint(adjoint, target, value):
    """The adjoint of `value` in `updated(target, value)`: all of the target's (it was overwritten
    whole; the target's old value reaches `value` through `x op y`'s own backward)."""
    if is_zero(adjoint):
        return 0.0
    if type(target) is _ndarray:
        if target.dtype.kind not in "fc":
            return 0.0
        return unbroadcast(adjoint.copy() if type(adjoint) is _ndarray else adjoint, value)
    return adjoint


def overwritten(target, key):
    """A copy of what `target[key] = ...` is about to overwrite (only that part)."""
    _note_written(target)
    kind = type(target)
    if isinstance(key, _Keyed):
        return key.save(target)
    if kind is _ndarray:
        part = target[key]
        return part.copy() if type(part) is _ndarray else part  # a numpy scalar is a copy already
    if kind is list:
        return target[key]  # an element, or a new list for a slice
    if kind is dict:
        return target.get(key, _MISSING)
    raise UnsupportedError(
        None,
        f"assignment into an element of a {kind.__name__}",
        "cpsgrad differentiates writes into numpy arrays, lists and dicts; build a new value instead",
    )


def restore(target, key, saved) -> None:
    """Undo `target[key] = ...`: put back what `overwritten` saved."""
    if isinstance(key, _Keyed):
        key.restore(target, saved)
    elif type(target) is dict and saved is _MISSING:
        del target[key]
    else:
        target[key] = saved


def written_adjoint(adjoint, target, key, value):
    """The adjoint of the value written by `target[key] = value`, given the target's after it."""
    if is_zero(adjoint):
        return 0.0
    if isinstance(key, _Keyed):
        return key.value_adjoint(adjoint, target, value)
    kind = type(target)
    if kind is _ndarray:
        if target.dtype.kind not in "fc":  # written into ints or bools: truncated, no derivative
            return 0.0
        part = adjoint[key]
        if not _is_basic(key):  # an integer array may repeat a position: the last write wins
            part = part * _kept(target.shape, key)
        elif type(part) is _ndarray:  # a view: overwritten_adjoint zeroes it next, in place
            part = part.copy()
        return shaped_like(part, value)
    if kind is list and type(key) is slice:
        return SequenceAdjoint(adjoint[key]) if isinstance(adjoint, SequenceAdjoint) else 0.0
    if kind is dict:
        return adjoint.get(key, 0.0) if isinstance(adjoint, DictAdjoint) else 0.0
    return adjoint[key]


def overwritten_adjoint(adjoint, target, key):
    """The target's adjoint before `target[key] = value`: the one after, with the overwritten
    part's dropped. An array nothing else holds is changed in place (the caller's variable, this
    parameter and getrefcount's argument: a count of 3), any other is copied."""
    if is_zero(adjoint):
        return adjoint
    if isinstance(key, _Keyed):
        return key.target_adjoint(adjoint, target)
    kind = type(target)
    if kind is _ndarray:
        if type(adjoint) is not _ndarray:
            return adjoint  # an int target's adjoint: nothing flows through it
        if not (
            _getrefcount(adjoint) == 3
            and adjoint.base is None
            and adjoint.flags.writeable
            and adjoint.dtype is target.dtype
            and adjoint.shape == target.shape
        ):
            adjoint = np.array(adjoint, dtype=target.dtype)
        adjoint[key] = 0
        return adjoint
    if kind is list:
        positions = range(len(target))[key]
        dropped = set(positions) if type(positions) is range else {positions}
        return SequenceAdjoint(0.0 if position in dropped else part for position, part in enumerate(adjoint))
    if kind is dict:
        return DictAdjoint({k: v for k, v in adjoint.items() if k != key})
    return adjoint


def _kept(shape: tuple, key) -> np.ndarray:
    """Where an advanced-index write `x[key] = v` kept the value it wrote (a repeated position
    keeps the last one): 1.0 for each element of `x[key]` that survived, else 0.0."""
    probe = np.full(shape, -1, dtype=np.intp)
    count = int(np.prod(np.shape(probe[key])))
    order = np.arange(count, dtype=np.intp).reshape(np.shape(probe[key]))
    probe[key] = order
    return (probe[key] == order).astype(np.float64)


# -- writes into the arrays of parameters: the caller's consent ----------------------------------


def consent(site, found, made) -> None:
    """A callee that writes into its parameters' arrays (`made.written`), called at `site` with
    the binding `found` (runtime/dispatch.py): each such parameter must receive an argument of the
    call that the caller lets it write into (transforms/analysis/aliasing.py: the caller's own array, which
    nothing reads differentiably after the call); a captured value, a bound instance, a partial's
    argument or a default is never written into."""
    for position in made.written:
        name = made.parameters[position]
        argument = _argument_of(found, position, len(site.keywords))
        if argument is not None and argument < len(site.consumable) and site.consumable[argument]:
            continue
        what = "is read again after the call (or shares its array with a name that is), or is the caller's argument"
        if argument is None:
            what = "is not an argument of the call (a captured value, the instance, a partial's argument, a default)"
        raise UnsupportedError(
            site.location,
            f"call of {site.label}",
            f"{found.function.__qualname__} writes into the array of its parameter {name}, and what this call "
            f"passes for it {what}; cpsgrad cannot follow that write through the caller's gradient: pass a copy "
            f"(.copy()), or let the function return the new array",
        )


def _argument_of(found, position: int, keywords: int) -> int | None:
    """The call's argument (positional, then keywords) bound to parameter `position`, or None."""
    index = found.order[position] - found.captured
    if position < found.captured or index < found.prefix:
        return None
    index -= found.prefix
    return index if index < found.positional + keywords else None


def refusing_shared(program, written: tuple[int, ...], location, label: str):
    """`program`, refusing a call where an array it writes into is also another of its arguments
    (`h(a, a)`, a view of one passed beside it): that argument would see the write."""
    count = program.__code__.co_argcount - 1  # the parameters, then the continuation
    names = ", ".join(f"a{i}" for i in range(count))
    text = (
        f"def checked({names}, k):\n    check(({names}{',' if count == 1 else ''}))\n    return program({names}, k)\n"
    )

    def check(arguments: tuple) -> None:
        shared = _shared_pair(arguments, written)
        if shared is not None:
            raise UnsupportedError(
                location,
                f"call of {label}",
                f"the array of parameter {shared[0] + 1} is written into and is also passed as argument "
                f"{shared[1] + 1} "
                "(or shares memory with it), which would see the write; pass a copy (.copy())",
            )

    namespace = {"check": check, "program": program}
    exec(compile(text, "<cpsgrad checked write>", "exec"), namespace)  # a fixed-arity call: no C frame
    return namespace["checked"]


def check_unshared(arguments: tuple, written: tuple[int, ...], function) -> None:
    """At the top level: an argument written into must not be another argument, or share memory with one."""
    shared = _shared_pair(arguments, written)
    if shared is not None:
        raise UnsupportedError(
            None,
            f"call of {function.__qualname__}",
            f"it writes into the array of its parameter {shared[0] + 1}, which is also passed as argument "
            f"{shared[1] + 1} (or shares memory with it); pass a copy (.copy())",
        )


def _shared_pair(arguments: tuple, written: tuple[int, ...]):
    for position in written:
        value = arguments[position]
        for other, candidate in enumerate(arguments):
            if other == position:
                continue
            if candidate is value or (
                type(value) is _ndarray and type(candidate) is _ndarray and np.may_share_memory(value, candidate)
            ):
                return position, other
    return None
