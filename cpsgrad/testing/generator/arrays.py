"""Vector and matrix expressions of a drawn program (numpy=True): leaves, views of the same
shape (views=True), rows and products of matrices, reductions to a float; and (rules=True) calls
of cpsgrad's numpy/scipy rules among them (rule_forms.py)."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from cpsgrad.testing import rule_forms
from cpsgrad.testing.generator.grammar import (
    KEYS,
    MATRIX,
    MATRIX_SHAPE,
    VCALLABLE,
    VDICT,
    VECTOR,
    VECTOR_LENGTH,
    VSEQ,
)


class ArrayExpressions:
    """Builder's array expressions (a mixin: the state is Builder's)."""

    def vector_leaf(self) -> str:
        fn = self.function
        options: list[Callable[[], str]] = []
        vectors = fn.variables(VECTOR)
        if vectors:
            options += [lambda: self.choose(vectors)] * 2
            if self.views:
                options.append(lambda: self.view(self.choose(vectors), VECTOR))
        if fn.variables(VSEQ):
            options.append(self.vector_sequence_read)
        if fn.variables(VDICT):
            options.append(self.vector_dict_read)
        if fn.variables(MATRIX):
            options.append(self.matrix_row)
        if not options:  # a helper's vector parameter, called where there is no vector
            self.note("np.array")
            return "np.array([" + ", ".join(self.float_leaf() for _ in range(VECTOR_LENGTH)) + "])"
        return self.choose(options)()

    def vector_sequence_read(self) -> str:
        fn = self.function
        name = self.choose(fn.variables(VSEQ))
        self.note("vector-container-read")
        length = fn.lookup(name).length
        return f"{name}[{self.draw(st.integers(-length, length - 1))}]"

    def vector_dict_read(self) -> str:
        self.note("vector-container-read")
        return f"{self.choose(self.function.variables(VDICT))}[{self.choose(list(KEYS[:2]))}]"

    def view(self, name: str, kind: str) -> str:
        """A view of the array `name` of the same shape (views=True)."""
        self.note("view")
        if kind == VECTOR:
            forms = [
                (f"{name}[:]", "view-slice"),
                (f"{name}[::-1]", "view-reversed"),
                (f"{name}.T", "view-transpose"),
                (f"{name}.reshape({VECTOR_LENGTH})", "view-reshape"),
                (f"{name}.reshape(-1)", "view-reshape"),
                (f"{name}[0:{VECTOR_LENGTH}]", "view-slice"),
                (f"{name}[::-1][::-1]", "view-reversed"),
                (f"np.transpose({name})", "view-transpose"),
            ]
        else:
            rows, columns = MATRIX_SHAPE
            forms = [
                (f"{name}.T", "view-transpose"),
                (f"{name}[:]", "view-slice"),
                (f"{name}[::-1]", "view-reversed"),
                (f"{name}[:, ::-1]", "view-reversed"),
                (f"{name}.reshape({rows}, {columns})", "view-reshape"),
                (f"{name}.reshape({rows * columns}).reshape({rows}, {columns})", "view-reshape"),
                (f"np.transpose({name})", "view-transpose"),
                (f"{name}.T.T", "view-transpose"),
            ]
        text, construct = self.choose(forms)
        self.note(construct)
        return text

    def matrix_row(self) -> str:
        """A vector from a matrix: a row, a column, a product with a vector, a sum over an axis."""
        fn = self.function
        self.note("matrix")
        matrix = self.matrix_leaf()
        form = self.draw(st.integers(0, 4))
        if form == 0:
            return f"{matrix}[{self.draw(st.integers(-1, MATRIX_SHAPE[0] - 1))}]"
        if form == 1:
            self.note("view-slice")
            return f"{matrix}[:, {self.draw(st.integers(-1, MATRIX_SHAPE[1] - 1))}]"
        if form == 2:
            self.note("matmul")
            vectors = fn.variables(VECTOR)
            vector = self.choose(vectors) if vectors else matrix + "[0]"
            return f"({matrix} @ {vector})"
        if form == 3:
            return f"np.sum({matrix}, axis={self.choose(['0', '1', '-1'])})"
        return f"np.mean({matrix}, axis={self.choose(['0', '1'])})"

    def matrix_leaf(self) -> str:
        matrices = self.function.variables(MATRIX)
        if not matrices:  # a helper's matrix parameter, called where there is no matrix
            vector = self.vector_leaf()
            return f"np.outer({vector}, {vector})"
        name = self.choose(matrices)
        if self.views and self.chance(3):
            return self.view(name, MATRIX)
        return name

    def matrix_expression(self, depth: int) -> str:
        self.note("matrix")
        if depth <= 0 or self.draw(st.integers(0, 9)) < 4:
            return self.matrix_leaf()
        d = depth - 1
        rules = self.forms.on("rules")
        form = self.draw(st.integers(0, 5 if rules else 4))
        if form == 5:
            return rule_forms.matrix_call(self, d)
        if form == 0:
            op = self.choose(["+", "-", "*"])
            return f"({self.matrix_expression(d)} {op} {self.matrix_expression(d)})"
        if form == 1:
            op = self.choose(["+", "-", "*"])
            other = self.expression(d) if self.chance() else self.vector_expression(d)  # broadcast
            return f"({self.matrix_expression(d)} {op} {other})"
        if form == 2:
            function = self.choose(["sin", "tanh"])
            self.note(f"np.{function}")
            return f"np.{function}({self.matrix_expression(d)})"
        if form == 3:
            self.note("matmul")
            return f"({self.matrix_expression(d)} @ {self.matrix_expression(d)})"
        inner = self.matrix_expression(d)
        return f"({inner} / (1.0 + {inner} * {inner}))"

    def matrix_reduction(self, depth: int) -> str:
        self.note("matrix")
        form = self.draw(st.integers(0, 3))
        matrix = self.matrix_expression(depth)
        if form == 0:
            self.note("np.sum")
            return f"np.sum({matrix})"
        if form == 1:
            self.note("np.trace")
            return f"np.trace({matrix})"
        if form == 2:
            rows, columns = MATRIX_SHAPE
            i, j = self.draw(st.integers(-1, rows - 1)), self.draw(st.integers(-1, columns - 1))
            return f"{matrix}[{i}, {j}]"
        self.note("np.mean")
        return f"np.mean({matrix})"

    def vector_expression(self, depth: int) -> str:
        self.note("numpy")
        if depth <= 0 or self.draw(st.integers(0, 9)) < 3:
            return self.vector_leaf()
        d = depth - 1
        fn = self.function
        extra: list[Callable[[], str]] = []
        helpers = [h for h in self.helpers if h.name != fn.name and h.returns == VECTOR]
        if helpers:
            extra += [lambda: self.helper_call(self.choose(self.weighted(helpers)), d)] * 2
        aliases = [a for a, k in self.global_functions.items() if k == VECTOR]
        if aliases:

            def alias() -> str:
                self.note("global-function")
                return f"{self.choose(aliases)}({self.vector_expression(d)})"

            extra.append(alias)
        callables = fn.variables(VCALLABLE)
        if callables:

            def closure() -> str:
                name = self.choose(callables)
                self.note("vector-closure-call")
                captured = [c for c in fn.lookup(name).captures if fn.lookup(c).kind == VECTOR]
                if self.captured_arguments and captured and self.chance(4):
                    self.note("closure-called-with-captured")
                    return f"{name}({self.same_value(self.choose(captured), VECTOR)})"
                return f"{name}({self.vector_expression(d)})"

            extra.append(closure)
        if self.forms.on("rules"):
            extra.append(lambda: rule_forms.vector_call(self, d))
        form = self.draw(st.integers(0, 6 + len(extra)))
        if form > 6:
            return extra[form - 7]()
        if form == 0:
            op = self.choose(["+", "-", "*"])
            return f"({self.vector_expression(d)} {op} {self.vector_expression(d)})"
        if form == 1:
            op = self.choose(["+", "-", "*"])
            if self.chance():
                return f"({self.vector_expression(d)} {op} {self.expression(d)})"
            return f"({self.expression(d)} {op} {self.vector_expression(d)})"
        if form == 2:
            function = self.choose(["sin", "cos", "tanh"])
            self.note(f"np.{function}")
            return f"np.{function}({self.vector_expression(d)})"
        if form == 3:
            self.note("np.exp")
            return f"np.exp(np.tanh({self.vector_expression(d)}))"
        if form == 4:
            inner = self.vector_expression(d)
            return f"({inner} / (1.0 + {inner} * {inner}))"
        if form == 5:
            self.note("np.maximum")
            return f"np.maximum({self.vector_expression(d)}, {self.vector_expression(d)})"
        self.note("np.array")
        return "np.array([" + ", ".join(self.expression(d) for _ in range(VECTOR_LENGTH)) + "])"

    def vector_reduction(self, depth: int) -> str:
        if self.views and self.chance(1):  # basic slices of other lengths, reduced at once
            self.note("view", "basic-slice")
            vector = self.vector_expression(depth)
            form = self.draw(st.integers(0, 2))
            if form == 0:
                return f"np.sum({vector}[{self.choose(['1:', ':2', '1:-1', '::2', '-2:'])}])"
            if form == 1:
                return f"np.dot({vector}[:2], {self.vector_expression(depth)}[1:])"
            return f"{vector}[1:][{self.choose(['0', '-1'])}]"
        if self.forms.on("rules") and self.chance(2):
            return rule_forms.float_call(self, depth)
        softmaxes = [v for v in self.function.variables(VECTOR) if v in self.function.softmaxes]
        form = self.draw(st.integers(0, 5 if softmaxes else 4))
        if form == 4:
            self.note("logsumexp")  # fused into one backward (transforms/fusion.py)
            return f"np.log(np.sum(np.exp(np.tanh({self.vector_expression(depth)}))))"
        if form == 5:
            self.note("log-likelihood")  # the log of a probability: fused with its softmax where nothing else reads it
            return f"np.log({self.choose(softmaxes)}[{self.draw(st.integers(-1, VECTOR_LENGTH - 1))}])"
        if form == 0:
            self.note("np.sum")
            return f"np.sum({self.vector_expression(depth)})"
        if form == 1:
            self.note("np.dot")
            return f"np.dot({self.vector_expression(depth)}, {self.vector_expression(depth)})"
        if form == 2:
            self.note("vector-index")
            return (
                f"{self.vector_expression(depth)}[{self.draw(st.integers(-1, VECTOR_LENGTH - 1))}]"
            )
        self.note("np.mean")
        return f"np.mean({self.vector_expression(depth)})"
