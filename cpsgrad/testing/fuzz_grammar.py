"""The fuzzer's strategies: `functions()`, a grammar of its own close to what cpsgrad supports,
and `hypothesmith_functions()`, hypothesmith's arbitrary valid Python as the body of `f` (see
`cpsgrad.testing.fuzz`)."""

from __future__ import annotations

import textwrap

import numpy as np
from hypothesis import strategies as st

from cpsgrad.testing.fuzz_programs import ENTRY, HEADER, FuzzProgram
from cpsgrad.testing.soaking import pick

# --- the grammar of functions close to what cpsgrad supports ------------------------------------

_FLOATS = ("0.5", "1.5", "-0.25", "2.0", "0.0", "1e-3", "3.0")
_INTS = ("0", "1", "2", "-1", "3")
_BINARY = ("+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>")
_COMPARE = ("<", "<=", ">", ">=", "==", "!=", "is", "is not", "in", "not in")
_AUGMENTED = ("+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=", "|=", "^=")
_MATH = ("math.sin", "math.cos", "math.exp", "math.tanh", "math.log", "math.sqrt", "math.fabs", "math.floor")
_NUMPY = ("np.sin", "np.exp", "np.tanh", "np.sum", "np.abs", "np.sqrt", "np.log", "np.mean", "np.max", "np.cumsum",
          "np.sort")
_BUILTINS = ("abs", "float", "int", "len", "sum", "round", "bool", "str", "tuple", "list", "sorted", "reversed", "type",
             "callable", "repr", "any", "all", "min", "max")


# expression and statement kinds (the numbers in _Builder.expr and _Builder.statement): exotic
# ones are mostly refused, and drawn rarely so that most programs get past the fence
_EXOTIC_EXPRESSIONS = (26, 27, 28, 29)
_COMMON_EXPRESSIONS = tuple(k for k in range(34) if k not in _EXOTIC_EXPRESSIONS)
_EXOTIC_STATEMENTS = (13, 14, 23, 24, 25, 26, 27, 28, 32, 33, 35, 38, 39)
_COMMON_STATEMENTS = tuple(k for k in range(41) if k not in _EXOTIC_STATEMENTS)


