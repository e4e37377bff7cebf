"""Statements of a drawn program: assignments, `if`, `while` and `for` (with `else`), tuples,
lists, dicts and their reads, writes in place (mutations.py), discarded results, softmaxes,
closures, jumps and early returns; and the families of forms.py."""

from __future__ import annotations

from hypothesis import strategies as st

from cpsgrad.testing import forms, mutations
from cpsgrad.testing.generator.grammar import (
    CALLABLE,
    DICT,
    FLOAT,
    INT,
    KEYS,
    LIST,
    MATRIX,
    MAX_TRIPS,
    TUPLE,
    VCALLABLE,
    VDICT,
    VECTOR,
    VSEQ,
    WRITE_WEIGHT,
    Variable,
    is_name,
    mentions,
)


class Statements:
    """Builder's statements (a mixin: the state is Builder's)."""

    def trips(self) -> str:
        ints = [i for i in self.function.variables(INT) if i == "n"]
        options = [str(k) for k in range(1, MAX_TRIPS + 1)]
        options += [f"min({i}, {MAX_TRIPS})" for i in ints] + ints
        return self.choose(options)

    def block(self, indent: str, count: int) -> list[str]:
        """`count` statements at most (at least one)."""
        fn = self.function
        lines: list[str] = []
        for _ in range(max(count, 1)):
            if fn.statements <= 0 and lines:
                break
            fn.statements -= 1
            lines.extend(self.statement(indent))
        return lines

    def nested(self, indent: str) -> list[str]:
        fn = self.function
        fn.scopes.append({})
        try:
            return self.block(indent, self.draw(st.integers(1, 3)))
        finally:
            fn.scopes.pop()

    def assign_float(self, indent: str) -> list[str]:
        fn = self.function
        targets = [v for v in fn.variables(FLOAT) if not fn.lookup(v).differentiated and v not in fn.captured]
        value = self.expression(self.max_depth)
        if targets and self.chance(5):
            target = self.choose(targets)
            if self.chance(2):
                self.note("augmented-assign")
                return [f"{indent}{target} {self.choose(['+=', '-=', '*='])} {value}"]
            return [f"{indent}{target} = {value}"]
        name = self.fresh("a")
        fn.scopes[-1][name] = Variable(FLOAT)
        return [f"{indent}{name} = {value}"]

    def statement(self, indent: str) -> list[str]:
        fn = self.function
        kinds = ["assign", "assign", "if", "while", "for"]
        if self.containers:
            kinds += ["tuple", "dict"]
            if self.unpackable():
                kinds.append("unpack")
            if fn.appendable - fn.iterated:
                kinds.append("append")
            if len(fn.scopes) == 1:
                kinds.append("list")
        if self.numpy and self.has_vectors():
            kinds.append("vector")
            if self.aliased_containers:
                kinds.append("vector-container")
        if fn.variables(MATRIX):
            kinds.append("matrix")
        if self.mutation and self.has_vectors():
            weight = (4 if self.buffers & set(fn.variables(VECTOR)) else 1) * (WRITE_WEIGHT if self.writes else 1)
            kinds += ["write"] * weight
        if self.discarded_results and [h for h in self.helpers if h.name != fn.name]:
            kinds.append("discard")
        if self.repeated_arguments and self.repeatable_helpers():
            kinds.append("aliased-call")
        if self.closures and len(fn.scopes) == 1:
            kinds.append("closure")
        if fn.loops:
            kinds.append("jump")
        kinds.append("return")
        if len([v for v in fn.variables(FLOAT) if not fn.lookup(v).differentiated and v not in fn.captured]) >= 2:
            kinds.append("swap")
        kinds.append("chained")
        kind = self.choose(kinds + forms.kinds(self))
        if kind in forms.KINDS:
            return forms.statement(self, indent, kind, Variable)
        if kind == "assign":
            return self.assign_float(indent)
        if kind == "swap":
            self.note("swap")
            local = [v for v in fn.variables(FLOAT) if not fn.lookup(v).differentiated and v not in fn.captured]
            first = self.choose(local)
            second = self.choose([v for v in local if v != first])
            value = self.expression(self.max_depth - 1)
            return [f"{indent}{first}, {second} = {second}, ({first} + {value})"]
        if kind == "chained":
            self.note("chained-assign")
            names = [self.fresh("a"), self.fresh("a")]
            value = self.expression(self.max_depth)
            for name in names:
                fn.scopes[-1][name] = Variable(FLOAT)
            return [f"{indent}{names[0]} = {names[1]} = {value}"]
        if kind == "if":
            return self.if_statement(indent)
        if kind == "while":
            return self.while_statement(indent)
        if kind == "for":
            return self.for_statement(indent)
        if kind == "tuple":
            self.note("tuple")
            length = self.draw(st.integers(1, 3))
            name = self.fresh("t")
            values = [self.expression(self.max_depth - 1) for _ in range(length)]
            same = self.aliased(FLOAT)
            if length >= 2 and self.aliased_containers and same is not None and self.chance(3):
                self.note("aliased-container")  # (x, y, x)
                values[0] = values[-1] = same
            fn.scopes[-1][name] = Variable(TUPLE, length)
            return [f"{indent}{name} = ({', '.join(values)},)"]
        if kind == "unpack":
            self.note("unpack")
            name = self.choose(self.unpackable())
            length = fn.lookup(name).length
            targets = [self.fresh("a") for _ in range(length)]
            for target in targets:
                fn.scopes[-1][target] = Variable(FLOAT)
            return [f"{indent}{', '.join(targets)}{',' if length == 1 else ''} = {name}"]
        if kind == "dict":
            self.note("dict")
            name = self.fresh("d")
            entries = ", ".join(f"{k}: {self.expression(self.max_depth - 1)}" for k in KEYS[:2])
            fn.scopes[-1][name] = Variable(DICT)
            return [f"{indent}{name} = {{{entries}}}"]
        if kind == "list":
            self.note("list")
            name = self.fresh("xs")
            count = self.draw(st.integers(1, 2))
            values = ", ".join(self.expression(self.max_depth - 1) for _ in range(count))
            fn.scopes[-1][name] = Variable(LIST)
            fn.appendable.add(name)
            return [f"{indent}{name} = [{values}]"]
        if kind == "append":
            self.note("append")
            name = self.choose(sorted(fn.appendable - fn.iterated))
            return [f"{indent}{name}.append({self.expression(self.max_depth)})"]
        if kind == "vector-container":
            return self.vector_container(indent)
        if kind == "write":
            return mutations.write_statement(self, indent, Variable)
        if kind == "matrix":
            name = self.fresh("m")
            value = self.matrix_expression(self.max_depth)
            fn.scopes[-1][name] = Variable(MATRIX)
            return [f"{indent}{name} = {value}"]
        if kind == "discard":
            return self.discard(indent)
        if kind == "aliased-call":  # a helper given one of this function's variables twice or more
            helper = self.choose(self.repeatable_helpers())
            name = self.fresh("a")
            call = self.helper_call(helper, self.max_depth - 1, repeat=True)
            fn.scopes[-1][name] = Variable(helper.returns)
            return [f"{indent}{name} = {call}"]
        if kind == "vector":
            if fn.variables(VECTOR) and self.draw(st.integers(0, 3)) == 3:
                return self.softmax(indent)
            name = self.fresh("w")
            value = self.vector_expression(self.max_depth)
            fn.scopes[-1][name] = Variable(VECTOR)
            return [f"{indent}{name} = {value}"]
        if kind == "closure":
            return self.closure(indent)
        if kind == "jump":
            self.note("break-continue")
            word = self.choose(["break", "continue"])
            self.note(word)
            return [f"{indent}if {self.condition(1)}:", f"{indent}    {word}"]
        self.note("early-return")
        value = self.vector_expression(self.max_depth) if fn.returns == VECTOR else self.expression(self.max_depth)
        return [f"{indent}if {self.condition(1)}:", f"{indent}    return {value}"]

    def vector_container(self, indent: str) -> list[str]:
        """A list, tuple or dict holding one vector twice or more: `[v, v]`, `(v, w, v)`,
        `{"a": v, "b": v}` (aliased_containers=True); read by index later, or passed on."""
        fn = self.function
        self.note("aliased-container", "aliased-array-container")
        same = self.vector_leaf()
        if self.chance(3):
            name = self.fresh("d")
            other = self.same_value(same, VECTOR) if is_name(same) else same
            fn.scopes[-1][name] = Variable(VDICT)
            return [f'{indent}{name} = {{"a": {same}, "b": {other}}}']
        length = self.draw(st.integers(2, 3))
        values = [same] * length
        if length == 3:
            values[1] = self.vector_expression(self.max_depth - 1)
        if is_name(same):
            values[-1] = self.same_value(same, VECTOR)
        name = self.fresh("t")
        fn.scopes[-1][name] = Variable(VSEQ, length)
        text = f"[{', '.join(values)}]" if self.chance() else f"({', '.join(values)},)"
        return [f"{indent}{name} = {text}"]

    def discard(self, indent: str) -> list[str]:
        """A helper's result discarded (`unused = h(x, x)`, or a bare call `h(x, x)`, which
        cpsgrad refuses where an argument is differentiable), or used twice."""
        fn = self.function
        helper = self.choose(self.weighted([h for h in self.helpers if h.name != fn.name]))
        call = self.helper_call(helper, self.max_depth - 1)
        form = self.draw(st.integers(0, 5))
        if form <= 2:
            self.note("discarded-result")
            return [f"{indent}{self.fresh('unused')} = {call}"]
        if form == 3:
            self.note("bare-call")
            return [f"{indent}{call}"]
        self.note("result-used-twice")
        name, twice = self.fresh("a"), self.fresh("a")
        kind = helper.returns
        fn.scopes[-1][name] = Variable(kind)
        fn.scopes[-1][twice] = Variable(kind)
        op = self.choose(["*", "+"])
        return [f"{indent}{name} = {call}", f"{indent}{twice} = {name} {op} {name}"]

    def softmax(self, indent: str) -> list[str]:
        """A softmax of a vector written out (`e = np.exp(w - np.max(w)); p = e / np.sum(e)`),
        which cpsgrad differentiates as one operation where nothing else reads `e` (both are
        vector variables here, so later statements may read either, keeping them apart)."""
        fn = self.function
        source = self.choose(fn.variables(VECTOR))
        exponential, probabilities = self.fresh("e"), self.fresh("w")
        form = self.draw(st.integers(0, 2))
        if form == 0:
            self.note("softmax")
            shifted = f"{source} - np.max({source})"
        elif form == 1:
            self.note("softmax-unshifted")
            shifted = source
        else:
            self.note("softmax-method")
            shifted = f"{source} - {source}.max()"
        fn.scopes[-1][exponential] = Variable(VECTOR)
        fn.scopes[-1][probabilities] = Variable(VECTOR)
        fn.softmaxes.add(probabilities)
        total = f"{exponential}.sum()" if form == 2 else f"np.sum({exponential})"
        return [f"{indent}{exponential} = np.exp({shifted})", f"{indent}{probabilities} = {exponential} / {total}"]

    def if_statement(self, indent: str) -> list[str]:
        self.note("if")
        lines = [f"{indent}if {self.condition(2)}:", *self.nested(indent + "    ")]
        for _ in range(self.draw(st.integers(0, 2))):
            self.note("elif")
            lines += [f"{indent}elif {self.condition(2)}:", *self.nested(indent + "    ")]
        if self.chance():
            self.note("else")
            lines += [f"{indent}else:", *self.nested(indent + "    ")]
        return lines

    def while_statement(self, indent: str) -> list[str]:
        fn = self.function
        counter = self.fresh("i")
        limit = self.trips()
        test = f"{counter} < {limit}"
        if self.chance(3):
            self.note("while-data-dependent")
            test += f" and {self.condition(1)}"
        self.note("while")
        lines = [f"{indent}{counter} = 0", f"{indent}while {test}:"]
        fn.scopes.append({counter: Variable(INT)})
        fn.loops += 1
        try:
            lines.append(f"{indent}    {counter} = {counter} + 1")
            lines += self.block(indent + "    ", self.draw(st.integers(1, 3)))
        finally:
            fn.loops -= 1
            fn.scopes.pop()
        return lines + self.loop_else(indent)

    def loop_else(self, indent: str) -> list[str]:
        if not self.chance(2):
            return []
        self.note("loop-else")
        return [f"{indent}else:", *self.nested(indent + "    ")]

    def for_statement(self, indent: str) -> list[str]:
        fn = self.function
        forms = ["range"]
        if fn.variables(TUPLE):
            forms.append("tuple")
        if fn.variables(LIST):
            forms.append("list")
        if self.numpy and fn.variables(VECTOR):
            forms.append("vector")
        form = self.choose(forms)
        scope: dict[str, Variable] = {}
        iterated = None
        if form == "tuple":
            self.note("for-tuple")
            target = self.fresh("e")
            scope[target] = Variable(FLOAT)
            tuples = fn.variables(TUPLE)
            iterable = self.choose(tuples)
            how = self.draw(st.integers(0, 2))
            if how == 1:
                self.note("reversed")
                header = f"for {target} in reversed({iterable}):"
            elif how == 2:
                self.note("zip")
                other = self.fresh("e")
                scope[other] = Variable(FLOAT)
                header = f"for {target}, {other} in zip({iterable}, {self.choose(tuples)}):"
            else:
                header = f"for {target} in {iterable}:"
        elif form == "list":
            self.note("for-list")
            target = self.fresh("e")
            scope[target] = Variable(FLOAT)
            iterated = self.choose(fn.variables(LIST))
            if self.chance():
                index = self.fresh("k")
                scope[index] = Variable(INT)
                self.note("enumerate")
                header = f"for {index}, {target} in enumerate({iterated}):"
            else:
                header = f"for {target} in {iterated}:"
        elif form == "vector":
            self.note("for-vector")
            target = self.fresh("e")
            scope[target] = Variable(FLOAT)
            header = f"for {target} in {self.choose(fn.variables(VECTOR))}:"
        else:
            self.note("for-range")
            target = self.fresh("j")
            scope[target] = Variable(INT)
            limit = self.trips()
            header = f"for {target} in {self.choose([f'range({limit})', f'range(1, {limit})'])}:"
        fn.scopes.append(scope)
        fn.loops += 1
        already = iterated in fn.iterated
        if iterated is not None:
            fn.iterated.add(iterated)
        try:
            body = self.block(indent + "    ", self.draw(st.integers(1, 3)))
        finally:
            if iterated is not None and not already:
                fn.iterated.discard(iterated)
            fn.loops -= 1
            fn.scopes.pop()
        return [indent + header, *body, *self.loop_else(indent)]

    def closure(self, indent: str) -> list[str]:
        """A lambda or a nested def over the function's current floats (closures=True only)."""
        fn = self.function
        name = self.fresh("g")
        parameter = self.fresh("p")
        outer = fn.scopes
        # a closure of a vector (captured_arguments=True), called with what it captured
        vector = self.captured_arguments and bool(fn.variables(VECTOR)) and self.chance(2)
        fn.scopes = [*outer, {parameter: Variable(VECTOR if vector else FLOAT, differentiated=False)}]
        loops, fn.loops = fn.loops, 0
        try:
            if vector:
                body = f"{self.vector_expression(self.max_depth - 1)} * {self.choose(fn.variables(VECTOR))}"
            else:
                body = self.expression(self.max_depth - 1)
        finally:
            fn.scopes, fn.loops = outer, loops
        # Python's closure reads a captured variable when it is called, cpsgrad's captures its
        # value (and refuses a definition whose variables are assigned again): keep them fixed
        captures = tuple(v for scope in outer for v in scope if mentions(body, v))
        fn.captured.update(captures)
        fn.appendable -= fn.captured  # an append changes the list a closure holds, too
        fn.scopes[-1][name] = Variable(VCALLABLE if vector else CALLABLE, captures=captures)
        floats = fn.variables(FLOAT)
        signature = parameter
        if vector:
            self.note("vector-closure")
        if floats and not vector and self.chance(3):  # a default evaluated at the definition, maybe differentiable
            self.note("closure-default")
            default = self.fresh("q")
            signature = f"{parameter}, {default}={self.choose(floats)}"
            body = f"({body}) * {default}"
        if self.chance():
            self.note("lambda")
            lines = [f"{indent}{name} = lambda {signature}: {body} + {parameter}"]
        else:
            self.note("closure")
            lines = [f"{indent}def {name}({signature}):", f"{indent}    return {body} + {parameter}"]
        kind = VECTOR if vector else FLOAT
        captured = [c for c in captures if fn.lookup(c).kind == kind]
        if self.captured_arguments and captured and self.chance(4):  # called at once with what it captured
            self.note("closure-called-with-captured")
            result = self.fresh("a")
            lines.append(f"{indent}{result} = {name}({self.same_value(self.choose(captured), kind)})")
            fn.scopes[-1][result] = Variable(kind)
        return lines
