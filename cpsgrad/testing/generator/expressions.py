"""Float expressions of a drawn program: leaves, operators, math functions, reads of tuples,
lists and dicts, comprehensions, calls of helpers, of the recursive helper and of closures
(with one variable passed twice), containers passed to helpers, conditions."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from cpsgrad.testing.generator.grammar import (
    CALLABLE,
    CONSTANTS,
    DICT,
    FLOAT,
    INT,
    KEYS,
    LIST,
    MATRIX,
    MAX_TRIPS,
    TUPLE,
    VDICT,
    VECTOR,
    VSEQ,
    Helper,
    Variable,
    mentions,
)


class Expressions:
    """Builder's float expressions (a mixin: the state is Builder's)."""

    def float_leaf(self) -> str:
        fn = self.function
        assert fn is not None
        variables = fn.variables(FLOAT)
        differentiated = [v for v in variables if fn.lookup(v).differentiated]
        options: list[Callable[[], str]] = []
        local = [v for v in variables if v not in differentiated]
        if differentiated:
            options.append(lambda: self.choose(differentiated))
        if local:
            options += [lambda: self.choose(local)] * 2
        options.append(lambda: self.choose(list(CONSTANTS)))
        if fn.variables(INT):
            options.append(self.int_in_float)
        if fn.variables(TUPLE):
            options.append(self.tuple_read)
        if fn.variables(LIST):
            options.append(self.list_read)
        if fn.variables(DICT):
            options.append(self.dict_read)
        if self.has_vectors():
            options.append(lambda: self.vector_reduction(0))
        if fn.variables(MATRIX):
            options.append(lambda: self.matrix_reduction(0))
        if self.global_floats:
            options += [self.global_float] * 2
        return self.choose(options)()

    def has_vectors(self) -> bool:
        fn = self.function
        return bool(fn.variables(VECTOR) or fn.variables(VSEQ) or fn.variables(VDICT) or fn.variables(MATRIX))

    def global_float(self) -> str:
        self.note("global-float")
        return self.choose(self.global_floats)

    def int_in_float(self) -> str:
        self.note("int-in-float")
        name = self.choose(self.function.variables(INT))
        return self.choose([name, f"float({name})", f"({name} * 0.5)"])

    def tuple_read(self) -> str:
        name = self.choose(self.function.variables(TUPLE))
        length = self.function.lookup(name).length
        form = self.draw(st.integers(0, 4))
        if form <= 1:
            self.note("tuple-index")
            index = self.draw(st.integers(-length, length - 1))
            return f"{name}[{index}]"
        if form == 2:
            self.note("sum")
            return f"sum({name})"
        if form == 3:
            self.note("len")
            return f"({name}[len({name}) - 1] * len({name}))"
        self.note("min-max")
        return f"{self.choose(['min', 'max'])}({name})"

    def list_read(self) -> str:
        name = self.choose(self.function.variables(LIST))
        form = self.draw(st.integers(0, 3))
        if form == 0:
            self.note("list-index")
            return f"{name}[{self.choose(['0', '-1'])}]"
        if form == 1:
            self.note("sum")
            return f"sum({name})"
        if form == 2:
            self.note("len")
            return f"({name}[-1] / len({name}))"
        ints = self.function.variables(INT)
        if ints:
            self.note("list-index", "len")
            return f"{name}[{self.choose(ints)} % len({name})]"
        return f"{name}[0]"

    def dict_read(self) -> str:
        name = self.choose(self.function.variables(DICT))
        if self.chance(6):
            self.note("dict-read")
            return f"{name}[{self.choose(list(KEYS[:2]))}]"
        # `d | m`: d's "a", m's "b" over d's (a merge's adjoints)
        if (key := self.choose(list(KEYS))) == '"c"' and self.chance(4):
            return self.note("dict-merge") or f'sum(({name} | {{"b": {self.float_leaf()}}}).values())'
        self.note("dict-get")
        return f"{name}.get({key}, {self.choose(list(CONSTANTS))})"

    def expression(self, depth: int) -> str:
        """A float expression at most `depth` operators deep."""
        if depth <= 0 or self.draw(st.integers(0, 9)) < 3:
            return self.float_leaf()
        d = depth - 1
        kinds = [
            "binary",
            "binary",
            "unary",
            "math",
            "guarded",
            "minmax",
            "ifexp",
            "boolean",
            "call",
        ]
        if self.numpy and self.has_vectors():
            kinds.append("vector")
        if self.repeated_arguments and self.helpers:  # helpers called more often, to alias their arguments
            kinds.append("call")
        if self.closures:
            kinds.append("comprehension")
        kind = self.choose(kinds)
        if kind == "comprehension":
            return self.comprehension(d)
        if kind == "binary":
            op = self.choose(["+", "-", "*", "*", "/"])
            left = self.expression(d)
            if op == "/":
                if self.chance():
                    self.note("div")
                    return f"({left} / {self.choose(['2.0', '-4.0', '0.5', '3.0'])})"
                self.note("div-guarded")
                right = self.expression(d)
                return f"({left} / (1.0 + {right} * {right}))"
            self.note("arith")
            return f"({left} {op} {self.expression(d)})"
        if kind == "unary":
            form = self.draw(st.integers(0, 3))
            inner = self.expression(d)
            if form == 0:
                self.note("neg")
                return f"(-{inner})"
            if form == 1:
                self.note("abs")
                return f"abs({inner})"
            if form == 2:
                self.note("pow")
                return f"({inner} ** {self.choose(['2', '3', '2.0'])})"
            self.note("augmented-pow")
            return f"(({inner} * {inner} + 0.5) ** {self.choose(['0.5', '1.5', '-1.0'])})"
        if kind == "math":
            aliases = [a for a, k in self.global_functions.items() if k == FLOAT]
            if aliases and self.chance(5):
                self.note("global-function")
                return f"{self.choose(aliases)}({self.expression(d)})"
            function = self.choose(["sin", "cos", "tanh"])
            self.note(f"math.{function}")
            return f"math.{function}({self.expression(d)})"
        if kind == "guarded":
            inner = self.expression(d)
            form = self.draw(st.integers(0, 7))
            if form == 5:
                self.note("math.atan2")
                return f"math.atan2({inner}, 1.0 + {self.expression(d)} ** 2)"
            if form == 6:
                self.note("math.hypot")
                return f"math.hypot({inner}, 0.5 + {self.expression(d)} ** 2)"
            if form == 7:
                self.note("mod-floordiv")
                return f"({inner} {self.choose(['%', '//'])} {self.choose(['1.5', '0.75'])})"
            if form == 0:
                self.note("math.exp")
                return f"math.exp(math.tanh({inner}))"
            if form == 1:
                self.note("math.exp")
                return f"math.exp(-{inner} * {inner})"
            if form == 2:
                self.note("math.log")
                return f"math.log(1.0 + {inner} * {inner})"
            if form == 3:
                self.note("math.sqrt")
                return f"math.sqrt(1.0 + {inner} * {inner})"
            self.note("pow-variable-exponent")
            return f"((1.0 + {inner} * {inner}) ** math.tanh({self.expression(d)}))"
        if kind == "minmax":
            self.note("min-max")
            count = self.draw(st.integers(2, 3))
            terms = ", ".join(self.expression(d) for _ in range(count))
            return f"{self.choose(['min', 'max'])}({terms})"
        if kind == "ifexp":
            self.note("ifexp")
            return f"({self.expression(d)} if {self.condition(d)} else {self.expression(d)})"
        if kind == "boolean":
            self.note("and-or-value")
            if self.chance():
                return f"({self.expression(d)} or {self.expression(d)})"
            return f"(({self.condition(d)} and {self.expression(d)}) or {self.expression(d)})"
        if kind == "call":
            return self.call(d)
        return self.vector_reduction(d)

    def comprehension(self, depth: int) -> str:
        """`sum(e for i in range(k))` or a list comprehension summed, `e` reading the index (which
        is the comprehension's own variable: it may shadow a name of the function)."""
        fn = self.function
        ints = fn.variables(INT)
        index = self.choose(ints) if ints and self.chance(4) else self.fresh("i")  # shadowing, sometimes
        fn.scopes.append({index: Variable(INT)})
        try:
            body = self.expression(depth)
            condition = self.condition(depth - 1) if self.chance(3) else None
        finally:
            fn.scopes.pop()
        trips = self.draw(st.integers(0, 3))
        body = f"{body} * {index}" if not mentions(body, index) and self.chance() else body
        clause = f"for {index} in range({trips})" + (f" if {condition}" if condition else "")
        if not self.containers or self.chance():
            self.note("generator-expression")
            return f"sum(({body}) {clause})"
        self.note("list-comprehension")
        return f"sum([({body}) {clause}], 0.5)"

    def call(self, depth: int) -> str:
        options: list[Callable[[], str]] = []
        available = [h for h in self.helpers if h.name != self.function.name and h.returns == FLOAT]
        if available:
            options.append(lambda: self.helper_call(self.choose(self.weighted(available)), depth))
        recursive = [r for r in self.recursive if r[0] != self.function.name]
        if recursive:
            options.append(lambda: self.recursion_call(self.choose(recursive), depth))
        callables = self.function.variables(CALLABLE)
        if callables:

            def closure() -> str:
                name = self.choose(callables)
                captured = [c for c in self.function.lookup(name).captures if self.function.lookup(c).kind == FLOAT]
                alias = self.captured_arguments and captured and self.chance(3)
                if self.chance(3):  # handed to a builtin that calls it
                    self.note("closure-map")
                    count = self.draw(st.integers(1, 3))
                    values = [self.expression(depth - 1) for _ in range(count)]
                    if alias:
                        self.note("closure-called-with-captured")
                        values[self.draw(st.integers(0, count - 1))] = self.choose(captured)
                    return f"sum(map({name}, ({', '.join(values)},)))"
                self.note("closure-call")
                if alias:
                    self.note("closure-called-with-captured")
                    return f"{name}({self.choose(captured)})"
                return f"{name}({self.expression(depth)})"

            options.append(closure)
        if not options:
            return self.float_leaf()
        return self.choose(options)()

    def recursion_call(self, recursive: tuple[str, int], depth: int) -> str:
        name, floats = recursive
        self.note("recursion-call")
        ints = self.function.variables(INT)
        depths = [str(k) for k in range(MAX_TRIPS)]
        depths += [f"min({i}, {MAX_TRIPS - 1})" for i in ints]
        values = [self.expression(depth) for _ in range(floats)]
        if floats > 1 and self.repeated_arguments and self.chance(3):
            names = self.function.variables(FLOAT)
            if names:
                self.note("repeated-argument", "repeated-argument-recursion")
                values = [self.choose(names)] * floats
        return f"{name}({', '.join(values)}, {self.choose(depths)})"

    def argument(self, kind: str, depth: int) -> str:
        """An expression of `kind` (a helper's parameter)."""
        if kind == FLOAT:
            return self.expression(depth)
        if kind == VECTOR:
            return self.vector_expression(depth)
        return self.matrix_expression(depth)

    def aliased(self, kind: str) -> str | None:
        """A variable of `kind` to pass more than once (differentiated ones preferred), or None."""
        fn = self.function
        names = fn.variables(kind)
        if not names:
            return None
        differentiated = [v for v in names if fn.lookup(v).differentiated]
        return self.choose(differentiated if differentiated and self.chance(5) else names)

    def same_value(self, name: str, kind: str) -> str:
        """`name` again, or (views=True) a view of it, as another argument."""
        if kind in (VECTOR, MATRIX) and self.views and self.chance(3):
            return self.view(name, kind)
        return name

    def repeatable_helpers(self) -> list[Helper]:
        """Helpers this function could pass one of its variables twice (arrays weighted)."""
        fn = self.function
        helpers = []
        for helper in self.helpers:
            kinds = [*helper.kinds, *([FLOAT] if helper.scale else [])]
            if helper.name != fn.name and any(kinds.count(k) >= 2 and fn.variables(k) for k in set(kinds)):
                helpers.append(helper)
        return self.weighted(helpers)

    def weighted(self, helpers: list[Helper]) -> list[Helper]:
        """`helpers`, those that could get one of this function's arrays twice three times over
        (repeated_arguments=True), so that aliased arrays are drawn often."""
        if not self.repeated_arguments:
            return helpers
        fn = self.function
        result = []
        for helper in helpers:
            twice = [k for k in (VECTOR, MATRIX) if helper.kinds.count(k) >= 2 and fn.variables(k)]
            result += [helper] * (3 if twice else 1)
        return result

    def helper_call(self, helper: Helper, depth: int, repeat: bool = False) -> str:
        """A call of a generated helper; with repeated_arguments, sometimes (`repeat`: where it
        can, always) the same variable at two or more positions (scale= included), positionally
        or by keyword."""
        self.note("helper-call")
        if helper.kinds and helper.kinds[0] in (TUPLE, DICT, VSEQ, VDICT):
            return f"{helper.name}({self.container_argument(helper.kinds[0], helper.length, depth)})"
        names = list(helper.parameters)
        kinds = list(helper.kinds)
        scale = helper.scale and (self.chance() or (repeat and helper.kinds.count(FLOAT) == 1))
        if scale:
            self.note("keyword-argument")
            names.append("scale")
            kinds.append(FLOAT)
        values = [self.argument(k, depth) for k in kinds]
        repeatable = [k for k in set(kinds) if kinds.count(k) >= 2]
        chosen: list[int] = []  # the positions given one variable
        if self.repeated_arguments and repeatable and (repeat or self.chance(6)):
            arrays = [k for k in repeatable if k != FLOAT and self.function.variables(k)]
            kind = self.choose(sorted(arrays)) if arrays and self.chance(6) else self.choose(sorted(repeatable))
            name = self.aliased(kind)
            if name is not None:
                positions = [p for p, k in enumerate(kinds) if k == kind]
                count = self.draw(st.integers(2, len(positions)))
                chosen = positions if count == len(positions) else sorted(
                    self.draw(st.permutations(positions))[:count]
                )
                for p in chosen:
                    values[p] = self.same_value(name, kind) if p != chosen[0] else name
                self.note("repeated-argument")
                if count >= 3:
                    self.note("repeated-argument-3")
                if kind != FLOAT:
                    self.note("repeated-array-argument")
                if self.function.loops:
                    self.note("repeated-argument-in-loop")
                if self.function.name.startswith("r"):  # in the recursive helper
                    self.note("repeated-argument-recursion")
        positional = len(helper.parameters)
        keywords = 0  # the last `keywords` positional parameters passed by keyword
        if positional and self.chance(2):
            keywords = self.draw(st.integers(1, positional))
            self.note("keyword-argument")
        if any(p >= positional - keywords for p in chosen):  # scale= too
            self.note("repeated-keyword-argument")
        parts = [values[p] for p in range(positional - keywords)]
        named = [f"{names[p]}={values[p]}" for p in range(positional - keywords, positional)]
        if len(named) > 1 and self.chance(3):
            named.reverse()  # keywords in another order than the parameters
        parts += named
        if scale:
            parts.append(f"scale={values[-1]}")
        return f"{helper.name}({', '.join(parts)})"

    def container_argument(self, kind: str, length: int, depth: int) -> str:
        """A container for a helper's container parameter: a display holding one variable twice
        or more (`[x, x]`, `(x, y, x)`, `{"a": x, "b": x}`), or a local container."""
        fn = self.function
        self.note("container-argument")
        locals_ = [t for t in fn.variables(kind) if kind not in (TUPLE, VSEQ) or fn.lookup(t).length >= length]
        if locals_ and self.chance(2):
            return self.choose(locals_)
        element = FLOAT if kind in (TUPLE, DICT) else VECTOR
        values = [self.argument(element, depth - 1) for _ in range(2 if kind in (DICT, VDICT) else length)]
        name = self.aliased(element)
        if name is not None and self.chance(6):
            self.note("aliased-container")
            if element == VECTOR:
                self.note("aliased-array-container")
            positions = list(range(len(values)))
            chosen = positions if len(positions) == 2 else sorted(self.draw(st.permutations(positions))[:2])
            for p in chosen:
                values[p] = name if p == chosen[0] else self.same_value(name, element)
        if kind in (DICT, VDICT):
            return "{" + ", ".join(f"{k}: {v}" for k, v in zip(KEYS[:2], values, strict=True)) + "}"
        if self.chance():
            return f"[{', '.join(values)}]"
        return f"({', '.join(values)},)"

    def condition(self, depth: int) -> str:
        form = self.draw(st.integers(0, 5))
        ints = self.function.variables(INT)
        if form == 0 or depth <= 0:
            self.note("compare")
            op = self.choose(["<", ">", "<=", ">="])
            return f"{self.expression(min(depth, 1))} {op} {self.choose(list(CONSTANTS))}"
        if form == 1:
            self.note("compare")
            return f"{self.expression(depth - 1)} < {self.expression(depth - 1)}"
        if form == 2:
            self.note("chained-compare")
            return f"-1.0 < {self.expression(depth - 1)} < 1.0"
        if form == 3:
            self.note("boolop")
            op = self.choose(["and", "or"])
            return f"({self.condition(depth - 1)} {op} {self.condition(depth - 1)})"
        if form == 4:
            self.note("not")
            return f"not ({self.condition(depth - 1)})"
        if ints:
            self.note("int-condition")
            name = self.choose(ints)
            return self.choose([f"{name} % 2 == 0", f"{name} > 1", f"{name} == 0"])
        return f"{self.expression(depth - 1)} > 0.0"

    def unpackable(self) -> list[str]:
        fn = self.function
        least = 1 if self.singleton_unpacking else 2
        return [t for t in fn.variables(TUPLE) if fn.lookup(t).length >= least]
