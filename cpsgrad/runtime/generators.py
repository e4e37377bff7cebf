"""Generators consumed by derivative programs (transforms/generators.py, generator_folds.py)."""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable

from cpsgrad.runtime.closures import Definition

# transforms/generator_folds.fold_definition, installed when it is imported (this run-time module
# never imports the code that writes programs)
_FOLD_DEFINITION: list[Callable] = []


def install(fold_definition: Callable) -> None:
    _FOLD_DEFINITION[:] = [fold_definition]


def generator_fold(definition: Definition | None, generator: types.FunctionType) -> types.FunctionType:
    """The fold of `generator` (the function its consumer's loop calls): the generator's own cells
    for the variables it reads from an enclosing function (so it reads them live, as the generator
    would), its defaults as they are now. `definition` is the fold's, or None for a generator
    defined in the transformed function (a new function at each run: its fold is found from it)."""
    if definition is None:
        if not (isinstance(generator, types.FunctionType) and generator.__code__.co_flags & inspect.CO_GENERATOR):
            raise TypeError(
                f"cpsgrad: {generator!r} is iterated as the generator function its program was made for, but it is "
                "not one (a variable holding a generator function was rebound)"
            )
        definition = _FOLD_DEFINITION[0](generator, None)
    code = definition.code
    cells = None
    if code.co_freevars:
        held = dict(zip(generator.__code__.co_freevars, generator.__closure__ or (), strict=True))
        cells = tuple(held[name] for name in code.co_freevars)
    fold = types.FunctionType(code, definition.globals, definition.name, generator.__defaults__, cells)
    if definition.keyword_defaults:
        keywords = generator.__kwdefaults__ or {}
        fold.__kwdefaults__ = {name: keywords[name] for name in definition.keyword_defaults}
    fold.__qualname__ = definition.qualname
    return fold
