"""The kinds of catalog entry, and how an op's parameters become the formulas' two scalars.

``elementwise.UNARY`` and ``binary.BINARY`` list their module's ops as these entries, beside the
formulas; ``catalog`` numbers them. This module imports nothing of the formulas, so both formula
modules can import it.
"""

from collections.abc import Callable
from dataclasses import dataclass, field


def no_params() -> tuple[float, float]:
    return 0.0, 0.0


def slope_param(negative_slope=0.01) -> tuple[float, float]:
    return float(negative_slope), 0.0


def bounds_params(low, high) -> tuple[float, float]:
    return float(low), float(high)


def unit_bounds() -> tuple[float, float]:
    return -1.0, 1.0


@dataclass(frozen=True)
class Unary:
    """A unary elementwise op: ``value(x, p, q)`` and ``adjoint(g, saved, p, q)``."""

    name: str
    value: Callable
    adjoint: Callable
    saves_output: bool = False
    params: Callable[..., tuple[float, float]] = no_params
    code: int = field(default=-1, compare=False)


@dataclass(frozen=True)
class Binary:
    """A broadcasting binary op: ``value(a, b)`` (the CUDA forward; the CPU calls numpy's
    ``ufunc``) and ``adjoints(g, a, b, y) -> (grad_a, grad_b)``. ``fused_cpu_backward`` is
    False for the ops whose CPU backward is plain numpy on the adjoint (add, sub, mul: no pass
    to fuse); every other op's CPU backward is one fused loop over its adjoints formula."""

    name: str
    ufunc: str
    value: Callable
    adjoints: Callable
    fused_cpu_backward: bool = True
    code: int = field(default=-1, compare=False)
