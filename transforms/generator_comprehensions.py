"""Comprehensions over a generator call: `sum(v * v for v in gen(x))`, `[f(v) for v in gen(x) if v > 0]`
(before transforms/generators.py rewrites the consumer statements into loops over the generator's fold).

A list comprehension over a generator call is the list of the same generator expression, so it is first
written as one (`cpsgrad_runtime.builtins.list(f(v) for v in gen(x))`: the builtin whatever the user's
module calls `list`). A consumer (`sum`, `list`, `tuple`, `next`, `min`, `max`, `any`, `all`, `sorted`)
of a generator expression whose one `for` clause iterates a generator call is then a consumer of the
generator call like `sum(gen(x))`, whose loop runs the expression's conditions and element before the
consumer's step:

    s = sum(v * c for v in gen(x) if v > 0)   ->   for v_1 in gen(x):
                                                       if v_1 > 0:
                                                           item = v_1 * c
                                                           s = s + item

which is the order in which Python runs them (the generator resumes when the consumer asks for the next
element; the element is computed before the consumer takes it). The clause's targets get fresh names, as
Python's comprehension scope keeps them from the function's. More than one `for` clause, `async for`,
and comprehensions building sets or dicts are left as they are (and refused, located, as a generator
call in that position).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from cpsgrad.transforms import comprehensions, syntax
from cpsgrad.transforms import generator_scopes as scopes
from cpsgrad.transforms.naming import names_in


def over(node: cst.BaseExpression, is_generator: Callable[[cst.BaseExpression], bool]) -> cst.GeneratorExp | None:
    """`node` when it is a generator expression whose one `for` clause iterates a generator call (or
    what `is_generator` takes: `zip`/`enumerate` of one)."""
    node = syntax.strip_parentheses(node)
    if not isinstance(node, cst.GeneratorExp):
        return None
    clause = node.for_in
    if clause.inner_for_in is not None or clause.asynchronous is not None:
        return None
    return node if is_generator(syntax.strip_parentheses(clause.iter)) else None


def generator_call(expression: cst.GeneratorExp) -> cst.Call:
    """The call the expression's clause iterates."""
    return syntax.strip_parentheses(expression.for_in.iter)


def loop(
    expression: cst.GeneratorExp, item: str, step: list, fresh: Callable[[str], str], reject: Callable
) -> cst.For:
    """The loop over the generator call running `expression`'s conditions and element, then `step`
    (the consumer's, over `item`)."""
    clause = expression.for_in
    renamed = {name: fresh(name) for name in sorted(names_in(clause.target))}
    for part in (expression.elt, *(test.test for test in clause.ifs)):
        for inner in scopes.walk_all(part):
            if isinstance(inner, (cst.Lambda, cst.GeneratorExp, cst.ListComp, cst.SetComp, cst.DictComp)):
                reject(
                    inner,
                    "lambda or comprehension inside a comprehension over a generator",
                    "write the loop: `for v in gen(...):` with the inner computation in its body",
                )
    target = comprehensions.substitute(clause.target, renamed)
    body: list = [
        cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(item))], comprehensions.substitute(
            expression.elt, renamed))]),
        *step,
    ]
    for test in reversed(clause.ifs):
        body = [cst.If(comprehensions.substitute(test.test, renamed), cst.IndentedBlock(body))]
    return cst.For(target, clause.iter, cst.IndentedBlock(body))


def form_name(func: cst.BaseExpression) -> str | None:
    """The consumer's name as written (`cpsgrad_runtime.builtins.list` as `list`: generator_comprehensions.py)."""
    dotted = syntax.dotted_name(func)
    return dotted.removeprefix("cpsgrad_runtime.builtins.") if dotted is not None else None


class AsConsumers(scopes.Preserving):
    """List comprehensions over a generator call -> the builtin list of the same generator expression."""

    def __init__(self, is_generator: Callable[[cst.BaseExpression], bool], positions, moved: dict):
        super().__init__(positions, moved)
        self.is_generator = is_generator
        self.depth = 0

    def visit_FunctionDef(self, node) -> bool:
        self.depth += 1
        return self.depth == 1  # a nested function is rewritten when it is transformed

    def leave_FunctionDef(self, original, updated):
        self.depth -= 1
        return updated

    def visit_Lambda(self, node) -> bool:
        return False

    def leave_ListComp(self, original, updated):
        expression = cst.GeneratorExp(updated.elt, updated.for_in)
        if over(expression, self.is_generator) is None:
            return updated
        call = cst.Call(
            cst.parse_expression("cpsgrad_runtime.builtins.list"),
            [cst.Arg(expression)],
            lpar=updated.lpar,
            rpar=updated.rpar,
        )
        if original in self.positions:
            self.moved.setdefault(call, self.positions[original])
            self.moved.setdefault(expression, self.positions[original])
        return call
