"""Adjoints lent to callees: `lend`, `claim`, `borrow`, `merge` (the state is in `books`).

A caller about to hand a callee its continuation lends the adjoint it has accumulated for an
argument (`lend`, in the call's adapter continuation); the callee's program, at its first
contribution to the adjoint of the parameter that received that argument (never reassigned),
borrows it (`borrow`) and adds into it in place; the buffer comes back as the callee's adjoint
of the parameter, and the call site takes it back (`merge`: the same object, nothing to add).
A recursion then keeps one buffer per parameter, as a hand-written backward does, instead of
one per call level added up level by level.

The rule that keeps this sound: a lent buffer already holds the caller's total for the
argument, so it must come back to the caller in exactly one place, the result slot of the
parameter that borrowed it, which the call site merges. Hence:
- an offer is addressed to one program invocation, the callee whose continuation made it: the
  dispatcher runs every program that can receive arrays through an entry (`loan_entry`) whose
  continuation, when it returns (the callee's backward starts), moves the offers for the
  callee's own parameters into a frame of its own and voids every other offer (`claim`). A
  program called deeper, which may receive the same array by another route (an element of a
  list, a tail call), never sees them;
- an argument is lent only when it occurs once among the call's arguments, and claimed only
  when it occurs once among the callee's parameters: the same array in two parameters would
  let either take it, and the call site could merge the other;
- `borrow` reads only the frame of the program running its backward (frames nest as the
  backward passes of calls do: a callee's backward runs inside its caller's).
Loans are per thread and per run (`books.open_loans`/`close_loans`), counted (a borrower may
lend the buffer on, to its own callee).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

from cpsgrad.runtime.accumulation import _accumulate, _owns
from cpsgrad.runtime.books import _lent, _loans

_ndarray = np.ndarray
_getrefcount = sys.getrefcount


def _once(value, values: tuple) -> bool:
    count = 0
    for other in values:
        if other is value:
            count += 1
    return count == 1


def lend(adjoint, argument, arguments: tuple):
    """`adjoint`, offered to the callee that receives `argument` (see above); lent only when
    nothing else can see it (or it is itself a loan this program borrowed), and when `argument`
    occurs once among the call's arguments (`arguments`: every one, in every position).

    A buffer already on loan (this program borrowed it) is counted at every call site it passes,
    offered on or not: the site's `merge` ends one count, so the loan stays open until the site
    that lent it first takes it back (counting only the sites that offer it let a site whose
    argument occurs twice end its caller's loan: the caller then added the buffer to itself)."""
    if type(adjoint) is _ndarray:
        offered, lent, _ = _loans()
        record = lent.get(id(adjoint))
        if record is not None and record[0] is adjoint:
            record[1] += 1
            if (
                type(argument) is _ndarray
                and adjoint.shape == argument.shape
                and (len(arguments) == 1 or _once(argument, arguments))
            ):
                offered[id(argument)] = (argument, adjoint)
            return adjoint
        if type(argument) is not _ndarray or adjoint.shape != argument.shape:
            return adjoint
        if len(arguments) > 1 and not _once(argument, arguments):
            return adjoint
        if _getrefcount(adjoint) == 3 and _owns(adjoint, adjoint):
            lent[id(adjoint)] = [adjoint, 1]
        else:
            return adjoint
        offered[id(argument)] = (argument, adjoint)
    return adjoint


def claim(parameters: tuple) -> None:
    """At the start of a callee's backward: its frame of the offers made for its parameters (each
    occurring once among them); every other offer is void."""
    offered, _, frames = _loans()
    frame = {}
    if offered:
        distinct = len({id(parameter) for parameter in parameters}) == len(parameters)  # the usual case
        for parameter in parameters:
            entry = offered.get(id(parameter))
            if entry is not None and entry[0] is parameter and (distinct or _once(parameter, parameters)):
                frame[id(parameter)] = entry
        offered.clear()
    frames.append(frame)


def pass_on(parameter, arguments: tuple) -> None:
    """In a call's adapter, for a parameter of the running program passed to the callee as it is,
    whose adjoint nothing after the call adds to: what this program's caller lent for it and this
    program has not borrowed is offered to the callee instead (the callee's adjoint of it becomes
    this program's, received into it, never added: the buffer still comes back in one place)."""
    offered, _, frames = _loans()
    if frames and _once(parameter, arguments):
        frame = frames[-1]
        entry = frame.get(id(parameter))
        if entry is not None and entry[0] is parameter:
            del frame[id(parameter)]
            offered[id(parameter)] = entry


def release() -> None:
    """At the end of a callee's backward: its frame goes."""
    _loans()[2].pop()


def void_offers() -> None:
    """At the start of the backward of a callee that borrows nothing: no offer outlives it."""
    offered = _loans()[0]
    if offered:
        offered.clear()


def withdrawing(k, arguments: tuple):
    """`k`, but withdrawing the offers its call makes for `arguments` before the callee's backward
    runs: for a callee whose parameters are not exactly the call's arguments (a partial's, a
    method's bound or a closure's captured values, defaults), a loan could be taken by the wrong
    parameter."""

    def withdrawn(value):
        result = k(value)
        offered = _loans()[0]
        if offered:
            for argument in arguments:
                entry = offered.get(id(argument))
                if entry is not None and entry[0] is argument:
                    del offered[id(argument)]
        return result

    return withdrawn


def borrow(argument):
    """The adjoint the caller lent for `argument`, claimed by this program, or the symbolic zero."""
    frames = _loans()[2]
    if not frames:
        return 0.0
    frame = frames[-1]
    if not frame:
        return 0.0
    entry = frame.pop(id(argument), None)
    return entry[1] if entry is not None and entry[0] is argument else 0.0


def merge(total, contribution, argument):
    """`accumulate(total, contribution)` at the call site that lent `total` for `argument`: the
    loan ends (offered and not taken, or handed back as `contribution` itself)."""
    exclusive = _getrefcount(total) == 3
    offered, lent, _ = _loans()
    entry = offered.get(id(argument))
    if entry is not None and entry[1] is total:
        del offered[id(argument)]
    record = lent.get(id(total))
    if record is not None and record[0] is total:
        record[1] -= 1
        if record[1] == 0:
            del lent[id(total)]
        if contribution is total:
            return total
        exclusive = exclusive or _lent(total)
    return _accumulate(total, contribution, exclusive)


_ENTRIES: dict[tuple[int, bool], Callable] = {}


def loan_entry(program, count: int, borrows: bool):
    """`program(p0, ..., k)` run as a callee that may be lent adjoints: its continuation, when
    it returns, claims the offers for its parameters (`borrows`) or voids them (see above).
    Fixed arity (no *args): CPython then runs the calls without C frames."""
    make = _ENTRIES.get((count, borrows))
    if make is None:
        names = "".join(f"p{i}, " for i in range(count))
        if borrows:
            text = (
                "def make(program):\n"
                f"    def entry({names}k):\n"
                "        def returned(value):\n"
                "            result = k(value)\n"
                f"            claim(({names}))\n"
                "            return result\n"
                f"        result = program({names}returned)\n"
                "        release()\n"
                "        return result\n"
                "    return entry\n"
            )
        else:
            text = (
                "def make(program):\n"
                f"    def entry({names}k):\n"
                "        def returned(value):\n"
                "            result = k(value)\n"
                "            void_offers()\n"
                "            return result\n"
                f"        return program({names}returned)\n"
                "    return entry\n"
            )
        namespace = {"claim": claim, "release": release, "void_offers": void_offers}
        exec(compile(text, f"<cpsgrad entry of {count} parameters>", "exec"), namespace)  # noqa: S102
        make = _ENTRIES[count, borrows] = namespace["make"]
    wrapped = make(program)
    wrapped.__wrapped__ = program
    return wrapped
