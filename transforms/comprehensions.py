"""Comprehensions and the builtin higher-order functions, rewritten into loops during normalize.

A list, set or dict comprehension or a generator expression becomes statements that the
normalizer lowers like the user's own (its `for` clauses become `for` loops, its `if`s nested
`if`s) and whose value is the fresh list or dict they build:

    ys = [f(x) for x in xs if x > 0]   ->   comprehension = []
                                            for x_1 in xs:
                                                if x_1 > 0:
                                                    comprehension = cpsgrad_runtime.appended(comprehension, f(x_1))
                                            ys = comprehension

Python 3 scoping is kept by renaming: the names a comprehension's `for` clauses bind are local to
it, so they get fresh names (`x` -> `x_1`), substituted in the element, the conditions and the
later clauses (never in the first iterable, which Python evaluates in the enclosing scope; a
nested comprehension or lambda that binds the same name again keeps its own). Nothing else can
refer to the list being built, so appending to it is always the functional
`cpsgrad_runtime.appended`; a dict comprehension inserts with `cpsgrad_runtime.inserted`. A
generator expression is evaluated eagerly into a list (the same values wherever its elements
have no side effects; `any`/`all` over one do not stop early), except directly under `next()`,
which takes its first element lazily (a loop that breaks there); a set comprehension is
`set(list)`.

The builtins `map` and `filter` become the comprehensions they stand for (eager lists, not lazy
iterators), and `functools.reduce` a loop, so each call of their function argument is an
ordinary call of the transformed program: a user function, a function value or a primitive with
a rule. `max`/`min` with `key=` and several positional arguments get their arguments packed into
a tuple like the plain ones (normalize.call), so the `key=` rules in rules/containers.py apply.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import libcst as cst

from cpsgrad.transforms import syntax
from cpsgrad.transforms.naming import names_in

if TYPE_CHECKING:
    from cpsgrad.transforms.normalize import _Normalizer

NODES = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
_REDUCE = functools.reduce  # as imported: a later rebinding of functools.reduce is a user's function

# bases of the fresh names the rewritten code binds (numbered `_1`, `_2`, ... when taken)
RESULT = "comprehension"  # the list, set or dict a comprehension builds
MAPPED = "mapped"  # the list map builds
FILTERED = "filtered"  # the list filter builds
ITEM = "item"  # the element map and filter pass to their function, the one reduce folds in
REDUCED = "reduced"  # reduce's running value
REDUCE_ITEMS = "reduce_items"
REDUCE_INDEX = "reduce_index"
FIRST = "first"  # the element next() takes from a generator expression

_EMPTY_REDUCE = "reduce() of empty iterable with no initial value"  # Python's own message


@dataclasses.dataclass
class _Clause:
    """One `for target in iterable if c1 if c2` of a comprehension, its names already fresh."""

    target: cst.BaseExpression
    iterable: cst.BaseExpression
    conditions: list[cst.BaseExpression]


def comprehension(normalizer: _Normalizer, node: cst.BaseExpression, out: list) -> cst.BaseExpression:
    """The statements computing a comprehension's value, into `out`; returns the atom holding it."""
    clauses, renamed = _clauses(normalizer, node)
    if isinstance(node, cst.DictComp):
        return build(
            normalizer, "dict", clauses, [substitute(node.key, renamed), substitute(node.value, renamed)], node, out
        )
    kind = "set" if isinstance(node, cst.SetComp) else "list"
    return build(normalizer, kind, clauses, [substitute(node.elt, renamed)], node, out)


def _clauses(normalizer: _Normalizer, node: cst.BaseExpression) -> tuple[list[_Clause], dict[str, str]]:
    """A comprehension's clauses with fresh names for what they bind, and the renaming."""
    clauses: list[_Clause] = []
    renamed: dict[str, str] = {}
    clause = node.for_in
    first = True
    while clause is not None:
        if clause.asynchronous is not None:
            normalizer.reject(
                clause, "async comprehension", "asynchronous iteration cannot be differentiated; use a plain for clause"
            )
        iterable = clause.iter if first else substitute(clause.iter, renamed)
        for name in _target_names(normalizer, clause.target):
            renamed[name] = _fresh(normalizer, name)
        conditions = [substitute(test.test, renamed) for test in clause.ifs]
        clauses.append(_Clause(substitute(clause.target, renamed), iterable, conditions))
        clause = clause.inner_for_in
        first = False
    return clauses, renamed


