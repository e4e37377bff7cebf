"""The tangent program's body: each statement of the normalized function, then its tangent.

Forward mode needs no continuations: the normalized program (one operation a statement, loops
as `while`, `if` as it is) keeps its control flow, and each assignment to a variable that
depends on the differentiated arguments (transforms/analysis/activity.py) is followed by the
assignment of its tangent `<name>_t`. A tangent has its primal's structure
(cpsgrad/runtime/tangents.py); what it is for each kind of statement:

- `y = x`: `y_t = x_t` (the same object, as `y` is `x`'s: a write through one is seen by both);
- `y = (a, b)`, `[a, b]`, `{k: a}`: the same display of the elements' tangents (zeros for
  constants); `y = x[i]`, `y = p.field`: the same read of `x_t`, `p_t`;
- `y = f(a, b)` of a primitive: from its rule (rule_tangents.py); of a user function: its own
  tangent program, called through `tangent_call` (calls.py), which returns both;
- `x[i] = v` (normalize's `x = written(x, i, v)`): the same write into `x_t` of `v_t`;
- `return v`: `return v, v_t`.

Where a statement's target is one of its operands (`a = a * b`), the value goes to a fresh
name first, so that the tangent reads the operands the primal read. What forward mode does not
do yet (closures over differentiated values, `try`, calls for their effect on a differentiated
value, `*args`) is refused with its location.
"""

from __future__ import annotations

import libcst as cst
import numpy as np

from cpsgrad.errors import NoRuleError, UnsupportedError
from cpsgrad.rules.registry import TABLE, advice
from cpsgrad.transforms import calls, naming, syntax, writes
from cpsgrad.transforms.adjoint.output import runtime_call
from cpsgrad.transforms.analysis.activity import is_active_value
from cpsgrad.transforms.containers import is_list_change
from cpsgrad.transforms.forward_mode.rule_tangents import RuleTangents, _tuple
from cpsgrad.transforms.operators import binary_primitive, unary_primitive

TANGENT_SUFFIX = "_t"
_USER_CALL = object()


