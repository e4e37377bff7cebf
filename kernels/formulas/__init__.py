"""The scalar math of the kernels, written once as plain Python and compiled for each device.

Every module here holds plain functions of numbers (and, for window scans, of an array and an
index): no numba import, no decorators. ``cpsgrad.kernels.cpu.jit.compile_formulas`` compiles a
module's functions with ``numba.njit(inline="always")`` (so the CPU loops that call them are as
fast as hand-inlined code) and ``cpsgrad.kernels.cuda.jit.compile_formulas`` with
``numba.cuda.jit(device=True)``; a formula may call another formula of its module and each
device then calls its own compiled version. The loops (CPU ``range`` loops, CUDA grid-stride
loops and block reductions) stay per device.

``elementwise.UNARY`` and ``binary.BINARY`` list the elementwise ops (name, formula, derivative
formula) beside their formulas, and ``catalog`` numbers them (an op's code): both devices build
their kernels from the catalog. Importing this package imports no numba.
"""

from types import FunctionType, ModuleType, SimpleNamespace


def compile_with(module: ModuleType, jit) -> SimpleNamespace:
    """Every function defined in ``module`` compiled with the decorator ``jit``, by name.

    Each is rebuilt over one namespace in which the module's plain functions are replaced by
    their compiled versions, so a formula calling another formula of its module calls the
    compiled one (numba resolves a function's globals when it compiles it).
    """
    functions = [name for name, value in vars(module).items() if _defined_in(value, module)]
    return compile_each(module, dict.fromkeys(functions, jit))


def compile_each(module: ModuleType, decorators: dict, extra: dict | None = None) -> SimpleNamespace:
    """The functions of ``module`` named in ``decorators``, each compiled with its decorator, over
    one namespace (the module's, plus ``extra``) in which every one of them is its compiled
    version: a loop calling a formula calls the compiled formula. An op module of
    ``cpsgrad.kernels.standalone`` builds its CPU loops and CUDA kernels (``extra`` binding
    ``cuda``) this way, beside their formulas."""
    namespace = {**vars(module), **(extra or {})}
    compiled = {}
    for name, jit in decorators.items():
        value = vars(module)[name]
        rebuilt = FunctionType(value.__code__, namespace, name, value.__defaults__, value.__closure__)
        rebuilt.__qualname__ = value.__qualname__
        rebuilt.__module__ = value.__module__
        compiled[name] = jit(rebuilt)
    namespace.update(compiled)
    return SimpleNamespace(**compiled)


def _defined_in(value, module: ModuleType) -> bool:
    return isinstance(value, FunctionType) and value.__module__ == module.__name__
