"""The one numba-cuda decorator, the launch configuration, and the registry the PTX check reads.

Every kernel is written once with ``@kernel(signature)``: the signature template (``{f}`` stands
for the float dtype) is what ``tests/kernels/test_cuda_ptx.py`` compiles for sm_90 in float32 and
float64; at run time numba compiles lazily for the argument types it sees.
"""

from types import ModuleType, SimpleNamespace

from numba import config, cuda

from cpsgrad.kernels.formulas import compile_with

if config.ENABLE_CUDASIM:
    from cpsgrad.kernels.cuda.simulator import make_shared_arrays_atomic

    make_shared_arrays_atomic()

THREADS = 128
"""Threads per block of the elementwise launches: a power of two, at most ``MAX_THREADS``. Tests lower it
so that small inputs still run several blocks."""

ROW_THREADS = 128
"""Threads per block of the block-per-row kernels (reductions, softmax): a power of two."""

TILE = 16
"""Side of the matmul tiles (TILE x TILE threads a block); read once, when ``linalg`` is imported,
because shared arrays need a compile-time size."""

MAX_THREADS = 256
"""Size of the shared-memory buffer of the block reductions (compile-time constant)."""

MAX_BLOCKS = 4096
"""Grid size cap; kernels stride over the rest (grid-stride loops)."""

KERNELS: list[tuple[object, str]] = []
"""``(python function, signature template)`` for every kernel, in definition order."""

device = cuda.jit(device=True)
"""A device function, inlined into the kernels that call it."""


def compile_formulas(module: ModuleType) -> SimpleNamespace:
    """``module``'s shared formulas (``cpsgrad.kernels.formulas``) as device functions."""
    return compile_with(module, device)


def kernel(signature: str):
    """Compile the decorated function as a CUDA kernel and record ``signature`` for the PTX check."""

    def decorate(function):
        KERNELS.append((function, signature))
        return cuda.jit(function)

    return decorate


def launch(compiled, count: int, *args) -> None:
    """Run ``compiled`` with one thread an item for ``count`` items (grid-stride beyond the cap)."""
    if count > 0:
        blocks = min(MAX_BLOCKS, (count + THREADS - 1) // THREADS)
        compiled[blocks, THREADS](*args)


def launch_rows(compiled, rows: int, *args) -> None:
    """Run a block-per-row kernel over ``rows`` rows."""
    if rows > 0:
        compiled[min(MAX_BLOCKS, rows), ROW_THREADS](*args)
