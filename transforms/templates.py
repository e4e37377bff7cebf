"""Reading a rule template for the adjoint pass: which backward steps a call keeps, the defaults
that stand in for omitted arguments, the module names it reads, and the number specialisation.

`transforms/adjoint/rule_inlining.py` (`RuleInlining.inline_rule`) inlines a template with these: the steps whose
accumulators are active (`kept_steps`), renamed into the program, `without_unbroadcast` applied
when the call's operands and result are Python numbers.
"""

from __future__ import annotations

import libcst as cst

from cpsgrad.rules.registry import Rule, Step
from cpsgrad.transforms import syntax

_RUNTIME = "cpsgrad_runtime"


def kept_steps(rule: Rule, active: set[str]) -> list[Step]:
    """The steps of `rule`'s backward that contribute to the accumulators in `active`: their
    accumulations and the locals those read, directly or through other locals (none at all
    when no accumulator is active: the backward call is skipped)."""
    steps = rule.steps
    kept = [False] * len(steps)
    needed: set[str] = set()
    for position in reversed(range(len(steps))):
        step = steps[position]
        if step.accumulator in active or needed.intersection(step.names):
            kept[position] = True
            needed.update(syntax.variables_read(step.value))
    return [step for step, keep in zip(steps, kept, strict=True) if keep]


def defaults(rule: Rule) -> dict[str, cst.BaseExpression]:
    """A template's parameter defaults, as the expressions written in it, each an atom where it
    stands in for its parameter (`reps=(2, 1)` read as `reps[0]`, `scale=-1.0` as `scale ** 2`)."""
    parameters = rule.definition.params
    every = [*parameters.posonly_params, *parameters.params, *parameters.kwonly_params]
    return {p.name.value: parenthesized(p.default) for p in every if p.default is not None}


_READS: dict[tuple[int, tuple[int, ...]], tuple[Rule, list[str]]] = {}


def reads(rule: Rule, steps: list[Step]) -> list[str]:
    """The names that `steps` (some of `rule`'s backward) and the template's defaults read,
    computed once per rule and choice of steps."""
    positions = tuple(position for position, step in enumerate(rule.steps) if any(step is kept for kept in steps))
    key = (id(rule), positions)
    cached = _READS.get(key)
    if cached is None or cached[0] is not rule:
        nodes = [*(step.value for step in steps), *defaults(rule).values()]
        names = list(dict.fromkeys(n for node in nodes for n in syntax.variables_read(node)))
        cached = _READS[key] = (rule, names)
    return cached[1]


_ATOMS = (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Call, cst.Subscript)
_DISPLAYS = (cst.List, cst.Dict, cst.Set)


def parenthesized(node: cst.BaseExpression) -> cst.BaseExpression:
    """An argument or a default as it stands in for a parameter: in parentheses unless it is an
    atom or a display (an empty tuple keeps its own), so `-1.0` read as `scale ** 2` and `(2, 1)`
    read as `reps[0]` keep their meaning. What is not one expression (the arguments a starred
    parameter packs) is left as it is."""
    if not syntax.is_a(node, cst.BaseExpression):
        return node
    node = syntax.strip_parentheses(node)
    if isinstance(node, _ATOMS + _DISPLAYS) or (isinstance(node, cst.Tuple) and not node.elements):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


class _WithoutUnbroadcast(cst.CSTTransformer):
    """`cpsgrad_runtime.unbroadcast(e, x)` -> `e`, `reduced_product(a, b, x)` -> `a * b` and
    `quotient(a, b)` -> `a / b`, for operations on Python numbers only."""

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        name = syntax.dotted_name(updated.func)
        if name == f"{_RUNTIME}.unbroadcast":
            return _parenthesized_operand(updated.args[0].value)
        if name == f"{_RUNTIME}.reduced_product":  # unbroadcast(a * b, like)
            product = cst.BinaryOperation(updated.args[0].value, cst.Multiply(), updated.args[1].value)
            return _parenthesized_operand(product)
        if name == f"{_RUNTIME}.quotient":  # the forward raised ZeroDivisionError where it would
            return _parenthesized_operand(
                cst.BinaryOperation(updated.args[0].value, cst.Divide(), updated.args[1].value)
            )
        return updated


_WITHOUT_UNBROADCAST = _WithoutUnbroadcast()
_NUMBERS_ONLY: dict[int, tuple[cst.BaseExpression, cst.BaseExpression]] = {}  # id(step) -> (step, result)


def without_unbroadcast(expression: cst.BaseExpression) -> cst.BaseExpression:
    """`expression` for Python numbers only: no broadcasting happened, so none is undone. Made once
    per expression (a rule's step, which its rule keeps; nodes are never changed in place)."""
    known = _NUMBERS_ONLY.get(id(expression))
    if known is not None and known[0] is expression:
        return known[1]
    result = syntax.strip_parentheses(expression.visit(_WITHOUT_UNBROADCAST))
    _NUMBERS_ONLY[id(expression)] = (expression, result)
    return result


def _parenthesized_operand(node: cst.BaseExpression) -> cst.BaseExpression:
    """An expression that was a call's argument, parenthesized where it now sits in an operation."""
    if isinstance(node, (cst.BinaryOperation, cst.UnaryOperation)) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node
