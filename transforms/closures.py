"""Nested defs and lambdas: closures as differentiable values (DESIGN.md §3).

Before normalize, each function defined inside the transformed one (a nested `def`, a `lambda`)
is replaced by the call that makes it:

    def scale(v): return v * w          ->  scale = cpsgrad_runtime.make_function(def_scale, (w,))
    map(lambda v, s=x: v * s + c, xs)   ->  map(cpsgrad_runtime.make_function(lambda_1, (c, x)), xs)

`def_scale` (a wrapper parameter of the program) is the `Definition` of that code object: its
source (the nested node itself, so errors point into the user's file), the names it captures
(its code's free variables) and its defaults. `make_function` builds a real Python function from
the same code object, with new cells holding the captured values and the defaults it was given,
so the value behaves as Python's own closure wherever it goes (a builtin's `key=`, plain Python).

The tuple `make_function` receives (the captured values, then the defaults) is the closure's
differentiable environment: the adjoint of a closure is a `SequenceAdjoint` aligned with it
(Zygote's approach). When a derivative program calls a closure, `runtime.dispatch` runs the
program of its code object, which takes the captured values as leading parameters named as in
the source; one program serves every closure the definition makes. Where the called value is
itself differentiable, the call returns the closure's adjoint beside its arguments', and the
rule of `make_function` hands it back to the captured values and defaults.

Captured values are the values at the definition; Python reads a captured variable when the
closure runs. The two agree unless the variable is assigned again while the closure can still
be called: after the definition in the text, or in a loop around it. Such a definition is
refused (with the fix: bind the value as a default, `lambda y, i=i: ...`), except in a loop
when the closure cannot outlive the iteration (it is only called, or handed straight to a
builtin that consumes it: map, filter, sorted, min, max, functools.reduce).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import types
from dataclasses import dataclass

import libcst as cst

from cpsgrad.errors import UnsupportedError
from cpsgrad.runtime.closures import DEFINITIONS, Definition
from cpsgrad.transforms import naming, syntax
from cpsgrad.transforms.naming import names_in
from cpsgrad.transforms.resolve import Resolver
from cpsgrad.transforms.source import FunctionSource

_COMPREHENSION_CODES = frozenset({"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"})
_LOOPS = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_MUTATORS = frozenset(
    {
        "append",
        "pop",
        "extend",
        "insert",
        "remove",
        "clear",
        "update",
        "setdefault",
        "sort",
        "reverse",
        "add",
        "discard",
        "popitem",
    }
)
_CONSUMERS = frozenset({"map", "filter", "sorted", "min", "max", "reduce", "sum", "any", "all", "list", "tuple"})
NESTED = (cst.FunctionDef, cst.Lambda)


@dataclass
class Lifted:
    """The transformed function with its nested definitions replaced by `make_function` calls."""

    source: FunctionSource
    definitions: dict[str, Definition]  # wrapper parameter name -> the definition it holds
    bindings: dict = dataclasses.field(default_factory=dict)  # names resolved on the way (Resolver.bindings)


def lift(read: FunctionSource) -> Lifted:
    """Replace every nested def and lambda of `read`'s function (not those inside them: they are
    lifted when their own function is transformed) by the call that makes it."""
    nodes = _outermost_definitions(read.definition)
    if not nodes and not _mentions_partial(read.definition):
        return Lifted(read, {})
    codes = _match_codes(read, nodes)
    bindings = _Bindings(read)
    read.definition.visit(bindings)
    taken = names_in(read.definition)
    labels: dict[int, str] = {}
    definitions: dict[str, Definition] = {}
    lambdas = 0
    for node in nodes:
        if isinstance(node, cst.Lambda):
            lambdas += 1
            base = naming.lambda_label(lambdas)
        else:
            base = naming.generator_definition(node.name.value)
        label, counter = base, 1
        while label in taken or label in definitions:
            counter += 1
            label = f"{base}_{counter}"
        code = codes[id(node)]
        own = _own_name(node, read.definition)
        definition = _definition(read, node, code, own, label)
        _check_late_binding(read, node, definition, own, bindings)
        labels[id(node)] = label
        definitions[label] = definition
        DEFINITIONS[code] = definition
    local = {*bindings.bound, *(p.name.value for p in _parameters(read.definition))}
    resolver = Resolver(read.function, local)
    replacer = _Replace(labels, definitions, read.positions, resolver.resolve)
    replaced = read.definition.visit(replacer)
    positions = collections.ChainMap(replacer.moved, read.positions)
    return Lifted(dataclasses.replace(read, definition=replaced, positions=positions), definitions, resolver.bindings)


# ---- finding the definitions and their code objects ---------------------------------------------


def _outermost_definitions(definition: cst.FunctionDef) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []

    class Finder(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, NESTED):
                found.append(node)
                # defaults are evaluated in the enclosing function: lambdas there are its own
                params = node.params
                for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                    if param.default is not None:
                        param.default.visit(self)
                return False
            return True

    for statement in definition.body.body:
        statement.visit(Finder())
    return found


def _nested_codes(code: types.CodeType) -> list[types.CodeType]:
    """The code objects of the functions defined directly in `code` (through comprehensions,
    which are functions of their own in Python 3.11)."""
    found = []
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            if constant.co_name in _COMPREHENSION_CODES:
                found += _nested_codes(constant)
            else:
                found.append(constant)
    return found


def _match_codes(read: FunctionSource, nodes: list[cst.CSTNode]) -> dict[int, types.CodeType]:
    """Each nested node's code object: by name, first line and parameters, in order among equals."""
    by_key: dict[tuple, list[types.CodeType]] = collections.defaultdict(list)
    for code in sorted(_nested_codes(read.function.__code__), key=lambda c: (c.co_firstlineno, _column(c))):
        parameters = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        by_key[code.co_name, code.co_firstlineno, parameters].append(code)
    matched: dict[int, types.CodeType] = {}
    # among equals (lambdas on one line), codes are in the order of their bodies' first
    # instruction: take the nodes in the order of their bodies too (a lambda in another's default
    # starts after it, but its body comes first)
    for node in sorted(nodes, key=lambda n: _body_position(read, n)):
        location = read.location(node)
        name = "<lambda>" if isinstance(node, cst.Lambda) else node.name.value
        parameters = tuple(
            p.name.value for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)
        )
        candidates = by_key.get((name, location.line, parameters)) if location is not None else None
        if not candidates:
            raise UnsupportedError(
                location, "nested function", "cpsgrad cannot find its compiled code; define it at module level"
            )
        matched[id(node)] = candidates.pop(0)
    return matched


