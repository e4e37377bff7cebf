"""The loan books: the state of the loan protocol (`loans`), per thread and per run.

Each thread's run of a derivative program keeps three books: the offers made to the callee about
to run (id(argument) -> (argument, buffer)), the buffers lent (id(buffer) -> [buffer, count]) and
the frames of claimed offers of the programs whose backward is running, innermost last. A run
inside another (a key function's) keeps its own (`open_loans`/`close_loans`).
"""

from __future__ import annotations

import threading

_LOANS = threading.local()


def _loans() -> tuple[dict, dict, list]:
    """The books of this thread's run: (offered: id(argument) -> (argument, buffer), lent:
    id(buffer) -> [buffer, count], frames: the claimed offers of the programs whose backward is
    running, innermost last)."""
    books = _LOANS.__dict__.get("books")
    if books is None:
        books = _LOANS.__dict__["books"] = ({}, {}, [])
    return books


def _lent(value) -> bool:
    lent = _loans()[1]
    if not lent:
        return False
    record = lent.get(id(value))
    return record is not None and record[0] is value


def clear_loans() -> None:
    """Forget every loan."""
    offered, lent, frames = _loans()
    offered.clear()
    lent.clear()
    frames.clear()


def open_loans() -> tuple | None:
    """Fresh loan books for one run (a run inside another, from a key function say, keeps its own
    apart); returns the books it replaces, for `close_loans` after the run, finished or not."""
    state = _LOANS.__dict__
    saved = state.get("books")
    state["books"] = ({}, {}, [])
    return saved


def close_loans(saved: tuple | None) -> None:
    _LOANS.__dict__["books"] = ({}, {}, []) if saved is None else saved