class Renderer(RuleTangents):
    def __init__(self, front, differentiated: tuple[str, ...], pullbacks, tangent_call, tangent_function):
        self.normalized = front.normalized
        self.resolver = front.resolver
        self.active = front.program.active
        self.numbers = front.numbers
        self.differentiated = differentiated
        self.pullbacks = pullbacks
        self.user_names = naming.names_in(self.normalized.definition)
        self.namer = naming.Namer(self.user_names)
        self.namespace: dict = {}
        self.call_helper = self.helper("tangent_call", tangent_call)
        self.function_helper = self.helper("tangent_function", tangent_function)
        self.suffix = TANGENT_SUFFIX
        attempt = 0
        while any(n + self.suffix in self.user_names for n in self.active):
            attempt += 1
            self.suffix = f"{TANGENT_SUFFIX}{attempt}"
        for name in self.active:
            self.namer.reserve(name + self.suffix)

    # ---- names ------------------------------------------------------------------------------

    def tangent_name(self, name: str) -> str:
        return name + self.suffix

    def tangent_of(self, atom) -> cst.Name | None:
        if isinstance(atom, cst.Name) and atom.value in self.active:
            return cst.Name(self.tangent_name(atom.value))
        return None

    def fail(self, statement, construct: str, why: str, error=UnsupportedError):
        raise error(self.normalized.location(statement), construct, why)

    # ---- the function -----------------------------------------------------------------------

    def function(self, name: str) -> cst.FunctionDef:
        parameters = list(self.normalized.parameters)
        body = []
        for parameter in parameters:  # written into with a differentiated value, not differentiated itself
            if parameter in self.active and parameter not in self.differentiated:
                zero = runtime_call("zero_tangent", cst.Name(parameter))
                body.append(self.assign(self.tangent_name(parameter), zero))
        body += self.block(self.normalized.definition.body.body)
        names = parameters + [self.tangent_name(p) for p in self.differentiated]
        return cst.FunctionDef(
            cst.Name(name), cst.Parameters([cst.Param(cst.Name(n)) for n in names]), cst.IndentedBlock(body)
        )

    def block(self, statements) -> list:
        out = []
        for statement in statements:
            out += self.statement(statement)
        return out or [cst.SimpleStatementLine([cst.Pass()])]

    def statement(self, statement) -> list:
        if isinstance(statement, cst.If):
            orelse = statement.orelse
            if orelse is not None:
                orelse = orelse.with_changes(body=cst.IndentedBlock(self.block(orelse.body.body)))
            return [statement.with_changes(body=cst.IndentedBlock(self.block(statement.body.body)), orelse=orelse)]
        if isinstance(statement, cst.While):
            return [statement.with_changes(body=cst.IndentedBlock(self.block(statement.body.body)))]
        if not isinstance(statement, cst.SimpleStatementLine):
            kind = type(statement).__name__.lower()
            self.fail(statement, f"{kind} statement", f"forward mode (cpsgrad.jvp) does not differentiate {kind} yet")
        small = statement.body[0]
        if isinstance(small, cst.Assign):
            return self.assignment(statement, small)
        if isinstance(small, cst.Return):
            return [self.returned(small)]
        if isinstance(small, cst.Expr):
            return self.effect(statement, small)
        return [statement]

    def returned(self, small: cst.Return) -> cst.SimpleStatementLine:
        value = small.value if small.value is not None else cst.Name("None")
        tangent = self.tangent_of(value)
        if tangent is None:
            tangent = self.tangent_or_zero(value) if small.value is not None else cst.Name("None")
        return cst.SimpleStatementLine([cst.Return(cst.Tuple([cst.Element(value), cst.Element(tangent)]))])

    def effect(self, statement, small: cst.Expr) -> list:
        value = small.value
        if not (isinstance(value, cst.Call) and any(n in self.active for n in syntax.variables_read(value))):
            return [statement]
        user = calls.classify(value.func, self.resolver) == calls.USER
        if user and not calls.is_callee_active(value.func, self.active):
            before, call = self.user_call(statement, value)
            return [*before, cst.SimpleStatementLine([cst.Expr(call)])]
        primitive = self.resolver.resolve(value.func)
        rules = TABLE.rules_for(primitive) if primitive is not None else []
        if rules and not any(r.differentiable for r in rules):
            return [statement]  # print(x), ...
        self.fail(
            statement, f"call of {syntax.code(value.func).strip()} for its effect",
            "forward mode (cpsgrad.jvp) does not differentiate a call whose result is dropped yet; assign it",
        )
        return []

    # ---- assignments ------------------------------------------------------------------------

    def assign(self, target: str, value: cst.BaseExpression) -> cst.SimpleStatementLine:
        return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(target))], value)])

    def assignment(self, statement, small: cst.Assign) -> list:
        target = small.targets[0].target
        value = small.value
        if isinstance(target, cst.Tuple):  # a, b = t
            names = [e.value.value for e in target.elements]
            if not any(n in self.active for n in names):
                return [statement]
            source = self.tangent_of(value)
            if source is None:
                zeros = [self.assign(self.tangent_name(n), runtime_call("zero_tangent", cst.Name(n))) for n in names]
                return [statement, *zeros]
            unpacked = cst.Tuple([cst.Element(cst.Name(self.tangent_name(n))) for n in names], lpar=[], rpar=[])
            return [statement, cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(unpacked)], source)])]
        name = target.value
        if name not in self.active:
            return [statement]
        tangent_name = self.tangent_name(name)
        if not is_active_value(value, self.active, self.resolver):
            zero = cst.Float("0.0") if syntax.is_constant(value) and name in self.numbers else None
            return [statement, self.assign(tangent_name, zero or runtime_call("zero_tangent", cst.Name(name)))]
        if isinstance(value, cst.Call) and _is_exception(self.resolver.resolve(value.func)):
            return [statement, self.assign(tangent_name, cst.Name("None"))]  # raise ValueError(f"... {x}")
        if isinstance(value, cst.Call) and self.is_user_call(value):
            pair = cst.Tuple([cst.Element(cst.Name(name)), cst.Element(cst.Name(tangent_name))], lpar=[], rpar=[])
            before, call = self.user_call(statement, value)
            return [*before, cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(pair)], call)])]
        overwrites = name in syntax.variables_read(value) and not writes.is_write(value)
        result = self.namer.fresh(f"{name}_new") if overwrites else name
        if overwrites and name in self.numbers:
            self.numbers.add(result)
        tangent = self.tangent(statement, value, result)
        if not overwrites:
            return [self.assign(name, value), self.assign(tangent_name, tangent)]
        return [self.assign(result, value), self.assign(tangent_name, tangent), self.assign(name, cst.Name(result))]

    def is_user_call(self, value: cst.Call) -> bool:
        if calls.is_callee_active(value.func, self.active):
            return True
        return calls.array_method(value.func, self.resolver) is None and calls.container_method(
            value.func, self.resolver
        ) is None and calls.classify(value.func, self.resolver) == calls.USER

    def user_call(self, statement, value: cst.Call) -> tuple[list, cst.Call]:
        """(the statements before, the call) of a user function's tangent program: without keywords
        `f_jvp = tangent_function(f, (a, n), (a_t, None))` then `f_jvp(a, n, a_t)`, a call of a
        plain function that the reverse mode can differentiate in turn (cpsgrad.hvp); with keywords
        one call `tangent_call(f, (a,), (a_t,), {'n': n}, {})`."""
        if calls.is_callee_active(value.func, self.active):
            self.fail(statement, f"call of {syntax.code(value.func).strip()}",
                      "forward mode (cpsgrad.jvp) does not differentiate a function value that depends on the "
                      "differentiated arguments (a closure over them) yet")
        if any(a.star for a in value.args):
            self.fail(statement, "starred arguments", "forward mode (cpsgrad.jvp) does not take f(*xs) yet")
        positional = [a.value for a in value.args if a.keyword is None]
        keywords = [a for a in value.args if a.keyword is not None]
        tangents = [self.tangent_of(a) for a in positional]
        arguments = [
            cst.Arg(value.func),
            cst.Arg(_tuple(positional)),
            cst.Arg(_tuple([t or cst.Name("None") for t in tangents])),
        ]
        if not keywords:
            label = (syntax.dotted_name(value.func) or "callee").replace(".", "_")
            program = self.namer.fresh(f"{label}_jvp")
            choose = self.assign(program, cst.Call(cst.Name(self.function_helper), arguments))
            given = [cst.Arg(a) for a in positional] + [cst.Arg(t) for t in tangents if t is not None]
            return [choose], cst.Call(cst.Name(program), given)
        arguments.append(cst.Arg(cst.Dict([cst.DictElement(cst.SimpleString(repr(a.keyword.value)), a.value)
                                           for a in keywords])))
        arguments.append(cst.Arg(cst.Dict([
            cst.DictElement(cst.SimpleString(repr(a.keyword.value)), self.tangent_of(a.value))
            for a in keywords if self.tangent_of(a.value) is not None
        ])))
        return [], cst.Call(cst.Name(self.call_helper), arguments)

    # ---- tangents of values -----------------------------------------------------------------

    def tangent(self, statement, value: cst.BaseExpression, target: str) -> cst.BaseExpression:
        if isinstance(value, cst.Name):
            return self.tangent_of(value) or self.tangent_or_zero(value)
        if writes.is_write(value):  # x = written(x, key, v): the same write into x's tangent
            container, key, written = writes.write_parts(value)
            return self.substituted_call(value, {"container": container, "value": written}, {
                "container": self.tangent_or_zero(container), "value": self.tangent_or_zero(written)})
        if is_list_change(value):  # xs = appended(xs, v), extended(xs, ys), removed(xs, i): on the tangents too
            items, *rest = [a.value for a in value.args]
            replaced = {"items": self.tangent_or_zero(items)}
            bound = {"items": items}
            if syntax.dotted_name(value.func) != "cpsgrad_runtime.removed":
                bound["added"], replaced["added"] = rest[0], self.tangent_or_zero(rest[0])
            return self.substituted_call(value, bound, replaced)
        if isinstance(value, (cst.Tuple, cst.List)):
            if any(isinstance(e, cst.StarredElement) for e in value.elements):
                self.fail(statement, "starred element", "forward mode (cpsgrad.jvp) does not take (*xs, y) yet")
            return value.with_changes(elements=[e.with_changes(value=self.tangent_or_zero(e.value))
                                                for e in value.elements])
        if isinstance(value, cst.Dict):
            return value.with_changes(elements=[e.with_changes(value=self.tangent_or_zero(e.value))
                                                for e in value.elements])
        if isinstance(value, cst.Subscript):
            container = self.tangent_of(value.value)
            if container is None:
                return runtime_call("zero_tangent", cst.Name(target))
            return value.with_changes(value=container)
        if isinstance(value, cst.Attribute) and getattr(np.ndarray, value.attr.value, None) is None:
            owner = self.tangent_of(value.value)  # p.W: a field of a NamedTuple or a dataclass instance
            if owner is None:
                return runtime_call("zero_tangent", cst.Name(target))
            return value.with_changes(value=owner)
        return self.primitive_tangent(statement, value, target)

    def primitive_tangent(self, statement, value, target: str) -> cst.BaseExpression:
        primitive, label, positional, keywords = self.primitive_call(statement, value)
        for rule in TABLE.rules_for(primitive):
            bound = rule.bind(tuple(positional), keywords)
            if bound is not None:
                if not rule.differentiable:
                    return runtime_call("zero_tangent", cst.Name(target))
                return self.rule_tangent(statement, rule, bound, target, value, (positional, keywords))
        self.fail(statement, f"call of {label}", advice(primitive, label), NoRuleError)
        return None

    def primitive_call(self, statement, value) -> tuple:
        """(the primitive, how the call names it, its positional atoms (a method's receiver first),
        its keyword atoms) of an operation or a call of a primitive."""
        if isinstance(value, cst.BinaryOperation):
            return binary_primitive(value.operator), "operator", [value.left, value.right], {}
        if isinstance(value, cst.UnaryOperation):
            return unary_primitive(value.operator), "operator", [value.expression], {}
        if isinstance(value, cst.Attribute):
            label = f".{value.attr.value}"
            primitive = getattr(np.ndarray, value.attr.value)
            if primitive not in TABLE:
                self.fail(statement, f"attribute {syntax.code(value)}", f"no derivative rule for {label}", NoRuleError)
            return primitive, label, [value.value], {}
        if not isinstance(value, cst.Call):
            self.fail(statement, syntax.code(value), "this operation is not differentiable")
        if any(a.star for a in value.args):
            self.fail(statement, "starred arguments", "forward mode (cpsgrad.jvp) does not take f(*xs) yet")
        label = syntax.code(value.func).strip()
        positional = [a.value for a in value.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in value.args if a.keyword is not None}
        method = calls.array_method(value.func, self.resolver) or calls.container_method(value.func, self.resolver)
        if method is not None:
            return method, label, [value.func.value, *positional], keywords
        primitive = self.resolver.resolve(value.func)
        if primitive is None:
            self.fail(statement, f"call of {label}", f"{label} is known only at run time", NoRuleError)
        return primitive, label, positional, keywords

    def refuse_unbound(self, statement, original, rule, parameter: str) -> None:
        call = syntax.code(original.func if isinstance(original, cst.Call) else original).strip()
        self.fail(
            statement, f"call of {call}",
            f"a differentiable value reaches the parameter {parameter} of its rule ({rule.label}), which has no "
            "derivative in it; pass a constant there, or declare a rule that differentiates it (cpsgrad.rule)",
            NoRuleError,
        )


def _is_exception(value) -> bool:
    return isinstance(value, type) and issubclass(value, BaseException)
