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

The program generator draws the same forms inside its programs (forms.py; `programs(subclasses=True)`),
in whatever loop, branch or helper its `subclass` statement is drawn: a fresh `Items0([0.5])`
handed to a module-level helper that changes its parameter in place (`extend0`: `it += [a, b]`,
`it += (a * b,)`; `alias0`: `alias = it; alias += [a]`, `it += (b, a)`), a fresh
`Table0({"k0": 0.5})` handed to `update0` (`tb |= {"k1": a}`, `tb |= [("k2", b), ...]`), a plain
list the function builds (`local = [e]; local += (e, e)`, `local *= 2`), `r = Reader0(e)` read by
`r.get() * r.pop(e)`; each read into a new float. cpsgrad refuses, with its location, an `x op= y`
on a subclass object the function itself made (it would rebind the name to a plain list), a
subclass built from differentiable values (`Items0([x])`), a callee's write into one the caller
reads again, and `it *= 2` on a list parameter ("repetition of a differentiable tuple or list"),
so those are not drawn (tests/test_rule_forms.py pins the first and the last). It also refuses the
helper's call itself where the calling function has writes or `x op= y` of its own (its aliasing
analysis then takes a fresh `Items0([0.5])` for one the caller may read again): check_program
rejects that refusal (tests/test_rule_forms.py pins it too).
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
EXTEND = [
    "def extend0(it, a, b):",
    "    it += [a, b]",
    "    it += (a * b,)",
    "    return sum(it) * len(it)",
]
ALIAS = [
    "def alias0(it, a, b):",
    "    alias = it",
    "    alias += [a]",
    "    it += (b, a)",
    "    return it[-1] + sum(alias) * len(it)",
]
UPDATE = [
    "def update0(tb, a, b):",
    '    tb |= {"k1": a}',
    '    tb |= [("k2", b), ("k1", a * b)]',
    "    return sum(tb.values()) * len(tb)",
]


def kinds(builder) -> list[str]:
    return ["subclass"] if builder.forms.on("subclasses") else []


def statement(builder, indent: str, kind: str, variable) -> list[str]:
    """One `subclass` statement (the module's docstring), read into a new float."""
    form = builder.draw(st.integers(0, 4))
    e = lambda: builder.expression(builder.max_depth - 1)
    lines: list[str] = []
    if form <= 1:  # a fresh list subclass, changed in place by a helper (its parameter)
        items = builder.forms.define("Items0", ITEMS)
        start = builder.choose(["[0.5]", "[]", "[1.5, -0.75]"])
        if form == 0:
            builder.note("subclass-helper", "subclass-list", "subclass-extend-list", "subclass-extend-tuple")
            helper = builder.forms.define("extend0", EXTEND)
        else:
            builder.note("subclass-helper", "subclass-list", "subclass-alias", "subclass-extend-tuple")
            helper = builder.forms.define("alias0", ALIAS)
        read = f"{helper}({items}({start}), {e()}, {e()})"
    elif form == 2:
        builder.note("subclass-helper", "subclass-dict", "subclass-update-dict", "subclass-update-pairs")
        table = builder.forms.define("Table0", TABLE)
        helper = builder.forms.define("update0", UPDATE)
        start = builder.choose(['{"k0": 0.5}', "{}"])
        read = f"{helper}({table}({start}), {e()}, {e()})"
    elif form == 3:
        builder.note("subclass-local-tuple")  # a plain list the function made: `+=` of a tuple, `*=`
        name = builder.fresh("local")
        lines = [f"{indent}{name} = [{e()}]", f"{indent}{name} += ({e()}, {e()})"]
        if builder.chance():
            builder.note("subclass-repeat")
            lines.append(f"{indent}{name} *= 2")
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