def build(
    normalizer: _Normalizer,
    kind: str,
    clauses: Sequence[_Clause],
    element: list,
    origin: cst.CSTNode,
    out: list,
    base: str = RESULT,
) -> cst.BaseExpression:
    """`result = []; for ...: if ...: result = appended(result, element)` (or `{}` and
    `inserted(result, key, value)` for a dict), normalized into `out`; the atom of the value."""
    result = _fresh(normalizer, base)
    empty = cst.Dict([]) if kind == "dict" else cst.List([])
    normalizer.emit(out, syntax.assign(result, empty), origin)
    helper = _runtime("inserted" if kind == "dict" else "appended")
    arguments = [cst.Arg(cst.Name(result)), *[cst.Arg(part) for part in element]]
    body: list = [syntax.assign(result, cst.Call(helper, arguments))]
    for clause in reversed(clauses):
        for condition in reversed(clause.conditions):
            body = [syntax.if_statement(condition, body)]
        body = [cst.For(clause.target, clause.iterable, syntax.indented(body))]
    _normalize_into(normalizer, body, origin, out)
    if kind == "set":
        return normalizer.temporary_value(cst.Call(normalizer.builtin("set"), [cst.Arg(cst.Name(result))]), out, origin)
    return cst.Name(result)


def higher_order_call(normalizer: _Normalizer, node: cst.Call, out: list) -> cst.BaseExpression | None:
    """`map`, `filter`, `functools.reduce`, and `max`/`min` with `key=` over several positional
    arguments, rewritten (see the module); None for any other call."""
    if any(argument.star for argument in node.args):
        return None
    callee = node.func
    positional = [a.value for a in node.args if a.keyword is None]
    keywords = [a for a in node.args if a.keyword is not None]
    if normalizer.is_builtin(callee, "map") and len(positional) >= 2 and not keywords:
        return _map(normalizer, node, positional, out)
    if normalizer.is_builtin(callee, "filter") and len(positional) == 2 and not keywords:
        return _filter(normalizer, node, positional, out)
    if (
        normalizer.is_builtin(callee, "next")
        and 1 <= len(positional) <= 2
        and not keywords
        and isinstance(positional[0], cst.GeneratorExp)
    ):
        return _next(normalizer, node, positional, out)
    if 2 <= len(positional) <= 3 and not keywords and _is_reduce(normalizer, callee):
        return _reduce(normalizer, node, positional, out)
    extremum = normalizer.is_builtin(callee, "max") or normalizer.is_builtin(callee, "min")
    if extremum and len(positional) >= 2 and [a.keyword.value for a in keywords] == ["key"]:
        packed = normalizer.temporary_value(
            cst.Tuple([cst.Element(normalizer.atom(v, out)) for v in positional]), out, node
        )
        key = normalizer.atom(keywords[0].value, out)
        return cst.Call(syntax.strip_parentheses(callee), [cst.Arg(packed), cst.Arg(key, keyword=cst.Name("key"))])
    ordering = extremum or normalizer.is_builtin(callee, "sorted")
    if (
        ordering
        and len(positional) == 1
        and isinstance(positional[0], cst.Call)
        and not _builds_sequence(normalizer, positional[0])
    ):
        # sorted(zip(...)), max(d.items(), key=...): the rule reads the items again in the
        # backward pass, which an iterator or a dict view cannot give; a snapshot can
        snapshot = cst.Call(_runtime("as_sequence"), [cst.Arg(positional[0])])
        arguments = [cst.Arg(normalizer.atom(snapshot, out))]
        arguments += [cst.Arg(normalizer.atom(a.value, out), keyword=a.keyword) for a in keywords]
        return cst.Call(syntax.strip_parentheses(callee), arguments)
    return None


