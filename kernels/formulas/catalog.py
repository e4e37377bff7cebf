"""The catalog of elementwise ops: one entry an op, read by the CPU and the CUDA kernels.

A ``Unary`` entry names the op, its value and adjoint formulas (functions of
``cpsgrad.kernels.formulas.elementwise``), whether the backward reads the input or the
output, and how the forward's parameters become the two scalars ``p, q`` the formulas take. A
``Binary`` entry holds the value and adjoints formulas of ``formulas.binary`` and the numpy ufunc
the CPU forward calls. Each entry's ``code`` is its position in its tuple: the CUDA kernels take
it as a launch argument and select the formula by it. Adding an elementwise op is one entry here
(plus its formulas); both devices' dispatch catalogs, kernels and tests pick it up.

The formula modules import only ``math``, so the dispatch catalogs, which must not import numba,
can read this one.
"""

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from cpsgrad.kernels.formulas import binary as b
from cpsgrad.kernels.formulas import elementwise as e


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


def _numbered(*entries):
    return tuple(dataclasses.replace(entry, code=code) for code, entry in enumerate(entries))


UNARY: tuple[Unary, ...] = _numbered(
    Unary("neg", e.neg, e.neg_adjoint),
    Unary("abs", e.abs_value, e.abs_adjoint),
    Unary("exp", e.exp, e.exp_adjoint, saves_output=True),
    Unary("log", e.log, e.log_adjoint),
    Unary("log1p", e.log1p, e.log1p_adjoint),
    Unary("sqrt", e.sqrt, e.sqrt_adjoint, saves_output=True),
    Unary("square", e.square, e.square_adjoint),
    Unary("sin", e.sin, e.sin_adjoint),
    Unary("cos", e.cos, e.cos_adjoint),
    Unary("tanh", e.tanh, e.tanh_adjoint, saves_output=True),
    Unary("sigmoid", e.sigmoid, e.sigmoid_adjoint, saves_output=True),
    Unary("relu", e.relu, e.relu_adjoint),
    Unary("leaky_relu", e.leaky_relu, e.leaky_relu_adjoint, params=slope_param),
    Unary("hardtanh", e.clip, e.clip_adjoint, params=unit_bounds),
    Unary("clip", e.clip, e.clip_adjoint, params=bounds_params),
    Unary("softplus", e.softplus, e.softplus_adjoint),
)

BINARY: tuple[Binary, ...] = _numbered(
    Binary("add", "add", b.add, b.add_adjoints, fused_cpu_backward=False),
    Binary("sub", "subtract", b.sub, b.sub_adjoints, fused_cpu_backward=False),
    Binary("mul", "multiply", b.mul, b.mul_adjoints, fused_cpu_backward=False),
    Binary("div", "divide", b.div, b.div_adjoints),
    Binary("pow", "power", b.pow_value, b.pow_adjoints),
    Binary("maximum", "maximum", b.maximum, b.chosen_adjoints),
    Binary("minimum", "minimum", b.minimum, b.chosen_adjoints),
)

UNARY_BY_NAME = {entry.name: entry for entry in UNARY}
BINARY_BY_NAME = {entry.name: entry for entry in BINARY}
