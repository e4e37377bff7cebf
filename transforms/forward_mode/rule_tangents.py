"""The tangent of a primitive's call, made from its rule (cpsgrad/rules/tangents.py says which kind
of map each primitive's derivative is): an expression over the call's atoms and their tangents.
"""

from __future__ import annotations

import builtins

import libcst as cst

from cpsgrad.rules import module_templates
from cpsgrad.rules import tangents as kinds
from cpsgrad.rules.registry import TEMPLATE_ADJOINT_SUFFIX, Rule
from cpsgrad.transforms import naming, syntax, templates
from cpsgrad.transforms.adjoint.frames import Renamer
from cpsgrad.transforms.adjoint.output import RUNTIME, runtime_call

_MISSING = object()


class NotDerivable(Exception):
    """The rule's backward is not of the form its declared kind reads (then: by pullbacks)."""


def _plus(terms: list[cst.BaseExpression]) -> cst.BaseExpression:
    total = terms[0]
    for term in terms[1:]:
        total = cst.BinaryOperation(total, cst.Add(), _operand(term))
    return total


def _operand(node: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(node, (cst.BinaryOperation, cst.UnaryOperation)) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node


def _times(tangent: cst.BaseExpression, slope: cst.BaseExpression) -> cst.BaseExpression:
    slope = syntax.strip_parentheses(slope)
    if isinstance(slope, cst.Float) and slope.value == "1.0":
        return tangent
    if isinstance(slope, cst.UnaryOperation) and isinstance(slope.operator, cst.Minus):
        inner = slope.expression
        if isinstance(inner, cst.Float) and inner.value == "1.0":
            return cst.UnaryOperation(cst.Minus(), tangent)
    return cst.BinaryOperation(tangent, cst.Multiply(), _operand(slope))


class _Transposed(cst.CSTTransformer):
    """An elementwise backward read forward: `unbroadcast(e, x)` -> `e`, `reduced_product(a, b, x)`
    -> `a * b`, `chain(a, s, x)` -> `a * s` (the sums over broadcast axes dropped: the tangent
    broadcasts instead)."""

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        name = syntax.dotted_name(updated.func)
        arguments = [a.value for a in updated.args]
        if name == f"{RUNTIME}.unbroadcast" and len(arguments) == 2:
            return _operand(arguments[0])
        if name in (f"{RUNTIME}.reduced_product", "chain") and len(arguments) == 3:
            return _operand(cst.BinaryOperation(_operand(arguments[0]), cst.Multiply(), _operand(arguments[1])))
        return updated


def _calls(node: cst.CSTNode) -> bool:
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, call):
            found.append(call)

    node.visit(Finder())
    return bool(found)


