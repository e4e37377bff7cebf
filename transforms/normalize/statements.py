"""Normalize's statements, a part of `_Normalizer` (transforms/normalize/__init__.py).

The statements: a block, simple and compound statements, `if`, and assignments (targets
bound in order, values hoisted into temporaries).
"""

from __future__ import annotations

import builtins

import libcst as cst

from cpsgrad.transforms import container_methods, exceptions, starred, syntax, writes
from cpsgrad.transforms.bindings import assigned_in as _assigned_in
from cpsgrad.transforms.bindings import binds as _binds
from cpsgrad.transforms.bindings import ends_in_jump as _ends_in_jump

_AUGMENTED = {
    cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
    cst.PowerAssign: cst.Power, cst.BitAndAssign: cst.BitAnd, cst.BitOrAssign: cst.BitOr,
    cst.BitXorAssign: cst.BitXor, cst.LeftShiftAssign: cst.LeftShift, cst.RightShiftAssign: cst.RightShift,
    cst.MatrixMultiplyAssign: cst.MatrixMultiply,
}


class Statements:
    """`_Normalizer`'s methods for the statements."""

    def block(self, statements) -> list:
        out: list = []
        for statement in statements:
            if statement in self.source.positions:
                self.statements.append(statement)
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    self.small_statement(small, out)
                    self.assigned |= _assigned_in(small)
            elif syntax.is_a(statement, cst.BaseSmallStatement):  # the body of `if c: stmt`
                self.small_statement(statement, out)
                self.assigned |= _assigned_in(statement)
            else:  # an if adds what both branches assign (if_statement); a loop, nothing
                before = set(self.assigned)
                self.compound_statement(statement, out)
                if not isinstance(statement, cst.If):
                    self.assigned = before
            if self.statements and self.statements[-1] is statement:
                self.statements.pop()
        return out

    def small_statement(self, node: cst.BaseSmallStatement, out: list) -> None:
        if isinstance(node, cst.Assign):
            self.assignment([t.target for t in node.targets], node.value, out, node)
        elif isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self.assignment([node.target], node.value, out, node)
        elif isinstance(node, cst.AugAssign) and isinstance(node.target, (cst.Subscript, cst.Attribute)):
            writes.augmented_subscript(self, node, _AUGMENTED[type(node.operator)](), out)
        elif container_methods.statement(self, node, out):  # del x[k], d |= m (transforms/container_methods.py)
            pass
        elif isinstance(node, cst.AugAssign):
            operator = _AUGMENTED[type(node.operator)]()
            value = cst.BinaryOperation(node.target, operator, node.value)
            self.assignment([node.target], value, out, node)
        elif isinstance(node, cst.Expr):
            if (
                isinstance(node.value, cst.Name)
                and node.value.value not in self.locals
                or isinstance(node.value, cst.Attribute)
            ):
                # a bare global, builtin or attribute read does nothing but may raise
                # (NameError, AttributeError): it is kept, read for its effect
                self.emit(out, cst.SimpleStatementLine([cst.Expr(node.value)]), node)
                return
            if isinstance(node.value, (cst.SimpleString, cst.ConcatenatedString)) or syntax.is_atom(node.value):
                return  # docstrings, constants and local names do nothing
            value = self.simple(node.value, out)
            if not syntax.is_atom(value):  # xs.append(v) became an assignment, its value None
                self.emit(out, cst.SimpleStatementLine([cst.Expr(value)]), node)
        elif isinstance(node, cst.Return):
            value = cst.Name("None") if node.value is None else self.atom(node.value, out)
            self.emit(out, cst.SimpleStatementLine([cst.Return(value)]), node)
        elif isinstance(node, cst.Raise):
            exception = getattr(self, "handled", None) if node.exc is None else self.atom(node.exc, out)
            cause = None if node.cause is None else cst.From(self.atom(node.cause.item, out))  # raise e from c
            self.emit(out, cst.SimpleStatementLine([cst.Raise(exception, cause)]), node)
        elif isinstance(node, cst.Assert):
            test = self.atom(node.test, out)
            failure: list = []
            message = [] if node.msg is None else [cst.Arg(self.atom(node.msg, failure))]
            raise_line = cst.SimpleStatementLine([cst.Raise(cst.Call(cst.Name("AssertionError"), message))])
            self.emit(failure, raise_line, node)
            self.emit(out, syntax.if_statement(syntax.negate(test), failure), node)
        elif isinstance(node, (cst.Break, cst.Continue)):
            self.emit(out, cst.SimpleStatementLine([type(node)()]), node)
        elif isinstance(node, cst.Pass):
            return
        else:
            self.reject(node, type(node).__name__, "this statement is not supported")

    def compound_statement(self, node: cst.BaseCompoundStatement, out: list) -> None:
        if isinstance(node, cst.If):
            self.if_statement(node, out)
        elif isinstance(node, cst.While):
            self.while_loop(node, out)
        elif isinstance(node, cst.For):
            self.for_loop(node, out)
        else:  # try and with (transforms/exceptions.py); anything else is refused there
            exceptions.statement(self, node, out)

    def if_statement(self, node: cst.If, out: list) -> None:
        test = node.test
        negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
        atom = self.atom(test.expression if negated else test, out)
        before = set(self.assigned)
        body = self.block(node.body.body)
        branches = [self.assigned] if not _ends_in_jump(node.body.body) else []
        self.assigned = set(before)
        if node.orelse is None:
            orelse = []
        elif isinstance(node.orelse, cst.If):  # elif
            orelse = []
            self.if_statement(node.orelse, orelse)
        else:
            orelse = self.block(node.orelse.body.body)
        if node.orelse is None or not isinstance(node.orelse, cst.If) and _ends_in_jump(node.orelse.body.body):
            branches += [] if node.orelse is not None else [before]
        else:
            branches.append(self.assigned)
        # after the if, what every branch reaching it assigned (definitely bound there)
        self.assigned = before | set.intersection(*branches) if branches else before
        self.emit(out, syntax.if_statement(syntax.negate(atom) if negated else atom, body, orelse), node)

    def bind_target(self, target: cst.BaseExpression, values: list, out: list, origin: cst.CSTNode) -> None:
        if (
            isinstance(target, (cst.Tuple, cst.List))
            and len(target.elements) == len(values)
            and not starred.has_star(target)
        ):
            for element, value in zip(target.elements, values, strict=True):
                self.assignment([element.value], value, out, origin)
        else:
            self.assignment([target], cst.Tuple([cst.Element(v) for v in values]), out, origin)

    def assignment(self, targets: list, value: cst.BaseExpression, out: list, origin: cst.CSTNode) -> None:
        if len(targets) > 1:  # a = b = value
            atom = self.atom(value, out)
            for target in targets:
                self.assignment([target], atom, out, origin)
            return
        target = targets[0]
        if isinstance(target, cst.Name):
            self.emit(out, syntax.assign(target.value, self.simple(value, out)), origin)
            return
        if starred.has_star(target):  # a, *rest = xs (transforms/starred.py)
            return starred.unpack(self, target, value, out, origin)
        if isinstance(target, (cst.Subscript, cst.Attribute)):  # x[key] = v, obj.a = v: writes in place (writes.py)
            writes.subscript_assignment(self, target, value, out, origin)
            return
        names = target.elements
        if (
            isinstance(value, (cst.Tuple, cst.List))
            and len(value.elements) == len(names)
            and not any(isinstance(e, cst.StarredElement) for e in value.elements)
        ):
            # parallel assignment: evaluate every right-hand side before binding any name
            atoms = [self.atom(e.value, out) for e in value.elements]
            atoms = [
                self.temporary_value(a, out, origin) if isinstance(a, cst.Name) and _binds(target, a.value) else a
                for a in atoms
            ]
            for element, atom in zip(names, atoms, strict=True):
                self.assignment([element.value], atom, out, origin)
            return
        whole = self.atom(value, out)
        plain: list[str] = []
        nested: list[tuple[str, cst.BaseExpression]] = []
        for element in names:
            if isinstance(element.value, cst.Name):
                plain.append(element.value.value)
            else:
                part = self.namer.temporary()
                plain.append(part)
                nested.append((part, element.value))
        self.emit(out, syntax.unpack(plain, whole), origin)
        for part, inner in nested:
            self.assignment([inner], cst.Name(part), out, origin)

    def temporary_value(self, value: cst.BaseExpression, out: list, origin: cst.CSTNode) -> cst.Name:
        temporary = self.namer.temporary()
        self.emit(out, syntax.assign(temporary, value), origin)
        return cst.Name(temporary)

    def local_attribute(self, node: cst.BaseExpression) -> bool:
        """`x.T`, `h.shape`: an attribute read of a local value, an operation of its own (a rule
        applies to it), never an atom like the module constant `math.pi`."""
        if not isinstance(node, cst.Attribute):
            return False
        root = node.value
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name):
            return False
        name = root.value
        if name in self.locals:
            return True
        # this pass's own temporaries (`t1.T` of `(x * 2.0).T`) are locals too: anything that is
        # not a global, a builtin or a free variable
        free = self.source.function.__code__.co_freevars
        return name not in self.globals and not hasattr(builtins, name) and name not in free
