"""A call of a user function as a block's tail: its dispatcher runs the callee's program with the
rest of the block as the continuation, and the arguments' adjoints come back (loans: an argument's
adjoint array is lent to the callee to add into)."""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import calls, naming, syntax
from cpsgrad.transforms.adjoint.frames import Frame
from cpsgrad.transforms.adjoint.output import (
    Lines,
    assign,
    bare_tuple,
    call,
    call_line,
    function,
    parenthesized_tuple,
    returning,
    runtime_call,
)
from cpsgrad.transforms.cps import Call


class UserCalls:
    """The Generator's calls of user functions (reads `borrowers`, `free_adjoints`, `namer`)."""

    def call(
        self, tail: Call, frame: Frame, lines: Lines, guard=None, rest: Lines | None = None
    ) -> tuple[dict[str, str], bool]:
        """A call of a user function: its dispatcher runs the callee's program with the rest of
        this block as the continuation. An adapter closure (`call_1_k`, defined here: the versions
        it captures are never reassigned) hands the callee the result's adjoint and packs this
        program's other adjoints into the opaque result the callee passes back. In a try region
        (`guard`), the call runs in a `try` of its own and what follows it goes into `rest`."""
        value = self.rename(tail.statement.body[0].value, frame)
        # the adjoints of the arguments, found before the result's new version hides them (h = f(h))
        sources = (
            [self.active_source(value.func, frame)] if isinstance(value.func, cst.Name) else []
        )  # a closure's environment
        if calls.object_method(tail.statement.body[0].value.func, self.active):  # obj.method(...): the instance
            sources = [self.active_source(value.func.value, frame)]
        sources += [self.active_source(a.value, frame) for a in value.args if a.keyword is None]
        sources += [self.active_source(a.value, frame) for a in value.args if a.keyword is not None]
        # each argument's adjoint, once, with the argument it belongs to: lent to the callee (only
        # arrays are ever lent, so not a number's: its adjoint is added back as a number)
        lendable: dict[str, cst.BaseExpression] = {}
        ordered = [a for a in value.args if a.keyword is None] + [a for a in value.args if a.keyword is not None]
        for argument in ordered:
            adjoint = self.active_source(argument.value, frame)
            if adjoint is not None and adjoint not in lendable and not self.holds_number(adjoint):
                lendable[adjoint] = argument.value
        # every argument, repeats included: one passed twice is lent to neither parameter
        every = parenthesized_tuple([a.value for a in ordered])
        extras: list[str] = []
        if tail.continuation is None:  # the rest just returns the result
            handed = self.k
        else:
            target = tail.continuation
            version = self.new_version(frame, tail.target)
            arguments = [self.rename(cst.Name(p), frame, passed=True) for p in target.parameters]
            results = [self.adjoint(frame.versions.get(p, p)) for p in target.parameters if self.is_active_variable(p)]
            results += [self.adjoint(p) for p in self.free_adjoints[target.name]]
            extras = results[1:]
            jump = call(target.name, *arguments)
            # a parameter of this program passed on whose adjoint nothing after the call adds to:
            # what its caller lent for it, not borrowed yet, is passed on to the callee, whose
            # adjoint of it becomes this program's (received into it, never added)
            passed_on = [
                lendable[e]
                for e in lendable
                if e in self.borrowers and e not in extras and _named(lendable[e], self.borrowers[e])
            ]
            if not extras and not passed_on and target.parameters == [tail.target]:
                handed = target.name
            else:
                handed = naming.call_adapter(tail.label)
                adapter = Lines(self)
                passing = [call_line(runtime_call("pass_on", parameter, every)) for parameter in passed_on]
                if extras:
                    adapter.append(assign([self.out, *results], jump))
                    for statement in passing:
                        adapter.append(statement)
                    packed = [
                        runtime_call("lend", cst.Name(e), lendable[e], every) if e in lendable else cst.Name(e)
                        for e in extras
                    ]
                    pack = parenthesized_tuple([cst.Name(self.out), *packed])
                    adapter.append(returning(bare_tuple([pack, cst.Name(results[0])])))
                elif passing:
                    returned = self.namer.fresh(naming.call_returned(tail.label))
                    adapter.append(assign(returned, jump))
                    for statement in passing:
                        adapter.append(statement)
                    adapter.append(returning(cst.Name(returned)))
                else:
                    adapter.append(returning(jump))
                lines.append(function(handed, [version], adapter))
        # the callee returns its adjoints in the order of the call's differentiable arguments
        # (positional, then keywords); one already defined is received apart, then added
        received: list[str] = []
        added: list[tuple[str, str]] = []
        for adjoint in sources:
            if adjoint is None:
                continue
            if adjoint in extras or adjoint in received:
                part = self.namer.fresh(naming.call_part(tail.label, adjoint))
                added.append((adjoint, part))
                received.append(part)
            else:
                received.append(adjoint)
        head = parenthesized_tuple([cst.Name(n) for n in [self.out, *extras]]) if extras else cst.Name(self.out)
        passed = [
            cst.Arg(a.value) if a.keyword is None else cst.Arg(a.value, keyword=a.keyword, equal=syntax.EQUAL)
            for a in value.args
        ]
        if guard is not None:  # in a try region: caught until the callee enters `handed` (adjoint/guards.py)
            handed = self.guarded_call(guard, handed, tail.label, lines)
        site = call(naming.call_site(tail.label), value.func, cst.Name(handed), *passed)
        targets = bare_tuple([head, *(cst.Name(r) for r in received)]) if received else head
        received_at = assign(targets, site)
        if guard is not None:
            lines.append(self.guarded_call_try(guard, handed, Lines(self, [received_at])))
            lines = rest
        else:
            lines.append(received_at)
        parts = {part for _, part in added}
        defined = {name: name for name in [*extras, *received] if name not in parts}
        for adjoint, part in added:
            if adjoint in extras and adjoint in lendable:  # lent in the adapter: the loan ends here
                merging = runtime_call("merge", cst.Name(adjoint), cst.Name(part), lendable.pop(adjoint))
                lines.append(assign(adjoint, merging))
            else:
                self.accumulate(adjoint, cst.Name(part), defined, lines)
        return defined, True


def _named(node: cst.BaseExpression, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name
