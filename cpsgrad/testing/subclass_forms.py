"""Generated programs with `x op= y` on lists, dicts and their subclasses, and user methods named
like a container's (transforms/augmented.py, transforms/object_methods.py).

`subclass_programs()` is a hypothesis strategy of `SubclassProgram`s: a module's source defining
`Items0(list)`, `Table0(dict)` and `Reader0` (a plain class whose methods are `get` and `pop`),
and a function `f(x, items, table)` of a float vector `x` and two arguments it changes in place.
Its statements, 2 to 6 drawn from:

- `items += [e, ...]`, `items += (e, ...)` (a list's `+=` takes a tuple), `local *= 2`;
- `alias = items; alias += [e]` (the caller's list and its other name see it);
- `table |= {"k": e}`, `table |= [("k", e)]` (a dict's `|=` takes pairs);
- `local = [e]; local += (e, e)` (a list the function builds);
- `r = Reader0(e); acc = acc + r.get() * r.pop(e)`;

where `e` is `x[i]`, `x[i] * x[j]` or `np.sin(x[i])`, and `acc` a float the function returns
with the sums of the lists and dict. The checker (tests/test_subclass_forms.py) runs the
function under Python and cpsgrad on fresh arguments: equal values and equal final contents (of
the subclasses' own types), and the gradient against finite differences.

The program generator draws the same forms inside its programs (forms.py; `programs(subclasses=True)`):
a `subclass` statement builds a local `Items0`, `Table0`, plain list or `Reader0` from the
program's float expressions, changes it one to three times (`it += [e, e]`, `it += (e,)`,
`it *= 2`, `alias = it; alias += [e]`; `tb |= {"k": e}`, `tb |= [("k", e)]`; `local += (e, e)`),
and reads it into a new float (`a = sum(it) * len(it)`, `sum(tb.values())`,
`r.get() * r.pop(e)`), in whatever loop, branch or helper the statement is drawn in; the classes
are defined at module level once (`builder.forms.define`).
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

ITEMS = ["class Items0(list):", "    pass"]
TABLE = ["class Table0(dict):", "    pass"]
READER = [
    "class Reader0:",
    "    def __init__(self, w):",
    "        self.w = w",
    "",
    "    def get(self):",
    "        return self.w * 2.0",
    "",
    "    def pop(self, v):",
    "        return self.w * v",
]
PRELUDE = ["import numpy as np", "", "", *ITEMS, "", "", *TABLE, "", "", *READER]
SIZE = 5  # the length of x


@dataclass
class SubclassProgram:
    source: str
    forms: tuple[str, ...]  # the kinds of statement drawn, in order

    def __str__(self) -> str:
        return self.source


@st.composite
def _element(draw) -> str:
    i = draw(st.integers(0, SIZE - 1))
    form = draw(st.integers(0, 2))
    if form == 0:
        return f"x[{i}]"
    if form == 1:
        return f"x[{i}] * x[{draw(st.integers(0, SIZE - 1))}]"
    return f"np.sin(x[{i}])"


_KINDS = ("extend-list", "extend-tuple", "repeat", "alias", "update-dict", "update-pairs", "local-tuple", "reader")


@st.composite
def subclass_programs(draw) -> SubclassProgram:
    """A module defining `f(x, items, table)` (see the module's docstring)."""
    lines = ["def f(x, items, table):", "    acc = 0.0"]
    kinds = draw(st.lists(st.sampled_from(_KINDS), min_size=2, max_size=6))
    for number, kind in enumerate(kinds):
        e, e2 = draw(_element()), draw(_element())
        if kind == "extend-list":
            lines.append(f"    items += [{e}, {e2}]")
        elif kind == "extend-tuple":
            lines.append(f"    items += ({e},)")
        elif kind == "repeat":
            lines += [f"    local{number} = [{e}, {e2}]", f"    local{number} *= 2",
                      f"    acc = acc + sum(local{number})"]
        elif kind == "alias":
            lines += [f"    alias{number} = items", f"    alias{number} += [{e}]"]
        elif kind == "update-dict":
            lines.append(f'    table |= {{"k{number}": {e}}}')
        elif kind == "update-pairs":
            lines.append(f'    table |= [("k{number}", {e}), ("k{number}", {e2})]')
        elif kind == "local-tuple":
            lines += [f"    local{number} = [{e}]", f"    local{number} += ({e2}, {e})",
                      f"    acc = acc + sum(local{number}) * len(local{number})"]
        else:
            lines += [f"    r{number} = Reader0({e})", f"    acc = acc + r{number}.get() * r{number}.pop({e2})"]
    lines.append("    return acc + sum(items) * len(items) + sum(table.values())")
    return SubclassProgram("\n".join([*PRELUDE, "", "", *lines, ""]), tuple(kinds))


# ---- the generator's family (forms.py) ---------------------------------------------------------

KINDS = ("subclass",)


def kinds(builder) -> list[str]:
    return ["subclass"] if builder.forms.on("subclasses") else []


def statement(builder, indent: str, kind: str, variable) -> list[str]:
    """One `subclass` statement (the module's docstring): a container built, changed, read."""
    form = builder.draw(st.integers(0, 3))
    e = lambda: builder.expression(builder.max_depth - 1)
    if form == 0:
        builder.note("subclass-list")
        items = builder.forms.define("Items0", ITEMS)
        name = builder.fresh("it")
        lines = [f"{indent}{name} = {items}([{e()}, {e()}])"]
        for _ in range(builder.draw(st.integers(1, 3))):
            change = builder.draw(st.integers(0, 3))
            if change == 0:
                builder.note("subclass-extend-list")
                lines.append(f"{indent}{name} += [{e()}, {e()}]")
            elif change == 1:
                builder.note("subclass-extend-tuple")
                lines.append(f"{indent}{name} += ({e()},)")
            elif change == 2:
                builder.note("subclass-repeat")
                lines.append(f"{indent}{name} *= 2")
            else:
                builder.note("subclass-alias")
                alias = builder.fresh("alias")
                lines += [f"{indent}{alias} = {name}", f"{indent}{alias} += [{e()}]"]
        read = f"sum({name}) * len({name})" if builder.chance() else f"{name}[-1] + sum({name})"
    elif form == 1:
        builder.note("subclass-dict")
        table = builder.forms.define("Table0", TABLE)
        name = builder.fresh("tb")
        lines = [f'{indent}{name} = {table}({{"k0": {e()}}})']
        for _ in range(builder.draw(st.integers(1, 3))):
            key = builder.choose(["k0", "k1", "k2"])
            if builder.chance():
                builder.note("subclass-update-dict")
                lines.append(f'{indent}{name} |= {{"{key}": {e()}}}')
            else:
                builder.note("subclass-update-pairs")
                lines.append(f'{indent}{name} |= [("{key}", {e()}), ("k1", {e()})]')
        read = f"sum({name}.values())" if builder.chance() else f'{name}["k0"] * len({name})'
    elif form == 2:
        builder.note("subclass-local-tuple")
        name = builder.fresh("local")
        lines = [f"{indent}{name} = [{e()}]", f"{indent}{name} += ({e()}, {e()})"]
        read = f"sum({name}) * len({name})"
    else:
        builder.note("subclass-reader")
        reader = builder.forms.define("Reader0", READER)
        name = builder.fresh("r")
        lines = [f"{indent}{name} = {reader}({e()})"]
        read = f"{name}.get() * {name}.pop({e()})"
    target = builder.fresh("a")
    lines.append(f"{indent}{target} = {read}")
    builder.function.scopes[-1][target] = variable("float")
    return lines