class RuleTangents:
    """The Renderer's tangents of rule calls (reads `namespace`, `namer`, `resolver`, `tangent_of`)."""

    def rule_tangent(
        self, statement, rule: Rule, bound: dict, target: str, original, arguments: tuple[list, dict]
    ) -> cst.BaseExpression:
        """The tangent of `target = original`, a call of rule's primitive with `arguments`
        (positional, a method's receiver first, and keywords) bound to the template's parameters
        as `bound`: an expression reading the atoms, `target` and tangents."""
        accumulated = [s.accumulator[: -len(TEMPLATE_ADJOINT_SUFFIX)] for s in rule.steps if s.accumulator]
        varying = [p for p in accumulated if self.tangent_of(bound.get(p)) is not None]
        for parameter in rule.without_adjoint:
            if self.tangent_of(bound.get(parameter)) is not None:
                self.refuse_unbound(statement, original, rule, parameter)
        kind = kinds.kind(rule)
        try:
            if kind == kinds.ELEMENTWISE:
                return self.elementwise(rule, bound, target, varying)
            if kind == kinds.LINEAR:
                return self.substituted_call(original, bound, {p: self.tangent_or_zero(bound[p]) for p in accumulated
                                                               if p in bound})
            if kind == kinds.MULTILINEAR:
                return _plus([self.substituted_call(original, bound, {p: self.tangent_of(bound[p])}) for p in varying])
            if kind == kinds.EXPLICIT:
                return self.explicit(rule, bound, target, varying)
        except NotDerivable:
            pass
        return self.by_pullbacks(rule, target, varying, bound, arguments)

    # ---- the kinds --------------------------------------------------------------------------

    def elementwise(self, rule: Rule, bound: dict, target: str, varying: list[str]) -> cst.BaseExpression:
        _, outputs, output_adjoints, _ = rule.parts
        if len(outputs) != 1:
            raise NotDerivable
        entry = getattr(rule.template, "__elementary__", None)
        if entry is not None:
            module = "math" if rule.primitive is entry.math else "numpy"
            slopes = {p: cst.parse_expression(text) for p, text in module_templates.slopes(entry, module).items()}
            if module == "numpy":  # the shared template calls numpy `m`; the slope text `np`
                self.namespace.setdefault("np", __import__("numpy"))
        else:
            slopes = {}
            for step in rule.steps:
                if step.names:
                    raise NotDerivable  # a backward local: not a slope times the adjoint
                slopes[step.accumulator[: -len(TEMPLATE_ADJOINT_SUFFIX)]] = step.value
        terms = []
        for parameter in varying:
            mapping = self.template_mapping(rule, bound, target, [slopes[parameter]])
            if entry is not None:
                term = _times(self.tangent_of(bound[parameter]), slopes[parameter].visit(Renamer(mapping)))
            else:
                transposed = slopes[parameter].visit(_Transposed())
                tangent = self.tangent_of(bound[parameter])
                if target not in self.numbers and _calls(transposed):  # a helper may sum to the input's shape
                    mapping[parameter] = runtime_call("broadcast_like", mapping[parameter], cst.Name(target))
                    tangent = runtime_call("broadcast_like", tangent, cst.Name(target))
                mapping[output_adjoints[0]] = tangent
                term = syntax.strip_parentheses(transposed.visit(Renamer(mapping)))
            terms.append(term)
        return self.fit(_plus(terms), target, bare=len(terms) == 1 and isinstance(terms[0], cst.Name))

    def substituted_call(self, original, bound: dict, replaced: dict) -> cst.BaseExpression:
        """`original` (the call as the program makes it) with the atoms bound to the parameters in
        `replaced` read as the expressions there (their tangents)."""
        by_node = {id(bound[p]): value for p, value in replaced.items() if p in bound}
        return original.visit(_ByNode(by_node))

    def explicit(self, rule: Rule, bound: dict, target: str, varying: list[str]) -> cst.BaseExpression:
        function = kinds.explicit_tangent(rule)
        name = self.helper(f"{function.__name__}_tangent", function)
        arguments = [cst.Arg(cst.Name(target))]
        arguments += [cst.Arg(atom, keyword=cst.Name(p), equal=_EQUAL) for p, atom in bound.items()
                      if syntax.is_a(atom, cst.BaseExpression)]
        arguments += [cst.Arg(self.tangent_of(bound[p]), keyword=cst.Name(f"{p}_t"), equal=_EQUAL) for p in varying]
        return self.fit(cst.Call(cst.Name(name), arguments), target)

    def by_pullbacks(
        self, rule: Rule, target: str, varying: list[str], bound: dict, arguments: tuple[list, dict]
    ) -> cst.BaseExpression:
        """Any other rule: the tangent from the reverse rule's pullback, one backward per element
        of the output (transforms/forward_mode/pullbacks.py)."""
        primitive = self.helper(naming.rule_global(rule.name), rule.primitive)
        call = self.helper("tangent_by_pullbacks", self.pullbacks)
        positional, keywords = arguments
        tangents = {}
        for parameter in varying:
            atom = bound[parameter]
            tangents[id(atom)] = self.tangent_of(atom)
        positional_tangents = [tangents.get(id(a), cst.Name("None")) for a in positional]
        keyword_tangents = [cst.DictElement(cst.SimpleString(repr(k)), tangents[id(v)])
                            for k, v in keywords.items() if id(v) in tangents]
        return cst.Call(cst.Name(call), [
            cst.Arg(cst.Name(primitive)), cst.Arg(cst.Name(target)),
            cst.Arg(_tuple(positional)),
            cst.Arg(cst.Dict([cst.DictElement(cst.SimpleString(repr(k)), v) for k, v in keywords.items()])),
            cst.Arg(_tuple(positional_tangents)),
            cst.Arg(cst.Dict(keyword_tangents)),
        ])

    # ---- helpers ----------------------------------------------------------------------------

    def fit(self, expression: cst.BaseExpression, target: str, bare: bool = False) -> cst.BaseExpression:
        """The tangent fitted to the primal's shape and dtype (a fresh array where `expression`
        is another value's tangent); nothing to fit between Python numbers."""
        if target in self.numbers:
            return expression
        return runtime_call("fresh" if bare else "fitted", syntax.strip_parentheses(expression), cst.Name(target))

    def tangent_or_zero(self, atom) -> cst.BaseExpression:
        tangent = self.tangent_of(atom)
        if tangent is not None:
            return tangent
        if isinstance(atom, (cst.Float, cst.Integer)) or (
            isinstance(atom, cst.UnaryOperation) and isinstance(atom.expression, (cst.Float, cst.Integer))
        ):
            return cst.Float("0.0")
        return runtime_call("zero_tangent", atom)

    def template_mapping(self, rule: Rule, bound: dict, target: str, expressions) -> dict:
        _, outputs, _, _ = rule.parts
        mapping: dict[str, cst.BaseExpression] = {outputs[0]: cst.Name(target)}
        defaults = templates.defaults(rule)
        for parameter in rule.signature.parameters:
            atom = bound.get(parameter)
            if atom is not None and syntax.is_a(atom, cst.BaseExpression):
                mapping[parameter] = templates.parenthesized(atom)
            elif parameter in defaults:
                mapping[parameter] = defaults[parameter]
        read = {n for node in expressions for n in syntax.variables_read(node)}
        for name in sorted(read - set(mapping) - set(rule.parts[2])):
            value = rule.globals.get(name, getattr(builtins, name, _MISSING))
            if value is _MISSING:
                continue
            alias = self.helper(name, value)
            if alias != name:
                mapping[name] = cst.Name(alias)
        return mapping

    def helper(self, name: str, value) -> str:
        """`value` in the program's namespace under `name`, or under a fresh name where `name`
        holds something else there or in the user's function."""
        if name == RUNTIME:  # the runtime package: every program has it (renamed: program.TANGENT_RUNTIME)
            return name
        held = self.namespace.get(name, _MISSING)
        if held is value:
            return name
        if held is _MISSING and (name not in self.namer.taken or self.resolver.lookup(name) is value):
            self.namespace[name] = value
            return name
        for existing, kept in self.namespace.items():
            if kept is value and existing.startswith(name):
                return existing
        alias = self.namer.fresh(naming.rule_global(name))
        self.namespace[alias] = value
        return alias


_EQUAL = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))


class _ByNode(cst.CSTTransformer):
    def __init__(self, by_node: dict):
        self.by_node = by_node

    def on_leave(self, original, updated):
        return self.by_node.get(id(original), updated)


def _tuple(elements: list) -> cst.Tuple:
    """`(a, b)`, and `(a,)` for one element."""
    items = [cst.Element(e) for e in elements]
    if len(items) == 1:
        items = [cst.Element(elements[0], comma=cst.Comma())]
    return cst.Tuple(items, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
