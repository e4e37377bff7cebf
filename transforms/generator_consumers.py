"""The builtins that consume a generator call on a statement of their own (`s = sum(gen(x))`), each as
the loop over the generator that Python's builtin runs (transforms/generators.py then rewrites the loop
into a call of the generator's fold). Each loop does what CPython's builtin does, step by step: `sum`
adds from its start, `min`/`max` keep the first extreme (`if item > best: best = item`), `any`/`all`
stop at the first true/false item (the generator is left suspended there, as Python leaves it),
`sorted` lists the items, then sorts the list; so the generator's side effects, and an exception of a
comparison, come where Python's do."""

from __future__ import annotations

import builtins
from collections.abc import Callable

import libcst as cst

from cpsgrad.transforms import syntax

FORMS = {
    builtins.sum: "sum",
    builtins.list: "list",
    builtins.tuple: "tuple",
    builtins.next: "next",
    builtins.min: "min",
    builtins.max: "max",
    builtins.any: "any",
    builtins.all: "all",
    builtins.sorted: "sorted",
}


def _empty_message(function) -> str:
    try:
        function(())
    except ValueError as error:
        return str(error)
    raise AssertionError(function)


_EMPTY = {"min": _empty_message(min), "max": _empty_message(max)}
_KEYWORDS = {"min": {"default"}, "max": {"default"}, "sorted": {"reverse"}}
_POSITIONAL = {"sum": 1, "next": 1}


def loop_parts(
    form: str,
    call: cst.Call,
    accumulator: str,
    item: str,
    fresh: Callable[[str], str],
    is_local: Callable[[str], bool],
    reject: Callable,
):
    """(before, step, after, carried) of `form(gen(...), extra...)`: the statements before the loop,
    its body (over `item`), after it, and the generated names the body hands back."""
    extra = list(call.args[1:])
    positional = [a for a in extra if a.keyword is None]
    keywords = [a for a in extra if a.keyword is not None]
    if (
        any(a.star for a in extra)
        or len(positional) > _POSITIONAL.get(form, 0)
        or any(a.keyword.value not in _KEYWORDS.get(form, ()) for a in keywords)
    ):
        reject(call, f"{form} of a generator with these arguments", _advice(form))
    for argument in extra:
        _check_evaluated_first(form, argument.value, is_local, reject)
    line = syntax.line
    carried = {accumulator}
    before, step, after = [], [], []
    if form == "sum":
        before.append(line(f"{accumulator} = START", START=positional[0].value if positional else cst.Integer("0")))
        step.append(line(f"{accumulator} = {accumulator} + {item}"))
    elif form in ("list", "tuple", "sorted"):
        before.append(line(f"{accumulator} = []"))
        step.append(line(f"{accumulator} = cpsgrad_runtime.appended({accumulator}, {item})"))
        if form == "tuple":
            after.append(line(f"{accumulator} = cpsgrad_runtime.builtins.tuple({accumulator})"))
        elif form == "sorted":
            listed = cst.Call(
                cst.parse_expression("cpsgrad_runtime.builtins.sorted"), [cst.Arg(cst.Name(accumulator)), *keywords]
            )
            after.append(line(f"{accumulator} = SORTED", SORTED=listed))
    elif form in ("any", "all"):
        stop, test = ("True", "if ITEM:") if form == "any" else ("False", "if not ITEM:")
        before.append(line(f"{accumulator} = {'False' if form == 'any' else 'True'}"))
        step.append(cst.parse_statement(f"{test}\n    {accumulator} = {stop}\n    break\n".replace("ITEM", item)))
    else:  # next, min, max: the first item, then (min, max) each better one
        got = fresh("found")
        carried.add(got)
        before += [line(f"{accumulator} = None"), line(f"{got} = False")]
        if form == "next":
            step += [line(f"{accumulator} = {item}"), line(f"{got} = True"), line("break")]
        else:
            better = f"{item} > {accumulator}" if form == "max" else f"{item} < {accumulator}"
            step.append(
                cst.parse_statement(
                    f"if not {got}:\n    {accumulator} = {item}\n    {got} = True\n"
                    f"elif {better}:\n    {accumulator} = {item}\n"
                )
            )
        default = positional[0].value if positional else (keywords[0].value if keywords else None)
        if default is not None:
            after.append(line(f"if not {got}:\n    {accumulator} = DEFAULT", DEFAULT=default))
        elif form == "next":
            after.append(cst.parse_statement(f"if not {got}:\n    raise StopIteration\n"))
        else:
            message = cst.SimpleString(repr(_EMPTY[form]))
            after.append(line(f"if not {got}:\n    raise cpsgrad_runtime.builtins.ValueError(M)", M=message))
    return before, step, after, carried


def _check_evaluated_first(form: str, value, is_local, reject) -> None:
    """The extra arguments are evaluated before the loop (sum's start) or after it (a default, `reverse`),
    where Python evaluates them with the generator call's arguments, before the generator runs: only a
    constant or a parameter (always bound, never rebound: `del` and `nonlocal` are refused) reads the same."""
    if _plain(value, is_local):
        return
    advice = {
        "sum": "write the loop: `s = start` then `for v in gen(...): s = s + v` (the same additions)",
        "sorted": "pass reverse=True or reverse=False",
    }.get(form, "use a constant default (`None`) and test for it after")
    reject(value, f"{form} of a generator with an argument that is not a constant or a parameter", advice)


def _plain(node, is_local) -> bool:
    return syntax.is_constant(node) or isinstance(node, cst.Name) and is_local(node.value)


def _advice(form: str) -> str:
    allowed = {
        "sum": "sum(gen(...)) or sum(gen(...), start)",
        "next": "next(gen(...)) or next(gen(...), default)",
        "min": "min(gen(...)) or min(gen(...), default=d)",
        "max": "max(gen(...)) or max(gen(...), default=d)",
        "sorted": "sorted(gen(...)) or sorted(gen(...), reverse=r); for a key, sort the list afterwards",
    }
    return f"write {allowed.get(form, f'{form}(gen(...))')}"


