"""Activity: which variables may carry a derivative of the differentiated arguments.

Flow-insensitive and conservative: a name is active when any assignment to it computes a
differentiable result from an active name. Only active names get adjoints; statements whose
target is inactive get no backward code.
"""

from __future__ import annotations

import libcst as cst
import numpy as np

from cpsgrad.rules.registry import TABLE
from cpsgrad.transforms import attributes, exceptions, syntax
from cpsgrad.transforms.analysis import callee_stores
from cpsgrad.transforms.operators import binary_primitive, unary_primitive
from cpsgrad.transforms.resolve import Resolver


def assignments(statements) -> list[tuple[list[str] | tuple[str, ...], cst.BaseExpression]]:
    """Every core assignment (targets, value) in `statements`, nested blocks included: `[name]`
    for `name = value`, a tuple of names for unpacking `a, b = value` (and `a, = value`)."""
    found: list[tuple[list[str], cst.BaseExpression]] = []
    for statement in statements:
        if isinstance(statement, cst.If):
            found += assignments(statement.body.body)
            if statement.orelse is not None:
                found += assignments(statement.orelse.body.body)
        elif isinstance(statement, cst.While):
            found += assignments(statement.body.body)
        elif isinstance(statement, cst.Try):  # every part of a try (transforms/exceptions.py)
            found += assignments(exceptions.parts(statement))
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    target = small.targets[0].target
                    # unpacking targets are a tuple (even `a, = t`), a plain target a list of one
                    names = (
                        tuple(e.value.value for e in target.elements)
                        if isinstance(target, cst.Tuple)
                        else [target.value]
                    )
                    found.append((names, small.value))
    return found


def is_active_value(value: cst.BaseExpression, active: set[str], resolver: Resolver) -> bool:
    """Whether a core right-hand side computes a differentiable result from an active name."""
    reads = syntax.variables_read(value)
    if not any(name in active for name in reads):
        return False
    if isinstance(value, cst.Comparison):
        return False
    if isinstance(value, cst.UnaryOperation):
        return unary_primitive(value.operator) in TABLE and _differentiable(unary_primitive(value.operator), 1, ())
    if isinstance(value, cst.BinaryOperation):
        return _differentiable(binary_primitive(value.operator), 2, ())
    if isinstance(value, cst.Call):
        primitive = resolver.resolve(value.func)
        if primitive is None or primitive not in TABLE:
            return True  # no rule: the adjoint pass reports it when a gradient must flow through
        positional = sum(1 for a in value.args if a.keyword is None)
        keywords = tuple(a.keyword.value for a in value.args if a.keyword is not None)
        return _differentiable(primitive, positional, keywords)
    if isinstance(value, cst.Attribute):  # x.shape, x.ndim, x.dtype: no derivative
        descriptor = getattr(np.ndarray, value.attr.value, None)
        return descriptor not in TABLE or _differentiable(descriptor, 1, ())
    return True


def _differentiable(primitive, positional: int, keywords: tuple[str, ...]) -> bool:
    placeholders = (None,) * positional
    for rule in TABLE.rules_for(primitive):
        if rule.bind(placeholders, dict.fromkeys(keywords)) is not None:
            return rule.differentiable
    return True


def active_names(definition: cst.FunctionDef, seeds: set[str], resolver: Resolver) -> set[str]:
    """The least set of names containing `seeds` closed under differentiable assignment."""
    active = set(seeds)
    found = assignments(definition.body.body)
    changed = True
    while changed:
        changed = False
        for targets, value in found:
            if all(t in active for t in targets) or not is_active_value(value, active, resolver):
                continue
            active.update(targets)
            changed = True
        # obj.method(x), f(obj, x): obj may keep x (transforms/attributes.py; what f stores into: callee_stores.py)
        extra = attributes.receivers(found, active, definition, resolver, callee_stores.stored_arguments)
        if extra:
            active |= extra
            changed = True
    return active
