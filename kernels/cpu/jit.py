"""The numba decorators every CPU kernel uses, so compile options live in one place.

``serial`` compiles a loop (cached on disk, nogil, numpy's error model: x / 0 gives inf or nan
instead of raising). ``compile_formulas`` compiles a module of shared scalar formulas
(``cpsgrad.kernels.formulas``) with ``inline="always"``: numba inlines their IR into the calling
loop before LLVM runs, so a loop calling a formula vectorises as the hand-written loop did.

numba's cache only watches the file of the cached function, not the files of what it inlines, so
``serial`` keys its cache entries also on a digest of the formula sources: editing a formula
recompiles the loops that inline it instead of loading stale machine code. The key leaves out
the hash numba takes of a closure's cells (a compiled formula pickles with a per-process id,
so no closure would ever hit the cache); ``serial`` callers that build loops in a factory give
each loop its own ``__qualname__``, which names its cache file, instead.
"""

import hashlib
import pathlib
from types import ModuleType, SimpleNamespace

from numba import njit
from numba.core.caching import FunctionCache

from cpsgrad.kernels.formulas import compile_with

_FORMULAS = pathlib.Path(__file__).resolve().parent.parent / "formulas"


def _formula_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(_FORMULAS.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


FORMULA_DIGEST = _formula_digest()


class _FormulaAwareCache(FunctionCache):
    """numba's on-disk cache of one function, its index key extended by ``FORMULA_DIGEST``."""

    def _index_key(self, sig, codegen):
        code = hashlib.sha256(self._py_func.__code__.co_code).hexdigest()
        return (sig, codegen.magic_tuple(), (code, self._py_func.__qualname__, FORMULA_DIGEST))


def serial(function):
    """A single-threaded, cached kernel: elementwise and row-wise loops, cheap on small arrays."""
    dispatcher = njit(nogil=True, error_model="numpy")(function)
    dispatcher._cache = _FormulaAwareCache(function)
    return dispatcher


inline = njit(inline="always", error_model="numpy")
"""A scalar helper inlined into its callers at numba's IR level."""


def compile_formulas(module: ModuleType) -> SimpleNamespace:
    """``module``'s formulas compiled to be inlined into CPU loops (see ``formulas.compile_with``)."""
    return compile_with(module, inline)
