"""What the aliasing analysis (transforms/analysis/aliasing.py) needs of the functions a call reaches, and
of the core assignments of any normalized function: a user function read, normalized and analysed
at its caller's transform (`analysed`, cached per code object), and `assignments`."""

from __future__ import annotations

import types

import libcst as cst

from cpsgrad.transforms import exceptions, normalize, source
from cpsgrad.transforms.resolve import Resolver

_ANALYSING: set = set()  # (id of the results' cache, code object) being analysed: recursion


def assignments(statements):
    """(statement, value, target names) of every core assignment, nested blocks included."""
    for statement in statements:
        if isinstance(statement, cst.If):
            yield from assignments(statement.body.body)
            if statement.orelse is not None:
                yield from assignments(statement.orelse.body.body)
        elif isinstance(statement, cst.While):
            yield from assignments(statement.body.body)
        elif isinstance(statement, cst.Try):
            yield from assignments(exceptions.parts(statement))
        elif isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assign):
            small = statement.body[0]
            target = small.targets[0].target
            names = [e.value.value for e in target.elements] if isinstance(target, cst.Tuple) else [target.value]
            yield statement, small.value, names


def analysed(function, results: dict, analyse, unknown):
    """`analyse(function, normalized, resolver)` of a user function read and normalized at its
    caller's transform, cached per code object in `results`; `unknown` for anything but a plain
    function, for recursion, and where reading, normalizing or the analysis fails."""
    if not isinstance(function, types.FunctionType):
        return unknown
    code = function.__code__
    if code in results:
        return results[code]
    key = (id(results), code)
    if key in _ANALYSING:
        return unknown
    _ANALYSING.add(key)
    try:
        normalized = normalize.normalize(source.read(function))
        assigned = {n for _, _, names in assignments(normalized.definition.body.body) for n in names}
        found = analyse(function, normalized, Resolver(function, set(normalized.parameters) | assigned))
    except Exception:  # noqa: BLE001  (unreadable, refused, ...: not known)
        found = unknown
    finally:
        _ANALYSING.discard(key)
    results[code] = found
    return found
