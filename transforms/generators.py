"""Loops over generators: the consumer's side of a generator as a fold (transforms/generator_folds.py).

Before closures.lift, each `for T in gen(args): <body>` of a module-level generator function
becomes a call of the generator's fold with the loop body as a function of its own:

    for v in gen(xs, w):            for_gen_1 = cpsgrad_runtime.make_function(def_for_gen_1, ())
        s = s + v * c         ->    for_gen_1_fold = cpsgrad_runtime.generator_fold(def_fold_gen, gen)
                                    for_gen_1_flag, for_gen_1_state, for_gen_1_value = for_gen_1_fold(
                                        for_gen_1, (c,), (s,), xs, w)
                                    s, = for_gen_1_state

    def for_gen_1(for_gen_1_item, for_gen_1_env, for_gen_1_state):   (def_for_gen_1, a Definition)
        c, = for_gen_1_env
        s, = for_gen_1_state
        v = for_gen_1_item
        s = s + v * c
        return 0, (s,), None

The body reads the loop's values from `env` and hands back the variables it assigns that are
read after it or in a later iteration (`state`); it captures nothing, so closures' late-binding
rules do not arise. `break` is `return 1, ...` (the generator stops where it is, and never runs
further), `continue` `return 0, ...`, `return e` `return 2, ..., e` (the consumer returns
`e` after the call). `sum`, `list`, `tuple`, `next`, `min`, `max`, `any`, `all`, `sorted` of a generator call
on a statement of their own (generator_consumers.py; one inside an expression is first hoisted onto one:
generator_hoist.py), `enumerate(gen(...))` and `zip(gen(...), names...)` are first written as such loops.
A loop body over a generator is left as it is: it becomes a function (a Definition) whose own
transformation rewrites the loops over generators in it.
"""

from __future__ import annotations

import builtins
import collections
import dataclasses
import types

import libcst as cst

from cpsgrad.errors import UnsupportedError
from cpsgrad.runtime.closures import DEFINITIONS, Definition
from cpsgrad.transforms import (
    closures,
    generator_comprehensions,
    generator_consumers,
    generator_folds,
    generator_hoist,
    generator_jumps,
    generator_objects,
    generator_precheck,
    naming,
    syntax,
)
from cpsgrad.transforms import generator_scopes as scopes
from cpsgrad.transforms.bindings import assigned_in, assigned_names, ends_in_jump
from cpsgrad.transforms.naming import Namer, names_in
from cpsgrad.transforms.resolve import Resolver
from cpsgrad.transforms.source import FunctionSource

_FORMS = generator_consumers.FORMS
_ADVICE = (
    "iterate the call where it is made: `for v in gen(...)`, `s = sum(gen(...))`, `ys = list(gen(...))`, "
    "`v = next(gen(...))` (or `next(gen(...), default)`), `max(gen(...))` (min, any, all, sorted, tuple too), "
    "`for i, v in enumerate(gen(...))`, `for v, b in zip(gen(...), bs)`, `sum(f(v) for v in gen(...) if c)` and "
    "`[f(v) for v in gen(...)]` (one `for` clause over the call); such a consumer may sit inside an "
    "expression Python evaluates unconditionally (`2 * sum(gen(x))`), not under `and`/`or`, a conditional "
    "expression, a later comparison of a chain, an `elif` or `while` test, a comprehension or a lambda: there "
    "assign it to a name first"
)


def lift(read: FunctionSource) -> closures.Lifted:
    """closures.lift, after rewriting the loops over generators of `read`'s function."""
    if not generator_precheck.may_call_a_generator(read.function):  # most functions: nothing here to rewrite
        return closures.lift(read)
    consumers = _Consumers(read)
    if not consumers.any_generator():
        return consumers.marked(closures.lift(read))
    read = consumers.listed()
    consumers = _Consumers(read)
    read = generator_objects.rewrite(consumers, read)
    consumers = _Consumers(read)
    read = consumers.hoisted()
    consumers = _Consumers(read)
    consumers.check_positions()
    consumers.defer()
    definition = read.definition.visit(consumers)
    positions = collections.ChainMap(consumers.moved, read.positions)
    lifted = closures.lift(dataclasses.replace(read, definition=definition, positions=positions))
    lifted.definitions.update(consumers.definitions)
    lifted.bindings.update(consumers.bindings)
    return consumers.marked(lifted)


