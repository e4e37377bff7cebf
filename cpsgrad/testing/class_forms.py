"""Objects of module-level plain classes for the program generator (forms.py; `programs(classes=True)`).

Two classes are defined at module level when a program draws them, each with an `__init__` and
methods that read and write their attributes:

- `Acc0(w)`: a float weight `w`, a running `total` and a list `items`; `apply(x)` returns a value
  from the attributes, `bump(v)` is called for its effect (`self.total += v * self.w` and
  `self.items.append(v)`), `rescale(s)` writes `self.w = self.w * s` and `self.total -= s`,
  `drained()` returns `sum(self.items) + self.total`.
- `Vec0(v)` (numpy programs with a vector in scope): `self.acc = v * 0.5` (a fresh array the
  object holds alone) and a list `seen`; `push(w)` changes the array in place (`self.acc += w`,
  `self.acc *= 0.5`) and appends, `through(x)` returns `np.sum(self.acc * x)`, `energy()` returns
  `np.sum(self.acc ** 2)`.

A drawn `object` statement builds one (`o0 = Acc0(e)`), then uses it one to three times: a method
for its effect, a method's value, a bound method read as a value (`g0 = o0.apply; a = g0(e)`,
`[o0.apply, o0.rescale][0]`), an attribute written or changed (`o0.total += e`, `o0.w = o0.w * e`)
in the function itself; and reads its attributes into a new float variable. The object's name
is not handed to the rest of the program (no other construct sees it).
"""

from __future__ import annotations

from hypothesis import strategies as st

FLOAT, VECTOR = "float", "vector"
KINDS = ("object",)

_ACC = [
    "class Acc0:",
    "    def __init__(self, w):",
    "        self.w = w",
    "        self.total = 0.0",
    "        self.items = []",
    "",
    "    def apply(self, x):",
    "        return self.w * x + self.total",
    "",
    "    def bump(self, v):",
    "        self.total += v * self.w",
    "        self.items.append(v)",
    "",
    "    def rescale(self, s):",
    "        self.w = self.w * s",
    "        self.total -= s",
    "",
    "    def drained(self):",
    "        return sum(self.items) + self.total",
]

_VEC = [
    "class Vec0:",
    "    def __init__(self, v):",
    "        self.acc = v * 0.5",
    "        self.seen = []",
    "",
    "    def push(self, w):",
    "        self.acc += w",
    "        self.acc *= 0.5",
    "        self.seen.append(w)",
    "",
    "    def through(self, x):",
    "        return np.sum(self.acc * x)",
    "",
    "    def energy(self):",
    "        return np.sum(self.acc ** 2) + len(self.seen)",
]


def kinds(builder) -> list[str]:
    return ["object"] if builder.forms.on("classes") else []


def statement(builder, indent: str, kind: str, variable) -> list[str]:
    if builder.numpy and builder.function.variables(VECTOR) and builder.chance(3):
        return _vector_object(builder, indent, variable)
    return _float_object(builder, indent, variable)


def _expression(builder) -> str:
    return builder.expression(builder.max_depth - 1)


def _float_object(builder, indent: str, variable) -> list[str]:
    builder.note("class", "class-init")
    acc = builder.forms.define("Acc0", _ACC)
    name = builder.fresh("o")
    lines = [f"{indent}{name} = {acc}({_expression(builder)})"]
    for _ in range(builder.draw(st.integers(1, 3))):
        form = builder.draw(st.integers(0, 5))
        if form == 0:
            builder.note("class-method-effect", "class-list-attribute", "class-augmented-attribute")
            lines.append(f"{indent}{name}.bump({_expression(builder)})")
        elif form == 1:
            builder.note("class-method-value")
            method = builder.choose(["apply", "drained"])
            value = f"{name}.apply({_expression(builder)})" if method == "apply" else f"{name}.drained()"
            lines.append(f"{indent}{_new_float(builder, variable)} = {value}")  # the value drawn first
        elif form == 2:
            builder.note("class-bound-method")
            bound = builder.fresh("g")
            if builder.chance():
                lines.append(f"{indent}{bound} = {name}.apply")
            else:
                lines.append(f"{indent}{bound} = [{name}.apply, {name}.rescale][0]")
            argument = _expression(builder)
            lines.append(f"{indent}{_new_float(builder, variable)} = {bound}({argument})")
        elif form == 3:
            builder.note("class-method-effect", "class-attribute-write")
            lines.append(f"{indent}{name}.rescale({_expression(builder)})")
        elif form == 4:
            builder.note("class-augmented-attribute")
            operator = builder.choose(["+=", "-=", "*="])
            lines.append(f"{indent}{name}.total {operator} {_expression(builder)}")
        else:
            builder.note("class-attribute-write")
            lines.append(f"{indent}{name}.w = {name}.w * {_expression(builder)}")
    lines.append(f"{indent}{_new_float(builder, variable)} = {name}.total + {name}.w * len({name}.items)")
    return lines


def _vector_object(builder, indent: str, variable) -> list[str]:
    builder.note("class", "class-init", "class-vector")
    vec = builder.forms.define("Vec0", _VEC)
    name = builder.fresh("q")
    lines = [f"{indent}{name} = {vec}({builder.vector_expression(builder.max_depth - 1)})"]
    for _ in range(builder.draw(st.integers(1, 3))):
        form = builder.draw(st.integers(0, 3))
        if form == 0:
            builder.note("class-method-effect", "class-augmented-attribute", "class-list-attribute")
            lines.append(f"{indent}{name}.push({builder.vector_expression(builder.max_depth - 1)})")
        elif form == 1:
            builder.note("class-method-value")
            argument = _expression(builder)
            lines.append(f"{indent}{_new_float(builder, variable)} = {name}.through({argument})")
        elif form == 2:
            builder.note("class-bound-method")
            bound = builder.fresh("g")
            lines.append(f"{indent}{bound} = {name}.through")
            argument = _expression(builder)
            lines.append(f"{indent}{_new_float(builder, variable)} = {bound}({argument})")
        else:
            builder.note("class-method-value")
            lines.append(f"{indent}{_new_float(builder, variable)} = {name}.energy()")
    lines.append(f"{indent}{_new_float(builder, variable)} = {name}.energy()")
    return lines


def _new_float(builder, variable) -> str:
    """A new float variable in the current scope (the rest of the program may use it)."""
    target = builder.fresh("a")
    builder.function.scopes[-1][target] = variable(FLOAT)
    return target
