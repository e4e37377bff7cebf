"""The generator's grammar: the kinds of values a drawn program holds, the constants it draws,
the records of what is in scope while it draws (`Variable`, `Helper`, `Function`), and the
text helpers its parts share."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hypothesis import strategies as st

ENTRY = "f"
"""The name of the entry function of every generated module."""

VECTOR_LENGTH = 3
"""Length of the numpy vector argument (numpy=True)."""

MAX_TRIPS = 4
"""Loops run at most this many times; recursion is at most this deep."""

WRITE_WEIGHT = 6
"""programs(writes=True): how many times as often a statement is a write in place."""


FLOAT, INT, TUPLE, LIST, DICT, VECTOR, CALLABLE = (
    "float",
    "int",
    "tuple",
    "list",
    "dict",
    "vector",
    "callable",
)
MATRIX, VSEQ, VDICT, VCALLABLE = "matrix", "vector-sequence", "vector-dict", "vector-callable"
# a 3 x 3 matrix argument (views=True); sequences and dicts of vectors (aliased_containers=True,
# as helper parameters and locals); closures taking and returning a vector
MATRIX_SHAPE = (3, 3)
REBOUND_FUNCTIONS = {  # module-level function aliases and what check_program rebinds them to
    "math.sin": "math.cos",
    "math.cos": "math.tanh",
    "math.tanh": "math.sin",
    "np.tanh": "np.sin",
    "np.sin": "np.cos",
    "np.cos": "np.tanh",
}
CONSTANTS = ("0.5", "2.0", "1.5", "-1.0", "3.0", "0.25", "-0.75")
KEYS = ('"a"', '"b"', '"c"')
MARGIN = 1e-3
# Arguments stay this far from multiples of 1/4 (the constants, 0, and their simple sums), where
# ties in min/max and kinks of abs sit.
ROUND = tuple(k / 4 for k in range(-8, 9))
FLOATS = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False, allow_subnormal=False)


@dataclass
class Variable:
    kind: str
    length: int = 0  # tuples: their length; lists: their least length; dicts: their keys
    differentiated: bool = False
    captures: tuple[str, ...] = ()  # closures: the variables their body reads


@dataclass
class Helper:
    """A generated module-level helper: positional parameters of `kinds` (one container
    parameter `c` for a helper reading a container), maybe `scale=`, returning `returns`."""

    name: str
    parameters: tuple[str, ...]
    kinds: tuple[str, ...]
    scale: bool
    returns: str = FLOAT
    length: int = 0  # a container parameter's elements (tuples and lists)


@dataclass
class Function:
    """Where statements are being generated: the function, its loops and its variables."""

    name: str
    scopes: list[dict[str, Variable]]
    loops: int = 0
    iterated: set[str] = field(default_factory=set)  # lists a `for` is iterating over now
    appendable: set[str] = field(default_factory=set)  # lists this function may append to
    captured: set[str] = field(default_factory=set)  # read by a closure: never assigned again (late binding)
    # vectors of probabilities (positive): logs of their elements are safe
    softmaxes: set[str] = field(default_factory=set)
    returns: str = FLOAT  # what its returns return: FLOAT or VECTOR (a helper returning a vector)
    statements: int = 0  # statements left

    def variables(self, kind: str) -> list[str]:
        seen: dict[str, Variable] = {}
        for scope in self.scopes:
            seen.update(scope)
        return [name for name, variable in seen.items() if variable.kind == kind]

    def lookup(self, name: str) -> Variable:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        raise KeyError(name)


def apart(value: float, taken: list[float]) -> float:
    """`value`, moved (by a fixed irregular step, so shrinking still works) until it is
    MARGIN away from the multiples of 1/4 and from every value in `taken` and its negation;
    appended to `taken`. (Hypothesis likes round and repeated values; filtering them out
    instead would reject most draws.)"""
    for attempt in range(50):
        if all(abs(value - p) >= MARGIN for p in ROUND) and all(
            abs(value - t) >= MARGIN and abs(value + t) >= MARGIN for t in taken
        ):
            break
        value += 0.0421 + 0.0173 * attempt
    taken.append(value)
    return value


def is_name(text: str) -> bool:
    return re.fullmatch(r"[A-Za-z_]\w*", text) is not None


def mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text) is not None
