"""The kinds of argument values a derivative program is specialised for (transforms/analysis/kinds.py).

`NUMBER` for a Python float, int or bool, `NUMBERS` for a short tuple or list of them, `ANY` for
anything else (an array, a numpy scalar, an object). `of` is called on every call of a gradient
function and by the call sites of user functions, so it is cheap.
"""

from __future__ import annotations

NUMBER = "number"
NUMBERS = "numbers"
ANY = "any"

#: Longest tuple or list argument checked element by element for the NUMBERS kind.
MAX_CHECKED_LENGTH = 64

NUMBER_TYPES = (float, int, bool)  # what a `number` may be


def of(value) -> str:
    """The kind of one argument value (cheap: called on every call of a gradient function)."""
    kind = type(value)
    if kind is float or kind is int or kind is bool:
        return NUMBER
    if kind is tuple or kind is list:  # a tree of nested tuples fails at its first element, cheaply
        short = len(value) <= MAX_CHECKED_LENGTH and (not value or type(value[0]) in NUMBER_TYPES)
        if short and all(type(v) in NUMBER_TYPES for v in value):
            return NUMBERS
    return ANY
