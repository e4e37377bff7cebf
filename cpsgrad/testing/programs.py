"""Random programs from the Python cpsgrad supports, as a hypothesis strategy, and a soak runner.

`programs(...)` draws a module: an entry function `f` and 0-3 generated module-level helpers
(one of which may recurse on an int depth that decreases), built from float arithmetic (with
guarded domains), `math` functions, `abs`/`min`/`max`, comparisons and `if`/`elif`/`else`,
`and`/`or`/`not`, conditional expressions, `while` loops bounded by a counter, `for` over
`range`, tuples, lists and vectors, `break`/`continue`/early `return`, tuples (indexing,
unpacking, `len`, `sum`), lists built by the function (`append`, indexing, `sum`), dicts of
floats (displays, `d["a"]`, `d.get`), and optionally a small numpy vector argument. Each drawn
`Program` carries its source (`repr` is the source with the arguments, so hypothesis prints a
failing program as code), the arguments to call it with, the positions to differentiate, and
the constructs it uses. `check_program` runs one through cpsgrad and checks the value exactly
and the gradient against finite differences (`check_grad`). See docs/generator.md.

Soak: ``python -m cpsgrad.testing.programs --soak 10000 [--seed N] [--jobs J]``.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import itertools
import linecache
import math
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import assume, event
from hypothesis import strategies as st

import cpsgrad
from cpsgrad.errors import UnsupportedError
from cpsgrad.testing import forms, mutations
from cpsgrad.testing.check import GradCheck, check_grad
from cpsgrad.testing.soaking import pick, reproducible_draws, run_chunks
from cpsgrad.testing.strategies import arrays

reproducible_draws()  # a seed draws the same programs in every process (soaking.py)

ENTRY = "f"
"""The name of the entry function of every generated module."""

VECTOR_LENGTH = 3
"""Length of the numpy vector argument (numpy=True)."""

MAX_TRIPS = 4
"""Loops run at most this many times; recursion is at most this deep."""

WRITE_WEIGHT = 6
"""programs(writes=True): how many times as often a statement is a write in place."""


# --- the program object ----------------------------------------------------------------------


_directory: tempfile.TemporaryDirectory | None = None
_serial = itertools.count()


def _temporary_directory() -> str:
    global _directory
    if _directory is None:
        _directory = tempfile.TemporaryDirectory(prefix="cpsgrad-programs-")
    return _directory.name


class Program:
    """One generated module and a call of its entry function.

    `source` is the module text; `function` the entry `f`, imported from a real file (cpsgrad
    reads source code) the first time it is asked for; `arguments` the drawn arguments;
    `argnums` the positions of the float and array arguments (differentiated); `constructs` the
    names of the constructs the program uses. `close()` deletes the file and forgets the module
    (also on `with program:` exit). `repr` is the source followed by the call, runnable as is.
    """

    # Not a dataclass: hypothesis prints a dataclass field by field, and any other object by
    # its repr, which is the source.

    def __init__(
        self,
        source: str,
        arguments: tuple[Any, ...],
        argnums: tuple[int, ...],
        constructs: frozenset[str],
        rebinding: dict[str, str] | None = None,
    ):
        self.source = source
        self.arguments = arguments
        self.argnums = argnums
        self.constructs = constructs
        self.rebinding = dict(rebinding or {})
        self._module: Any = None
        self._path: str | None = None

    @property
    def function(self) -> Callable[..., Any]:
        if self._module is None:
            name = f"cpsgrad_generated_{os.getpid()}_{next(_serial)}"
            path = os.path.join(_temporary_directory(), name + ".py")
            with open(path, "w", encoding="utf-8") as file:
                file.write(self.source)
            spec = importlib.util.spec_from_file_location(name, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[name]
                os.remove(path)
                raise
            self._module, self._path = module, path
        return getattr(self._module, ENTRY)

    def close(self) -> None:
        if self._module is not None:
            sys.modules.pop(self._module.__name__, None)
            self._module = None
        if self._path is not None:
            if os.path.exists(self._path):
                os.remove(self._path)
            linecache.checkcache(self._path)
            self._path = None

    def __enter__(self) -> Program:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        imports = "import cpsgrad\n"
        if "import numpy as np" not in self.source:
            imports += "import numpy as np\n"
        call = f"{ENTRY}({', '.join(_show(a) for a in self.arguments)})"
        runs = (
            f"print({call})\n"
            f"print(cpsgrad.value_and_grad({ENTRY}, argnums={self.argnums!r})"
            f"({', '.join(_show(a) for a in self.arguments)}))\n"
        )
        rebound = "".join(f"{name} = {value}\n" for name, value in self.rebinding.items())
        again = f"# rebound, and run again\n{rebound}{runs}" if rebound else ""
        return f"\n{self.source}\n\n{imports}{runs}{again}# end of program\n"

    def rebind(self) -> None:
        """Rebind the module's globals as `rebinding` says (a float to another, a function alias
        to another function), as a program doing so between two calls would."""
        self.function  # noqa: B018  (imports the module)
        namespace = vars(self._module)
        for name, value in self.rebinding.items():
            namespace[name] = eval(value, namespace)  # a constant or `math.cos`: generated text


def _show(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"np.array({value.tolist()!r})"
    return repr(value)


# --- the grammar ---------------------------------------------------------------------------------

FLOAT, INT, TUPLE, LIST, DICT, VECTOR, CALLABLE = (
    "float",
    "int",
    "tuple",
    "list",
    "dict",
    "vector",
    "callable",
)
MATRIX, VSEQ, VDICT, VCALLABLE = "matrix", "vector-sequence", "vector-dict", "vector-callable"
# a 3 x 3 matrix argument (views=True); sequences and dicts of vectors (aliased_containers=True,
# as helper parameters and locals); closures taking and returning a vector
MATRIX_SHAPE = (3, 3)
_REBOUND_FUNCTIONS = {  # module-level function aliases and what check_program rebinds them to
    "math.sin": "math.cos",
    "math.cos": "math.tanh",
    "math.tanh": "math.sin",
    "np.tanh": "np.sin",
    "np.sin": "np.cos",
    "np.cos": "np.tanh",
}
_CONSTANTS = ("0.5", "2.0", "1.5", "-1.0", "3.0", "0.25", "-0.75")
_KEYS = ('"a"', '"b"', '"c"')
_MARGIN = 1e-3
# Arguments stay this far from multiples of 1/4 (the constants, 0, and their simple sums), where
# ties in min/max and kinks of abs sit.
_ROUND = tuple(k / 4 for k in range(-8, 9))
_FLOATS = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False, allow_subnormal=False)


@dataclass
class _Variable:
    kind: str
    length: int = 0  # tuples: their length; lists: their least length; dicts: their keys
    differentiated: bool = False
    captures: tuple[str, ...] = ()  # closures: the variables their body reads


@dataclass
class _Helper:
    """A generated module-level helper: positional parameters of `kinds` (one container
    parameter `c` for a helper reading a container), maybe `scale=`, returning `returns`."""

    name: str
    parameters: tuple[str, ...]
    kinds: tuple[str, ...]
    scale: bool
    returns: str = FLOAT
    length: int = 0  # a container parameter's elements (tuples and lists)


@dataclass
class _Function:
    """Where statements are being generated: the function, its loops and its variables."""

    name: str
    scopes: list[dict[str, _Variable]]
    loops: int = 0
    iterated: set[str] = field(default_factory=set)  # lists a `for` is iterating over now
    appendable: set[str] = field(default_factory=set)  # lists this function may append to
    captured: set[str] = field(default_factory=set)  # read by a closure: never assigned again (late binding)
    softmaxes: set[str] = field(default_factory=set)  # vectors of probabilities (positive): logs of their elements are safe
    returns: str = FLOAT  # what its returns return: FLOAT or VECTOR (a helper returning a vector)
    statements: int = 0  # statements left

    def variables(self, kind: str) -> list[str]:
        seen: dict[str, _Variable] = {}
        for scope in self.scopes:
            seen.update(scope)
        return [name for name, variable in seen.items() if variable.kind == kind]

    def lookup(self, name: str) -> _Variable:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        raise KeyError(name)


class _Builder:
    """Draws one module; every choice is a hypothesis draw, so programs shrink to simpler ones
    (the first alternative of each choice is the simplest)."""

    def __init__(
        self,
        draw: Callable[..., Any],
        *,
        numpy: bool,
        containers: bool,
        recursion: bool,
        closures: bool,
        singleton_unpacking: bool,
        repeated_arguments: bool,
        views: bool,
        aliased_containers: bool,
        discarded_results: bool,
        captured_arguments: bool,
        rebinding: bool,
        mutation: bool,
        writes: bool,
        max_helpers: int,
        max_statements: int,
        max_depth: int,
        **switches: bool,  # starred, exceptions, walrus, sets, effects, classes (forms.py)
    ):
        self.draw = draw
        self.forms = forms.Forms(switches)
        self.singleton_unpacking = singleton_unpacking
        self.repeated_arguments = repeated_arguments
        self.views = views and numpy
        self.aliased_containers = aliased_containers and containers
        self.discarded_results = discarded_results
        self.captured_arguments = captured_arguments and closures
        self.rebinding = rebinding
        self.mutation = mutation and numpy
        self.writes = writes and self.mutation  # writes in place drawn WRITE_WEIGHT times as often
        self.buffers: set[str] = set()  # vectors made to be written into (mutations.py)
        self.numpy = numpy
        self.containers = containers
        self.recursion = recursion
        self.closures = closures
        self.max_helpers = max_helpers
        self.max_statements = max_statements
        self.max_depth = max_depth
        self.constructs: set[str] = set()
        self.helpers: list[_Helper] = []
        self.recursive: list[tuple[str, int]] = []  # (name, float parameters before depth)
        self.global_floats: list[str] = []  # module-level floats (rebinding=True)
        self.global_functions: dict[str, str] = {}  # module-level aliases: name -> FLOAT or VECTOR
        self.rebound: dict[str, str] = {}  # name -> what check_program rebinds it to
        self.names = itertools.count()
        self.function: _Function | None = None

    # -- choices --

    def choose(self, options: list[Any]) -> Any:
        return pick(self.draw, options)  # not st.sampled_from (soaking.pick)

    def chance(self, probability_in_8: int = 4) -> bool:
        return self.draw(st.integers(0, 7)) < probability_in_8

    def fresh(self, prefix: str) -> str:
        return f"{prefix}{next(self.names)}"

    def note(self, *constructs: str) -> None:
        self.constructs.update(constructs)

    # -- expressions --

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
        options.append(lambda: self.choose(list(_CONSTANTS)))
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
            return f"{name}[{self.choose(list(_KEYS[:2]))}]"
        if (key := self.choose(list(_KEYS))) == '"c"' and self.chance(4):  # `d | m`: d's "a", m's "b" over d's (a merge's adjoints)
            return self.note("dict-merge") or f'sum(({name} | {{"b": {self.float_leaf()}}}).values())'
        self.note("dict-get")
        return f"{name}.get({key}, {self.choose(list(_CONSTANTS))})"

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
        fn.scopes.append({index: _Variable(INT)})
        try:
            body = self.expression(depth)
            condition = self.condition(depth - 1) if self.chance(3) else None
        finally:
            fn.scopes.pop()
        trips = self.draw(st.integers(0, 3))
        body = f"{body} * {index}" if not _mentions(body, index) and self.chance() else body
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

    def repeatable_helpers(self) -> list[_Helper]:
        """Helpers this function could pass one of its variables twice (arrays weighted)."""
        fn = self.function
        helpers = []
        for helper in self.helpers:
            kinds = [*helper.kinds, *([FLOAT] if helper.scale else [])]
            if helper.name != fn.name and any(kinds.count(k) >= 2 and fn.variables(k) for k in set(kinds)):
                helpers.append(helper)
        return self.weighted(helpers)

    def weighted(self, helpers: list[_Helper]) -> list[_Helper]:
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

    def helper_call(self, helper: _Helper, depth: int, repeat: bool = False) -> str:
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
            return "{" + ", ".join(f"{k}: {v}" for k, v in zip(_KEYS[:2], values, strict=True)) + "}"
        if self.chance():
            return f"[{', '.join(values)}]"
        return f"({', '.join(values)},)"

    def condition(self, depth: int) -> str:
        form = self.draw(st.integers(0, 5))
        ints = self.function.variables(INT)
        if form == 0 or depth <= 0:
            self.note("compare")
            op = self.choose(["<", ">", "<=", ">="])
            return f"{self.expression(min(depth, 1))} {op} {self.choose(list(_CONSTANTS))}"
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
        return f"{self.choose(self.function.variables(VDICT))}[{self.choose(list(_KEYS[:2]))}]"

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
        form = self.draw(st.integers(0, 4))
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

    def trips(self) -> str:
        ints = [i for i in self.function.variables(INT) if i == "n"]
        options = [str(k) for k in range(1, MAX_TRIPS + 1)]
        options += [f"min({i}, {MAX_TRIPS})" for i in ints] + ints
        return self.choose(options)

    # -- statements --

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
        fn.scopes[-1][name] = _Variable(FLOAT)
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
            return forms.statement(self, indent, kind, _Variable)
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
                fn.scopes[-1][name] = _Variable(FLOAT)
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
            fn.scopes[-1][name] = _Variable(TUPLE, length)
            return [f"{indent}{name} = ({', '.join(values)},)"]
        if kind == "unpack":
            self.note("unpack")
            name = self.choose(self.unpackable())
            length = fn.lookup(name).length
            targets = [self.fresh("a") for _ in range(length)]
            for target in targets:
                fn.scopes[-1][target] = _Variable(FLOAT)
            return [f"{indent}{', '.join(targets)}{',' if length == 1 else ''} = {name}"]
        if kind == "dict":
            self.note("dict")
            name = self.fresh("d")
            entries = ", ".join(f"{k}: {self.expression(self.max_depth - 1)}" for k in _KEYS[:2])
            fn.scopes[-1][name] = _Variable(DICT)
            return [f"{indent}{name} = {{{entries}}}"]
        if kind == "list":
            self.note("list")
            name = self.fresh("xs")
            count = self.draw(st.integers(1, 2))
            values = ", ".join(self.expression(self.max_depth - 1) for _ in range(count))
            fn.scopes[-1][name] = _Variable(LIST)
            fn.appendable.add(name)
            return [f"{indent}{name} = [{values}]"]
        if kind == "append":
            self.note("append")
            name = self.choose(sorted(fn.appendable - fn.iterated))
            return [f"{indent}{name}.append({self.expression(self.max_depth)})"]
        if kind == "vector-container":
            return self.vector_container(indent)
        if kind == "write":
            return mutations.write_statement(self, indent, _Variable)
        if kind == "matrix":
            name = self.fresh("m")
            value = self.matrix_expression(self.max_depth)
            fn.scopes[-1][name] = _Variable(MATRIX)
            return [f"{indent}{name} = {value}"]
        if kind == "discard":
            return self.discard(indent)
        if kind == "aliased-call":  # a helper given one of this function's variables twice or more
            helper = self.choose(self.repeatable_helpers())
            name = self.fresh("a")
            call = self.helper_call(helper, self.max_depth - 1, repeat=True)
            fn.scopes[-1][name] = _Variable(helper.returns)
            return [f"{indent}{name} = {call}"]
        if kind == "vector":
            if fn.variables(VECTOR) and self.draw(st.integers(0, 3)) == 3:
                return self.softmax(indent)
            name = self.fresh("w")
            value = self.vector_expression(self.max_depth)
            fn.scopes[-1][name] = _Variable(VECTOR)
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
            other = self.same_value(same, VECTOR) if _is_name(same) else same
            fn.scopes[-1][name] = _Variable(VDICT)
            return [f'{indent}{name} = {{"a": {same}, "b": {other}}}']
        length = self.draw(st.integers(2, 3))
        values = [same] * length
        if length == 3:
            values[1] = self.vector_expression(self.max_depth - 1)
        if _is_name(same):
            values[-1] = self.same_value(same, VECTOR)
        name = self.fresh("t")
        fn.scopes[-1][name] = _Variable(VSEQ, length)
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
        fn.scopes[-1][name] = _Variable(kind)
        fn.scopes[-1][twice] = _Variable(kind)
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
        fn.scopes[-1][exponential] = _Variable(VECTOR)
        fn.scopes[-1][probabilities] = _Variable(VECTOR)
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
        fn.scopes.append({counter: _Variable(INT)})
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
        scope: dict[str, _Variable] = {}
        iterated = None
        if form == "tuple":
            self.note("for-tuple")
            target = self.fresh("e")
            scope[target] = _Variable(FLOAT)
            tuples = fn.variables(TUPLE)
            iterable = self.choose(tuples)
            how = self.draw(st.integers(0, 2))
            if how == 1:
                self.note("reversed")
                header = f"for {target} in reversed({iterable}):"
            elif how == 2:
                self.note("zip")
                other = self.fresh("e")
                scope[other] = _Variable(FLOAT)
                header = f"for {target}, {other} in zip({iterable}, {self.choose(tuples)}):"
            else:
                header = f"for {target} in {iterable}:"
        elif form == "list":
            self.note("for-list")
            target = self.fresh("e")
            scope[target] = _Variable(FLOAT)
            iterated = self.choose(fn.variables(LIST))
            if self.chance():
                index = self.fresh("k")
                scope[index] = _Variable(INT)
                self.note("enumerate")
                header = f"for {index}, {target} in enumerate({iterated}):"
            else:
                header = f"for {target} in {iterated}:"
        elif form == "vector":
            self.note("for-vector")
            target = self.fresh("e")
            scope[target] = _Variable(FLOAT)
            header = f"for {target} in {self.choose(fn.variables(VECTOR))}:"
        else:
            self.note("for-range")
            target = self.fresh("j")
            scope[target] = _Variable(INT)
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
        fn.scopes = [*outer, {parameter: _Variable(VECTOR if vector else FLOAT, differentiated=False)}]
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
        captures = tuple(v for scope in outer for v in scope if _mentions(body, v))
        fn.captured.update(captures)
        fn.appendable -= fn.captured  # an append changes the list a closure holds, too
        fn.scopes[-1][name] = _Variable(VCALLABLE if vector else CALLABLE, captures=captures)
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
            fn.scopes[-1][result] = _Variable(kind)
        return lines

    # -- functions --

    def function_text(
        self,
        name: str,
        parameters: list[tuple[str, _Variable]],
        budget: int,
        defaults: dict[str, str] | None = None,
        returns: str = FLOAT,
    ) -> list[str]:
        self.function = _Function(name, [dict(parameters)], statements=budget, returns=returns)
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
            if _mentions(value, name) or not self.chance(5):
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
        if not differentiated or any(_mentions(value, v) for v in differentiated):
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
        parameters = {"u": _Variable(FLOAT, differentiated=True)}
        if floats == 2:
            parameters["w"] = _Variable(FLOAT, differentiated=True)
        parameters["depth"] = _Variable(INT)
        self.function = _Function(name, [parameters], statements=budget)
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

    def helper_parameters(self) -> tuple[list[tuple[str, _Variable]], _Helper]:
        """A helper's positional parameters: floats (the original grammar), vectors and matrices
        (repeated_arguments or views with numpy), or one container `c` (aliased_containers)."""
        if self.aliased_containers and self.chance(1):
            kinds = [TUPLE, DICT] + ([VSEQ, VDICT] if self.numpy else [])
            kind = self.choose(kinds)
            length = self.draw(st.integers(2, 3)) if kind in (TUPLE, VSEQ) else 0
            self.note("container-helper")
            variable = _Variable(kind, length, differentiated=True)
            return [("c", variable)], _Helper("", ("c",), (kind,), False, FLOAT, length)
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
        variables = [(p, _Variable(k, differentiated=True)) for p, k in zip(names, kinds, strict=True)]
        return variables, _Helper("", names, tuple(kinds), False, returns)

    def module_globals(self) -> list[str]:
        """Module-level floats and function aliases (rebinding=True) that check_program rebinds
        between two runs of the program."""
        if not self.rebinding or not self.chance(3):
            return []
        lines = []
        for index in range(self.draw(st.integers(1, 2))):
            if self.chance():
                name = f"c{index}"
                value = self.choose(list(_CONSTANTS))
                self.global_floats.append(name)
                self.rebound[name] = self.choose([c for c in ("0.75", "-1.25", "1.75") if c != value])
                self.note("global-float-definition")
                lines.append(f"{name} = {value}")
            else:
                vector = self.numpy and self.chance(2)
                name = f"vact{index}" if vector else f"act{index}"
                function = self.choose(["np.tanh", "np.sin", "np.cos"] if vector else ["math.sin", "math.cos", "math.tanh"])
                self.global_functions[name] = VECTOR if vector else FLOAT
                self.rebound[name] = _REBOUND_FUNCTIONS[function]
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
                parameters.append(("scale", _Variable(FLOAT, differentiated=True)))
                defaults["scale"] = self.choose(["0.5", "2.0"])
                helper.scale = True
            budget = self.draw(st.integers(0, 3))
            texts.append(self.function_text(name, parameters, budget, defaults, helper.returns))
            self.helpers.append(helper)
        texts += forms.helpers(self, _Variable)  # s0(u, *rest, **kw)
        floats_count = self.draw(st.integers(1, 3))
        names = [f"x{k}" for k in range(floats_count)]
        parameters = [(p, _Variable(FLOAT, differentiated=True)) for p in names]
        if self.numpy and (self.writes or self.chance(5 if self.repeated_arguments or self.views else 3)):
            names.append("v")
            parameters.append(("v", _Variable(VECTOR, differentiated=True)))
        if self.views and self.chance(2):
            self.note("matrix-argument")
            names.append("m")
            parameters.append(("m", _Variable(MATRIX, differentiated=True)))
        parameters.append(("n", _Variable(INT)))
        budget = self.draw(st.integers(1, self.max_statements))
        texts.append(self.function_text(ENTRY, parameters, budget))
        if globals_:  # keep the globals something reads
            used = [g for g in self.rebound if any(_mentions(line, g) for text in texts[1:] for line in text)]
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


def _apart(value: float, taken: list[float]) -> float:
    """`value`, moved (by a fixed irregular step, so shrinking still works) until it is
    _MARGIN away from the multiples of 1/4 and from every value in `taken` and its negation;
    appended to `taken`. (Hypothesis likes round and repeated values; filtering them out
    instead would reject most draws.)"""
    for attempt in range(50):
        if all(abs(value - p) >= _MARGIN for p in _ROUND) and all(
            abs(value - t) >= _MARGIN and abs(value + t) >= _MARGIN for t in taken
        ):
            break
        value += 0.0421 + 0.0173 * attempt
    taken.append(value)
    return value


def _is_name(text: str) -> bool:
    return re.fullmatch(r"[A-Za-z_]\w*", text) is not None


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text) is not None


@st.composite
def _programs(draw: Callable[..., Any], switches: dict[str, Any]) -> Program:
    """One program: `switches` are `programs`' keyword arguments, as `_Builder` takes them."""
    builder = _Builder(draw, **switches)
    source, names = builder.module()
    # Ties in min/max between different values get an equal share each (as in JAX), which is
    # not the derivative where the tie is flat on one side (max(min(x0, x1), x1) at x0 == x1);
    # so no two arguments (or their negations) coincide, nor meet the round constants.
    taken: list[float] = []
    arguments: list[Any] = []
    for name in names:
        if name == "v":
            vector = draw(arrays(VECTOR_LENGTH, min_value=-2.0, max_value=2.0))
            arguments.append(np.array([_apart(float(a), taken) for a in vector]))
        elif name == "m":
            matrix = draw(arrays(MATRIX_SHAPE, min_value=-2.0, max_value=2.0))
            arguments.append(np.array([_apart(float(a), taken) for a in matrix.ravel()]).reshape(MATRIX_SHAPE))
        else:
            arguments.append(_apart(draw(_FLOATS), taken))
    arguments.append(draw(st.integers(0, MAX_TRIPS)))
    constructs = set(builder.constructs)
    if builder.helpers:
        constructs.add("helpers")
    return Program(
        source=source,
        arguments=tuple(arguments),
        argnums=tuple(range(len(names))),
        constructs=frozenset(constructs),
        rebinding=dict(builder.rebound),
    )


