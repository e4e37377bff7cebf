"""Ops whose kernels for every device live in one module: ``kernels/standalone/<op>.py``.

An op that is not elementwise (a recursion, a scan) usually needs scalar formulas shared by both
devices, a CPU loop and a CUDA kernel. Here they sit in one module named after the op, which
defines, beside its formulas (plain Python, compiled for the CPU with ``numba.njit`` and for CUDA
with ``cuda.jit(device=True)``):

* ``cpu_forward(*inputs, **params) -> (output, residuals)`` and ``cpu_backward(adjoint,
  residuals)``: the table's calling convention (``cpsgrad.kernels.table``);
* ``cuda_forward`` and ``cuda_backward`` likewise, taking and returning device arrays;
* ``cuda_kernels()``: builds the module's CUDA kernels on first use (recording them for the PTX
  check, ``cpsgrad.kernels.cuda.ptx``) and returns them, so that importing the module for the CPU
  does not import ``numba.cuda`` (seconds).

The table registers every module of this package for both devices by its file name, without
importing it (``names``); its first dispatch imports it. Only the first argument of such an op
is an array the table inspects (its device and dtype); integer arrays (indices, lengths) are
further arguments the module checks itself.
"""

import pathlib
import pkgutil

__all__ = ["names"]


def names() -> list[str]:
    """The op modules of this package, sorted (read from the directory: nothing is imported)."""
    directory = str(pathlib.Path(__file__).resolve().parent)
    return sorted(module.name for module in pkgutil.iter_modules([directory]) if not module.name.startswith("_"))
