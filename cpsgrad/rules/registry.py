"""The rule table: derivative rules written once, as shift-style templates the transform inlines.

A template is a generator function. Its positional parameters are differentiable inputs, its
keyword-only parameters are not; the statements before `yield` are the forward (the one that
assigns the yielded names is the primal and is replaced by the user's own call), `yield` is the
shift (the continuation runs there and the outputs' adjoints come back), and the statements after
it are the backward, accumulating with `x_d += ...` into the adjoint of parameter `x`. A template
without `yield` declares a primitive whose output is not differentiable (`int`, `len`, `round`).
"""

from __future__ import annotations

import inspect
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import libcst as cst

from cpsgrad.errors import CpsgradError, RuleError

TEMPLATE_ADJOINT_SUFFIX = "_d"  # a template accumulates into `x_d` for its parameter `x`


@dataclass
class Rule:
    """One derivative template for one primitive."""

    primitive: object
    template: Callable

    @property
    def name(self) -> str:
        return self.template.__name__

    @cached_property
    def trusted(self) -> bool:
        """A built-in rule (cpsgrad's own module): its backward is inlined unchecked. A user's
        rule gets its contributions checked (runtime.rule_contribution)."""
        return (getattr(self.template, "__module__", None) or "").split(".")[0] == "cpsgrad"

    @cached_property
    def label(self) -> str:
        """`name (file:line)`, how errors about this rule name it."""
        code = getattr(self.template, "__code__", None)
        where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
        return f"{self.template.__name__}{where}"

    @cached_property
    def signature(self) -> inspect.Signature:
        return inspect.signature(self.template)

    @cached_property
    def differentiable_parameters(self) -> list[str]:
        return [
            p.name for p in self.signature.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]

    @cached_property
    def definition(self) -> cst.FunctionDef:
        source = textwrap.dedent(inspect.getsource(self.template))
        module = cst.parse_module(source)
        for statement in module.body:
            if isinstance(statement, cst.FunctionDef):
                return statement
        raise CpsgradError(f"rule template {self.name} has no def")

    @cached_property
    def parts(self) -> tuple[list, list[str], list[str], list]:
        """(forward statements, output names, output adjoint names, backward statements)."""
        statements = list(self.definition.body.body)
        for position, statement in enumerate(statements):
            shift = _shift(statement)
            if shift is not None:
                outputs, adjoints = shift
                return statements[:position], outputs, adjoints, statements[position + 1:]
        return statements, [], [], []

    @property
    def differentiable(self) -> bool:
        return bool(self.parts[1])

    @property
    def globals(self) -> dict:
        return self.template.__globals__

    def bind(self, args: tuple, kwargs: dict) -> dict | None:
        """Template parameter -> the call's argument, or None when the call does not fit."""
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError:
            return None
        return dict(bound.arguments)


def _shift(statement: cst.BaseStatement) -> tuple[list[str], list[str]] | None:
    """For `y_d = yield y` (or `a_d, b_d = yield a, b`): (outputs, their adjoints)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    assign = statement.body[0]
    if not isinstance(assign, cst.Assign) or not isinstance(assign.value, cst.Yield):
        return None
    target = assign.targets[0].target
    value = assign.value.value
    adjoints = [e.value.value for e in target.elements] if isinstance(target, cst.Tuple) else [target.value]
    outputs = [e.value.value for e in value.elements] if isinstance(value, cst.Tuple) else [value.value]
    return outputs, adjoints


def _key(primitive: object):
    """What the table files a primitive under: its identity, or for a method bound to an object
    (`scipy.stats.norm.logpdf`, `rs.randn`: a new object at each attribute read) the object's
    identity and the function's, so that the rule declared for one read serves the next."""
    kind = type(primitive)
    if kind is types.MethodType:
        return (id(primitive.__self__), id(primitive.__func__))
    if kind is types.BuiltinMethodType:
        owner = primitive.__self__
        if owner is not None and not isinstance(owner, types.ModuleType):
            return (id(owner), primitive.__name__)
    return id(primitive)


def _check_template(rule: Rule) -> None:
    """A user's template, read and checked when it is registered (not when a program inlines
    it): its source must be readable and its backward only `p_d += ...` for its parameters."""
    try:
        _, _, _, backward = rule.parts
    except (OSError, TypeError, SyntaxError, cst.ParserSyntaxError) as error:
        raise RuleError(
            f"rule {rule.label}: cannot read its source ({error}); cpsgrad inlines a rule's "
            "source, so define the template with def in a file"
        ) from None
    accumulators = {p + TEMPLATE_ADJOINT_SUFFIX for p in rule.signature.parameters}
    for statement in backward:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
        if not (isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.AddAssign)
                and isinstance(small.target, cst.Name) and small.target.value in accumulators):
            if isinstance(statement, cst.SimpleStatementLine):  # without its comment
                statement = statement.with_changes(leading_lines=(), trailing_whitespace=cst.TrailingWhitespace())
            code = cst.Module([statement]).code.strip().splitlines()[0]
            raise RuleError(
                f"rule {rule.label}: after yield, each statement must accumulate into a parameter's "
                f"adjoint (x_d += ...), not `{code}`; accumulators here: {', '.join(sorted(accumulators))}"
            )


class RuleTable:
    """Primitive -> its templates (tried in order; the first whose signature fits a call wins)."""

    def __init__(self) -> None:
        self._rules: dict[int, list[Rule]] = {}
        self._primitives: dict[int, object] = {}
        self.version = 0

    def add(self, primitive: object, template: Callable, replace: bool = False) -> Rule:
        if not inspect.isgeneratorfunction(template) and "yield" in inspect.getsource(template):
            raise CpsgradError(f"rule template {template.__name__} must be a plain generator function")
        rule = Rule(primitive, template)
        if not rule.trusted:
            _check_template(rule)
        key = _key(primitive)
        if replace or key not in self._rules:
            self._rules[key] = []
        self._rules[key].insert(0, rule)
        self._primitives[key] = primitive
        self.version += 1
        return rule

    def remove(self, rule: Rule) -> None:
        self._rules[_key(rule.primitive)].remove(rule)
        self.version += 1

    def rules_for(self, primitive: object) -> list[Rule]:
        key = _key(primitive)
        stored = self._primitives.get(key)
        if stored is primitive or (stored is not None and type(key) is tuple and stored == primitive):
            return self._rules.get(key, [])
        return []

    def __contains__(self, primitive: object) -> bool:
        return bool(self.rules_for(primitive))

    def primitives(self) -> list[object]:
        return [self._primitives[key] for key, rules in self._rules.items() if rules]


TABLE = RuleTable()


def not_differentiable(primitive: object, name: str | None = None) -> Rule:
    """Declare that `primitive`'s result carries no gradient (a template without `yield`), for
    any arguments: integers, booleans, shapes, piecewise constant functions."""

    def template(*args, **kwargs):
        y = primitive(*args, **kwargs)  # noqa: F841  (a template: read by the transform, never run)

    template.__name__ = name or f"{primitive.__name__}_"
    return TABLE.add(primitive, template)


def rule(primitive: object) -> Callable[[Callable], Callable]:
    """Declare the derivative of `primitive` as a template (see this module's docstring).

    ::

        @cpsgrad.rule(mylib.softclip)
        def softclip(x):
            y = mylib.softclip(x)
            y_d = yield y
            x_d += y_d * (1.0 - y * y)

    A later rule for the same primitive is tried before earlier ones; functions already
    transformed are transformed again on their next call.
    """

    def register(template: Callable) -> Callable:
        TABLE.add(primitive, template)
        return template

    return register
