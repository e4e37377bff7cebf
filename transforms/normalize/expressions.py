"""Normalize's expressions, a part of `_Normalizer` (transforms/normalize/__init__.py).

The expressions: each operand computed into an atom (a name, a constant, a dotted read), left to
right; calls, `and`/`or`, comparisons (chained ones as `if`s) and conditional expressions.
"""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import (
    assignment_expressions,
    comprehensions,
    container_methods,
    containers,
    evaluation_order,
    sets,
    starred,
    syntax,
    writes,
)


def _receiver(atom: cst.BaseExpression) -> cst.BaseExpression:
    """An atom as an attribute's receiver: `(-1).real`, `(2).bit_length()`, not `-1.real` (which
    reads `-(1.real)`) or `2.bit_length()` (a syntax error)."""
    if isinstance(atom, (cst.UnaryOperation, cst.Integer, cst.Float, cst.Imaginary)) and not atom.lpar:
        return atom.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return atom


class Expressions:
    """`_Normalizer`'s methods for the expressions."""

    def in_order(self, parts: list, out: list) -> list:
        """The operands `parts` (each a function of `out` flattening one operand into it) as atoms,
        in Python's order of evaluation (transforms/evaluation_order.py)."""
        return evaluation_order.in_order(self, parts, out)

    def atom(self, node: cst.BaseExpression, out: list) -> cst.BaseExpression:
        value = self.simple(node, out)
        if isinstance(value, cst.Name) and value.value in self.user_locals and value.value not in self.assigned:
            return self.temporary_value(value, out, node)  # read now: it may be unbound (self.assigned)
        if assignment_expressions.stale(self, value):  # read now: a walrus after it may rebind it
            return self.temporary_value(value, out, node)
        if syntax.is_atom(value) and not self.local_attribute(value):
            return value
        return self.temporary_value(value, out, node)

    def simple(self, node: cst.BaseExpression, out: list) -> cst.BaseExpression:
        """One operation on atoms computing `node`, its operands flattened into `out`."""
        if self.local_attribute(node):
            return cst.Attribute(_receiver(self.atom(node.value, out)), node.attr)
        if syntax.is_atom(node):
            return syntax.strip_parentheses(node)
        if isinstance(node, cst.BinaryOperation):
            left, right = self.in_order([self.operand(node.left), self.operand(node.right)], out)
            if isinstance(node.operator, cst.Power) and isinstance(left, cst.UnaryOperation):
                left = left.with_changes(
                    lpar=[cst.LeftParen()], rpar=[cst.RightParen()]
                )  # (-0.5) ** 2, not -(0.5 ** 2)
            return cst.BinaryOperation(left, type(node.operator)(), right)
        if isinstance(node, cst.UnaryOperation):
            return cst.UnaryOperation(type(node.operator)(), self.atom(node.expression, out))
        if isinstance(node, cst.BooleanOperation):
            return self.boolean(node, out)
        if isinstance(node, cst.Comparison):
            return self.comparison(node, out)
        if isinstance(node, cst.IfExp):
            return self.conditional(node, out)
        if isinstance(node, cst.Call):
            return self.call(node, out)
        if isinstance(node, cst.NamedExpr):  # y := value (transforms/assignment_expressions.py)
            return assignment_expressions.named(self, node, out)
        if isinstance(node, cst.Set):  # {a, b} -> set((a, b)) (transforms/sets.py)
            return sets.display(self, node, out)
        if isinstance(node, comprehensions.NODES):  # -> loops (transforms/comprehensions.py)
            return comprehensions.comprehension(self, node, out)
        if isinstance(node, cst.Subscript):
            value, *indices = self.in_order(
                [self.operand(node.value)] + [self.slice_part(e.slice) for e in node.slice], out
            )
            return cst.Subscript(value, [cst.SubscriptElement(index) for index in indices])
        if starred.has_starred_element(node):  # [*xs, y]
            return starred.display(self, node, out)
        if isinstance(node, (cst.Tuple, cst.List)):
            elements = [cst.Element(v) for v in self.in_order([self.operand(e.value) for e in node.elements], out)]
            return cst.Tuple(elements) if isinstance(node, cst.Tuple) else cst.List(elements)
        if isinstance(node, cst.Dict) and any(isinstance(e, cst.StarredDictElement) for e in node.elements):
            return containers.dict_display(self, node, out)  # {**d, "k": v}
        if isinstance(node, cst.Dict):  # keys and values in the order Python evaluates them
            flat = self.in_order([self.operand(part) for e in node.elements for part in (e.key, e.value)], out)
            return cst.Dict([cst.DictElement(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)])
        if isinstance(node, cst.Attribute):  # attribute of a computed value
            return cst.Attribute(_receiver(self.atom(node.value, out)), node.attr)
        if isinstance(node, cst.Ellipsis):
            return node
        self.reject(node, type(node).__name__, "this expression is not supported")

    def operand(self, node: cst.BaseExpression):
        return lambda out: self.atom(node, out)

    def slice_part(self, node: cst.BaseSlice):
        """An index, or a slice with its bounds in Python's order (`in_order`), as one operand."""
        if isinstance(node, cst.Index):
            return lambda out: cst.Index(self.atom(node.value, out))
        given = [part for part in ("lower", "upper", "step") if getattr(node, part) is not None]
        return lambda out: cst.Slice(None, None).with_changes(
            **dict(zip(given, self.in_order([self.operand(getattr(node, part)) for part in given], out), strict=True))
        )

    def call(self, node: cst.Call, out: list) -> cst.BaseExpression:
        callee = node.func
        if containers.changes_owned_list(self, node):  # xs.append(v), ... (transforms/analysis/lists.py's rule)
            return containers.list_mutation(self, callee.value, callee.attr.value, node, out)
        rewritten = comprehensions.higher_order_call(self, node, out) or containers.dict_call(self, node, out)
        rewritten = rewritten or container_methods.method_call(self, node, out)  # d.update(m), d.pop(k), ...
        if rewritten is None and not containers.is_list_call(self, node):  # xs.sort() of a list is not a write
            rewritten = writes.in_place_call(self, node, out)
        if rewritten is not None:  # map, filter, reduce, ...; x.fill(v), np.copyto(x, v), out=x
            return rewritten
        if syntax.dotted_name(callee) is None or self.local_attribute(callee):
            if isinstance(callee, cst.Attribute):
                callee = cst.Attribute(_receiver(self.atom(callee.value, out)), callee.attr)
            else:  # fs[i](x), make(n)(x): the function is a value like any other
                callee = self.atom(callee, out)
        else:
            callee = syntax.strip_parentheses(callee)
            dotted = syntax.dotted_name(callee)
            if (
                node.args
                and (root := dotted.split(".")[0]) in self.user_names
                and root not in self.locals
                and evaluation_order.unbound(self.resolver, dotted)
            ):
                # a dotted name that names nothing now (math.hupot, an undefined function): Python
                # looks it up before the arguments, so its AttributeError or NameError comes first
                callee = self.temporary_value(callee, out, node)
            elif assignment_expressions.stale(self, callee):  # f(f := g): f read first
                callee = self.temporary_value(callee, out, node)
        if any(a.star for a in node.args):  # f(*xs, **kw) (transforms/starred.py)
            return starred.call(self, callee, node, out)
        values = self.in_order([self.operand(a.value) for a in node.args], out)
        arguments = [cst.Arg(value, keyword=a.keyword) for value, a in zip(values, node.args, strict=True)]
        positional = [a for a in arguments if a.keyword is None]
        if (
            (self.is_builtin(callee, "max") or self.is_builtin(callee, "min"))
            and len(positional) >= 2
            and len(positional) == len(arguments)
        ):
            packed = self.temporary_value(cst.Tuple([cst.Element(a.value) for a in positional]), out, node)
            arguments = [cst.Arg(packed)]
        return cst.Call(callee, arguments)

    def boolean(self, node: cst.BooleanOperation, out: list) -> cst.Name:
        result = self.namer.temporary()
        self.emit(out, syntax.assign(result, self.simple(node.left, out)), node)
        right: list = []
        self.emit(right, syntax.assign(result, self.simple(node.right, right)), node)
        test = cst.Name(result) if isinstance(node.operator, cst.And) else syntax.negate(cst.Name(result))
        self.emit(out, syntax.if_statement(test, right), node)
        return cst.Name(result)

    def comparison(self, node: cst.Comparison, out: list) -> cst.BaseExpression:
        if len(node.comparisons) == 1:
            target = node.comparisons[0]
            left, right = self.in_order([self.operand(node.left), self.operand(target.comparator)], out)
            return cst.Comparison(left, [cst.ComparisonTarget(type(target.operator)(), right)])
        left = self.atom(node.left, out)
        result = self.namer.temporary()
        self.chained(result, left, list(node.comparisons), out, node)
        return cst.Name(result)

    def chained(self, result: str, left, comparisons: list, out: list, origin: cst.Comparison) -> None:
        """`result = left < a`, then, only if it holds, the rest of the chain from `a`."""
        first, rest = comparisons[0], comparisons[1:]
        right = self.atom(first.comparator, out)
        compare = cst.Comparison(left, [cst.ComparisonTarget(type(first.operator)(), right)])
        self.emit(out, syntax.assign(result, compare), origin)
        if rest:
            following: list = []
            self.chained(result, right, rest, following, origin)
            self.emit(out, syntax.if_statement(cst.Name(result), following), origin)

    def conditional(self, node: cst.IfExp, out: list) -> cst.Name:
        result = self.namer.temporary()
        test = self.atom(node.test, out)
        body: list = []
        self.emit(body, syntax.assign(result, self.simple(node.body, body)), node)
        orelse: list = []
        self.emit(orelse, syntax.assign(result, self.simple(node.orelse, orelse)), node)
        self.emit(out, syntax.if_statement(test, body, orelse), node)
        return cst.Name(result)
