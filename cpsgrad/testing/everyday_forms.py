"""Everyday Python for the program generator (forms.py): `:=` (`programs(walrus=True)`), sets of
ints and strings (`sets=True`) and calls made for their effect (`effects=True`).

- `:=` in a `while` test (`while (i := i + 1) <= n:`, sometimes `and (a := e) > c`, that name
  read in the body only), an `if` test (`if (a := e) > c:`, `a` read after too), a comprehension
  condition (`sum(y * e for i in range(k) if (y := e) > c)`, `y` not read after: it is bound only
  where an element passed) and a call argument or operand (`math.sin((b := e)) * b`,
  `h0((b := e), b)`, `max((b := e), e) + b`).
- Sets: `{1, 2, n}`, `{"a", "b"}`, `set(range(k))`, `{j % 3 for j in range(n)}`; tests
  `n in s`, `"a" not in s`, `len(s & {1, 2})`; `s.add(i)`, `s |= {3}`, `s = s - {1}`. No set
  holds a differentiable value (cpsgrad refuses one).
- Effects: `print(e, file=SINK0)` (a module-level `io.StringIO`, so nothing reaches stdout),
  `print("label", e, v, sep=":", file=SINK0)`, `LOGGER0.debug("value %s", e)` and `.info` of a
  module-level `logging.getLogger(...)` (below its level: nothing is emitted, and nothing
  configures the root logger).
"""

from __future__ import annotations

import re

from hypothesis import strategies as st

FLOAT, INT, VECTOR = "float", "int", "vector"
INT_SET, STR_SET = "int-set", "str-set"
KINDS = ("walrus", "set", "set-use", "effect")


def kinds(builder) -> list[str]:
    forms, fn = builder.forms, builder.function
    found = []
    if forms.on("walrus"):
        found += ["walrus", "walrus"]
    if forms.on("sets"):
        found.append("set")
        if fn.variables(INT_SET) or fn.variables(STR_SET):
            found += ["set-use", "set-use"]
    if forms.on("effects"):
        found.append("effect")
    return found


def statement(builder, indent: str, kind: str, variable) -> list[str]:
    if kind == "walrus":
        return _walrus(builder, indent, variable)
    if kind == "set":
        return _set(builder, indent, variable)
    if kind == "set-use":
        return _set_use(builder, indent, variable)
    return _effect(builder, indent)


# --- := --------------------------------------------------------------------------------------


def _walrus(builder, indent: str, variable) -> list[str]:
    fn = builder.function
    form = builder.draw(st.integers(0, 3) if builder.forms.room(builder) else st.integers(2, 3))
    if form == 0:
        return _walrus_while(builder, indent, variable)
    if form == 1:
        builder.note("walrus", "walrus-if")
        name = builder.fresh("a")
        value = builder.expression(builder.max_depth - 1)  # drawn in this order: value, operator, bound
        operator = builder.choose(['>', '<'])
        test = f"({name} := {value}) {operator} {builder.choose(['0.5', '-0.25', '1.5'])}"
        fn.scopes[-1][name] = variable(FLOAT)  # the test always runs: bound after the if
        lines = [f"{indent}if {test}:", *builder.nested(indent + "    ")]
        if builder.forms.room(builder) and builder.chance():
            lines += [f"{indent}else:", *builder.nested(indent + "    ")]
        return lines
    if form == 2:
        return _walrus_comprehension(builder, indent, variable)
    builder.note("walrus", "walrus-argument")
    bound, name = builder.fresh("b"), builder.fresh("a")
    value = f"({bound} := {builder.expression(builder.max_depth - 1)})"
    floats = [
        h for h in builder.helpers if h.name != fn.name and h.kinds and set(h.kinds) == {FLOAT} and h.returns == FLOAT
    ]
    way = builder.draw(st.integers(0, 2))
    if way == 0 and floats:
        helper = builder.choose(floats)
        rest = [builder.choose([bound, builder.expression(1)]) for _ in helper.parameters[1:]]
        call = f"{helper.name}({', '.join([value, *rest])})"
    elif way == 1:
        call = f"{builder.choose(['max', 'min'])}({value}, {builder.expression(1)}) + {bound}"
    else:
        call = f"math.{builder.choose(['sin', 'tanh'])}({value}) * {bound}"
    fn.scopes[-1][name] = variable(FLOAT)
    fn.scopes[-1][bound] = variable(FLOAT)
    return [f"{indent}{name} = {call}"]


def _walrus_while(builder, indent: str, variable) -> list[str]:
    fn = builder.function
    builder.note("walrus", "walrus-while")
    counter = builder.fresh("i")
    test = f"({counter} := {counter} + 1) <= {builder.trips()}"
    scope = {counter: variable(INT)}
    if builder.chance(3):
        builder.note("walrus-while-data-dependent")
        bound = builder.fresh("a")
        test += f" and ({bound} := {builder.expression(1)}) > {builder.choose(['-0.75', '0.25', '-1.5'])}"
        scope[bound] = variable(FLOAT)  # bound where the body runs
    fn.scopes.append(scope)
    fn.loops += 1
    try:
        body = builder.block(indent + "    ", builder.draw(st.integers(1, 3)))
    finally:
        fn.loops -= 1
        fn.scopes.pop()
    return [f"{indent}{counter} = 0", f"{indent}while {test}:", *body]


