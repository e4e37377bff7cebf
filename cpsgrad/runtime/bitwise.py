"""The backward of `|`, `&`, `^`, `<<`, `>>` and `~` with a differentiable operand (the rules in
cpsgrad/rules/operators.py).

On integers, booleans, their arrays and sets the result carries no gradient. On two dicts, `|`
is a merge (Python 3.9's `d | m`): each operand gets the adjoints of the entries it contributed,
as `{**d, **m}` does. Anything else ran the operand's own `__or__` (`__and__`, ...): plain
Python that cpsgrad did not differentiate, whose result may hold values computed from the
operands (a user class's `__or__` returning `Vec(self.x * other.x)`); the gradient through it
would be lost, so it is refused, never taken as zero.
"""

from __future__ import annotations

import numpy as np

from cpsgrad.errors import UnsupportedError
from cpsgrad.runtime.sequences import merged_adjoint

_CONSTANT_SCALARS = (bool, int, np.integer, np.bool_)
_METHODS = {"|": "__or__", "&": "__and__", "^": "__xor__", "<<": "__lshift__", ">>": "__rshift__", "~": "__invert__"}


def _constant(value) -> bool:
    """Whether an operand's bitwise result carries no gradient: an integer, a boolean, an array
    of those, a set or frozenset (of whatever: set displays of differentiable values are refused
    where they are built)."""
    if isinstance(value, _CONSTANT_SCALARS) or isinstance(value, (set, frozenset)):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind in "biu"


def _dicts(x, y) -> bool:
    return (
        isinstance(x, dict)
        and isinstance(y, dict)
        and getattr(type(x), "__or__", None) is dict.__or__
        and getattr(type(y), "__ror__", None) is dict.__ror__
    )


def bitwise_adjoint(adjoint, x, y, is_right: bool, symbol: str):
    """The adjoint of `x` (`is_right=False`) or `y` from that of `x <symbol> y`."""
    if symbol == "|" and _dicts(x, y):
        return merged_adjoint(adjoint, x, y, is_right)
    if _constant(x) and _constant(y):
        return 0.0
    _refuse(symbol, x, y)


def inverted_adjoint(adjoint, x):
    """The adjoint of `x` from that of `~x`."""
    if _constant(x):
        return 0.0
    _refuse("~", x)


def _refuse(symbol: str, *operands):
    kinds = " and ".join(type(o).__name__ for o in operands)
    method = _METHODS[symbol]
    raise UnsupportedError(
        None,
        f"operator {symbol} on {'operands' if len(operands) > 1 else 'an operand'} of type {kinds} holding or "
        "computed from differentiable values",
        f"cpsgrad takes {', '.join(_METHODS)} of integers, booleans, their arrays and sets as constants and "
        f"differentiates `|` of two dicts (a merge); here Python ran {method} as plain code, whose result's "
        f"gradient would be lost; call a method of your own class by name (a.union(b)) or compute on the "
        "values themselves",
    )
