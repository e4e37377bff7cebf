"""The forward pass of one statement: the statement as the user wrote it (renamed to the current
versions) and, where it is active, the record of its backward (records.py), or a clear refusal."""

from __future__ import annotations

import libcst as cst
import numpy as np

from cpsgrad import runtime
from cpsgrad.errors import NoRuleError, UnsupportedError
from cpsgrad.rules.registry import TABLE, advice
from cpsgrad.runtime.objects import METHOD_ADVICE as _METHOD_ADVICE  # shared with the call sites
from cpsgrad.transforms import attributes, calls, effects, naming, starred, syntax, writes
from cpsgrad.transforms.adjoint import attributes as attribute_writes
from cpsgrad.transforms.adjoint import list_changes
from cpsgrad.transforms.adjoint.frames import Frame
from cpsgrad.transforms.adjoint.output import RUNTIME, Lines, assign, call_line, kept, runtime_call, string
from cpsgrad.transforms.adjoint.records import (
    Copy,
    DictDisplay,
    Display,
    Field,
    Index,
    Record,
    RuleCall,
    Unpack,
    Write,
)
from cpsgrad.transforms.containers import is_list_change
from cpsgrad.transforms.operators import binary_primitive, unary_primitive


class Forward:
    """The Generator's forward statements (reads `normalized`, `resolver`, `numbers`, `containers`)."""

    def forward(self, statement, frame: Frame, lines: Lines, records: list[Record]) -> None:
        location = self.normalized.location(statement)
        self.origin = (location, "forward")
        if isinstance(statement, cst.If):
            self.inline_if(statement, frame, lines)
            return
        small = statement.body[0]
        self.check_reads(small.value, frame, lines)
        if isinstance(small, cst.Expr):
            value = self.rename(small.value, frame)
            effect = None
            if isinstance(value, cst.Call) and any(self.active_source(a, frame) for a in _operands(value)):
                effect = self.check_effect(statement, small.value, value, frame)  # transforms/effects.py
            else:
                value = attribute_writes.inactive(self, value, lines)
            lines.append(call_line(effect) if effect is not None else kept(self.rename(statement, frame)))
            return
        value = self.rename(small.value, frame)
        target = small.targets[0].target
        if isinstance(target, cst.Tuple):  # a, b = t
            variables = [e.value.value for e in target.elements]
            source = self.active_source(value, frame) if isinstance(value, cst.Name) else None
            versions = [self.new_version(frame, v) for v in variables]
            lines.append(assign(versions, value))
            if source is not None and any(self.is_active_variable(v) for v in variables):
                records.append(Unpack(versions, {value.value: source}, origin=location, value=value))
            return
        variable = target.value
        first = len(lines)
        if writes.is_write(value):  # x = written(x, key, v): saved, written, restored in its backward
            self.write(statement, variable, value, frame, lines, records)
            return
        if is_list_change(value):  # xs = appended(xs, v) / removed(xs, i): in place, undone in its backward
            list_changes.forward(self, statement, variable, value, frame, lines, records)
            return
        if attributes.is_attribute_write(value):  # obj = set_attribute(obj, 'w', v): adjoint/attributes.py
            return attribute_writes.forward(self, statement, variable, value, frame, lines, records)
        self.guard_in_place(statement, variable, value, lines)
        record = None
        if self.is_active_variable(variable):
            record = self.record(statement, small.value, value, frame)
        version = self.new_version(frame, variable)
        value = attribute_writes.inactive(self, value, lines, record, variable)  # checked (adjoint/attributes.py)
        lines.append(assign(version, value))
        self.check_in_place(statement, value, version, lines)
        if record is not None:
            record.target = version
            record.origin = location
            record.lines = range(first, len(lines))
            records.append(record)

    def write(self, statement, variable: str, value: cst.Call, frame: Frame, lines: Lines, records: list):
        """A write into `variable`'s array has a record whether or not it is active: the backward of
        what ran before reads the values it saw, so what the write overwrote is always restored."""
        first = len(lines)
        container, key, written = writes.write_parts(value)
        adjoints = {}
        for atom in (container, written):
            source = self.active_source(atom, frame) if isinstance(atom, cst.Name) else None
            if source is not None:
                adjoints[atom.value] = source
        version = self.new_version(frame, variable)
        saved = self.namer.fresh(naming.overwritten(version))
        update = syntax.dotted_name(value.func) == f"{RUNTIME}.updated"
        saving = (
            runtime_call("overwritten_update", container) if update else runtime_call("overwritten", container, key)
        )
        lines.append(assign(saved, saving))
        lines.append(assign(version, value))
        location = self.normalized.location(statement)
        records.append(
            Write(
                version, adjoints, range(first, len(lines)), location,
                container=container, key=key, value=written, saved=saved, update=update,
            )
        )

    def guard_in_place(self, statement, variable: str, value: cst.BaseExpression, lines: Lines) -> None:
        """`c += b` is `c = c + b` here: where an array `c` is shared (transforms/analysis/aliasing.py: another
        name reads it later, or it is the caller's), a check refuses it at run time instead of
        computing something else."""
        why = self.normalized.in_place.get(id(statement))
        if why is not None:
            where, rewrite = self.in_place_words(statement)
            lines.append(
                call_line(runtime_call("refuse_in_place", value.left, string(where), string(rewrite), string(why)))
            )

    def check_in_place(self, statement, value: cst.BaseExpression, version: str, lines: Lines) -> None:
        """After `c_1 = c + b` for an unshared `c += b`: numpy would have cast or refused a result of
        another dtype or shape; the check refuses those."""
        if id(statement) in self.normalized.in_place and self.normalized.in_place[id(statement)] is None:
            where, rewrite = self.in_place_words(statement)
            check = runtime_call("check_in_place", cst.Name(version), value.left, string(where), string(rewrite))
            lines.append(call_line(check))

    def in_place_words(self, statement) -> tuple[str, str]:
        origin = self.normalized.origins[id(statement)]
        where = f"{self.normalized.location(statement)}: {syntax.code(origin).strip()}"
        target = syntax.code(origin.target)
        operator = syntax.code(origin.operator).strip()[:-1]
        return where, f"{target} = {target} {operator} {syntax.code(origin.value)}"

    def record(self, statement, original: cst.BaseExpression, value: cst.BaseExpression, frame: Frame) -> Record | None:
        """The backward record of an active assignment, or None when it has no backward."""
        adjoints = {a.value: self.active_source(a, frame) for a in _operands(value) if isinstance(a, cst.Name)}
        adjoints = {version: adjoint for version, adjoint in adjoints.items() if adjoint is not None}
        if not adjoints:
            return None
        if isinstance(value, cst.BinaryOperation) and any(
            self.owner(a, frame) in self.containers for a in (value.left, value.right)
        ):
            primitive = _SEQUENCE_OPERATORS.get(type(value.operator))  # runtime/sequences.py decides when it runs
            if primitive is not None:
                record = self.rule_record(
                    statement, primitive, syntax.code(value.operator).strip(), [value.left, value.right], {}
                )
                if record is not None:
                    record.adjoints = adjoints
                return record
            self.fail(
                statement,
                f"operator {syntax.code(value.operator).strip()} on a sequence",
                "concatenating or repeating differentiable tuples and lists is not supported yet; "
                "build the sequence element by element",
            )
        record = self.record_kind(statement, original, value)
        if isinstance(record, RuleCall):
            self.check_bound(statement, original, record, adjoints)
        if record is not None:
            record.adjoints = adjoints
        return record

    def check_bound(self, statement, original, record: RuleCall, adjoints: dict) -> None:
        """Refuse a differentiable value bound to a parameter the rule gives no adjoint (its
        gradient would be dropped): `np.var(x, ddof=x[0])`, `m.sum(t)` of a module `m` taken for
        an array's method, where `t` lands on `axis`."""
        for parameter in record.rule.without_adjoint:
            atom = record.bound.get(parameter)
            if isinstance(atom, cst.Name) and atom.value in adjoints:
                call = syntax.code(original.func) if isinstance(original, cst.Call) else syntax.code(original)
                self.fail(
                    statement,
                    f"call of {call.strip()}",
                    f"a differentiable value reaches the parameter {parameter} of its rule ({record.rule.label}), "
                    "which has no derivative in it; pass a constant there, or declare a rule that differentiates it "
                    "(cpsgrad.rule)",
                    NoRuleError,
                )

    def record_kind(self, statement, original: cst.BaseExpression, value: cst.BaseExpression) -> Record | None:
        if isinstance(value, cst.Attribute):  # x.T: the attribute's rule, with x as its argument
            descriptor = getattr(np.ndarray, value.attr.value, None)
            label = f".{value.attr.value}"
            if descriptor is None:  # p.W: a field of a NamedTuple or a dataclass instance
                return Field(owner=value.value, name=value.attr.value)
            if descriptor not in TABLE:
                self.fail(
                    statement,
                    f"attribute {syntax.code(original)} of a differentiable value",
                    f"no derivative rule for the attribute {label}; "
                    "cpsgrad knows numpy arrays' attributes (T, shape, ...)",
                    NoRuleError,
                )
            return self.rule_record(statement, descriptor, label, [value.value], {})
        if syntax.is_atom(value):
            return Copy(value=value)
        if isinstance(value, (cst.Tuple, cst.List)):
            return Display(elements=[e.value for e in value.elements])
        if isinstance(value, cst.Dict):
            return DictDisplay(values=[e.value for e in value.elements], keys=[e.key for e in value.elements])
        if isinstance(value, cst.Subscript):
            return Index(container=value.value, index=[e.slice for e in value.slice])
        if isinstance(value, cst.BinaryOperation):
            primitive = binary_primitive(value.operator)
            return self.rule_record(
                statement, primitive, syntax.code(value.operator).strip(), [value.left, value.right], {}
            )
        if isinstance(value, cst.UnaryOperation):
            primitive = unary_primitive(value.operator)
            return self.rule_record(statement, primitive, syntax.code(value.operator).strip(), [value.expression], {})
        if isinstance(value, cst.Call):
            positional, keywords = _call_arguments(value)
            method = self.method(original.func)
            if method is not None:  # x.sum(axis=0): the rule of np.ndarray.sum, called as (x, axis=0)
                receiver = value.func.value
                return self.rule_record(
                    statement, method, syntax.code(original.func), [receiver, *positional], keywords
                )
            primitive = self.callee(statement, original.func)
            return self.rule_record(statement, primitive, syntax.code(original.func), positional, keywords)
        self.fail(statement, syntax.code(value), "this operation is not differentiable")
        return None

    def method(self, callee: cst.BaseExpression):
        """The numpy array method (or, for a name arrays lack, the dict method) a call
        `x.name(...)` of a differentiable local value `x` stands for, if any."""
        return calls.array_method(callee, self.resolver) or calls.container_method(callee, self.resolver)

    def callee(self, statement, callee: cst.BaseExpression):
        """The primitive a call of a differentiable value names, or a clear error."""
        primitive = self.resolver.resolve(callee)
        if primitive is not None:
            return primitive
        label = syntax.code(callee)
        if (
            isinstance(callee, cst.Attribute)
            and syntax.dotted_name(callee.value) is not None
            and self.resolver.resolve(callee.value) is None
        ):
            self.fail(statement, f"method call {label}", _METHOD_ADVICE, UnsupportedError)
        self.fail(
            statement,
            f"call of {label}",
            f"{label} is computed at run time and receives a differentiable value only through its receiver; "
            "pass the value as an argument",
            NoRuleError,
        )

    def check_effect(self, statement, original: cst.Call, value: cst.Call, frame: Frame) -> cst.Call | None:
        """A call made for its effect on a differentiable value: a non-differentiable primitive
        (print, ...) stays as it is; anything else runs as Python with its differentiable
        arguments frozen, or is refused (transforms/effects.py)."""
        if starred.for_effect(original, self.resolver):  # print(*xs): a primitive without a gradient
            return None
        if calls.classify(original.func, self.resolver) != calls.USER:
            positional, keywords = _call_arguments(value)
            for rule in TABLE.rules_for(self.callee(statement, original.func)):
                if rule.bind(tuple(positional), keywords) is not None and not rule.differentiable:
                    return None
        return effects.effect_line(self, statement, original, value, frame)

    def rule_record(self, statement, primitive, label: str, positional: list, keywords: dict) -> Record | None:
        for rule in TABLE.rules_for(primitive):
            bound = rule.bind(tuple(positional), keywords)
            if bound is not None:
                if not rule.differentiable:
                    return None
                return RuleCall(rule=rule, bound=bound)
        self.fail(
            statement,
            f"call of {label}",
            advice(primitive, label),
            NoRuleError,
        )
        return None

    def fail(self, statement, construct: str, advice: str, error=UnsupportedError):
        raise error(self.normalized.location(statement), construct, advice)