def _builds_sequence(normalizer: _Normalizer, call: cst.Call) -> bool:
    """A call of `list`, `tuple` or `sorted`: its value can be read twice as it is."""
    return any(normalizer.is_builtin(call.func, name) for name in ("list", "tuple", "sorted"))


def _map(normalizer: _Normalizer, node: cst.Call, positional: list, out: list) -> cst.BaseExpression:
    """`map(f, xs)` -> `[f(item) for item in xs]`; `map(f, xs, ys)` -> `[f(item, item_1) for
    item, item_1 in zip(xs, ys)]`. `f` is evaluated once, first, as Python does."""
    function = normalizer.atom(positional[0], out)
    sequences = positional[1:]
    items = [_fresh(normalizer, ITEM) for _ in sequences]
    call = cst.Call(function, [cst.Arg(cst.Name(item)) for item in items])
    if len(sequences) == 1:
        clause = _Clause(cst.Name(items[0]), sequences[0], [])
    else:
        target = cst.Tuple([cst.Element(cst.Name(item)) for item in items])
        clause = _Clause(target, cst.Call(normalizer.builtin("zip"), [cst.Arg(s) for s in sequences]), [])
    return build(normalizer, "list", [clause], [call], node, out, MAPPED)


def _filter(normalizer: _Normalizer, node: cst.Call, positional: list, out: list) -> cst.BaseExpression:
    """`filter(f, xs)` -> `[item for item in xs if f(item)]`; `filter(None, xs)` keeps the truthy."""
    predicate = positional[0]
    none = isinstance(predicate, cst.Name) and predicate.value == "None"
    function = None if none else normalizer.atom(predicate, out)
    item = _fresh(normalizer, ITEM)
    condition = cst.Name(item) if function is None else cst.Call(function, [cst.Arg(cst.Name(item))])
    return build(
        normalizer, "list", [_Clause(cst.Name(item), positional[1], [condition])], [cst.Name(item)], node, out, FILTERED
    )


def _next(normalizer: _Normalizer, node: cst.Call, positional: list, out: list) -> cst.BaseExpression:
    """`next(e for x in xs if c[, default])` -> the first element, found lazily as the generator
    would: a loop that stops there (later elements are never computed), then `default`, or
    StopIteration as `next` raises. The first iterable is evaluated before `default`, as Python
    evaluates the generator expression first.

        first = None                        first = default
        first_found = False                 ...
        for x_1 in xs:
            if c:
                first = e
                first_found = True
                break
        if not first_found:
            raise StopIteration()
    """
    generator = positional[0]
    clauses, renamed = _clauses(normalizer, generator)
    clauses[0] = dataclasses.replace(clauses[0], iterable=_evaluated(normalizer, clauses[0].iterable, out))
    start = normalizer.atom(positional[1], out) if len(positional) == 2 else cst.Name("None")
    result = _fresh(normalizer, FIRST)
    found = _fresh(normalizer, FIRST + "_found")
    normalizer.emit(out, syntax.assign(result, start), node)
    normalizer.emit(out, syntax.assign(found, cst.Name("False")), node)
    stop = cst.SimpleStatementLine([cst.Break()])
    body: list = [
        syntax.assign(result, substitute(generator.elt, renamed)),
        syntax.assign(found, cst.Name("True")),
        stop,
    ]
    for depth, clause in enumerate(reversed(clauses)):
        for condition in reversed(clause.conditions):
            body = [syntax.if_statement(condition, body)]
        body = [cst.For(clause.target, clause.iterable, syntax.indented(body))]
        if depth < len(clauses) - 1:  # the enclosing loop stops too once the element is found
            body.append(syntax.if_statement(cst.Name(found), [stop]))
    if len(positional) == 1:
        error = cst.Call(normalizer.builtin("StopIteration"), [])
        body.append(syntax.if_statement(syntax.negate(cst.Name(found)), [cst.SimpleStatementLine([cst.Raise(error)])]))
    _normalize_into(normalizer, body, node, out)
    return cst.Name(result)


