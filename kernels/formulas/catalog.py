"""The catalog of elementwise ops: one entry an op, read by the CPU and the CUDA kernels.

The entries are declared beside their formulas: ``elementwise.UNARY`` (``Unary``: the op's name,
its value and adjoint formulas, whether the backward reads the input or the output, and how the
forward's parameters become the two scalars ``p, q`` the formulas take) and ``binary.BINARY``
(``Binary``: the value and adjoints formulas and the numpy ufunc the CPU forward calls); see
``entries``. Here each entry gets its ``code``, its position in its tuple: the CUDA kernels take
it as a launch argument and select the formula by it. Adding an elementwise op is its formulas
and one entry in its formula module; both devices' dispatch catalogs, kernels and tests pick it
up.

The formula modules import only ``math`` (and ``entries``), so the dispatch catalogs, which must
not import numba, can read this one.
"""

import dataclasses

from cpsgrad.kernels.formulas import binary, elementwise
from cpsgrad.kernels.formulas.entries import Binary, Unary

__all__ = ["BINARY", "BINARY_BY_NAME", "UNARY", "UNARY_BY_NAME", "Binary", "Unary"]


def _numbered(entries):
    return tuple(dataclasses.replace(entry, code=code) for code, entry in enumerate(entries))


UNARY: tuple[Unary, ...] = _numbered(elementwise.UNARY)
BINARY: tuple[Binary, ...] = _numbered(binary.BINARY)

UNARY_BY_NAME = {entry.name: entry for entry in UNARY}
BINARY_BY_NAME = {entry.name: entry for entry in BINARY}
