"""`Builder`: draws one module. Every choice is a hypothesis draw, so programs shrink to simpler
ones (the first alternative of each choice is the simplest); a choice among options is drawn as
its index (`soaking.pick`), so that a seed draws the same programs in every process."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from cpsgrad.testing import forms
from cpsgrad.testing.generator.arrays import ArrayExpressions
from cpsgrad.testing.generator.expressions import Expressions
from cpsgrad.testing.generator.functions import Functions
from cpsgrad.testing.generator.grammar import Function, Helper
from cpsgrad.testing.generator.statements import Statements
from cpsgrad.testing.soaking import pick


class Builder(Expressions, ArrayExpressions, Statements, Functions):
    """Draws one module (`module()`): the switches of `programs(...)`, the state shared by its
    parts (what is in scope, the helpers drawn so far, the constructs used)."""

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
        **switches: bool,  # starred, exceptions, walrus, sets, effects, classes, rules, subclasses (forms.py)
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
        self.helpers: list[Helper] = []
        self.recursive: list[tuple[str, int]] = []  # (name, float parameters before depth)
        self.global_floats: list[str] = []  # module-level floats (rebinding=True)
        self.global_functions: dict[str, str] = {}  # module-level aliases: name -> FLOAT or VECTOR
        self.rebound: dict[str, str] = {}  # name -> what check_program rebinds it to
        self.names = itertools.count()
        self.function: Function | None = None

    def choose(self, options: list[Any]) -> Any:
        return pick(self.draw, options)  # not st.sampled_from (soaking.pick)

    def chance(self, probability_in_8: int = 4) -> bool:
        return self.draw(st.integers(0, 7)) < probability_in_8

    def fresh(self, prefix: str) -> str:
        return f"{prefix}{next(self.names)}"

    def note(self, *constructs: str) -> None:
        self.constructs.update(constructs)