def _is_reduce(normalizer: _Normalizer, callee: cst.BaseExpression) -> bool:
    dotted = syntax.dotted_name(callee)
    if dotted is None or not dotted.endswith("reduce"):
        return False
    return normalizer.resolver.resolve(callee) is _REDUCE


def _reduce(normalizer: _Normalizer, node: cst.Call, positional: list, out: list) -> cst.BaseExpression:
    """`reduce(f, xs, initial)` -> `reduced = initial; for item in xs: reduced = f(reduced, item)`;
    without `initial`, the first element starts and the rest are folded in by index, after the
    TypeError Python raises for an empty iterable. Arguments are evaluated in order first."""
    function = normalizer.atom(positional[0], out)
    sequence = _evaluated(normalizer, positional[1], out)
    reduced = _fresh(normalizer, REDUCED)
    statements: list = []
    if len(positional) == 3:
        start = normalizer.atom(positional[2], out)
        item = _fresh(normalizer, ITEM)
        fold = syntax.assign(reduced, cst.Call(function, [cst.Arg(cst.Name(reduced)), cst.Arg(cst.Name(item))]))
        normalizer.emit(out, syntax.assign(reduced, start), node)
        statements.append(cst.For(cst.Name(item), sequence, syntax.indented([fold])))
    else:
        items = _fresh(normalizer, REDUCE_ITEMS)
        index = _fresh(normalizer, REDUCE_INDEX)
        normalizer.emit(out, syntax.assign(items, cst.Call(_runtime("as_sequence"), [cst.Arg(sequence)])), node)
        length = normalizer.temporary_value(cst.Call(normalizer.builtin("len"), [cst.Arg(cst.Name(items))]), out, node)
        error = cst.Call(normalizer.builtin("TypeError"), [cst.Arg(cst.SimpleString(repr(_EMPTY_REDUCE)))])
        statements.append(syntax.if_statement(syntax.negate(length), [cst.SimpleStatementLine([cst.Raise(error)])]))
        statements.append(syntax.assign(reduced, _element(items, cst.Integer("0"))))
        fold = syntax.assign(
            reduced, cst.Call(function, [cst.Arg(cst.Name(reduced)), cst.Arg(_element(items, cst.Name(index)))])
        )
        indices = cst.Call(normalizer.builtin("range"), [cst.Arg(cst.Integer("1")), cst.Arg(length)])
        statements.append(cst.For(cst.Name(index), indices, syntax.indented([fold])))
    _normalize_into(normalizer, statements, node, out)
    return cst.Name(reduced)


def _evaluated(normalizer: _Normalizer, iterable: cst.BaseExpression, out: list) -> cst.BaseExpression:
    """`iterable` evaluated now: an atom, or `range(atoms)` (so the loop over it counts with an int)."""
    if (
        isinstance(iterable, cst.Call)
        and normalizer.is_builtin(iterable.func, "range")
        and not any(a.keyword or a.star for a in iterable.args)
    ):
        return cst.Call(iterable.func, [cst.Arg(normalizer.atom(a.value, out)) for a in iterable.args])
    return normalizer.atom(iterable, out)


# -- renaming ------------------------------------------------------------------------------------
def substitute(node: cst.CSTNode, renamed: dict[str, str]) -> cst.CSTNode:
    """`node` with the variables in `renamed` renamed, where they refer to the same binding:
    attribute names and keywords are not variables, and a lambda's parameters and a nested
    comprehension's targets hide the outer names they shadow. Unchanged parts stay the same
    objects (so they keep their source positions)."""
    if not renamed:
        return node
    if isinstance(node, cst.Name):
        return node.with_changes(value=renamed[node.value]) if node.value in renamed else node
    if isinstance(node, cst.Attribute):
        return _replace(node, value=substitute(node.value, renamed))
    if isinstance(node, cst.Arg):
        return _replace(node, value=substitute(node.value, renamed))
    if isinstance(node, cst.Lambda):
        params = node.params
        inner = {k: v for k, v in renamed.items() if k not in names_in(params)}
        defaults = {
            field: [
                _replace(p, default=substitute(p.default, renamed)) if p.default is not None else p
                for p in getattr(params, field)
            ]
            for field in ("posonly_params", "params", "kwonly_params")
        }
        return _replace(node, params=_replace(params, **defaults), body=substitute(node.body, inner))
    if isinstance(node, NODES):
        return _substitute_comprehension(node, renamed)
    changes = {}
    for field in dataclasses.fields(node):
        value = getattr(node, field.name)
        if syntax.is_a(value, cst.CSTNode):
            changes[field.name] = substitute(value, renamed)
        elif isinstance(value, (list, tuple)) and value and syntax.is_a(value[0], cst.CSTNode):
            changes[field.name] = type(value)(substitute(v, renamed) for v in value)
    return _replace(node, **changes)


