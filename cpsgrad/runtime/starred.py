"""Unpacking with `*` and `**` (transforms/starred.py writes the calls of these helpers).

- `a, *rest = xs`: `t = list(xs)`, a check of its length (`unpack_check`), then indexing and a
  slice (`rest` is a list, as in Python), all with existing rules;
- `[*xs, y]`, `(*xs, y)`: each starred part `list(...)` where Python iterates it, the plain
  elements a list display, then `joined(parts)` (a list) or `joined_tuple(parts)`;
- `f(a, *xs, **kw)`: `spread(f, (a, *xs), kw)`, a user call whose dispatcher
  (`runtime/spread_sites.py`) binds the arguments when it runs; where nothing is differentiable
  the plain call below runs.
"""

from __future__ import annotations

import inspect

import numpy as np

from cpsgrad.runtime.adjoints import DictAdjoint, SequenceAdjoint, entry, item


def spread(function, args, *mappings):
    """`function(*args, **mapping, ...)`, with Python's TypeError for a keyword given twice."""
    if not mappings:
        return function(*args)
    return function(*args, **keywords(function, mappings))


def keywords(function, mappings) -> dict:
    """The keyword arguments of `f(**m1, **m2)` (and `f(k=v, **m)`: `{"k": v}` is one of them)."""
    if len(mappings) == 1 and type(mappings[0]) is dict:
        return mappings[0]
    merged: dict = {}
    for mapping in mappings:
        if not hasattr(mapping, "keys"):
            raise TypeError(f"{_name(function)} argument after ** must be a mapping, not {type(mapping).__name__}")
        for key in mapping.keys():
            if key in merged:
                raise TypeError(f"{_name(function)} got multiple values for keyword argument '{key}'")
            merged[key] = mapping[key]
    return merged


def _name(function) -> str:
    name = getattr(function, "__qualname__", None) or getattr(function, "__name__", None)
    return f"{name}()" if name else "function"


def unpack_check(length: int, needed: int) -> None:
    """Python's ValueError for `a, *rest, b = xs` when `xs` has fewer than `needed` items."""
    if length < needed:
        raise ValueError(f"not enough values to unpack (expected at least {needed}, got {length})")


def joined(parts) -> list:
    """`[*a, *b, ...]` of sequences `parts` (each already a list: where Python iterated it)."""
    out: list = []
    for part in parts:
        out.extend(part)
    return out


def joined_tuple(parts) -> tuple:
    return tuple(joined(parts))


def joined_adjoint(parts, adjoint):
    """The adjoint of `parts` from that of their concatenation: each part's slice of it."""
    if not isinstance(adjoint, SequenceAdjoint):
        return 0.0
    split, offset = [], 0
    for part in parts:
        split.append(SequenceAdjoint(adjoint[offset : offset + len(part)]))
        offset += len(part)
    return SequenceAdjoint(split)


def rows_adjoint(array: np.ndarray, adjoint):
    """The adjoint of an array from that of the list of its rows (`list(x)`, `a, *rest = x`)."""
    if not isinstance(adjoint, SequenceAdjoint):
        return adjoint
    result = np.zeros_like(array)
    for position, row in enumerate(adjoint):
        if not (isinstance(row, (int, float)) and row == 0):
            result[position] += row
    return result


def spread_adjoint(args: tuple, given: dict, mappings: tuple, adjoints: dict) -> tuple:
    """The adjoints of a spread call's `args` tuple and mappings from the callee's adjoints of
    its arguments (`given`: position -> adjoint; `adjoints`: keyword -> adjoint)."""
    positional = SequenceAdjoint(given.get(i, 0.0) for i in range(len(args))) if given else 0.0
    parts = []
    for mapping in mappings:
        found = DictAdjoint((key, adjoints[key]) for key in mapping.keys() if key in adjoints)
        parts.append(found if found else 0.0)
    return positional, parts


# ---- callees with *args and **kwargs parameters (runtime/dispatch.py's plans) -----------------
# Their program takes `args` as one tuple and `kwargs` as one dict (transforms/starred.py).
# `packs` binds a call's arguments to them (each such parameter's value is packed from the
# call's values when the call runs), and `fan` maps the callee's adjoints of those parameters
# (a SequenceAdjoint, a DictAdjoint) back to the call's arguments, one each:
# `item(args_d, j)`, `entry(kwargs_d, name)`.


def packs(code, bound, captured: int, end: int, order: list) -> tuple:
    """The `*args` and `**kwargs` parameters of `code` as packs of the call's values: per pack
    (kind, slots), appended to `order` at the indices `end`, `end + 1` of the values."""
    found = []
    names = code.co_varnames[code.co_argcount + code.co_kwonlyargcount :]
    position = 0
    if code.co_flags & inspect.CO_VARARGS:
        found.append(("args", tuple(captured + slot.index for slot in bound.arguments.get(names[0], ()))))
        position = 1
    if code.co_flags & inspect.CO_VARKEYWORDS:
        given = bound.arguments.get(names[position], {})
        found.append(("kwargs", tuple((name, captured + slot.index) for name, slot in given.items())))
    for offset in range(len(found)):
        order.append(end + offset)
    return tuple(found)


def packed(found: tuple, every: tuple) -> tuple:
    """The values of the packed parameters, from the call's values."""
    values = []
    for kind, slots in found:
        if kind == "args":
            values.append(tuple([every[i] for i in slots]))
        else:
            values.append({name: every[i] for name, i in slots})
    return tuple(values)


def fan(order: list, values: list, found: tuple, end: int) -> tuple:
    """(the parameters the active values reach, each once; per active value, where its adjoint
    is: (index among those parameters, None | ("item", j) | ("entry", name)))."""
    parameters: list[int] = []
    where = []
    for value in values:
        how, parameter = None, None
        if value in order[: len(order) - len(found)]:
            parameter = order.index(value)
        else:
            for offset, (kind, slots) in enumerate(found):
                if kind == "args" and value in slots:
                    how = ("item", slots.index(value))
                elif kind == "kwargs" and value in [i for _, i in slots]:
                    how = ("entry", next(name for name, i in slots if i == value))
                else:
                    continue
                parameter = order.index(end + offset)
                break
        if parameter is None:
            raise RuntimeError(f"cpsgrad: argument value {value} reaches no parameter (bound {order}, packs {found})")
        if parameter not in parameters:
            parameters.append(parameter)
        where.append((parameters.index(parameter), how))
    return tuple(parameters), tuple(where)


def fanned(found, result: tuple) -> tuple:
    """A program's result with its adjoints of packed parameters turned into the arguments'."""
    split = 1 + found.environment
    adjoints = result[split:]
    out = []
    for index, how in found.fan:
        adjoint = adjoints[index]
        if how is not None:
            adjoint = item(adjoint, how[1]) if how[0] == "item" else entry(adjoint, how[1])
        out.append(adjoint)
    return (*result[:split], *out)