def programs(
    *,
    numpy: bool = True,
    containers: bool = True,
    recursion: bool = True,
    closures: bool = True,
    singleton_unpacking: bool = True,
    repeated_arguments: bool = True,
    views: bool = True,
    aliased_containers: bool = True,
    discarded_results: bool = True,
    captured_arguments: bool = True,
    rebinding: bool = True,
    mutation: bool = True,
    writes: bool = False,
    starred: bool = True,
    exceptions: bool = True,
    walrus: bool = True,
    sets: bool = True,
    effects: bool = True,
    classes: bool = True,
    max_helpers: int = 3,
    max_statements: int = 6,
    max_depth: int = 3,
) -> st.SearchStrategy[Program]:
    """Random programs from the supported grammar, with arguments to call them with.

    - `numpy`: the entry may take a vector of length 3 (elementwise ops, np.sum/np.dot/...).
    - `containers`: tuples, lists (display, append, index, sum, len, iteration), dicts.
    - `recursion`: the last helper may recurse on an int depth that decreases (<= 3 deep).
    - `closures`: lambdas and nested defs over local floats (some with a default bound to a
      float), called in expressions or handed to `map`; variables they capture are not
      assigned again (cpsgrad captures values where Python's closures read them late, and
      refuses the difference). Also generator expressions and list comprehensions summed
      (`sum(e for i in range(k) if c)`), their index sometimes shadowing an int of the function.
    - `singleton_unpacking`: `a, = t` from a one-element tuple (it once bound `a` to the tuple
      itself; found by this generator, fixed, on by default).
    - `repeated_arguments`: one variable (a float, a vector, a matrix) passed at two or more
      positions of a helper (`h(x, x)`, `h(x, v=x)`, `h(v, w=v[::-1], scale=...)`), helpers of
      one to three parameters, some of them arrays, some returning a vector; the recursive
      helper may take two floats and pass one twice.
    - `views`: a 3 x 3 matrix argument `m`, and views as operands and arguments: `v[:]`,
      `v[::-1]`, `v.T`, `v.reshape(3)`, `m.T`, `m[:, ::-1]`, ...; basic slices reduced at once
      (`np.sum(v[1:])`, `np.dot(v[:2], v[1:])`); rows, columns and products of matrices.
    - `aliased_containers`: lists, tuples and dicts holding one value twice (`[v, v]`,
      `(x, y, x)`, `{"a": v, "b": v}`), locals and arguments of helpers that read a container.
    - `discarded_results`: `unused = h(x, x)`, a bare call statement `h(x, x)` (which cpsgrad
      refuses, with its location, where an argument is differentiable: check_program accepts
      that refusal), a result used twice (`a = h(x, x); b = a * a`).
    - `captured_arguments`: closures called with a variable they captured (`g(x)` for
      `g = lambda p: p * x`), closures of vectors.
    - `rebinding`: module-level floats (`c0 = 0.5`) and function aliases (`act0 = math.sin`,
      `vact0 = np.tanh`) that check_program rebinds (`Program.rebinding`) between two gradient
      runs of the same program, checking the second against the rebound semantics.
    - `mutation`: writes in place into vectors the function made, aliases of them (mutations.py).
    - `writes`: a mutation soak: the entry always takes a vector and writes are drawn WRITE_WEIGHT
      times as often (off by default, which leaves the default draws as they were).
    - `starred`: `s0(u, *rest, **kw)`, `s0(*t)`, `h(e, *t[:1])`, `h(**{...})`, `max(*t)`, `a, *rest = t`
      (also in `for`), `(*t, e)`; `exceptions`: `try` raising on the data (also in a helper),
      handlers falling through, returning, jumping, re-raising; `finally`, `else`; `with` over
      `contextlib.suppress`, `np.errstate`, a manager class; `walrus`: `:=` in tests, conditions,
      arguments; `sets` of ints and strings; `effects`: print and logging; `classes`: objects of
      module-level plain classes, their methods and attributes (forms.py and its modules).
    - `max_helpers`: generated module-level helpers (0 to this many; each may call earlier ones).
    - `max_statements`: statements in the entry function, counting nested ones.
    - `max_depth`: operators deep in one expression.
    """
    switches = dict(locals())  # the keyword arguments, as _Builder takes them
    return _programs(switches)