def _body_position(read: FunctionSource, node: cst.CSTNode) -> tuple[int, int]:
    body = node.body if isinstance(node, cst.Lambda) else node
    location = read.location(body) or read.location(node)
    return (location.line, location.column) if location is not None else (0, 0)


def _column(code: types.CodeType) -> int:
    for _, _, _, column in code.co_positions():
        if column is not None:
            return column
    return 0


def _own_name(node: cst.CSTNode, enclosing: cst.FunctionDef) -> str | None:
    """The name a definition binds itself to: a def's name, or the target of `name = lambda ...`."""
    if isinstance(node, cst.FunctionDef):
        return node.name.value
    found: list[str] = []

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, assign: cst.Assign) -> None:
            if assign.value is node and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
                found.append(assign.targets[0].target.value)

    enclosing.visit(Finder())
    return found[0] if found else None


def _definition(
    read: FunctionSource, node: cst.CSTNode, code: types.CodeType, own: str | None, label: str
) -> Definition:
    if isinstance(node, cst.Lambda):
        body = cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(node.body)])])
        definition = cst.FunctionDef(cst.Name(label), node.params, body)  # its program: lambda_1__program
        name = "<lambda>"
    else:
        definition = node
        name = node.name.value
    freevars = code.co_freevars
    own = own if own in freevars else None
    params = node.params
    positional = [p for p in (*params.posonly_params, *params.params) if p.default is not None]
    keyword = [p.name.value for p in params.kwonly_params if p.default is not None]
    qualname = f"{read.function.__qualname__}.<locals>.{name}"
    nested = FunctionSource(
        read.function, read.filename, read.first_line, read.indent, definition, read.positions, captured=freevars
    )
    return Definition(
        code=code,
        globals=read.function.__globals__,
        name=name,
        qualname=qualname,
        captured=tuple(n for n in freevars if n != own),
        own=own,
        positional_defaults=len(positional),
        keyword_defaults=tuple(keyword),
        source=nested,
        location=read.location(node),
    )


# ---- the replacement ------------------------------------------------------------------------------


def _parameters(definition: cst.FunctionDef) -> list[cst.Param]:
    params = definition.params
    return [*params.posonly_params, *params.params, *params.kwonly_params]


