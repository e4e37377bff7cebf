"""Kinds: which variables provably hold Python numbers, so their rules need no array handling.

A derivative program is generated for one choice of argument kinds (`NUMBER` for a Python
float, int or bool, `NUMBERS` for a short tuple or list of them, `ANY` for anything else: an
array, a numpy scalar, an object). The analysis is flow-insensitive and conservative: a local is
a number when every assignment to it computes one from numbers (arithmetic, `math` functions,
`float`, `len`, ...). Globals and free variables are read live, so they are not numbers by
their nature; a module global that holds a number when a top-level program is transformed is
taken for one, and the program is transformed again if it stops holding one. Rules written for
arrays call `cpsgrad_runtime.unbroadcast`; where every operand of an operation is a number the
adjoint pass drops those calls, so scalar code runs as fast as if arrays did not exist.
"""

from __future__ import annotations

import math

import libcst as cst

from cpsgrad import runtime
from cpsgrad.runtime.kinds import ANY, MAX_CHECKED_LENGTH, NUMBER, NUMBER_TYPES, NUMBERS, of  # noqa: F401  (re-exported)
from cpsgrad.transforms import syntax, walk
from cpsgrad.transforms.analysis.activity import assignments
from cpsgrad.transforms.resolve import Resolver

_MATH_FUNCTIONS = frozenset(id(v) for v in vars(math).values() if callable(v))
_NUMBER_BUILTINS = frozenset(
    id(f) for f in (float, int, bool, len, round, math.floor, math.ceil, math.trunc, runtime.zip_length)
)
_ELEMENTWISE_BUILTINS = frozenset(id(f) for f in (abs, pow, divmod))  # numbers in, numbers out
_REDUCING_BUILTINS = frozenset(id(f) for f in (max, min, sum))  # a sequence of numbers in, a number out
_SEQUENCE_BUILDERS = frozenset(id(f) for f in (tuple, list, sorted, runtime.as_sequence))  # numbers stay numbers


def number_variables(
    definition: cst.FunctionDef, parameters: dict[str, str], resolver: Resolver
) -> tuple[set[str], set[str]]:
    """(variables always holding a number, variables always holding a tuple or list of numbers)."""
    found = assignments(definition.body.body)
    assigned = {name for targets, _ in found for name in targets}
    numbers = {p for p, k in parameters.items() if k == NUMBER} | (assigned - set(parameters))
    sequences = {p for p, k in parameters.items() if k == NUMBERS} | (assigned - set(parameters))
    sequences -= _mutated(definition, found)
    changed = True
    while changed:
        changed = False
        for targets, value in found:
            if isinstance(targets, list):  # name = value (a tuple of names unpacks)
                target = targets[0]
                kind = _value_kind(value, numbers, sequences, resolver)
                if target in numbers and kind != NUMBER:
                    numbers.discard(target)
                    changed = True
                if target in sequences and kind != NUMBERS:
                    sequences.discard(target)
                    changed = True
            else:  # a, b = value: numbers when value is a sequence of numbers
                unpacks_numbers = isinstance(value, cst.Name) and value.value in sequences
                for target in targets:
                    if target in sequences:
                        sequences.discard(target)
                        changed = True
                    if target in numbers and not unpacks_numbers:
                        numbers.discard(target)
                        changed = True
    return numbers, sequences


def _mutated(definition: cst.FunctionDef, found) -> set[str]:
    """Names whose list a method call may change (`xs.append(v)`), and the names aliasing them."""
    receivers = {
        node.func.value.value for node in walk.nodes(definition.body)
        if type(node) is cst.Call and type(node.func) is cst.Attribute and type(node.func.value) is cst.Name
    }
    changed = bool(receivers)
    while changed:
        changed = False
        for targets, value in found:
            if isinstance(targets, list) and isinstance(value, cst.Name):
                pair = {targets[0], value.value}
                if pair & receivers and not pair <= receivers:
                    receivers |= pair
                    changed = True
    return receivers


def atom_kind(node: cst.BaseExpression, numbers: set[str], sequences: set[str], resolver: Resolver) -> str:
    if isinstance(node, (cst.Integer, cst.Float)):
        return NUMBER
    if isinstance(node, cst.UnaryOperation) and isinstance(node.expression, (cst.Integer, cst.Float)):
        return NUMBER
    if isinstance(node, cst.Name):
        if node.value in ("True", "False"):
            return NUMBER
        if node.value in numbers:
            return NUMBER
        if node.value in sequences:
            return NUMBERS
        if type(resolver.assumable_global(node.value)) in NUMBER_TYPES:
            resolver.assumed.add(node.value)  # checked on each call (pipeline.Transformed.holds)
            return NUMBER
        return ANY
    if isinstance(node, cst.Attribute) and syntax.dotted_name(node) is not None:
        module = resolver.resolve(node.value)
        if module is math and type(getattr(math, node.attr.value, None)) in NUMBER_TYPES:
            return NUMBER  # math.pi, math.inf: constants of a module that cannot change
    return ANY


def _value_kind(value: cst.BaseExpression, numbers: set[str], sequences: set[str], resolver: Resolver) -> str:
    def atom(node):
        return atom_kind(node, numbers, sequences, resolver)

    if syntax.is_atom(value):
        return atom(value)
    if isinstance(value, cst.BinaryOperation):
        return NUMBER if atom(value.left) == NUMBER and atom(value.right) == NUMBER else ANY
    if isinstance(value, cst.UnaryOperation):
        return NUMBER if atom(value.expression) == NUMBER else ANY
    if isinstance(value, cst.Comparison):
        operands = [value.left, *(c.comparator for c in value.comparisons)]
        return NUMBER if all(atom(o) == NUMBER for o in operands) else ANY
    if isinstance(value, (cst.Tuple, cst.List)):
        return NUMBERS if all(atom(e.value) == NUMBER for e in value.elements) else ANY
    if isinstance(value, cst.Subscript):
        if atom(value.value) != NUMBERS:
            return ANY
        return NUMBERS if any(isinstance(e.slice, cst.Slice) for e in value.slice) else NUMBER
    if isinstance(value, cst.Call):
        return _call_kind(value, atom, resolver)
    return ANY


def _call_kind(call: cst.Call, atom, resolver: Resolver) -> str:
    function = resolver.resolve(call.func)
    if function is None:
        return ANY
    key = id(function)
    arguments = [a.value for a in call.args]
    if key in _MATH_FUNCTIONS and getattr(math, getattr(function, "__name__", ""), None) is function:
        return NUMBER  # math functions return floats or ints, or raise
    if key in _NUMBER_BUILTINS:
        return NUMBER
    if key in _ELEMENTWISE_BUILTINS and all(atom(a) == NUMBER for a in arguments):
        return NUMBERS if function is divmod else NUMBER
    if key in _REDUCING_BUILTINS and len(arguments) == 1 and atom(arguments[0]) == NUMBERS:
        return NUMBER
    if key in _SEQUENCE_BUILDERS and len(arguments) == 1 and atom(arguments[0]) == NUMBERS:
        return NUMBERS
    return ANY
