"""A cache keyed by the identity of code objects.

Code objects compare equal by their contents, not their file: the same `def` text in two modules
(or two generated programs) gives equal code objects, with different globals and different files.
A cache of what a function's source says, or what its analysis found, must not serve one
function's entry to the other (a wrong file in an error, the analysis of other globals), nor
keep code objects alive: `ByCode` holds each key weakly, by identity, and drops the entry when the
code object goes.
"""

from __future__ import annotations

import types
import weakref


class ByCode:
    """code object -> value, by identity; an entry goes with its code object."""

    def __init__(self):
        self._entries: dict[int, tuple[weakref.ref, object]] = {}

    def get(self, code: types.CodeType, default=None):
        entry = self._entries.get(id(code))
        if entry is None or entry[0]() is not code:
            return default
        return entry[1]

    def __contains__(self, code: types.CodeType) -> bool:
        entry = self._entries.get(id(code))
        return entry is not None and entry[0]() is code

    def __getitem__(self, code: types.CodeType):
        entry = self._entries.get(id(code))
        if entry is None or entry[0]() is not code:
            raise KeyError(code)
        return entry[1]

    def __setitem__(self, code: types.CodeType, value) -> None:
        key = id(code)
        entries = self._entries

        def forget(reference, key=key):  # the code object went: its id may be another's next
            entry = entries.get(key)
            if entry is not None and entry[0] is reference:
                del entries[key]

        entries[key] = (weakref.ref(code, forget), value)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()