def _mentions_partial(definition: cst.FunctionDef) -> bool:
    return "partial" in names_in(definition)


def _partial(call: cst.Call) -> cst.Call:
    """`functools.partial(f, a, k=c)` -> `cpsgrad_runtime.make_partial(f, (a,), ('k',), (c,))`:
    a partial made from differentiable values is one (its rule hands its adjoint back)."""
    positional = [a.value for a in call.args if a.keyword is None]
    keywords = [a for a in call.args if a.keyword is not None]
    if not positional or any(a.star for a in call.args):
        return call  # Python raises its own TypeError, or the fence names the star
    function, *arguments = positional

    def tuple_of(values):
        return cst.Tuple([cst.Element(v) for v in values])

    names = tuple_of([cst.SimpleString(repr(a.keyword.value)) for a in keywords])
    callee = cst.Attribute(cst.Name("cpsgrad_runtime"), cst.Name("make_partial"))
    return cst.Call(
        callee,
        [
            cst.Arg(function),
            cst.Arg(tuple_of(arguments)),
            cst.Arg(names),
            cst.Arg(tuple_of([a.value for a in keywords])),
        ],
    )


def _defaults(node: cst.CSTNode) -> list[cst.BaseExpression]:
    params = node.params
    positional = [p.default for p in (*params.posonly_params, *params.params) if p.default is not None]
    keyword = [p.default for p in params.kwonly_params if p.default is not None]
    return positional + keyword


class _Replace(cst.CSTTransformer):
    """Each nested definition becomes its `make_function` call; every node rebuilt on the way
    (the statements around a lambda) keeps its original's file position."""

    def __init__(self, labels: dict[int, str], definitions: dict[str, Definition], positions, resolve):
        self.resolve = resolve
        self.labels = labels
        self.definitions = definitions
        self.positions = positions
        self.moved: dict = {}  # new node -> the file position of the node it replaces

    def maker(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.Call:
        definition = self.definitions[self.labels[id(original)]]
        values = [cst.Name(n) for n in definition.captured] + [syntax.strip_parentheses(d) for d in _defaults(updated)]
        environment = cst.Tuple([cst.Element(v) for v in values])
        callee = cst.Attribute(cst.Name("cpsgrad_runtime"), cst.Name("make_function"))
        return cst.Call(callee, [cst.Arg(cst.Name(self.labels[id(original)])), cst.Arg(environment)])

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):
        result = updated
        if isinstance(original, cst.Call) and self.resolve(original.func) is functools.partial:
            result = _partial(updated)
        elif isinstance(original, cst.Lambda) and id(original) in self.labels:
            result = self.maker(original, updated)
        elif isinstance(original, cst.FunctionDef) and id(original) in self.labels:
            assign = cst.Assign([cst.AssignTarget(cst.Name(original.name.value))], self.maker(original, updated))
            result = cst.SimpleStatementLine([assign])
            if original in self.positions:
                self.moved[assign] = self.positions[original]
        if result is not original and original in self.positions:
            self.moved[result] = self.positions[original]
        return result


# ---- late binding --------------------------------------------------------------------------------


class _Bindings(cst.CSTVisitor):
    """Where each name of the enclosing function is bound (by offset in the text), with the
    loops around each binding, and how each nested definition's value is used."""

    def __init__(self, read: FunctionSource):
        self.read = read
        self.loops: list[cst.CSTNode] = []
        self.bound: dict[str, list[tuple[int, tuple]]] = collections.defaultdict(list)
        self.loops_of: dict[int, tuple] = {}  # id(nested node) -> the loops around it
        self.parents: dict[int, cst.CSTNode] = {}
        self.stack: list[cst.CSTNode] = []

    def offset(self, node: cst.CSTNode) -> int:
        position = self.read.positions.get(node)
        if position is None:
            return -1
        return position.start.line * 100000 + position.start.column

    def bind(self, target: cst.CSTNode, scoped: bool = False) -> None:
        """Record a binding; `scoped`: a comprehension's own variable, which only the functions
        defined inside that comprehension see."""
        if isinstance(target, cst.Name):
            self.bound[target.value].append((self.offset(target), tuple(map(id, self.loops)), scoped))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.bind(element.value, scoped)
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, scoped)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.stack:
            self.parents[id(node)] = self.stack[-1]
        self.stack.append(node)
        if isinstance(node, _LOOPS) and self.stack[:-1]:
            self.loops.append(node)  # before binding its targets: they are bound on each iteration
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self.bind(target.target)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
            self.bind(node.target)
        elif isinstance(node, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            clause = node.for_in
            while clause is not None:  # the element and every clause run once per iteration
                self.bind(clause.target, scoped=True)
                clause = clause.inner_for_in
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and isinstance(node.func.value, cst.Name)
        ):
            if node.func.attr.value in _MUTATORS:
                self.bound[node.func.value.value].append((self.offset(node), tuple(map(id, self.loops)), False))
        if isinstance(node, NESTED) and self.stack[:-1]:
            self.loops_of[id(node)] = tuple(self.loops)
            if isinstance(node, cst.FunctionDef):
                self.bound[node.name.value].append((self.offset(node), tuple(map(id, self.loops)), False))
            return False
        return True

    def on_leave(self, original: cst.CSTNode) -> None:
        if isinstance(original, _LOOPS) and self.loops and self.loops[-1] is original:
            self.loops.pop()
        self.stack.pop()