class _Builder:
    """Draws a function's body as text, tracking the names in scope and the loop depth."""

    def __init__(self, draw, budget: int, common: float, exotic: float):
        self.draw = draw
        self.common = common  # the chance of a common statement kind
        self.exotic = exotic  # the chance of an exotic expression kind
        self.budget = budget  # statements left
        self.names = ["x", "y", "n"]
        self.serial = 0

    def fresh(self, prefix: str = "a") -> str:
        self.serial += 1
        return f"{prefix}{self.serial}"

    def choice(self, options):
        return pick(self.draw, options)  # not st.sampled_from (soaking.pick)

    def chance(self, p: float = 0.5) -> bool:
        # hypothesis favours 0 (and shrinks towards it): 0 is the likelier outcome
        number = self.draw(st.integers(0, 99))
        return number < round(100 * p) if p >= 0.5 else number >= 100 - round(100 * p)

    # expressions

    def name(self) -> str:
        if self.chance(0.03):
            return self.choice(("undefined_name", "G", "H", "math.pi", "np.newaxis"))
        return self.choice(self.names)

    def atom(self) -> str:
        kind = self.draw(st.integers(0, 9))
        if kind <= 6:
            return self.name()
        if kind == 7:
            return self.choice(_FLOATS)
        if kind == 8 or self.chance(0.8):
            return self.choice(_INTS if self.chance(0.3) else _FLOATS)
        return self.choice(("True", "None", '"s"', "1j", "...", "G", "H", "()", "[]"))

    def expr(self, depth: int = 2) -> str:
        if depth <= 0 or self.chance(0.3):
            return self.atom()
        d = depth - 1
        e = lambda: self.expr(d)  # noqa: E731
        kind = self.choice(_COMMON_EXPRESSIONS if self.chance(1.0 - self.exotic) else _EXOTIC_EXPRESSIONS)
        if kind <= 5:
            return f"({e()} {self.choice(_BINARY[:6] if self.chance(0.95) else _BINARY)} {e()})"
        if kind == 6:
            return f"({self.choice(('-', '+', 'not ', '~'))}{e()})"
        if kind == 7:
            parts = [e()]
            for _ in range(self.draw(st.integers(1, 3))):
                parts += [self.choice(_COMPARE if self.chance(0.3) else _COMPARE[:6]), e()]
            return "(" + " ".join(parts) + ")"
        if kind == 8:
            return f"({e()} {self.choice(('and', 'or'))} {e()})"
        if kind == 9:
            return f"({e()} if {e()} else {e()})"
        if kind <= 12:
            return f"{self.choice(_MATH)}({e()})"
        if kind <= 15:
            callee = self.choice(_NUMPY)
            keyword = self.choice(("", "", ", axis=0", ", axis=-1", ", keepdims=True", ", dtype=float"))
            return f"{callee}({e()}{keyword})"
        if kind == 16:
            return self.choice((
                f"np.maximum({e()}, {e()})", f"np.where({e()}, {e()}, {e()})",
                f"np.array([{e()}, {e()}, {e()}])", f"np.dot({e()}, {e()})", f"np.clip({e()}, -1.0, 1.0)",
                f"np.concatenate([{e()}, {e()}])", f"np.stack([{e()}, {e()}])", f"np.outer({e()}, {e()})",
                f"np.zeros(3) + {e()}", f"np.ones_like({e()})", f"np.linalg.norm({e()})", f"np.float32({e()})",
            ))
        if kind <= 18:
            callee = self.choice(_BUILTINS)
            if callee in ("min", "max") and self.chance():
                return f"{callee}({e()}, {e()}{self.choice(('', ', ' + e()))})"
            return f"{callee}({e()})"
        if kind == 19:
            return self.choice((
                f"helper({e()})", f"helper({e()}, {e()})", f"helper({e()}, v={e()})", f"helper(v={e()}, u={e()})",
                f"helper(*({e()}, {e()}))", f"helper(**{{'u': {e()}}})", f"ident(helper)({e()})",
                f"twice(helper)({e()})", f"Box({e()}).scaled({e()})", f"Box({e()}).value",
                f"functools.partial(helper, v={e()})({e()})",
                f"functools.reduce(lambda p, q: p * q, ({e()}, {e()}), 1.0)",
                f"pow({e()}, 2)", f"divmod({e()}, 1.5)", f"isinstance({e()}, float)", f"getattr({e()}, 'real', 0.0)",
                f"math.atan2({e()}, {e()})", f"math.hypot({e()}, {e()})", f"math.fsum([{e()}, {e()}])",
                f"list(map(math.sin, ({e()}, {e()})))", f"list(filter(None, ({e()}, {e()})))",
                f"dict(a={e()})", f"list(zip(({e()}, {e()}), ({e()}, {e()})))", f"list(enumerate(({e()},)))",
                f"range({e()})", f"slice({e()})", f"complex({e()})", f"hash({e()})",
            ))
        if kind == 20:
            return self.choice((
                f"{e()}.sum()", f"{e()}.T", f"{e()}.shape", f"{e()}.real", f"{e()}.conjugate()",
                f"{e()}.mean(axis=0)", f"{e()}.reshape(-1)", f"{e()}.astype(float)", f"{e()}.item()",
                f"{e()}.imag", f"{e()}.max()", f"{e()}.copy()", f"{e()}.dtype", f"{e()}.ndim",
                f"{e()}.is_integer()", f"{e()}.bit_length()", f"{e()}.__class__", f"{e()}.__add__({e()})",
            ))
        if kind <= 22:
            index = self.choice((
                "0", "-1", "1", "0:2", "::2", "1:", "None", "...", "..., 0", "n", "n % 3", "0, 0",
                ":, None", "True", "[0, 1]", "np.array([0, 2])", "'a'", "x", "slice(1)",
            ))
            return f"{e()}[{index}]"
        if kind == 23:
            return self.choice((
                f"({e()}, {e()})", f"({e()},)", f"[{e()}, {e()}]", f"{{{e()}, {e()}}}",
                f"{{'a': {e()}, 'b': {e()}}}", f"{{**{{'a': {e()}}}, 'b': {e()}}}", f"[*({e()}, {e()}), {e()}]",
                f"({e()}, *[{e()}])", f"{{{e()}: {e()}}}", f"{{'a': {e()}}}.get('a', {e()})",
                f"{{'a': {e()}}}['a']", f"{{'a': {e()}}}.items()",
            ))
        if kind == 24:
            v = self.fresh("v")
            iterable = self.choice((f"({e()}, {e()})", "range(n)", "y", f"[{e()}]", "(x, y)"))
            condition = self.choice(("", f" if {v} > 0", f" if {e()}"))
            body = self.expr(d).replace("x", v) if self.chance() else f"{v} * {e()}"
            return self.choice((
                f"[{body} for {v} in {iterable}{condition}]", f"sum({body} for {v} in {iterable}{condition})",
                f"{{{body} for {v} in {iterable}}}", f"{{{v}: {body} for {v} in {iterable}}}",
                f"[{v} * w for {v} in {iterable} for w in (1.0, 2.0)]", f"tuple({body} for {v} in {iterable})",
                f"max(({body} for {v} in {iterable}), default=0.0)",
            ))
        if kind == 25:
            return self.choice((
                f"(lambda u: u * {e()})({e()})", f"(lambda u, w={e()}: u * w)({e()})",
                f"(lambda v: v[0])(({e()},))", f"(lambda: {e()})()",
                f"(lambda u, *, w=2.0: u + w)({e()}, w={e()})", f"(lambda u, /: u)({e()})",
                f"(lambda u=(lambda: {e()}): u())()",
            ))
        if kind == 26:
            target = self.fresh("w")
            return f"({target} := {e()})"
        if kind == 27:
            return self.choice((
                f'f"{{{e()}}}"', f'f"{{{e()}:.3f}}"', f'f"{{{e()}!r}}"', f'len(f"{{{e()}}}-{{{e()}}}")',
                f'("%s" % ({e()},))', f'"ab" + str({e()})', f'"{{}}".format({e()})', f'float(f"{{{e()}}}")',
            ))
        if kind == 28:
            return self.choice((f"(yield {e()})", "(yield)", f"(yield from ({e()},))", f"(await {e()})"))
        if kind == 29:
            return f"(*{e()},)"
        if kind == 30:
            return f"{self.choice(('x', 'y', 'n'))}"
        if kind == 31:
            return self.choice(
                (f"({e()}).__len__()", f"{e()} if isinstance({e()}, float) else {e()}", "x.__class__(1.0)")
            )
        return f"({e()} {self.choice(_BINARY[:4])} {e()})"

    # statements

    def target(self) -> str:
        if self.chance(0.7) or len(self.names) < 4:
            name = self.fresh()
            self.names.append(name)
            return name
        return self.choice([n for n in self.names if n not in ("n",)])

    def block(self, indent: int, loop: bool, function: str, size: int | None = None) -> list[str]:
        count = size if size is not None else self.draw(st.integers(1, 3))
        lines: list[str] = []
        outer = list(self.names)
        for _ in range(count):
            if self.budget <= 0:
                break
            lines += self.statement(indent, loop, function)
        if size is None and self.chance(0.8):  # a nested block's names, mostly forgotten after it
            self.names = outer
        return lines or ["    " * indent + "pass"]

    def statement(self, indent: int, loop: bool, function: str) -> list[str]:
        self.budget -= 1
        pad = "    " * indent
        e = lambda: self.expr(2)  # noqa: E731
        nested = lambda extra=1, in_loop=loop, size=None: self.block(indent + extra, in_loop, function, size)  # noqa: E731
        kind = self.choice(_COMMON_STATEMENTS if self.chance(self.common) else _EXOTIC_STATEMENTS)
        if kind <= 9:
            value = e()
            return [f"{pad}{self.target()} = {value}"]
        if kind == 10:
            return [f"{pad}{self.choice(self.names[:1] + self.names[3:])} {self.choice(_AUGMENTED)} {e()}"]
        if kind == 11:
            return [f"{pad}{self.target()}: {self.choice(('float', 'int', 'np.ndarray', 'tuple[float, ...]'))} = {e()}"]
        if kind == 12:
            a, b = self.target(), self.target()
            form = self.choice((
                f"{a}, {b} = {e()}, {e()}", f"{a}, {b} = ({e()}, {e()})", f"({a}, {b}) = [{e()}, {e()}]",
                f"{a}, *{b} = ({e()}, {e()}, {e()})", f"{a} = {b} = {e()}", f"[{a}, {b}] = {e()}",
                f"{a}, {b} = {e()}", f"{a}, ({b}, c9) = {e()}, ({e()}, {e()})",
            ))
            return [f"{pad}{form}"]
        if kind == 13:
            t = self.target()
            statement = self.choice((
                f"{t}[0] = {e()}", f"{t}.append({e()})", f"{t}.pop()", f"{t} += [{e()}]",
                f"{t}.extend([{e()}])", f"{t}[0] += {e()}", f"{t}.sort()", f"{t}.insert(0, {e()})",
            ))
            return [f"{pad}{t} = [{e()}, {e()}]", pad + statement]
        if kind == 14:
            return [f"{pad}{self.choice(('b0', 'Box(x)'))}.value = {e()}"] if self.chance(0.3) else [
                f"{pad}b0 = Box({e()})", f"{pad}b0.value = {e()}", f"{pad}{self.target()} = b0.value"]
        if kind <= 17:
            lines = [f"{pad}if {e()}:", *nested()]
            if self.chance():
                lines += [f"{pad}elif {e()}:", *nested()]
            if self.chance():
                lines += [f"{pad}else:", *nested()]
            return lines
        if kind == 18:
            counter = self.fresh("i")
            self.names.append(counter)
            condition = self.choice((f"{counter} < n", f"{counter} < 3", f"{counter} < n and {e()}"))
            lines = [f"{pad}{counter} = 0", f"{pad}while {condition}:", f"{pad}    {counter} += 1",
                     *nested(in_loop=True)]
            if self.chance(0.3):
                lines += [f"{pad}else:", *nested()]
            return lines
        if kind <= 20:
            v = self.fresh("v")
            self.names.append(v)
            iterable = self.choice((
                "range(n)", "range(3)", "range(1, n, 2)", f"({e()}, {e()})", "y", "[x, x * 2.0]",
                "zip((x, 1.0), (2.0, x))", "enumerate((x, x))", "reversed((x, 1.0))", f"range({e()})",
                "np.array([x, 1.0])", "'ab'", "{'a': x}", "{'a': x}.items()", f"[{e()}]",
            ))
            target = self.choice((v, v, f"{v}, w{self.serial}", f"({v}, _)"))
            lines = [f"{pad}for {target} in {iterable}:", *nested(in_loop=True)]
            if self.chance(0.3):
                lines += [f"{pad}else:", *nested()]
            return lines
        if kind == 21:
            if loop:
                return [f"{pad}if {e()}:", f"{pad}    {self.choice(('break', 'continue'))}"]
            return [f"{pad}if {e()}:", f"{pad}    return {e()}"]
        if kind == 22:
            return [
                f"{pad}{self.choice(('return ' + e(), 'return', 'return ' + e() + ', ' + e(), 'pass', e(), '...'))}"
            ]
        if kind == 23:
            statement = self.choice((
                f"raise ValueError({e()})", "raise", f"raise ValueError from {e()}", f"assert {e()}",
                f'assert {e()}, "message"', f"assert {e()}, {e()}",
            ))
            return [pad + statement]
        if kind == 24:
            handler = self.choice(
                (
                    "except ValueError:",
                    "except (ValueError, TypeError) as error:",
                    "except:",
                    "except* ValueError:",
                    "except Exception:",
                )
            )
            lines = [f"{pad}try:", *nested(), f"{pad}{handler}", *nested()]
            if self.chance(0.3) and "*" not in handler:
                lines += [f"{pad}else:", *nested()]
            if self.chance(0.3):
                lines += [f"{pad}finally:", *nested()]
            return lines
        if kind == 25:
            manager = self.choice(
                (f"contextlib.nullcontext({e()})", "np.errstate(all='ignore')", "contextlib.suppress(ValueError)")
            )
            alias = self.choice(("", f" as {self.target()}"))
            return [f"{pad}with {manager}{alias}:", *nested()]
        if kind == 26:
            return (
                [f"{pad}global G", f"{pad}G = {e()}"]
                if self.chance()
                else [f"{pad}global G, H", f"{pad}{self.target()} = G * {e()}"]
            )
        if kind == 27:
            victim = self.choice(self.names[3:] or ["x"])
            return [f"{pad}del {self.choice((victim, victim + '[0]', victim + ', ' + victim))}"]
        if kind == 28:
            module = self.choice(('import math', 'import numpy as np', 'from math import sin', 'from math import *',
                                  'import os.path'))
            return [f"{pad}{module}"]
        if kind <= 31:
            g = self.fresh("g")
            params = self.choice(("u", "u, w=1.0", f"u, w={e()}", "u: float = 1.0", "u, /, w=2.0", "u, *, w=0.5"))
            if self.chance(0.05):
                params = self.choice(("u, *rest", "u, **options"))
            decorators = (
                [f"{pad}@{self.choice(('ident', 'twice', 'functools.lru_cache', 'staticmethod', 'functools.cache'))}"]
                if self.chance(0.2)
                else []
            )
            prefix = "async " if self.chance(0.1) else ""
            body: list[str] = []
            if self.chance(0.2):
                body = [f"{pad}    nonlocal {self.choice(self.names[3:] or ['x'])}"]
            saved, self.names = self.names, [*self.names, "u"]
            body += self.block(indent + 1, False, g)
            self.names = saved
            body += [f"{pad}    return {self.expr(2).replace('y', 'u')}"]
            lines = [*decorators, f"{pad}{prefix}def {g}({params}) -> float:", *body]
            result = self.target()
            call = self.choice((f"{g}({e()})", f"{g}(x)", f"{g}", f"{g}(u={e()})", f"{g}({e()}, {e()})"))
            return [*lines, f"{pad}{result} = {call}"]
        if kind == 32:
            c = self.fresh("C")
            return [
                f"{pad}class {c}:", f"{pad}    k = {e()}", f"{pad}    def m(self, u):",
                f"{pad}        return u * self.k",
                f"{pad}{self.target()} = {c}().m({e()})",
            ]
        if kind == 33:
            subject = e()
            patterns = (
                "0", "1.5", "(p, q)", "[p, *q]", "{'a': p}", "float()", "float(p)", "Box(value=p)", "p if p > 0",
                "None", "'s'", "_", "p", "0 | 1", "(0 | 1) as p", "np.ndarray()",
            )
            indices = self.draw(st.lists(st.integers(0, len(patterns) - 1), min_size=1, max_size=3))
            cases = [patterns[i] for i in indices]
            lines = [f"{pad}match {subject}:"]
            for case in cases:
                lines += [f"{pad}    case {case}:", *nested(2)]
            return lines
        if kind == 34:
            return [f"{pad}{self.choice(('print', 'ident', 'helper', 'np.sin', 'math.sin'))}({e()})"]
        if kind == 35:
            statement = self.choice((f'yield {e()}', f'yield from ({e()},)', f'x = yield {e()}', f'await {e()}',
                                     f'async for q in {e()}: pass', f'async with {e()}: pass'))
            return [f"{pad}{statement}"]
        if kind == 36:
            g = self.fresh("g")
            return [f"{pad}{g} = lambda {self.choice(('u', 'u, w=' + e(), '', 'u=' + e()))}: {e()}",
                    f"{pad}{self.target()} = {g}({self.choice(('x', '', e()))})"]
        if kind == 37:
            return [f"{pad}{self.target()} = {self.choice(('x', 'y'))} if {e()} else {e()}"]
        if kind == 38:
            t = self.target()
            statement = self.choice((
                f'{t}["c"] = {e()}', f"{t}.update(a={e()})", f'{t}.setdefault("a", 0.0)',
                f'{self.target()} = {t}["a"] + {t}.get("z", {e()})', f'del {t}["a"]',
            ))
            return [f"{pad}{t} = {{'a': {e()}, 'b': {e()}}}", pad + statement]
        if kind == 39:
            return [f"{pad}{self.choice(('nonlocal x', 'type T = float', 'x: float', 'global x'))}"]
        return [f"{pad}{self.target()} = {self.choice(('x', 'y'))}"]


