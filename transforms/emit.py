"""Emit: compile the generated derivative program in a namespace that reads the user's names live."""

from __future__ import annotations

import builtins
import linecache
import types

from cpsgrad.transforms.resolve import Resolver

from cpsgrad import runtime


class GeneratedNamespace(dict):
    """Globals of a generated program: its own helpers, then the user's closure cells and
    globals, read at each access (so a rebound module constant is seen), then builtins."""

    def __init__(self, own: dict, resolver: Resolver):
        super().__init__(own)
        self["__builtins__"] = builtins.__dict__
        self._resolver = resolver

    def __missing__(self, name: str):
        resolver = self._resolver
        if name in resolver.closure:
            try:
                return resolver.closure[name].cell_contents
            except ValueError:
                raise KeyError(name) from None
        return resolver.function.__globals__[name]


def compile_program(text: str, filename: str, entry: str, own: dict, resolver: Resolver) -> types.FunctionType:
    """Compile `text` (shown by `cpsgrad show` exactly) and return its function `entry`."""
    lines = text.splitlines(keepends=True)
    linecache.cache[filename] = (len(text), None, lines, filename)
    namespace = GeneratedNamespace({"cpsgrad_runtime": runtime, **own}, resolver)
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - the program cpsgrad generated
    return namespace[entry]
