"""The functions of a drawn module: the entry `f`, generated helpers, the recursive helper,
module-level floats and function aliases (rebinding=True), and the module's text."""

from __future__ import annotations

from hypothesis import strategies as st

from cpsgrad.testing import forms
from cpsgrad.testing.generator.grammar import (
    CONSTANTS,
    DICT,
    ENTRY,
    FLOAT,
    INT,
    LIST,
    MATRIX,
    REBOUND_FUNCTIONS,
    TUPLE,
    VDICT,
    VECTOR,
    VSEQ,
    Function,
    Helper,
    Variable,
    mentions,
)


class Functions:
    """Builder's functions and module (a mixin: the state is Builder's)."""

    def function_text(
        self,
        name: str,
        parameters: list[tuple[str, Variable]],
        budget: int,
        defaults: dict[str, str] | None = None,
        returns: str = FLOAT,
    ) -> list[str]:
        self.function = Function(name, [dict(parameters)], statements=budget, returns=returns)
        body = self.block("    ", budget)
        final = self.final_expression(returns)
        defaults = defaults or {}
        signature = ", ".join(
            p + (f"={defaults[p]}" if p in defaults else "") for p, _ in parameters
        )
        return [f"def {name}({signature}):", *body, f"    return {final}"]

    def final_expression(self, returns: str = FLOAT) -> str:
        """The value returned at the end (a float, or a vector): it mentions a differentiated
        parameter."""
        fn = self.function
        differentiated = [
            v
            for kind in (FLOAT, VECTOR, MATRIX, TUPLE, DICT, VSEQ, VDICT)
            for v in fn.variables(kind)
            if fn.lookup(v).differentiated
        ]
        value = self.vector_expression(self.max_depth) if returns == VECTOR else self.expression(self.max_depth)
        # use what the body computed: a few of the top-level values not used yet
        top = fn.scopes[0]
        for name in [v for v in top if not top[v].differentiated][-3:]:
            if mentions(value, name) or not self.chance(5):
                continue
            kind = top[name].kind
            if kind == FLOAT:
                value = f"{value} + {name}"
            elif kind == TUPLE:
                value = f"{value} + sum({name})"
            elif kind == LIST:
                value = f"{value} + {name}[-1]"
            elif kind == DICT:
                value = f'{value} + {name}["a"]'
            elif kind in (VECTOR, MATRIX):
                value = f"{value} + np.sum({name})"
            elif kind == VSEQ:
                value = f"{value} + np.sum({name}[-1])"
            elif kind == VDICT:
                value = f'{value} + np.sum({name}["b"])'
        if not differentiated or any(mentions(value, v) for v in differentiated):
            return value
        anchor = self.choose(differentiated)
        kind = fn.lookup(anchor).kind
        if kind in (VECTOR, MATRIX):
            anchor = f"np.sum({anchor})"
        elif kind == TUPLE:
            anchor = f"sum({anchor})"
        elif kind == DICT:
            anchor = f'{anchor}["b"]'
        elif kind == VSEQ:
            anchor = f"np.sum({anchor}[0])"
        elif kind == VDICT:
            anchor = f'np.sum({anchor}["a"])'
        return f"{value} + {self.choose(['0.5', '-1.0', '2.0'])} * {anchor}"

    def recursive_text(self, name: str, budget: int) -> tuple[list[str], int]:
        """The recursive helper, `r(u, depth)` or (repeated_arguments=True, sometimes)
        `r(u, w, depth)`, whose recursive call may pass one value twice; and its float count."""
        self.note("recursion")
        floats = 2 if self.repeated_arguments and self.chance(3) else 1
        parameters = {"u": Variable(FLOAT, differentiated=True)}
        if floats == 2:
            parameters["w"] = Variable(FLOAT, differentiated=True)
        parameters["depth"] = Variable(INT)
        self.function = Function(name, [parameters], statements=budget)
        base = self.expression(1)
        body = self.block("    ", budget) if budget else []
        step = self.expression(1)
        twice = self.chance(2)
        arguments = [step]
        if floats == 2:
            second = self.choose(["w", "u", step])
            if second == step or (second == "u" and step == "u"):
                self.note("repeated-argument", "repeated-argument-recursion")
            arguments.append(second)
        call = f"{name}({', '.join(arguments)}, depth - 1)"
        combined = self.choose(["+", "*", "-"])
        again = "u * 0.5, u * 0.5" if floats == 2 else "u * 0.5"
        second_call = f" + 0.5 * {name}({again}, depth - 1)" if twice else ""
        if twice:
            self.note("tree-recursion")
        tail = f"{call} {combined} u{second_call}"
        signature = "u, w, depth" if floats == 2 else "u, depth"
        return [
            f"def {name}({signature}):",
            "    if depth <= 0:",
            f"        return {base}",
            *body,
            f"    return {tail}",
        ], floats

    def helper_parameters(self) -> tuple[list[tuple[str, Variable]], Helper]:
        """A helper's positional parameters: floats (the original grammar), vectors and matrices
        (repeated_arguments or views with numpy), or one container `c` (aliased_containers)."""
        if self.aliased_containers and self.chance(1):
            kinds = [TUPLE, DICT] + ([VSEQ, VDICT] if self.numpy else [])
            kind = self.choose(kinds)
            length = self.draw(st.integers(2, 3)) if kind in (TUPLE, VSEQ) else 0
            self.note("container-helper")
            variable = Variable(kind, length, differentiated=True)
            return [("c", variable)], Helper("", ("c",), (kind,), False, FLOAT, length)
        arrays = self.numpy and (self.repeated_arguments or self.views)
        if arrays and self.repeated_arguments and self.chance(2):  # an array helper, to pass one array twice
            arity = self.draw(st.integers(2, 3))
            kinds = [MATRIX if self.views and self.chance(1) else VECTOR for _ in range(arity)]
            self.note("array-helper")
        else:
            arity = self.draw(st.integers(1, 3 if self.repeated_arguments else 2))
            kinds = []
            for _ in range(arity):
                kind = FLOAT
                if arrays and self.chance(4):
                    kind = MATRIX if self.views and self.chance(2) else VECTOR
                kinds.append(kind)
        names = ("u", "v", "w")[:arity]
        returns = VECTOR if VECTOR in kinds and self.chance(4) else FLOAT
        if returns == VECTOR:
            self.note("vector-helper")
        variables = [(p, Variable(k, differentiated=True)) for p, k in zip(names, kinds, strict=True)]
        return variables, Helper("", names, tuple(kinds), False, returns)

    def module_globals(self) -> list[str]:
        """Module-level floats and function aliases (rebinding=True) that check_program rebinds
        between two runs of the program."""
        if not self.rebinding or not self.chance(3):
            return []
        lines = []
        for index in range(self.draw(st.integers(1, 2))):
            if self.chance():
                name = f"c{index}"
                value = self.choose(list(CONSTANTS))
                self.global_floats.append(name)
                self.rebound[name] = self.choose([c for c in ("0.75", "-1.25", "1.75") if c != value])
                self.note("global-float-definition")
                lines.append(f"{name} = {value}")
            else:
                vector = self.numpy and self.chance(2)
                name = f"vact{index}" if vector else f"act{index}"
                functions = ["np.tanh", "np.sin", "np.cos"] if vector else ["math.sin", "math.cos", "math.tanh"]
                function = self.choose(functions)
                self.global_functions[name] = VECTOR if vector else FLOAT
                self.rebound[name] = REBOUND_FUNCTIONS[function]
                self.note("global-function-definition")
                lines.append(f"{name} = {function}")
        self.note("rebinding")
        return lines

    def module(self) -> tuple[str, tuple[str, ...]]:
        texts: list[list[str]] = []
        globals_ = self.module_globals()
        if globals_:
            texts.append(globals_)
        count = self.draw(st.integers(0, self.max_helpers))
        for index in range(count):
            if self.recursion and index == count - 1 and self.chance(3):
                name = f"r{index}"
                text, floats = self.recursive_text(name, self.draw(st.integers(0, 2)))
                texts.append(text)
                self.recursive.append((name, floats))
                continue
            name = f"h{index}"
            parameters, helper = self.helper_parameters()
            helper.name = name
            defaults = {}
            if helper.kinds[0] not in (TUPLE, DICT, VSEQ, VDICT) and self.chance(3):
                self.note("default-argument")
                parameters.append(("scale", Variable(FLOAT, differentiated=True)))
                defaults["scale"] = self.choose(["0.5", "2.0"])
                helper.scale = True
            budget = self.draw(st.integers(0, 3))
            texts.append(self.function_text(name, parameters, budget, defaults, helper.returns))
            self.helpers.append(helper)
        texts += forms.helpers(self, Variable)  # s0(u, *rest, **kw)
        floats_count = self.draw(st.integers(1, 3))
        names = [f"x{k}" for k in range(floats_count)]
        parameters = [(p, Variable(FLOAT, differentiated=True)) for p in names]
        if self.numpy and (self.writes or self.chance(5 if self.repeated_arguments or self.views else 3)):
            names.append("v")
            parameters.append(("v", Variable(VECTOR, differentiated=True)))
        if self.views and self.chance(2):
            self.note("matrix-argument")
            names.append("m")
            parameters.append(("m", Variable(MATRIX, differentiated=True)))
        parameters.append(("n", Variable(INT)))
        budget = self.draw(st.integers(1, self.max_statements))
        texts.append(self.function_text(ENTRY, parameters, budget))
        if globals_:  # keep the globals something reads
            used = [g for g in self.rebound if any(mentions(line, g) for text in texts[1:] for line in text)]
            self.rebound = {g: self.rebound[g] for g in used}
            texts[0] = [line for line in globals_ if line.split(" = ")[0] in used]
            if not used:
                del texts[0]
                self.constructs -= {"rebinding", "global-float-definition", "global-function-definition"}
            # a use drawn in text that was dropped later (a discarded expression) is no use
            if not any(g.startswith(("act", "vact")) for g in used):
                self.constructs -= {"global-function", "global-function-definition"}
            if not any(g.startswith("c") for g in used):
                self.constructs -= {"global-float", "global-float-definition"}
        texts[:0] = self.forms.prelude.values()  # what the forms' statements use (a manager class, Vec0 ...)
        uses_numpy = any("np." in line for text in texts for line in text)  # the prelude's too (Vec0's np.sum)
        header = ["import math", *self.forms.imports] + (["", "import numpy as np"] if uses_numpy else [])
        source = "\n\n\n".join(["\n".join(header)] + ["\n".join(text) for text in texts]) + "\n"
        return source, tuple(names)
