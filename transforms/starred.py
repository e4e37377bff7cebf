"""Unpacking with `*` and `**`, rewritten by normalize into the core language.

- `first, *middle, last = xs` (also a `for` target): Python iterates `xs` once into a list, so
  `t1 = list(xs)`, `t2 = len(t1)`, `cpsgrad_runtime.unpack_check(t2, 2)` (Python's ValueError),
  then `first = t1[0]`, `middle = t1[1:-1]` (a list, as in Python), `last = t1[-1]`: indexing and
  slicing a list, with their rules; `list(x)` of an array gives its rows, as Python's unpacking.
- `[a, *xs, b]`, `(a, *xs)`: each starred part becomes `list(part)` where Python iterates it, the
  runs of plain elements list displays, and `cpsgrad_runtime.joined((p1, p2, p3))` (a list) or
  `joined_tuple(...)` concatenates them (its rule splits the adjoint back into the parts).
- `f(a, *xs, k=v, **kw)`: positional values in a tuple built as above, explicit keywords in a dict
  display, then `cpsgrad_runtime.spread(f, args, {"k": v}, kw)`. Where nothing passed is
  differentiable that runs as the plain call; otherwise it is a call of a user function whose
  dispatcher (cpsgrad/runtime/spread_sites.py) binds the arguments when their number is known
  and runs the callee's program: a user function, closure or partial, or a primitive's rule
  through its one-line adapter (`np.maximum(*pair)`, `max(*xs)`, `zip(*rows)`).
- `*args` and `**kwargs` parameters are parameters like the others, holding a tuple and a dict.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

import libcst as cst

from cpsgrad.errors import ArgumentError
from cpsgrad.rules.registry import TABLE
from cpsgrad.transforms import syntax

if TYPE_CHECKING:
    from cpsgrad.transforms.normalize import _Normalizer

SPREAD = "spread"


def for_effect(call: cst.Call, resolver) -> bool:
    """Whether `spread(f, ...)`, made for its effect, calls a primitive whose result carries no
    gradient (`print(*xs)`): it runs as the plain call."""
    if syntax.dotted_name(call.func) != f"cpsgrad_runtime.{SPREAD}" or not call.args:
        return False
    primitive = resolver.resolve(call.args[0].value)
    try:
        rules = TABLE.rules_for(primitive) if primitive is not None and primitive in TABLE else ()
    except TypeError:
        return False
    return bool(rules) and not any(rule.differentiable for rule in rules)


def parameter_names(params: cst.Parameters) -> list[str]:
    """The parameters as a derivative program takes them (`co_varnames`' order): positional,
    keyword-only, then `*args` and `**kwargs`."""
    names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
    if isinstance(params.star_arg, cst.Param):
        names.append(params.star_arg.name.value)
    if params.star_kwarg is not None:
        names.append(params.star_kwarg.name.value)
    return names


def has_star(target: cst.BaseExpression) -> bool:
    """Whether a tuple or list target has a starred element at its own level."""
    return isinstance(target, (cst.Tuple, cst.List)) and any(isinstance(e, cst.StarredElement) for e in target.elements)


def _runtime(name: str) -> cst.Attribute:
    return cst.Attribute(cst.Name("cpsgrad_runtime"), cst.Name(name))


def _call(function: cst.BaseExpression, *arguments: cst.BaseExpression) -> cst.Call:
    return cst.Call(function, [cst.Arg(a) for a in arguments])


def _index(sequence: cst.Name, index: cst.BaseSlice) -> cst.Subscript:
    return cst.Subscript(sequence, [cst.SubscriptElement(index)])


def _integer(value: int) -> cst.BaseExpression:
    literal = cst.Integer(str(abs(value)))
    return literal if value >= 0 else cst.UnaryOperation(cst.Minus(), literal)


def unpack(normalizer: _Normalizer, target, value: cst.BaseExpression, out: list, origin: cst.CSTNode) -> None:
    """`a, *rest, b = value`: iterate once into a list, check its length, bind by index."""
    elements = list(target.elements)
    star = next(i for i, e in enumerate(elements) if isinstance(e, cst.StarredElement))
    before, after = star, len(elements) - star - 1
    whole = normalizer.atom(value, out)
    items = normalizer.temporary_value(_call(normalizer.builtin("list"), whole), out, origin)
    length = normalizer.temporary_value(_call(normalizer.builtin("len"), items), out, origin)
    check = _call(_runtime("unpack_check"), length, cst.Integer(str(before + after)))
    normalizer.emit(out, cst.SimpleStatementLine([cst.Expr(check)]), origin)
    upper = _integer(-after) if after else None
    for position, element in enumerate(elements):
        if position < before:
            part = _index(items, cst.Index(cst.Integer(str(position))))
        elif position == before:
            part = _index(items, cst.Slice(cst.Integer(str(before)), upper))
        else:
            part = _index(items, cst.Index(_integer(position - len(elements))))
        normalizer.assignment([element.value], part, out, origin)


def has_starred_element(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Tuple, cst.List)) and any(isinstance(e, cst.StarredElement) for e in node.elements)


def _parts(normalizer: _Normalizer, elements, out: list, origin: cst.CSTNode) -> list:
    """The atoms of `elements` in Python's order, each starred one iterated into a list there."""

    def starred(value):
        return lambda into: normalizer.temporary_value(
            _call(normalizer.builtin("list"), normalizer.atom(value, into)), into, origin
        )

    return normalizer.in_order(
        [starred(e.value) if isinstance(e, cst.StarredElement) else normalizer.operand(e.value) for e in elements],
        out,
    )


def _joined(normalizer: _Normalizer, elements, atoms: list, as_tuple: bool, out: list, origin) -> cst.BaseExpression:
    """`[*xs, y]` from the atoms of its elements: runs of plain ones in list displays, then joined."""
    pieces: list[cst.BaseExpression] = []
    run: list[cst.BaseExpression] = []
    for element, atom in zip(elements, atoms, strict=True):
        if isinstance(element, cst.StarredElement):
            if run:
                pieces.append(normalizer.temporary_value(cst.List([cst.Element(a) for a in run]), out, origin))
                run = []
            pieces.append(atom)
        else:
            run.append(atom)
    if run:
        pieces.append(normalizer.temporary_value(cst.List([cst.Element(a) for a in run]), out, origin))
    parts = normalizer.temporary_value(cst.Tuple([cst.Element(p) for p in pieces]), out, origin)
    return _call(_runtime("joined_tuple" if as_tuple else "joined"), parts)


def display(normalizer: _Normalizer, node, out: list) -> cst.BaseExpression:
    """`[a, *xs]` or `(a, *xs)` as one operation on atoms."""
    atoms = _parts(normalizer, node.elements, out, node)
    return _joined(normalizer, node.elements, atoms, isinstance(node, cst.Tuple), out, node)


def call(normalizer: _Normalizer, callee: cst.BaseExpression, node: cst.Call, out: list) -> cst.BaseExpression:
    """`f(a, *xs, k=v, **kw)` -> `cpsgrad_runtime.spread(f, args, {'k': v}, kw)`. CPython
    evaluates every positional argument (starred ones too) before the keywords."""
    positional = [a for a in node.args if a.keyword is None and a.star != "**"]
    named = [a for a in node.args if a.keyword is not None or a.star == "**"]
    if len(positional) == 1 and positional[0].star == "*":  # f(*xs): tuple(xs), iterated where Python does
        elements = [cst.Element(cst.Call(normalizer.builtin("tuple"), [cst.Arg(positional[0].value)]))]
    else:
        elements = [cst.StarredElement(a.value) if a.star == "*" else cst.Element(a.value) for a in positional]
    atoms = _parts(normalizer, elements, out, node)
    values = normalizer.in_order([normalizer.operand(a.value) for a in named], out)
    if len(positional) == 1 and positional[0].star == "*":
        args = atoms[0]
    elif any(isinstance(e, cst.StarredElement) for e in elements):
        args = normalizer.temporary_value(_joined(normalizer, elements, atoms, True, out, node), out, node)
    else:
        args = normalizer.temporary_value(cst.Tuple([cst.Element(a) for a in atoms]), out, node)
    mappings: list[cst.BaseExpression] = []
    explicit = [(a, v) for a, v in zip(named, values, strict=True) if a.keyword is not None]
    if explicit:
        keys = [cst.DictElement(cst.SimpleString(repr(a.keyword.value)), v) for a, v in explicit]
        mappings.append(normalizer.temporary_value(cst.Dict(keys), out, node))
    mappings += [v for a, v in zip(named, values, strict=True) if a.keyword is None]
    return _call(_runtime(SPREAD), callee, args, *mappings)


# ---- `grad(f, argnums)` of a function with *args: argnums past the named positional parameters
# index into *args (positions counted as Python binds the call). The program is differentiated
# with respect to the whole `args` tuple, and each argnum's gradient picked from its gradient.


def positional_parameters(function) -> list[str]:
    """The parameters `grad`'s argnums count: the positional ones, then `*args`."""
    code = function.__code__
    stars = [code.co_varnames[code.co_argcount + code.co_kwonlyargcount]] if code.co_flags & inspect.CO_VARARGS else []
    return [*code.co_varnames[: code.co_argcount], *stars]


def top_level_argnums(code, argnums: tuple[int, ...]) -> tuple[tuple[int, ...], tuple | None]:
    """(the program's argnums, per argnum: (its index among those, None or its place in *args))."""
    if not code.co_flags & inspect.CO_VARARGS:
        return argnums, None
    named = code.co_argcount
    if any(p < 0 for p in argnums):
        raise ArgumentError(
            f"argnums {argnums}: a negative argnum of {code.co_name}, which takes *args, depends on the call; "
            "count positional arguments from 0"
        )
    program: list[int] = []
    picks = []
    for position in argnums:
        parameter = min(position, named)
        if parameter not in program:
            program.append(parameter)
        picks.append((program.index(parameter), position - named if position >= named else None))
    return tuple(program), tuple(picks)


def checked_arguments(parameters: list[str], args: tuple, differentiated: tuple, picks) -> list:
    """(name, value) of each differentiated argument, `args[1]` for an element of *args."""
    if picks is None:
        return [(parameters[p], args[p]) for p in differentiated]
    found = []
    for index, place in picks:
        position = differentiated[index]
        if place is None:
            found.append((parameters[position], args[position]))
        elif place >= len(args[position]):
            raise ArgumentError(
                f"argnums {position + place} is out of range: the call passes "
                f"{position + len(args[position])} positional arguments"
            )
        else:
            found.append((f"{parameters[position]}[{place}]", args[position][place]))
    return found


def picked(gradients: tuple, picks) -> tuple:
    """The gradients of the argnums asked for, from those of the program's parameters."""
    if picks is None:
        return gradients
    return tuple(gradients[index] if place is None else gradients[index][place] for index, place in picks)