class _Consumers(scopes.Preserving):
    def __init__(self, read: FunctionSource):
        super().__init__(read.positions, {})
        self.read = read
        self.original = read.definition
        code = read.function.__code__
        self.parameters = set(names_in(read.definition.params)) | set(read.captured) | set(code.co_freevars)
        defined = generator_folds.defined_names(read.definition)
        self.locals = assigned_names(read.definition) | defined | self.parameters
        # a free variable is looked up in the function's cells (a generator of an enclosing
        # factory); one its program takes as a parameter (a nested definition's) is not
        resolved_locals = assigned_names(read.definition) | defined | set(names_in(read.definition.params))
        resolved_locals |= set(read.captured)
        self.resolver = Resolver(read.function, resolved_locals)
        self.namer = Namer(names_in(read.definition))
        self.generated: set[str] = set()
        self.definitions: dict[str, Definition] = {}
        self.bindings: dict[str, object] = {}
        self.local_generators = generator_folds.local_generators(read.definition, code)

    def marked(self, lifted: closures.Lifted) -> closures.Lifted:
        """`lifted`, its nested definitions told which of their captured names hold this function's
        local generators (their own loops over them are rewritten when they are transformed)."""
        for definition in lifted.definitions.values():
            generator_folds.mark(definition, set(definition.captured) & set(self.local_generators))
        return lifted

    # ---- what is a generator call ---------------------------------------------------------------
    def generator(self, node: cst.BaseExpression):
        if not isinstance(node, cst.Call):
            return None
        if isinstance(node.func, cst.Name) and node.func.value in self.local_generators:
            return self.local_generators[node.func.value]
        value = self.resolver.resolve(node.func)
        if not generator_folds.is_generator_function(value):
            return None
        self.bindings[syntax.dotted_name(node.func)] = value
        return value

    def consumer_form(self, call: cst.Call) -> str | None:
        """`sum`, `max`, ... when `call` is such a builtin's call of a generator call, else None."""
        if not call.args or call.args[0].star or call.args[0].keyword or scopes.shadowed(call.func, self.locals):
            return None
        argument = call.args[0].value
        if self.generator(syntax.strip_parentheses(argument)) is None and self.over(argument) is None:
            return None
        builtin = self.resolver.resolve(call.func)
        return _FORMS.get(builtin) if isinstance(builtin, types.BuiltinFunctionType | type) else None

    def over(self, node: cst.BaseExpression) -> cst.GeneratorExp | None:
        """`node` when it is a generator expression over a generator call, or `zip`/`enumerate` of one
        (generator_comprehensions.py)."""
        return generator_comprehensions.over(node, self.consumed)

    def listed(self) -> FunctionSource:
        """`read` with its list comprehensions over a generator call as the list of a generator expression."""
        moved: dict = {}
        rewriter = generator_comprehensions.AsConsumers(self.consumed, self.read.positions, moved)
        definition = self.original.visit(rewriter)
        if definition is self.original:
            return self.read
        positions = collections.ChainMap(moved, self.read.positions)
        return dataclasses.replace(self.read, definition=definition, positions=positions)

    def consumer_form_of(self, call: cst.Call) -> str | None:
        """`sum`, `next`, ... when `call` is such a builtin's call (whatever its argument)."""
        if scopes.shadowed(call.func, self.locals):
            return None
        builtin = self.resolver.resolve(call.func)
        return _FORMS.get(builtin) if isinstance(builtin, types.BuiltinFunctionType | type) else None

    def hoisted(self) -> FunctionSource:
        """`read` with the consumers of generator calls inside expressions on statements of their own."""
        moved: dict = {}
        module_read = generator_hoist.module_read(self.resolver)
        hoister = generator_hoist.Hoister(
            self.consumer_form, self.parameters.__contains__, module_read, self.namer.fresh, self.read.positions, moved
        )
        definition = generator_hoist.hoist_all(self.original, hoister)
        if definition is self.original:
            return self.read
        positions = collections.ChainMap(moved, self.read.positions)
        return dataclasses.replace(self.read, definition=definition, positions=positions)

    def any_generator(self) -> bool:
        return any(self.generator(n) is not None for n in scopes.calls(self.original))

    def check_positions(self) -> None:
        """Refuse, at its location, a generator call anywhere but where this module rewrites one."""
        allowed: set[int] = set()
        for node in scopes.walk_all(self.original):
            if isinstance(node, cst.For):
                iterable = syntax.strip_parentheses(node.iter)
                allowed.add(id(iterable))
                if isinstance(iterable, cst.Call) and syntax.dotted_name(iterable.func) in ("enumerate", "zip"):
                    allowed |= {id(syntax.strip_parentheses(a.value)) for a in iterable.args}
            elif isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1:
                value = getattr(node.body[0], "value", None)
                folded = isinstance(value, cst.Call) and value.args
                if folded and generator_comprehensions.form_name(value.func) in _FORMS.values():
                    allowed.add(id(syntax.strip_parentheses(value.args[0].value)))
                    expression = self.over(value.args[0].value)
                    if expression is not None:
                        iterable = generator_comprehensions.generator_call(expression)
                        allowed |= {id(iterable), *(id(syntax.strip_parentheses(a.value)) for a in iterable.args)}
        for node in scopes.calls(self.original):
            if id(node) not in allowed and self.generator(node) is not None:
                self.reject(node, "generator call in this position", _ADVICE)

    def defer(self) -> None:
        """The nodes in the body of a loop over a generator: that body becomes a function of its own
        (a Definition), whose transformation rewrites the loops over generators in it."""
        self.deferred: set[int] = set()
        for node in scopes.walk_all(self.original):
            if isinstance(node, cst.For) and self.consumed(syntax.strip_parentheses(node.iter)):
                self.deferred |= {id(inner) for inner in scopes.walk_all(node.body)}

    def consumed(self, iterable: cst.BaseExpression) -> bool:
        if self.generator(iterable) is not None:
            return True
        return (
            isinstance(iterable, cst.Call)
            and self.resolver.resolve(iterable.func)
            in (
                builtins.enumerate,
                builtins.zip,
            )
            and any(self.generator(syntax.strip_parentheses(a.value)) is not None for a in iterable.args)
        )

    def reject(self, node, construct: str, advice: str):
        raise UnsupportedError(self.read.location(node), construct, advice)

    def fresh(self, base: str) -> str:
        name = self.namer.fresh(base)
        self.generated.add(name)
        return name

    # ---- statements holding sum/list/tuple/next of a generator -------------------------------------
    def leave_SimpleStatementLine(self, original, updated):
        if len(updated.body) != 1 or id(original) in self.deferred:
            return updated
        small = updated.body[0]
        value = small.value if isinstance(small, (cst.Assign, cst.Return, cst.Expr)) else None
        if not isinstance(value, cst.Call) or not value.args or isinstance(small, cst.Return) and value is None:
            return updated
        builtin = self.resolver.resolve(value.func) if not scopes.shadowed(value.func, self.locals) else None
        form = _FORMS.get(builtin) if isinstance(builtin, types.BuiltinFunctionType | type) else None
        generator_call = syntax.strip_parentheses(value.args[0].value)
        expression = self.over(generator_call)
        if expression is not None:
            generator_call = generator_comprehensions.generator_call(expression)
        elif self.generator(generator_call) is None:
            return updated
        if form is None or value.args[0].star or value.args[0].keyword:
            self.reject(generator_call, "generator call in this position", _ADVICE)
        self.bindings[value.func.value if isinstance(value.func, cst.Name) else form] = builtin
        accumulator, item = self.fresh(naming.accumulator(form)), self.fresh("item")
        before, step, after, carried = generator_consumers.loop_parts(
            form, value, accumulator, item, self.fresh, self.parameters.__contains__, self.reject
        )
        if expression is not None:
            loop = generator_comprehensions.loop(expression, item, step, self.fresh, self.reject)
        else:
            loop = cst.For(cst.Name(item), generator_call, cst.IndentedBlock(step))
        iterable = syntax.strip_parentheses(loop.iter)
        if self.generator(iterable) is None:  # a comprehension over zip/enumerate of a generator call
            found = [a for a in iterable.args if self.generator(syntax.strip_parentheses(a.value)) is not None]
            rewritten = self.wrapped(loop, original, iterable, found[0], carried)
        else:
            rewritten = self.loop(loop, original, carried)
        result = updated.with_changes(body=[small.with_changes(value=cst.Name(accumulator))])
        if isinstance(small, cst.Expr):
            result = None
        statements = [*before, *rewritten, *after, *([result] if result is not None else [])]
        if original in self.read.positions:
            for statement in statements:
                self.moved.setdefault(statement, self.read.positions[original])
        return cst.FlattenSentinel(statements)

    # ---- for loops --------------------------------------------------------------------------------
    def leave_For(self, original, updated):
        iterable = syntax.strip_parentheses(updated.iter)
        if id(original) in self.deferred:
            return updated
        if self.generator(iterable) is not None:
            statements = self.loop(updated, original)
        elif isinstance(iterable, cst.Call) and self.resolver.resolve(iterable.func) in (
            builtins.enumerate,
            builtins.zip,
        ):
            found = [a for a in iterable.args if self.generator(syntax.strip_parentheses(a.value)) is not None]
            if not found:
                return updated
            statements = self.wrapped(updated, original, iterable, found[0])
        else:
            return updated
        if original in self.read.positions:
            for statement in statements:
                self.moved.setdefault(statement, self.read.positions[original])
        return cst.FlattenSentinel(statements)

    def wrapped(self, node: cst.For, original, iterable: cst.Call, found: cst.Arg, extra=frozenset()) -> list:
        """`enumerate(gen(...), start)` and `zip(gen(...), bs, ...)` as a loop over `gen(...)`."""
        generator_call = syntax.strip_parentheses(found.value)
        item, count = self.fresh("item"), self.fresh("count")
        body = list(scopes.statements(node.body))
        before = [syntax.line(f"{count} = 0")]
        sequences: list[str] = []
        if self.resolver.resolve(iterable.func) is builtins.enumerate:
            rest = iterable.args[1:]
            if (
                iterable.args[0] is not found
                or len(rest) > 1
                or any(a.star or a.keyword and a.keyword.value != "start" for a in rest)
            ):
                self.reject(
                    iterable,
                    "enumerate of a generator with these arguments",
                    "write enumerate(gen(...)) or enumerate(gen(...), start)",
                )
            if rest:
                start = rest[0].value
                if not (isinstance(start, cst.Name) or syntax.is_constant(start)):
                    self.reject(start, "enumerate start computed in the call", "assign the start to a name first")
                before = [syntax.line(f"{count} = START", START=start)]
            head = [syntax.line(f"TARGET = {count}, {item}", TARGET=node.target), syntax.line(f"{count} = {count} + 1")]
        else:
            others = [a for a in iterable.args[1:] if not _strict_false(a)]  # zip's default
            if iterable.args[0] is not found or any(
                a.keyword or a.star or not isinstance(a.value, cst.Name) for a in others
            ):
                self.reject(
                    iterable,
                    "zip with a generator that is not its first argument, or with computed arguments",
                    "write zip(gen(...), xs, ...) with names after the generator (zip advances the generator first; "
                    "with the generator later, a shorter first argument would stop it one step earlier)",
                )
            sequences = [self.fresh(naming.zipped(a.value.value)) for a in others]
            before += [
                syntax.line(f"{s} = cpsgrad_runtime.as_sequence(XS)", XS=a.value)
                for s, a in zip(sequences, others, strict=True)
            ]
            short = " or ".join(f"{count} >= len({s})" for s in sequences) or "False"
            elements = ", ".join([item, *(f"{s}[{count}]" for s in sequences)])
            head = [cst.parse_statement(f"if {short}:\n    break\n")]
            head += [syntax.line(f"TARGET = {elements}", TARGET=node.target), syntax.line(f"{count} = {count} + 1")]
        loop = node.with_changes(target=cst.Name(item), iter=generator_call, body=cst.IndentedBlock([*head, *body]))
        carried = {count, *sequences, *extra}
        return [*before, *self.loop(loop, original, carried)]

    def loop(self, node: cst.For, anchor: cst.CSTNode, carried: set | frozenset = frozenset()) -> list:
        """`for T in gen(args): body [else: ...]` -> the fold's call with the body as its consumer."""
        call = syntax.strip_parentheses(node.iter)
        generator = self.generator(call)
        body = list(scopes.statements(node.body))
        for inner in scopes.nested(body):
            self.reject(inner, "function defined in a loop over a generator", "define it before the loop")
        targets = names_in(node.target)
        assigned = assigned_in(cst.IndentedBlock(body)) | targets
        outside = self.read_after(anchor)
        certain = self.parameters | scopes.bound_before(self.original.body.body, anchor) | set(carried)
        env, state, unbound = [], [], []
        for name in scopes.in_order([node.target, *body]):
            if name not in self.locals and name not in self.generated or name in env or name in state:
                continue
            if name in self.generated and name not in carried:
                continue  # what an inner loop's rewrite binds before its use
            if name in assigned:
                if (
                    name not in carried
                    and name not in outside
                    and (name in targets or scopes.assigned_first(body, name))
                ):
                    continue
                if name not in certain and self.unbound_here(name, anchor):
                    unbound.append(name)  # never bound yet: the sentinel, raising where Python would
                elif name not in certain:
                    self.reject(
                        anchor,
                        f"variable {name} assigned in a loop over a generator and not bound before it",
                        f"assign {name} before the loop (e.g. {name} = None): the loop body runs as a function the "
                        "generator calls, and hands the variables it changes back",
                    )
                state.append(name)
            elif name in certain:
                env.append(name)
            else:
                self.reject(
                    anchor,
                    f"variable {name} read in a loop over a generator and not bound before it",
                    f"assign {name} before the loop",
                )
        label = self.fresh(naming.generator_loop(syntax.dotted_name(call.func)))
        roles = ("item", "env", "state", "fold", "flag", "value")
        names = {k: self.fresh(naming.generator_part(label, k)) for k in roles}
        packed = _tuple(state)
        jumps = generator_jumps.Jumps(packed, self.read.positions, self.moved)
        rewritten = [s.visit(jumps) for s in body]
        head = []
        if env:
            head.append(syntax.unpack(env, cst.Name(names["env"])))
        if state:
            head.append(syntax.unpack(state, cst.Name(names["state"])))
        head.append(syntax.line(f"TARGET = {names['item']}", TARGET=node.target))
        tail = [] if ends_in_jump(rewritten) else [syntax.line("return 0, STATE, None", STATE=packed)]
        params = cst.Parameters([cst.Param(cst.Name(names[k])) for k in ("item", "env", "state")])
        step = cst.FunctionDef(cst.Name(label), params, cst.IndentedBlock([*head, *rewritten, *tail]))
        definition_label = self.fresh(naming.generator_definition(label))
        self.definitions[definition_label] = self.definition(step, label, anchor)
        generator_folds.mark(self.definitions[definition_label], set(env) & set(self.local_generators))
        if isinstance(generator, generator_folds.LocalGenerator):  # a new function at each run: its fold then
            fold_label = "None"
        else:
            fold_label = self.fresh(naming.generator_definition("fold_" + generator.__name__))
            self.definitions[fold_label] = generator_folds.fold_definition(generator, self.read.location(call))
        arguments = [cst.Arg(cst.Name(label)), cst.Arg(_tuple(env)), cst.Arg(packed), *call.args]
        out = [syntax.line(f'{name} = cpsgrad_runtime.unbound("{name}")') for name in unbound]
        out += [
            syntax.line(f"{label} = cpsgrad_runtime.make_function({definition_label}, ())"),
            syntax.line(f"{names['fold']} = cpsgrad_runtime.generator_fold({fold_label}, GEN)", GEN=call.func),
            syntax.line(
                f"{names['flag']}, {names['state']}, {names['value']} = CALL",
                CALL=cst.Call(cst.Name(names["fold"]), arguments),
            ),
        ]
        if state:
            out.append(syntax.unpack(state, cst.Name(names["state"])))
        if jumps.returns:
            out.append(cst.parse_statement(f"if {names['flag']} == 2:\n    return {names['value']}\n"))
        if node.orelse is not None:
            test = cst.parse_expression(f"{names['flag']} == 0")
            out.append(cst.If(test, node.orelse.body))
        return out

    def read_after(self, anchor: cst.CSTNode) -> set[str]:
        """The names the function mentions after the loop `anchor` (its `else` included), or, in a loop
        around it, anywhere but in its body (the next iteration reads them)."""
        kept = (anchor.iter, anchor.orelse) if isinstance(anchor, cst.For) else ()
        everywhere = set(scopes.names_outside(self.original, anchor, kept))
        where = self.read.positions.get(anchor)
        if where is None or scopes.inside_loop(self.original, anchor):
            return everywhere
        end = (where.end.line, where.end.column)
        after = scopes.names_after(self.original, end, self.read.positions)
        if isinstance(anchor, cst.For) and anchor.orelse is not None:
            after |= names_in(anchor.orelse)
        return after

    def unbound_here(self, name: str, anchor: cst.CSTNode) -> bool:
        """Whether `name` is certainly unbound where `anchor` starts: no binding of it before in the
        text, and no loop around it (whose earlier iteration could have bound it)."""
        start = self.read.positions[anchor].start if anchor in self.read.positions else None
        if start is None or name in self.parameters or scopes.inside_loop(self.original, anchor):
            return False
        return name not in scopes.bound_in_text_before(self.original, (start.line, start.column), self.read.positions)

    def definition(self, step: cst.FunctionDef, label: str, anchor) -> Definition:
        read = self.read
        # the code a call runs as plain Python (where nothing in it is differentiated) has the user's
        # globals, which hold no cpsgrad_runtime: the consumers' appends are written as what they do
        plain = step.visit(generator_jumps.PlainAppends())
        assert "cpsgrad_runtime" not in names_in(plain), "a loop body's plain code reads cpsgrad_runtime"
        text = cst.Module(body=[plain]).code
        module = compile(text, f"<cpsgrad loop body {label} of {read.function.__qualname__}>", "exec")
        code = next(c for c in module.co_consts if isinstance(c, types.CodeType))
        positions = collections.ChainMap(self.moved, read.positions)
        source = dataclasses.replace(read, definition=step, positions=positions, captured=())
        made = Definition(
            code=code,
            globals=read.function.__globals__,
            name=label,
            qualname=f"{read.function.__qualname__}.<locals>.{label}",
            captured=(),
            own=None,
            positional_defaults=0,
            keyword_defaults=(),
            source=source,
            location=read.location(anchor),
        )
        DEFINITIONS[code] = made
        return made


def _strict_false(argument: cst.Arg) -> bool:
    value = argument.value
    return (
        argument.keyword is not None
        and argument.keyword.value == "strict"
        and isinstance(value, cst.Name)
        and value.value == "False"
    )


def _tuple(names: list[str]) -> cst.Tuple:
    return cst.Tuple([cst.Element(cst.Name(n)) for n in names])


