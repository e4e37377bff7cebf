"""Normalize: desugar a function into cpsgrad's small core language, one operation a statement.

The core (what every later pass handles):
  name = atom | atom OP atom | OP atom | atom CMP atom | callee(atoms) | atom[index] | (atoms)
  a, b = name                      (unpacking)
  callee(atoms)                    (a call for its effect)
  if atom: ... else: ...           (or `if not atom:`)
  while True: ...                  (every loop; its condition and `else` become an if + break)
  break | continue | return atom | raise atom
where an atom is a name, a constant or a dotted read (`math.pi`). elif, augmented assignment,
and/or/not, conditional expressions, chained comparisons, `for` loops, tuple assignment and
assert are rewritten here; temporaries are `t1, t2, ...`, loop state `for_1_items, ...`.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field

import libcst as cst

from cpsgrad.errors import UnsupportedError
from cpsgrad.transforms import (
    assignment_expressions,
    comprehensions,
    container_methods,
    containers,
    evaluation_order,
    exceptions,
    generators,
    naming,
    sets,
    starred,
    syntax,
    writes,
)
from cpsgrad.transforms.analysis import lists
from cpsgrad.transforms.bindings import assigned_in as _assigned_in
from cpsgrad.transforms.bindings import assigned_names as _assigned_names
from cpsgrad.transforms.bindings import binds as _binds
from cpsgrad.transforms.bindings import ends_in_jump as _ends_in_jump
from cpsgrad.transforms.bindings import jumps_out as _jumps_out
from cpsgrad.transforms.naming import Namer, names_in
from cpsgrad.transforms.resolve import Resolver
from cpsgrad.transforms.source import FunctionSource

_AUGMENTED = {
    cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
    cst.PowerAssign: cst.Power, cst.BitAndAssign: cst.BitAnd, cst.BitOrAssign: cst.BitOr,
    cst.BitXorAssign: cst.BitXor, cst.LeftShiftAssign: cst.LeftShift, cst.RightShiftAssign: cst.RightShift,
    cst.MatrixMultiplyAssign: cst.MatrixMultiply,
}


@dataclass
class Normalized:
    """A function in the core language, with the way back to the user's source."""

    source: FunctionSource
    definition: cst.FunctionDef
    parameters: list[str]
    origins: dict[int, cst.CSTNode] = field(default_factory=dict)  # id(core statement) -> user node
    loop_labels: dict[int, str] = field(default_factory=dict)  # id(core while) -> "while_1", "for_2", ...
    definitions: dict = field(default_factory=dict)  # def_g, lambda_1, ... -> runtime.closures.Definition
    superseded: list = field(
        default_factory=list
    )  # earlier definitions a later pass rewrote (kept: origins are keyed by id)
    # the names this pass's choices depend on (`reduce` is functools.reduce, `map` the builtin,
    # ...), resolved as Resolver.bindings: the program holds while each names the same object
    bindings: dict = field(default_factory=dict)
    in_place: dict = field(default_factory=dict)  # id(`x = x op y` of `x op= y`) -> why not plain (aliasing.py)
    base_writes: set = field(default_factory=set)  # ids of `x = written(x, key, v)` that follow a write into a view v
    written_parameters: tuple = ()  # the parameters whose arrays it writes into (aliasing.py)
    consumable: dict = field(default_factory=dict)  # id(user call) -> per argument: may be written into

    def location(self, statement: cst.CSTNode):
        return self.source.location(self.origins.get(id(statement)))


def normalize(source: FunctionSource) -> Normalized:
    """Rewrite `source`'s function into the core language (its nested defs and lambdas first
    replaced by the calls that make them, transforms/closures.py)."""
    lifted = generators.lift(source)  # loops over generators first (transforms/generators.py)
    normalizer = _Normalizer(lifted.source, frozenset(lifted.definitions))
    normalized = normalizer.run()
    normalized.definitions = lifted.definitions
    normalized.bindings = {**lifted.bindings, **normalizer.resolver.bindings}
    return normalized


