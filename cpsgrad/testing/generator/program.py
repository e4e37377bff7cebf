"""`Program`: one generated module and a call of its entry function, imported from a real file
(cpsgrad reads source code); its `repr` is the program as runnable text."""

from __future__ import annotations

import importlib.util
import itertools
import linecache
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np

from cpsgrad.testing.generator.grammar import ENTRY

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



def cleanup() -> None:
    """Remove the directory the programs' files were written to (at the end of a soak)."""
    if _directory is not None:
        shutil.rmtree(_directory.name, ignore_errors=True)
