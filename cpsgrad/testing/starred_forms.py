"""Unpacking with `*` and `**` for the program generator (`programs(starred=True)`, forms.py).

Module-level helpers `s0(u, *rest)` or `s0(u, *rest, **kw)` (their bodies drawn like any
helper's, reading the tuple `rest` and the dict `kw`, whose keys are always "a" and "b"), called
as `s0(e, e)`, `s0(*t)`, `s0(e, *t[:1])`, `s0(e, *[e, e])`, `s0(e, e, a=e, b=e)`, `s0(e, *t, **d)`,
`s0(e, e, a=e, **{"b": e})`; the generated float helpers called through `h(*t[:2])`,
`h(e, *t[:1])` and `h(**{"u": e, "v": e})`; primitives `max(*t)`, `min(*(e, e))`,
`math.hypot(*t[:2])`; starred targets `a, *rest = t`, `*init, last = t`, `a, *mid, b = t`; a
starred `for` target `for a, *rest in [(e, e), (e, e)]:`; starred displays `(*t, e)`,
`[e, *t, *s]`. A tuple is sliced to the length a call needs (a helper's container parameter may
be longer than it says), so every call binds.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

FLOAT, TUPLE, DICT = "float", "tuple", "dict"
KINDS = ("starred", "star-call")


@dataclass
class StarHelper:
    name: str
    extra: int  # the positional values `*rest` takes in every call
    keywords: bool  # takes `**kw` (keys "a" and "b")


def helpers(builder, variable) -> list[list[str]]:
    """0-2 helpers with a `*rest` (and maybe a `**kw`) parameter, after the generated ones."""
    forms = builder.forms
    if not forms.on("starred") or not builder.chance(5):
        return []
    texts = []
    for index in range(builder.draw(st.integers(1, 2))):
        name = f"s{index}"
        extra = builder.draw(st.integers(1, 2))
        keywords = builder.chance()
        parameters = [
            ("u", variable(FLOAT, differentiated=True)),
            ("rest", variable(TUPLE, extra, differentiated=True)),
        ]
        if keywords:
            parameters.append(("kw", variable(DICT, differentiated=True)))
            builder.note("kwargs-parameter")
        builder.note("star-parameter")
        text = builder.function_text(name, parameters, builder.draw(st.integers(0, 2)))
        text[0] = f"def {name}(u, *rest{', **kw' if keywords else ''}):"
        texts.append(text)
        forms.star_helpers.append(StarHelper(name, extra, keywords))
    return texts


def kinds(builder) -> list[str]:
    if not builder.forms.on("starred"):
        return []
    fn = builder.function
    found = ["starred"]
    if [h for h in builder.forms.star_helpers if h.name != fn.name] or _float_helpers(builder) or builder.chance(2):
        found.append("star-call")
    return found


def statement(builder, indent: str, kind: str, variable) -> list[str]:
    fn = builder.function
    if kind == "star-call":
        name = builder.fresh("a")
        call = _call(builder, builder.max_depth - 1)
        fn.scopes[-1][name] = variable(FLOAT)
        return [f"{indent}{name} = {call}"]
    tuples = [t for t in fn.variables(TUPLE) if fn.lookup(t).length >= 1]
    form = builder.draw(st.integers(0, 2))
    if form == 0 and tuples:
        return _target(builder, indent, builder.choose(tuples), variable)
    if form == 1 and builder.forms.room(builder):
        return _for_target(builder, indent, variable)
    return _display(builder, indent, tuples, variable)


def _target(builder, indent: str, source: str, variable) -> list[str]:
    """`a, *rest = t`, `*init, last = t` or `a, *mid, b = t`; the starred name is a list."""
    fn = builder.function
    length = fn.lookup(source).length
    builder.note("starred-target")
    form = builder.draw(st.integers(0, 2 if length >= 2 else 1))
    rest = builder.fresh("t")
    if form == 0:
        names = [builder.fresh("a")]
        targets = f"{names[0]}, *{rest}"
    elif form == 1:
        names = [builder.fresh("a")]
        targets = f"*{rest}, {names[0]}"
    else:
        names = [builder.fresh("a"), builder.fresh("a")]
        targets = f"{names[0]}, *{rest}, {names[1]}"
    for name in names:
        fn.scopes[-1][name] = variable(FLOAT)
    if length - len(names) >= 1:  # at least (a parameter `c` may hold more)
        fn.scopes[-1][rest] = variable(TUPLE, length - len(names))
    return [f"{indent}{targets} = {source}"]


def _for_target(builder, indent: str, variable) -> list[str]:
    """`for a, *rest in [(e, e), (e, e)]:`, the body reading both."""
    fn = builder.function
    builder.note("starred-for-target")
    length = builder.draw(st.integers(2, 3))
    rows = [
        "(" + ", ".join(builder.expression(builder.max_depth - 2) for _ in range(length)) + ")"
        for _ in range(builder.draw(st.integers(1, 3)))
    ]
    first, rest = builder.fresh("e"), builder.fresh("t")
    scope = {first: variable(FLOAT), rest: variable(TUPLE, length - 1)}
    fn.scopes.append(scope)
    fn.loops += 1
    try:
        body = builder.block(indent + "    ", builder.draw(st.integers(1, 3)))
    finally:
        fn.loops -= 1
        fn.scopes.pop()
    return [f"{indent}for {first}, *{rest} in [{', '.join(rows)}]:", *body]


def _display(builder, indent: str, tuples: list[str], variable) -> list[str]:
    """`(*t, e)`, `[e, *t, *s]` or `(*[e, e], e)`: a tuple (or list) of the parts' elements."""
    fn = builder.function
    builder.note("starred-display")
    parts, length = [], 0
    for _ in range(builder.draw(st.integers(2, 3))):
        if tuples and builder.chance(5):
            name = builder.choose(tuples)
            parts.append(f"*{name}")
            length += fn.lookup(name).length
        elif builder.chance(2):
            count = builder.draw(st.integers(1, 2))
            parts.append("*[" + ", ".join(builder.expression(builder.max_depth - 2) for _ in range(count)) + "]")
            length += count
        else:
            parts.append(builder.expression(builder.max_depth - 2))
            length += 1
    name = builder.fresh("t")
    fn.scopes[-1][name] = variable(TUPLE, length)
    text = f"[{', '.join(parts)}]" if builder.chance() else f"({', '.join(parts)},)"
    return [f"{indent}{name} = {text}"]


