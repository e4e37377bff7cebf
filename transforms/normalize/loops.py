"""Normalize's loops, a part of `_Normalizer` (transforms/normalize/__init__.py).

The loops: every `while` and `for` as `while True:` whose condition is an `if not c: <else>; break`
at its head; `for` over `range(...)` counted with an int, over `zip`/`enumerate` indexed, over
anything else snapshotted as a sequence and indexed.
"""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import naming, syntax
from cpsgrad.transforms.bindings import jumps_out as _jumps_out
from cpsgrad.transforms.naming import names_in


def _zip_arguments(call: cst.Call) -> bool:
    """Positional sequences, optionally followed by `strict=`: the zips a loop can index."""
    keywords = [a.keyword.value for a in call.args if a.keyword is not None]
    return (
        any(a.keyword is None for a in call.args)
        and keywords in ([], ["strict"])
        and not any(a.star for a in call.args)
    )


class Loops:
    """`_Normalizer`'s methods for the loops."""

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