# --- checking one program ------------------------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    """Equal as scalars, NaN equal to NaN."""
    a, b = (x.item() if isinstance(x, (np.ndarray, np.generic)) else x for x in (a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def check_program(program: Program) -> GradCheck | None:
    """Run `program` through cpsgrad: the value of `value_and_grad` must be exactly the
    function's, an exception the same type as the function's, and the gradient must agree with
    finite differences (`check_grad`). Records hypothesis events (constructs and outcomes) and
    rejects (`assume`) programs that raise, that cpsgrad refuses at a bare call statement
    (`h(x)`, a call for its effect), or whose gradient is identically zero here. A program with
    `rebinding` is then rebound and checked again the same way (except that raising or a zero
    gradient is fine there). Must be called inside a hypothesis test. Returns check_grad's
    result (of the first run)."""
    for construct in sorted(program.constructs):
        event(construct)
    result = _check(program, first=True)
    if program.rebinding:
        program.rebind()
        again = _check(program, first=False)
        if again is not None:
            event("outcome: rebound and checked again")
    return result


def _check(program: Program, first: bool) -> GradCheck | None:
    """One run of check_program's checks; None where the function raises (not on the first
    run: that is rejected)."""
    when = "" if first else " (after rebinding " + ", ".join(
        f"{name} = {value}" for name, value in program.rebinding.items()
    ) + ")"
    f = program.function
    try:
        expected = f(*program.arguments)
    except Exception as error:
        try:
            cpsgrad.value_and_grad(f, argnums=program.argnums)(*program.arguments)
        except Exception as transformed_error:
            if type(transformed_error) is not type(error):
                raise AssertionError(
                    f"the function raises {type(error).__name__}: {error}, but value_and_grad "
                    f"raises {type(transformed_error).__name__}: {transformed_error}{when}"
                ) from transformed_error
        else:
            raise AssertionError(
                f"the function raises {type(error).__name__}: {error}, but value_and_grad returns{when}"
            ) from None
        if not first:
            return None
        event(f"outcome: raises {type(error).__name__}")
        assume(False)
    try:
        value, _ = cpsgrad.value_and_grad(f, argnums=program.argnums)(*program.arguments)
    except UnsupportedError as error:
        if mutations.refused_write(program.constructs, error):
            event("outcome: refused (a write others would see)")
            assume(False)
        if not _refused_at_a_bare_call(program, error):
            raise
        event("outcome: refused (a bare call)")
        assume(False)
        raise  # not reached: assume raises
    if not _same(value, expected):
        raise AssertionError(f"value_and_grad returns {value!r} but the function returns {expected!r}{when}")
    try:
        result = check_grad(f, *program.arguments, argnums=program.argnums)
    except AssertionError as error:
        if not first:
            raise AssertionError(f"{error}{when}") from error
        raise
    zero = all(np.all(np.asarray(a) == 0.0) for a in result.analytic)
    if first and zero and (result.skipped or all(np.all(np.asarray(n) == 0.0) for n in result.numeric)):
        event("outcome: rejected, zero gradient")
        assume(False)
    if first:
        if result.skipped:
            event(f"outcome: skipped ({result.reason.split(':')[0].split(' near ')[0]})")
        else:
            event("outcome: checked")
    return result


def _refused_at_a_bare_call(program: Program, error: UnsupportedError) -> bool:
    """Whether `error` is cpsgrad's refusal of a call made for its effect, located at a bare call
    statement of `program` (generated by discarded_results)."""
    location = error.location
    if location is None or "bare-call" not in program.constructs or "for its effect" not in error.construct:
        return False
    if os.path.abspath(location.filename) != os.path.abspath(program._path or ""):
        return False
    lines = program.source.splitlines()
    if not 1 <= location.line <= len(lines):
        return False
    return re.fullmatch(r"\s*[hr]\d+\(.*\)", lines[location.line - 1]) is not None


# --- the soak ----------------------------------------------------------------------------------


def _soak_chunk(job: tuple[int, int, dict[str, Any]]) -> dict[str, Any]:
    """Run `count` programs with hypothesis seeded by `seed`; report counts and failures."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    count, chunk_seed, options = job
    options = dict(options)
    shrink = options.pop("shrink", True)
    counts: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    failing: dict[str, str] = {}

    @seed(chunk_seed)
    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=True,
        print_blob=False,
        phases=list(Phase) if shrink else [p for p in Phase if p is not Phase.shrink],
    )
    @given(programs(**options))
    def run(program: Program) -> None:
        with program:
            counts["drawn"] += 1
            try:
                result = check_program(program)
            except BaseException as error:
                if type(error).__name__ == "UnsatisfiedAssumption":
                    counts["rejected"] += 1
                else:  # the last failing program of each kind, in case hypothesis' report loses it
                    failing[type(error).__name__] = repr(program)
                raise
            counts["checked" if result is not None and not result.skipped else "skipped"] += 1
            for construct in program.constructs:
                counts[construct] += 1

    import io
    from contextlib import redirect_stdout

    output = io.StringIO()
    try:
        with redirect_stdout(output):
            run()
    except BaseException as error:  # the shrunk failure(s), with their programs
        last = "".join(f"\nthe last program failing with {kind}:\n{text}\n" for kind, text in failing.items())
        failures.append(f"seed {chunk_seed}:\n{output.getvalue()}\n{_describe(error)}\n{last}")
    return {"counts": counts, "failures": failures}


def _describe(error: BaseException) -> str:
    """An exception with hypothesis' notes (the falsifying example), and those of the
    exceptions in a group (several distinct failures)."""
    lines = [f"{type(error).__name__}: {error}", *getattr(error, "__notes__", [])]
    for inner in getattr(error, "exceptions", ()):
        lines += ["", _describe(inner)]
    return "\n".join(lines)


def soak(
    total: int, seed: int = 0, jobs: int = 1, chunk: int = 250, **options: Any
) -> tuple[collections.Counter[str], list[str]]:
    """Run `total` valid programs (in chunks of `chunk`, each its own hypothesis run seeded
    seed, seed + 1, ...), in `jobs` processes; return counts and failure reports."""
    sizes = [chunk] * (total // chunk) + ([total % chunk] if total % chunk else [])
    work = [(size, seed + k, options) for k, size in enumerate(sizes)]
    counts: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    started = time.monotonic()

    def collect(outcome: dict[str, Any]) -> None:
        counts.update(outcome["counts"])
        failures.extend(outcome["failures"])
        for failure in outcome["failures"]:
            print(failure, flush=True)
        rate = counts["drawn"] / (time.monotonic() - started)
        print(
            f"[{time.monotonic() - started:7.1f}s] {counts['checked']} checked, "
            f"{counts['skipped']} skipped, {counts['rejected']} rejected, "
            f"{len(failures)} failing runs ({rate:.1f} programs/s)",
            flush=True,
        )

    run_chunks(_soak_chunk, work, jobs, collect)
    return counts, failures


_ALIASING_SWITCHES = (
    "repeated_arguments",
    "views",
    "aliased_containers",
    "discarded_results",
    "captured_arguments",
    "rebinding",
)


def switch_sets() -> dict[str, dict[str, bool]]:
    """The switch sets the soak's command line draws with, by its flag: the defaults (""),
    `--writes`, and each `--no-X` alone."""
    sets: dict[str, dict[str, bool]] = {"": {}, "--writes": {"writes": True}}
    for switch in ("numpy", "closures", *_ALIASING_SWITCHES, *forms.SWITCHES):
        sets[f"--no-{switch.replace('_', '-')}"] = {switch: False}
    return sets


def draw_texts(count: int, seed: int, **options: Any) -> list[str]:
    """The texts (`repr`) of the first `count` programs hypothesis draws from `programs(**options)`
    seeded `seed`, as `--show` prints them: a function of (options, seed, hypothesis's version)
    alone, in any process (tests/test_reproducible.py)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded

    texts: list[str] = []

    @seeded(seed)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        derandomize=False,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(programs(**options))
    def collect(program: Program) -> None:
        texts.append(repr(program))

    collect()
    return texts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cpsgrad.testing.programs",
        description="Generate random programs and check cpsgrad's values and gradients.",
    )
    parser.add_argument("--soak", type=int, default=1000, help="programs to check (valid ones)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first chunk")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--chunk", type=int, default=250, help="programs per hypothesis run")
    parser.add_argument("--no-numpy", action="store_true", help="no vector argument")
    parser.add_argument("--no-closures", action="store_true", help="no lambdas or nested defs")
    for switch in _ALIASING_SWITCHES + forms.SWITCHES:
        parser.add_argument(f"--no-{switch.replace('_', '-')}", action="store_true", help=f"{switch}=False")
    parser.add_argument("--writes", action="store_true", help="a mutation soak: writes in place in most programs")
    parser.add_argument("--no-shrink", action="store_true", help="report failures unshrunk")
    parser.add_argument("--show", type=int, metavar="K", help="print K programs and exit")
    arguments = parser.parse_args(argv)
    options = {"numpy": not arguments.no_numpy, "closures": not arguments.no_closures, "writes": arguments.writes}
    options.update({switch: not getattr(arguments, f"no_{switch}") for switch in _ALIASING_SWITCHES + forms.SWITCHES})
    soak_options = {**options, "shrink": not arguments.no_shrink}
    if arguments.show:
        print(*draw_texts(arguments.show, arguments.seed, **options), sep="")
        return 0
    started = time.monotonic()
    counts, failures = soak(arguments.soak, arguments.seed, arguments.jobs, arguments.chunk, **soak_options)
    elapsed = time.monotonic() - started
    print(f"\n{counts['drawn']} programs drawn in {elapsed:.0f}s ({counts['drawn'] / elapsed:.1f}/s)")
    print("outcomes:", {k: counts[k] for k in ("checked", "skipped", "rejected")})
    shown = sorted((k, v) for k, v in counts.items() if k not in ("drawn", "checked", "skipped", "rejected"))
    print("constructs (programs using each):", *(f"  {construct:24} {number}" for construct, number in shown), sep="\n")
    if failures:
        print(f"\n{len(failures)} failing runs; see above")
        return 1
    return 0


def _cleanup() -> None:
    if _directory is not None:
        shutil.rmtree(_directory.name, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        _cleanup()
