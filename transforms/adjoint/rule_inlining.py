"""A rule's backward inlined: the template's kept steps (transforms/templates.py) renamed into the
program, each accumulation through the Generator's `accumulate`; a user's rule checked."""

from __future__ import annotations

import builtins

import libcst as cst

from cpsgrad.rules.registry import TEMPLATE_ADJOINT_SUFFIX, Rule
from cpsgrad.transforms import naming, templates
from cpsgrad.transforms.adjoint.complex_guard import complex_guard
from cpsgrad.transforms.adjoint.frames import Renamer
from cpsgrad.transforms.adjoint.output import (
    Lines,
    assign,
    delete,
    handler,
    runtime_call,
    string,
    template,
    try_statement,
)
from cpsgrad.transforms.adjoint.records import RuleCall

_MISSING = object()


class RuleInlining:
    """The Generator's inlining of rules (reads `namer`, `namespace`, `resolver`, `suffix`)."""

    def inline_rule(self, record: RuleCall, output: str, defined: dict[str, str], lines: Lines) -> None:
        rule = record.rule
        _, outputs, output_adjoints, _ = rule.parts
        if len(outputs) == 1:
            mapping: dict[str, cst.BaseExpression] = {
                outputs[0]: cst.Name(record.target),
                output_adjoints[0]: cst.Name(output),
            }
        else:  # `a_d, b_d = yield a, b`: the call returned a tuple, its adjoint has one part each
            mapping = {}
            for position, (name, adjoint) in enumerate(zip(outputs, output_adjoints, strict=True)):
                mapping[name] = cst.Subscript(
                    cst.Name(record.target), [cst.SubscriptElement(cst.Index(cst.Integer(str(position))))]
                )
                mapping[adjoint] = runtime_call("item", cst.Name(output), cst.Integer(str(position)))
        checked = not rule.trusted  # a user's rule: its output adjoints materialized, its contributions checked
        if checked:
            label = string(rule.label)
        if checked and not self.holds_number(self.adjoint(record.target)):
            values = [cst.Name(record.target)] if len(outputs) == 1 else [mapping[name] for name in outputs]
            for adjoint, value in zip(output_adjoints, values, strict=True):
                mapping[adjoint] = runtime_call("rule_adjoint", mapping[adjoint], value)
        defaults = templates.defaults(rule)
        accumulators: dict[str, str | None] = {}
        for parameter in rule.signature.parameters:
            atom = record.bound.get(parameter)
            if atom is not None:
                mapping[parameter] = templates.parenthesized(atom)
            elif parameter in defaults:  # omitted at the call: the template's default stands in
                mapping[parameter] = defaults[parameter]
            accumulators[parameter + TEMPLATE_ADJOINT_SUFFIX] = None if atom is None else record.source(atom)
        steps = templates.kept_steps(rule, {name for name, adjoint in accumulators.items() if adjoint is not None})
        locals_ = {
            name: self.local_name(naming.backward_local(record.target, name)) for step in steps for name in step.names
        }
        mapping.update({name: cst.Name(alias) for name, alias in locals_.items()})
        mapping.update(self.template_globals(rule, set(mapping) | set(accumulators), steps))
        renamer = Renamer(mapping)
        # numbers in and a number out (not np.full(3, a)): no broadcasting happened to undo
        numbers_only = self.holds_number(self.adjoint(record.target)) and all(
            self.is_number(a) for a in record.bound.values()
        )
        start = len(lines)
        if checked:  # whatever the rule's backward raises names the rule: its lines go in a try
            outer, lines = lines, Lines(self)
            start = 0
        for step in steps:
            value = templates.without_unbroadcast(step.value) if numbers_only else step.value
            contribution = value.visit(renamer)
            if step.names:  # a backward local, computed once for the accumulations below
                lines.append(assign(step.target.visit(renamer), contribution))
                continue
            if checked:
                parameter = step.accumulator[: -len(TEMPLATE_ADJOINT_SUFFIX)]
                contribution = runtime_call(
                    "rule_contribution", contribution, mapping[parameter], label, string(parameter)
                )
            self.accumulate(accumulators[step.accumulator], contribution, defined, lines)
        if steps and not checked and not numbers_only:
            complex_guard(rule, record, mapping, outputs, start, lines)
        if locals_:  # what the locals hold is the adjoints' alone now: later sums may add in place
            lines.append(delete(list(locals_.values())))
        if checked and lines:
            failed = Lines(self, [template("cpsgrad_runtime.rule_failed(__label__, error)", label=label)])
            outer.append(try_statement(lines, handler(None, failed)), origin=self.origin)

    def local_name(self, base: str) -> str:
        """A fresh name for a template's backward local, never one that reads as an adjoint."""
        name = self.namer.fresh(base)
        while name.endswith(self.suffix):
            name = self.namer.numbered(base)
        return name

    def template_globals(self, rule: Rule, local: set[str], steps: list) -> dict[str, cst.BaseExpression]:
        """Bind the module names a template's kept `steps` and defaults read into the namespace."""
        aliases: dict[str, cst.BaseExpression] = {}
        for name in templates.reads(rule, steps):
            if name in local:
                continue
            value = rule.globals.get(name, getattr(builtins, name, _MISSING))
            if value is _MISSING:
                continue
            alias = name
            shadowed = name in self.namer.taken and self.resolver.lookup(name) is not value
            if shadowed or self.namespace.get(name, value) is not value:
                alias = naming.rule_global(name)
                aliases[name] = cst.Name(alias)
            self.namespace[alias] = value
        return aliases

