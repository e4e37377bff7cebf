"""Emit: compile the generated derivative program so that it reads the user's names live.

The program is wrapped in `<name>__program(<helpers>, <the function's free variables>)`. The
derivative function it defines is rebuilt with the user's own globals dict (so a rebound module
constant is seen, at a plain dict's speed) and with closure cells: new cells holding the rule
helpers, and the user function's own cells for its free variables (so they too are read live).
"""

from __future__ import annotations

import linecache
import types
import weakref

import libcst as cst

from cpsgrad import runtime
from cpsgrad.transforms.adjoint import output

RUNTIME_NAME = "cpsgrad_runtime"


def free_variables(function: types.FunctionType, captured: tuple[str, ...]) -> tuple[str, ...]:
    """The free variables the program reads through the function's own cells: all of them, but
    those a nested function's program takes as parameters (`captured`, transforms/closures.py)."""
    return tuple(n for n in function.__code__.co_freevars if n not in captured)


def wrapper_parameters(free: tuple[str, ...], helpers: dict) -> list[str]:
    """A helper the function also reads as a free variable (the same object: a rule's global
    is renamed where the user's name holds something else) is its cell, once."""
    return [RUNTIME_NAME, *sorted(n for n in helpers if n != RUNTIME_NAME and n not in free), *free]


def render(header: list, wrapper: cst.FunctionDef, provenance) -> tuple[str, tuple]:
    """A program's whole text, rendered once: the `header` comment lines, then the `wrapper`
    function (the derivative program inside), with the origin of each of its lines
    (transforms/adjoint/output.py, `render`)."""
    return output.render(cst.Module([wrapper], header=header), provenance)


def compile_module(text: str, filename: str) -> types.CodeType:
    """The code of the module `text` (a program's whole text), as `compile_program` runs it."""
    return compile(text, filename, "exec")


def compile_program(
    text: str, filename: str, wrapper: str, entry: str, function: types.FunctionType, helpers: dict,
    free: tuple[str, ...], module: types.CodeType | None = None,
) -> types.FunctionType:
    """Compile `text` (exactly what `cpsgrad show` prints) and return its function `entry`
    (`module`: its code already compiled, `compile_module(text, filename)`, as a program read
    from the disk cache brings it)."""
    lines = text.splitlines(keepends=True)
    kept = linecache.cache[filename] = (len(text), None, lines, filename)
    scratch: dict = {}
    exec(module or compile_module(text, filename), scratch)  # noqa: S102 - the program cpsgrad generated
    names = wrapper_parameters(free, helpers)
    template = scratch[wrapper](*([None] * len(names)))
    code = template.__code__
    own = {RUNTIME_NAME: runtime, **helpers}
    user_cells = dict(zip(function.__code__.co_freevars, function.__closure__ or (), strict=True))
    cells = tuple(user_cells[n] if n in user_cells else types.CellType(own[n]) for n in code.co_freevars)
    # the text stays in linecache (tracebacks, inspect) while the program lives
    weakref.finalize(code, _forget_lines, filename, kept)
    return types.FunctionType(code, function.__globals__, entry, None, cells)


def _forget_lines(filename: str, kept: tuple) -> None:
    if linecache.cache.get(filename) is kept:  # not a later program's of the same name
        del linecache.cache[filename]