def _substitute_comprehension(node: cst.BaseExpression, renamed: dict[str, str]) -> cst.BaseExpression:
    """A nested comprehension: its first iterable sees the outer names, the rest sees its own
    targets where they shadow them."""
    clauses = []
    clause = node.for_in
    visible = renamed
    first = True
    while clause is not None:
        iterable = substitute(clause.iter, renamed if first else visible)
        visible = {k: v for k, v in visible.items() if k not in names_in(clause.target)}
        ifs = [_replace(test, test=substitute(test.test, visible)) for test in clause.ifs]
        clauses.append((clause, iterable, ifs))
        clause = clause.inner_for_in
        first = False
    inner = None
    for clause, iterable, ifs in reversed(clauses):
        inner = _replace(clause, iter=iterable, ifs=ifs, inner_for_in=inner)
    if isinstance(node, cst.DictComp):
        return _replace(node, key=substitute(node.key, visible), value=substitute(node.value, visible), for_in=inner)
    return _replace(node, elt=substitute(node.elt, visible), for_in=inner)


def _replace(node: cst.CSTNode, **changes) -> cst.CSTNode:
    """`node.with_changes(**changes)`, or `node` itself when nothing changes."""
    if all(_same(getattr(node, name), value) for name, value in changes.items()):
        return node
    return node.with_changes(**changes)


def _same(old, new) -> bool:
    if isinstance(old, (list, tuple)) and isinstance(new, (list, tuple)):
        return len(old) == len(new) and all(a is b for a, b in zip(old, new, strict=True))
    return old is new


def _target_names(normalizer: _Normalizer, target: cst.BaseExpression) -> list[str]:
    """The names a `for` clause binds, in order (each once)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        names = [name for element in target.elements for name in _target_names(normalizer, element.value)]
        return list(dict.fromkeys(names))
    normalizer.reject(target, "comprehension target", "bind plain names in a comprehension's for clause")
    return []


# -- helpers -------------------------------------------------------------------------------------
def _normalize_into(normalizer: _Normalizer, statements: list, origin: cst.CSTNode, out: list) -> None:
    """Normalize statements built here; those made from nodes without a source position (built
    here, or renamed copies of the user's) are placed at `origin` for error messages."""
    produced = normalizer.block(statements)
    _locate(normalizer, produced, origin)
    out.extend(produced)


def _locate(normalizer: _Normalizer, statements: Sequence[cst.BaseStatement], origin: cst.CSTNode) -> None:
    for statement in statements:
        if normalizer.source.location(normalizer.origins.get(id(statement))) is None:
            normalizer.origins[id(statement)] = origin
        if isinstance(statement, (cst.If, cst.While)):
            _locate(normalizer, statement.body.body, origin)
            if isinstance(statement, cst.If) and statement.orelse is not None:
                _locate(normalizer, statement.orelse.body.body, origin)


def _fresh(normalizer: _Normalizer, base: str) -> str:
    name = normalizer.namer.fresh(base)
    normalizer.locals.add(name)
    return name


def _runtime(helper: str) -> cst.Attribute:
    return cst.Attribute(cst.Name("cpsgrad_runtime"), cst.Name(helper))


def _element(sequence: str, index: cst.BaseExpression) -> cst.Subscript:
    return cst.Subscript(cst.Name(sequence), [cst.SubscriptElement(cst.Index(index))])