class _Normalizer:
    def __init__(self, source: FunctionSource, definitions: frozenset[str] = frozenset()):
        self.source = source
        self.namer = Namer(names_in(source.definition))
        # the names the user wrote (not closures.lift's labels for the definitions it lifted)
        self.user_names = frozenset(self.namer.taken) - definitions
        self.origins: dict[int, cst.CSTNode] = {}
        self.loop_labels: dict[int, str] = {}
        self.loops = 0
        self.globals = source.function.__globals__
        self.reassigned = _assigned_names(source.definition)
        parameters = {*source.captured, *starred.parameter_names(source.definition.params)}
        self.locals = self.reassigned | parameters
        # the locals assigned (in source order) before the statement being normalized: a local
        # read before its first assignment may be unbound, and is copied where it is read
        # (`atom`), so that it raises where Python reads it, before the operands after it run
        self.assigned = set(parameters)
        self.statements: list[cst.CSTNode] = []  # the user's statements being normalized, innermost last
        self.user_locals = frozenset(self.locals)  # not the names this pass adds (comprehension accumulators)
        self.resolver = Resolver(source.function, self.locals)  # its bindings: what the program depends on
        self.lists = lists.functional_lists(source.definition, parameters, self.resolver)
        self.list_locals = lists.list_locals(source.definition, parameters, self.resolver)

    def run(self) -> Normalized:
        definition = self.source.definition
        parameters = [*self.source.captured, *starred.parameter_names(definition.params)]
        body = self.block(definition.body.body)
        if not body:  # `def f(x): pass`: the function returns None (cps needs a statement)
            self.emit(body, cst.SimpleStatementLine([cst.Return(cst.Name("None"))]), definition)
        plain_params = cst.Parameters([cst.Param(cst.Name(p)) for p in parameters])
        normalized = cst.FunctionDef(definition.name, plain_params, syntax.indented(body))
        return Normalized(self.source, normalized, parameters, self.origins, self.loop_labels)

    # -- helpers -----------------------------------------------------------------------------
    def emit(self, out: list, statement: cst.BaseStatement, origin: cst.CSTNode) -> None:
        if origin not in self.source.positions and self.statements:  # a node a pass rebuilt (a
            origin = self.statements[-1]  # lambda's default): errors name the user's statement
        self.origins[id(statement)] = origin
        out.append(statement)

    def reject(self, node: cst.CSTNode, construct: str, advice: str):
        raise UnsupportedError(self.source.location(node), construct, advice)

    def builtin(self, identifier: str) -> cst.BaseExpression:
        """A reference to a builtin for code this pass adds, safe from the user's own names."""
        shadowed = identifier in self.reassigned or identifier in self.source.function.__code__.co_freevars
        if shadowed or self.globals.get(identifier, getattr(builtins, identifier)) is not getattr(builtins, identifier):
            return cst.Attribute(cst.Attribute(cst.Name("cpsgrad_runtime"), cst.Name("builtins")), cst.Name(identifier))
        self.resolver.bindings[identifier] = getattr(builtins, identifier)  # a global of that name later: made again
        return cst.Name(identifier)

    def is_builtin(self, node: cst.BaseExpression, builtin: str) -> bool:
        return isinstance(node, cst.Name) and node.value == builtin and isinstance(self.builtin(builtin), cst.Name)

    # -- statements --------------------------------------------------------------------------
    def block(self, statements) -> list:
        out: list = []
        for statement in statements:
            if statement in self.source.positions:
                self.statements.append(statement)
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    self.small_statement(small, out)
                    self.assigned |= _assigned_in(small)
            elif isinstance(statement, cst.BaseSmallStatement):  # the body of `if c: stmt`
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

    def loop(self, label: str, body: list, origin: cst.CSTNode, out: list) -> None:
        loop = cst.While(cst.Name("True"), syntax.indented(body))
        self.loop_labels[id(loop)] = label
        self.emit(out, loop, origin)

    def exit_test(
        self, condition: cst.BaseExpression, orelse, body: list, origin: cst.CSTNode, label: str, out: list
    ) -> list:
        """`if not condition: <orelse>; break` at the head of a loop body; returns what must follow
        the loop. An `else` that itself breaks or continues (the enclosing loop) runs after the
        loop instead, behind a flag, so its jumps leave the right loop."""
        leave: list = []
        after: list = []
        if orelse is not None and _jumps_out(orelse.body):
            completed = self.namer.fresh(naming.loop_state(label, "completed"))
            self.emit(out, syntax.assign(completed, cst.Name("False")), origin)
            self.emit(leave, syntax.assign(completed, cst.Name("True")), origin)
            self.emit(after, syntax.if_statement(cst.Name(completed), self.block(orelse.body.body)), origin)
        elif orelse is not None:
            leave = self.block(orelse.body.body)
        leave.append(cst.SimpleStatementLine([cst.Break()]))
        self.emit(body, syntax.if_statement(syntax.negate(condition), leave), origin)
        return after

    def while_loop(self, node: cst.While, out: list) -> None:
        self.loops += 1
        body: list = []
        if not (isinstance(node.test, cst.Name) and node.test.value == "True"):
            condition = self.atom(node.test, body)
            after = self.exit_test(condition, node.orelse, body, node, naming.loop_label("while", self.loops), out)
        else:
            after = []
        body.extend(self.block(node.body.body))
        self.loop(naming.loop_label("while", self.loops), body, node, out)
        out.extend(after)

    def for_loop(self, node: cst.For, out: list) -> None:
        self.loops += 1
        self.assigned |= names_in(node.target)  # bound before the body runs
        label = naming.loop_label("for", self.loops)
        index = self.namer.fresh(naming.loop_state(label, "index"))
        iterable = node.iter
        body: list = []
        head: list = []  # statements binding the loop target from the current index
        index_atom = cst.Name(index)
        step = self.range_step(iterable)
        if step is not None:
            self.range_loop(node, label, step, out)
            return
        if isinstance(iterable, cst.Call) and self.is_builtin(iterable.func, "zip") and _zip_arguments(iterable):
            positional = [a for a in iterable.args if a.keyword is None]
            strict = [a for a in iterable.args if a.keyword is not None]
            sequences = [self.sequence(arg.value, naming.loop_state(label, "items"), out, node) for arg in positional]
            lengths = [self.temporary_value(cst.Call(self.builtin("len"), [cst.Arg(s)]), out, node) for s in sequences]
            if strict:  # zip(..., strict=flag): unequal lengths raise ValueError, checked up front
                flag = self.atom(strict[0].value, out)
                check = cst.Attribute(cst.Name("cpsgrad_runtime"), cst.Name("zip_length"))
                count = self.temporary_value(
                    cst.Call(check, [cst.Arg(flag), *[cst.Arg(n) for n in lengths]]), out, node
                )
            elif len(lengths) == 1:
                count = lengths[0]
            else:
                count = self.temporary_value(cst.Call(self.builtin("min"), [cst.Arg(n) for n in lengths]), out, node)
            items = [
                self.temporary_value(cst.Subscript(s, [cst.SubscriptElement(cst.Index(index_atom))]), head, node)
                for s in sequences
            ]
            self.bind_target(node.target, items, head, node)
        elif (
            isinstance(iterable, cst.Call)
            and self.is_builtin(iterable.func, "enumerate")
            and 1 <= len(iterable.args) <= 2
        ):
            sequence = self.sequence(iterable.args[0].value, naming.loop_state(label, "items"), out, node)
            count = self.temporary_value(cst.Call(self.builtin("len"), [cst.Arg(sequence)]), body, node)
            position: cst.BaseExpression = index_atom
            if len(iterable.args) == 2:
                start = self.atom(iterable.args[1].value, out)
                position = self.temporary_value(cst.BinaryOperation(index_atom, cst.Add(), start), head, node)
            item = self.temporary_value(
                cst.Subscript(sequence, [cst.SubscriptElement(cst.Index(index_atom))]), head, node
            )
            self.bind_target(node.target, [position, item], head, node)
        else:
            sequence = self.sequence(iterable, naming.loop_state(label, "items"), out, node)
            count = self.temporary_value(cst.Call(self.builtin("len"), [cst.Arg(sequence)]), body, node)
            item = cst.Subscript(sequence, [cst.SubscriptElement(cst.Index(index_atom))])
            self.assignment([node.target], item, head, node)
        self.emit(out, syntax.assign(index, cst.Integer("0")), node)
        more = self.temporary_value(
            cst.Comparison(index_atom, [cst.ComparisonTarget(cst.LessThan(), count)]), body, node
        )
        after = self.exit_test(more, node.orelse, body, node, label, out)
        body.extend(head)
        self.emit(body, syntax.assign(index, cst.BinaryOperation(index_atom, cst.Add(), cst.Integer("1"))), node)
        body.extend(self.block(node.body.body))
        self.loop(label, body, node, out)
        out.extend(after)

    def range_step(self, iterable: cst.BaseExpression) -> int | None:
        """The sign of a `range(...)` call's constant step (1 when omitted), else None."""
        if not (isinstance(iterable, cst.Call) and self.is_builtin(iterable.func, "range")):
            return None
        arguments = iterable.args
        if not 1 <= len(arguments) <= 3 or any(a.keyword for a in arguments):
            return None
        if len(arguments) < 3:
            return 1
        step = arguments[2].value
        negative = isinstance(step, cst.UnaryOperation) and isinstance(step.operator, cst.Minus)
        literal = step.expression if negative else step
        if not isinstance(literal, cst.Integer) or int(literal.value, 0) == 0:
            return None
        return -1 if negative else 1

    def range_loop(self, node: cst.For, label: str, sign: int, out: list) -> None:
        """`for i in range(...)` with a constant step: count with an int, no indexing."""
        atoms = [self.atom(a.value, out) for a in node.iter.args]
        start, stop, step = (
            (cst.Integer("0"), atoms[0], cst.Integer("1"))
            if len(atoms) == 1
            else (atoms[0], atoms[1], atoms[2] if len(atoms) == 3 else cst.Integer("1"))
        )
        if not all(isinstance(a, cst.Integer) for a in atoms):  # let range() reject floats as Python would
            self.emit(
                out,
                cst.SimpleStatementLine([cst.Expr(cst.Call(self.builtin("range"), [cst.Arg(a) for a in atoms]))]),
                node,
            )
        if isinstance(stop, cst.Name) and stop.value in self.reassigned:  # range() saw its value once
            stop = self.temporary_value(stop, out, node)
        following = self.namer.fresh(naming.loop_state(label, "next"))
        self.emit(out, syntax.assign(following, start), node)
        body: list = []
        operator = cst.LessThan() if sign > 0 else cst.GreaterThan()
        more = self.temporary_value(
            cst.Comparison(cst.Name(following), [cst.ComparisonTarget(operator, stop)]), body, node
        )
        after = self.exit_test(more, node.orelse, body, node, label, out)
        self.assignment([node.target], cst.Name(following), body, node)
        self.emit(body, syntax.assign(following, cst.BinaryOperation(cst.Name(following), cst.Add(), step)), node)
        body.extend(self.block(node.body.body))
        self.loop(label, body, node, out)
        out.extend(after)

    def sequence(self, iterable: cst.BaseExpression, base: str, out: list, origin: cst.CSTNode) -> cst.Name:
        """Bind an indexable snapshot of `iterable` (ranges, lists and tuples are kept as they are)."""
        indexable = isinstance(iterable, (cst.List, cst.Tuple)) or (
            isinstance(iterable, cst.Call) and self.is_builtin(iterable.func, "range")
        )
        value = self.simple(iterable, out) if indexable else self.atom(iterable, out)
        items = self.namer.fresh(base)
        call = cst.Call(cst.Attribute(cst.Name("cpsgrad_runtime"), cst.Name("as_sequence")), [cst.Arg(value)])
        self.emit(out, syntax.assign(items, value if indexable else call), origin)
        return cst.Name(items)

    def bind_target(self, target: cst.BaseExpression, values: list, out: list, origin: cst.CSTNode) -> None:
        if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == len(values) and not starred.has_star(target):
            for element, value in zip(target.elements, values, strict=True):
                self.assignment([element.value], value, out, origin)
        else:
            self.assignment([target], cst.Tuple([cst.Element(v) for v in values]), out, origin)

    # -- assignments -------------------------------------------------------------------------
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

    # -- expressions -------------------------------------------------------------------------
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


def _zip_arguments(call: cst.Call) -> bool:
    """Positional sequences, optionally followed by `strict=`: the zips a loop can index."""
    keywords = [a.keyword.value for a in call.args if a.keyword is not None]
    return (
        any(a.keyword is None for a in call.args)
        and keywords in ([], ["strict"])
        and not any(a.star for a in call.args)
    )


def _receiver(atom: cst.BaseExpression) -> cst.BaseExpression:
    """An atom as an attribute's receiver: `(-1).real`, `(2).bit_length()`, not `-1.real` (which
    reads `-(1.real)`) or `2.bit_length()` (a syntax error)."""
    if isinstance(atom, (cst.UnaryOperation, cst.Integer, cst.Float, cst.Imaginary)) and not atom.lpar:
        return atom.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return atom
