"""The constructs of the starred, exception and everyday waves for the program generator
(cpsgrad/testing/generator/).

Each family is a switch of `programs(...)` and a module of its own: `starred` (starred_forms.py:
`*args`/`**kwargs` helpers, `h(*xs)`, `h(a, *xs, **kw)`, starred targets and displays),
`exceptions` (exception_forms.py: `try`/`except`/`else`/`finally` with data-dependent raises,
`with` over `contextlib.suppress`, `np.errstate` and a module-level manager class), `walrus`,
`sets` and `effects` (everyday_forms.py: `:=`, sets of ints and strings, `print` and logging
calls for their effect), `classes` (class_forms.py: module-level plain classes with `__init__`
and methods, their attributes written and changed in place, bound methods as values), `rules`
(rule_forms.py: calls of cpsgrad's numpy/scipy rules, in expressions and as statements; the
catalogue is rule_calls.py), `subclasses` (subclass_forms.py: `x op= y` on list and dict
subclasses, a plain list's `+=` of a tuple, user methods named `get` and `pop`), `generators`
(generator_forms.py: a generator defined in the function, reading its variables, consumed by
`sum`, `next`, a generator expression, a list comprehension or a loop). The
generator asks this module for the statement kinds that are on (`kinds`, generator/statements.py),
hands it a drawn kind (`statement`) and the module-level helpers (`helpers`, generator/functions.py),
and puts `Forms.imports` and `Forms.prelude` (definitions the statements need) at the top of the
module.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cpsgrad.testing import (
    class_forms,
    everyday_forms,
    exception_forms,
    generator_forms,
    rule_forms,
    starred_forms,
    subclass_forms,
)

SWITCHES = ("starred", "exceptions", "walrus", "sets", "effects", "classes", "rules", "subclasses", "generators")


@dataclass
class Forms:
    """The switches of one drawn module, and what its statements need at module level."""

    switches: dict[str, bool]
    imports: list[str] = field(default_factory=list)  # `import contextlib`, ...
    prelude: dict[str, list[str]] = field(default_factory=dict)  # name -> its module-level definition
    star_helpers: list[starred_forms.StarHelper] = field(default_factory=list)

    def __post_init__(self) -> None:
        unknown = set(self.switches) - set(SWITCHES)
        if unknown:
            raise TypeError(f"programs() got unexpected keyword arguments {sorted(unknown)}")
        self.switches = {name: self.switches.get(name, True) for name in SWITCHES}

    def on(self, switch: str) -> bool:
        return self.switches[switch]

    def need(self, module: str) -> None:
        """`import module` at the top of the program."""
        if f"import {module}" not in self.imports:
            self.imports.append(f"import {module}")

    @staticmethod
    def room(builder) -> bool:
        """Whether the statement budget leaves room for a compound statement (each of its blocks
        holds a statement even past the budget, so compound ones past it would nest without end)."""
        return builder.function.statements > 0

    def define(self, name: str, lines: list[str]) -> str:
        """`lines` (defining `name`) at module level, once; returns `name`."""
        self.prelude.setdefault(name, lines)
        return name


FAMILIES = (starred_forms, exception_forms, everyday_forms, class_forms, rule_forms, subclass_forms, generator_forms)
KINDS = tuple(kind for module in FAMILIES for kind in module.KINDS)


def kinds(builder) -> list[str]:
    """The statement kinds of these families available where `builder` draws now."""
    return [kind for module in FAMILIES for kind in module.kinds(builder)]


def statement(builder, indent: str, kind: str, variable) -> list[str]:
    """The lines of one statement of `kind` (one of KINDS); `variable` is generator.grammar.Variable."""
    for module in FAMILIES:
        if kind in module.KINDS:
            return module.statement(builder, indent, kind, variable)
    raise ValueError(kind)


def helpers(builder, variable) -> list[list[str]]:
    """Module-level helpers these families add after the generated ones (a `*rest` helper)."""
    return starred_forms.helpers(builder, variable)