_SEQUENCE_OPERATORS = {cst.Add: runtime.concatenation, cst.Multiply: runtime.repetition}



def _operands(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(value, cst.Attribute):  # x.T reads x (math.pi reads nothing local: not a Name)
        return [value.value]
    if syntax.is_atom(value):
        return [value]
    if isinstance(value, (cst.Tuple, cst.List)):
        return [e.value for e in value.elements]
    if isinstance(value, cst.Dict):  # keys are not differentiable
        return [e.value for e in value.elements]
    if isinstance(value, cst.Subscript):
        return [value.value]
    if isinstance(value, cst.BinaryOperation):
        return [value.left, value.right]
    if isinstance(value, cst.UnaryOperation):
        return [value.expression]
    if isinstance(value, cst.Call):
        receiver = value.func
        while isinstance(receiver, cst.Attribute):  # `l.pop` reads `l`; `math.sin` reads nothing local
            receiver = receiver.value
        return [a.value for a in value.args] + ([receiver] if receiver is not value.func else [])
    if isinstance(value, cst.Attribute):
        return [value.value]
    return []


def _call_arguments(call: cst.Call) -> tuple[list[cst.BaseExpression], dict[str, cst.BaseExpression]]:
    """A call's positional arguments and keyword arguments, to bind to a rule's signature."""
    positional = [a.value for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    return positional, keywords