def _check_late_binding(
    read: FunctionSource, node: cst.CSTNode, definition: Definition, own: str | None, bindings: _Bindings
) -> None:
    position = read.positions.get(node)
    if position is None:
        return
    start = position.start.line * 100000 + position.start.column
    end = position.end.line * 100000 + position.end.column
    loops = bindings.loops_of.get(id(node), ())
    loop_ids = {id(loop) for loop in loops}
    kind = "lambda" if isinstance(node, cst.Lambda) else f"nested def {definition.name}"
    for name in definition.captured:
        bound = bindings.bound.get(name, ())
        parameter = name in {p.name.value for p in _parameters(read.definition)}
        # a comprehension's own variable is another variable, but inside that comprehension
        bound = [(offset, around) for offset, around, scoped in bound if not scoped or loop_ids & {around[-1]}]
        if not parameter and bound and not any(offset < start or loop_ids & set(around) for offset, around in bound):
            raise UnsupportedError(
                read.location(node), f"{kind} capturing {name}",
                f"{name} is only assigned after the definition, and cpsgrad captures values where a "
                "function is defined; define it first (nested functions calling each other in a cycle "
                "are not supported: define them at module level)",
            )
        for offset, around in bound:
            in_loop = bool(loop_ids & set(around))
            if in_loop and _consumed(node, own, loops, bindings, read):
                continue
            if in_loop or offset > end:
                where = "in a loop around it" if in_loop else "later in the function"
                raise UnsupportedError(
                    read.location(node), f"{kind} capturing {name}",
                    f"{name} is assigned again {where}, and Python's closure would read its value at the "
                    f"call, while cpsgrad captures the value at the definition; bind the value as a "
                    f"default ({name}={name}) or pass it as an argument",
                )


def _consumed(node: cst.CSTNode, own: str | None, loops: tuple, bindings: _Bindings, read: FunctionSource) -> bool:
    """Whether the closure cannot outlive an iteration of the loops around it: a lambda handed
    straight to a builtin that consumes it, or one whose name is only called or so handed."""
    parent = bindings.parents.get(id(node))
    if isinstance(node, cst.Lambda) and isinstance(parent, cst.Arg):
        return _consumer_call(bindings.parents.get(id(parent)))
    if own is None:
        return False
    innermost = loops[-1] if loops else None
    uses: list[bool] = []

    class Uses(cst.CSTVisitor):
        def on_visit(self, visited: cst.CSTNode) -> bool:
            if isinstance(visited, NESTED):  # another function mentioning it may keep it
                if visited is not node and own in names_in(visited):
                    uses.append(False)
                return False
            return super().on_visit(visited)

        def visit_Name(self, name: cst.Name) -> None:
            if name.value != own:
                return
            holder = bindings.parents.get(id(name))
            if isinstance(holder, cst.Call) and holder.func is name:
                uses.append(True)
            elif isinstance(holder, cst.Arg) and _consumer_call(bindings.parents.get(id(holder))):
                uses.append(True)
            elif isinstance(holder, cst.AssignTarget):
                uses.append(True)
            elif isinstance(holder, cst.Assign) and any(t.target is name for t in holder.targets):
                uses.append(True)
            else:
                uses.append(False)

    if innermost is None:
        return False
    innermost.visit(Uses())
    return all(uses)


def _consumer_call(call: cst.CSTNode | None) -> bool:
    if not isinstance(call, cst.Call):
        return False
    name = syntax.dotted_name(call.func)
    return name is not None and name.rsplit(".", 1)[-1] in _CONSUMERS