def _walrus_comprehension(builder, indent: str, variable) -> list[str]:
    fn = builder.function
    builder.note("walrus", "walrus-comprehension")
    index, bound, name = builder.fresh("i"), builder.fresh("y"), builder.fresh("a")
    fn.scopes.append({index: variable(INT)})
    try:
        tested = builder.expression(builder.max_depth - 1)
        fn.scopes.append({bound: variable(FLOAT)})
        try:
            body = builder.expression(builder.max_depth - 2)
        finally:
            fn.scopes.pop()
    finally:
        fn.scopes.pop()
    if not re.search(rf"\b{bound}\b", body):
        body = f"{bound} * ({body})"
    trips = builder.draw(st.integers(0, 3))
    clause = f"for {index} in range({trips}) if ({bound} := {tested}) > {builder.choose(['-0.5', '0.25'])}"
    fn.scopes[-1][name] = variable(FLOAT)
    if builder.chance():
        return [f"{indent}{name} = sum(({body}) {clause})"]
    return [f"{indent}{name} = sum([({body}) {clause}], 0.5)"]


# --- sets ------------------------------------------------------------------------------------


def _ints(builder) -> list[str]:
    return builder.function.variables(INT)


def _set(builder, indent: str, variable) -> list[str]:
    fn = builder.function
    builder.note("set")
    name = builder.fresh("s")
    ints = _ints(builder)
    form = builder.draw(st.integers(0, 3))
    if form == 1:
        builder.note("set-of-strings")
        fn.scopes[-1][name] = variable(STR_SET)
        elements = builder.choose(['"a", "b"', '"b"', '"a", "c", "a"'])
        return [f"{indent}{name} = {{{elements}}}", *(_set_use(builder, indent, variable) if builder.chance() else [])]
    if form == 2:
        text = f"set(range({builder.draw(st.integers(0, 4))}))"
    elif form == 3:
        builder.note("set-comprehension")
        limit = builder.choose(ints) if ints else str(builder.draw(st.integers(0, 4)))
        text = f"{{j % 3 for j in range({limit})}}"
    else:
        elements = ["1", "2", *([builder.choose(ints)] if ints else []), builder.choose(["0", "3", "1"])]
        text = "{" + ", ".join(elements) + "}"
    fn.scopes[-1][name] = variable(INT_SET)
    return [f"{indent}{name} = {text}", *(_set_use(builder, indent, variable) if builder.chance() else [])]


def _set_use(builder, indent: str, variable) -> list[str]:
    fn = builder.function
    ints, strings = fn.variables(INT_SET), fn.variables(STR_SET)
    name = builder.choose(ints + strings) if builder.chance(6) else (ints + strings)[-1]  # the newest, mostly
    numbers = _ints(builder)
    if name in ints:
        element = builder.choose(numbers) if numbers and builder.chance(6) else builder.choose(["0", "1", "3"])
    else:
        element = builder.choose(['"a"', '"b"', '"c"'])
    member = f"{element} {builder.choose(['in', 'not in'])} {name}"
    form = builder.draw(st.integers(0 if builder.forms.room(builder) else 1, 3))
    if form == 0:
        builder.note("set-membership")
        lines = [f"{indent}if {member}:", *builder.nested(indent + "    ")]
        if builder.chance():
            lines += [f"{indent}else:", *builder.nested(indent + "    ")]
        return lines
    if form == 1:
        builder.note("set-membership", "set-len")
        target = builder.fresh("a")
        other = "{1, 2}" if name in ints else '{"a"}'
        value = f"({builder.expression(1)} if {member} else {builder.expression(1)}) * len({name} & {other})"
        fn.scopes[-1][target] = variable(FLOAT)  # after its value is drawn: the value cannot read it
        return [f"{indent}{target} = {value} + len({name})"]
    builder.note("set-update")
    if name in strings:
        return [f'{indent}{name} |= {{"c"}}']
    addition = builder.choose(numbers) if numbers else "3"
    return [
        indent + builder.choose([f"{name}.add({addition})", f"{name} |= {{{addition}}}", f"{name} = {name} - {{1}}"])
    ]


# --- calls for their effect ------------------------------------------------------------------


def _effect(builder, indent: str) -> list[str]:
    fn = builder.function
    forms = builder.forms
    values = [builder.expression(builder.max_depth - 1) for _ in range(builder.draw(st.integers(1, 2)))]
    if builder.numpy and fn.variables(VECTOR) and builder.chance(3):
        values.append(builder.choose(fn.variables(VECTOR)))
    if builder.chance(5):
        builder.note("effect", "effect-print")
        forms.need("io")
        sink = forms.define("SINK0", ["SINK0 = io.StringIO()  # what the program prints"])
        label = ['"value"'] if builder.chance(3) else []
        separator = [builder.choose(['sep=":"', 'end=";"'])] if builder.chance(2) else []
        return [f"{indent}print({', '.join([*label, *values, *separator])}, file={sink})"]
    builder.note("effect", "effect-logging")
    forms.need("logging")
    logger = forms.define("LOGGER0", ['LOGGER0 = logging.getLogger("cpsgrad.generated")'])
    level = builder.choose(["debug", "info"])
    pattern = " ".join(["%s"] * len(values))
    return [f'{indent}{logger}.{level}("values: {pattern}", {", ".join(values)})']