@st.composite
def _functions(draw, max_statements: int) -> FuzzProgram:
    builder = _Builder(draw, draw(st.integers(1, max_statements)), pick(draw, (1.0, 0.97, 0.9)),
                       pick(draw, (0.0, 0.01, 0.05)))
    body = builder.block(1, False, ENTRY, size=draw(st.integers(1, 6)))
    final = pick(draw, (
        "    return x * 2.0", f"    return {builder.expr(2)}", "    return np.sum(y) + x",
        f"    return float(np.sum({builder.expr(2)}))", "",
    ))
    rare = draw(st.integers(0, 99)) >= 90
    decorator = pick(draw, ("", "@ident\n", "@twice\n", "@functools.lru_cache\n")) if rare else ""
    rare = draw(st.integers(0, 99)) >= 90
    signature = (
        pick(draw, ("x, y, n=2", "x, y, /, n", "x, y, *, n", "x, y, n, *rest", "x, y, n, **options"))
        if rare
        else "x, y, n"
    )
    source = (
        HEADER + f"{decorator}def {ENTRY}({signature}):\n" + "\n".join(body) + ("\n" + final if final else "") + "\n"
    )
    arguments = _arguments(draw)
    return FuzzProgram(source, arguments[0], arguments[1], "grammar")


def _arguments(draw) -> tuple[tuple, tuple[int, ...]]:
    x = pick(draw, (0.7, -1.3, 0.0, 2.5, 1.0))
    y = pick(draw, (
        0.4, -0.6, np.array([0.5, -1.0, 1.5]), np.array([[0.5, 0.25], [-1.0, 2.0]]), np.array(0.5), np.float64(0.3),
        np.array([0.5, -1.0, 1.5], dtype=np.float32),
    ))
    n = draw(st.integers(0, 3))
    argnums = pick(draw, ((0,), (0, 1), (1,)))
    return (x, y, n), argnums


