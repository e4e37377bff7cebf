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
    namespace = dict(vars(module))
    compiled = {}
    for name, value in vars(module).items():
        if isinstance(value, FunctionType) and value.__module__ == module.__name__:
            rebuilt = FunctionType(value.__code__, namespace, name, value.__defaults__, value.__closure__)
            rebuilt.__qualname__ = value.__qualname__
            rebuilt.__module__ = value.__module__
            compiled[name] = jit(rebuilt)
    namespace.update(compiled)
    return SimpleNamespace(**compiled)