def _float_helpers(builder) -> list:
    fn = builder.function
    return [
        h for h in builder.helpers if h.name != fn.name and h.kinds and set(h.kinds) == {FLOAT} and h.returns == FLOAT
    ]


def _sliced(builder, name: str, count: int) -> str:
    """`name` holding exactly `count` values: itself where it is known to, else a slice."""
    length = builder.function.lookup(name).length
    return name if length == count and name != "c" else f"{name}[:{count}]"


def _values(builder, count: int, depth: int) -> list[str]:
    return [builder.expression(depth) for _ in range(count)]


def _call(builder, depth: int) -> str:
    fn = builder.function
    options = []
    stars = [h for h in builder.forms.star_helpers if h.name != fn.name]
    if stars:
        options += [lambda: _star_helper_call(builder, builder.choose(stars), depth)] * 2
    floats = _float_helpers(builder)
    if floats:
        options.append(lambda: _helper_call(builder, builder.choose(floats), depth))
    options.append(lambda: _primitive_call(builder, depth))
    return builder.choose(options)()


def _star_helper_call(builder, helper: StarHelper, depth: int) -> str:
    fn = builder.function
    builder.note("star-call", "star-helper-call")
    count = 1 + helper.extra
    long_enough = lambda k: [t for t in fn.variables(TUPLE) if fn.lookup(t).length >= k]  # noqa: E731
    form = builder.draw(st.integers(0, 3))
    if form == 1 and long_enough(count):
        arguments = [f"*{_sliced(builder, builder.choose(long_enough(count)), count)}"]
    elif form == 2 and long_enough(helper.extra):
        arguments = [
            builder.expression(depth),
            f"*{_sliced(builder, builder.choose(long_enough(helper.extra)), helper.extra)}",
        ]
    elif form == 3:
        arguments = [builder.expression(depth), "*[" + ", ".join(_values(builder, helper.extra, depth)) + "]"]
    else:
        arguments = _values(builder, count, depth)
    if helper.keywords:
        builder.note("kwargs-call")
        dicts = fn.variables(DICT)
        way = builder.draw(st.integers(0, 3))
        if way == 0 and dicts:
            arguments.append(f"**{builder.choose(dicts)}")
        elif way == 1:
            arguments.append(f'**{{"a": {builder.expression(depth)}, "b": {builder.expression(depth)}}}')
        elif way == 2:
            arguments += [f"a={builder.expression(depth)}", f'**{{"b": {builder.expression(depth)}}}']
        else:
            arguments += [f"b={builder.expression(depth)}", f"a={builder.expression(depth)}"]
    return f"{helper.name}({', '.join(arguments)})"


def _helper_call(builder, helper, depth: int) -> str:
    """A generated float helper called through `*` or `**`."""
    fn = builder.function
    builder.note("star-call", "star-call-of-helper")
    count = len(helper.parameters)
    tuples = [t for t in fn.variables(TUPLE) if fn.lookup(t).length >= count]
    form = builder.draw(st.integers(0, 2))
    if form == 0 and tuples:
        return f"{helper.name}(*{_sliced(builder, builder.choose(tuples), count)})"
    if form == 1 and count >= 2:
        return f"{helper.name}({builder.expression(depth)}, *[{', '.join(_values(builder, count - 1, depth))}])"
    builder.note("double-star-call")
    entries = ", ".join(f'"{p}": {builder.expression(depth)}' for p in helper.parameters)
    return f"{helper.name}(**{{{entries}}})"


def _primitive_call(builder, depth: int) -> str:
    fn = builder.function
    builder.note("star-call", "star-call-of-primitive")
    tuples = [t for t in fn.variables(TUPLE) if fn.lookup(t).length >= 2]
    source = (
        builder.choose(tuples) if tuples and builder.chance(5) else "(" + ", ".join(_values(builder, 2, depth)) + ")"
    )
    form = builder.draw(st.integers(0, 2))
    if form == 0:
        return f"{builder.choose(['max', 'min'])}(*{source})"
    if form == 1:
        return f"math.hypot(*{source}[:2])"
    return f"{builder.choose(['max', 'min'])}({builder.expression(depth)}, *{source})"