def functions(max_statements: int = 12) -> st.SearchStrategy[FuzzProgram]:
    """Functions `f(x, y, n)` from the grammar above (x a float, y a float or a float array,
    n an int), differentiated w.r.t. x, y or both."""
    return _functions(max_statements)


@st.composite
def _hypothesmith_functions(draw) -> FuzzProgram:
    module = draw(hypothesmith.from_grammar() if draw(st.booleans()) else hypothesmith.from_node())
    body = textwrap.indent(module if module.strip() else "pass\n", "    ")
    if not body.endswith("\n"):
        body += "\n"
    source = HEADER + f"def {ENTRY}(x, y, n):\n" + body + "    return x\n"
    arguments, argnums = _arguments(draw)
    return FuzzProgram(source, arguments, argnums, "hypothesmith")


try:
    import hypothesmith
except ImportError:  # the test extra installs it; only hypothesmith_functions needs it
    hypothesmith = None


def hypothesmith_functions() -> st.SearchStrategy[FuzzProgram]:
    """hypothesmith's arbitrary valid Python as the body of `f(x, y, n)` (needs hypothesmith)."""
    if hypothesmith is None:
        raise ImportError("hypothesmith_functions needs hypothesmith: pip install hypothesmith")
    return _hypothesmith_functions()


def any_functions(hypothesmith_share: float = 0.2) -> st.SearchStrategy[FuzzProgram]:
    """`functions()` or, about `hypothesmith_share` of the time, `hypothesmith_functions()`
    (hypothesis' own choices skew the share; the soak runs the two in separate chunks)."""
    if hypothesmith is None or hypothesmith_share <= 0:
        return functions()
    threshold = 100 - round(100 * hypothesmith_share)
    return st.integers(0, 99).flatmap(lambda k: hypothesmith_functions() if k >= threshold else functions())
