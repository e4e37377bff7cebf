"""check_grad's finite differences: the coordinates perturbed, the step, the Richardson-extrapolated
central estimate and the one-sided ones that reveal a kink or jump (see `cpsgrad.testing.check`)."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from cpsgrad.testing.describing import _parameter_names
from cpsgrad.testing.tracing import (
    Executed,
    _first_difference,
    _outside_libraries,
    _real,
    _run_traced,
)

RELATIVE_STEP = 1e-4
"""The default step is RELATIVE_STEP * max(|x|, MIN_STEP_SCALE), rounded down to a power of two."""

MIN_STEP_SCALE = 1.0

# Rounding error assumed for one evaluation of f, relative to |f|; the one-sided formula
# amplifies it by at most 73 / h, and that much is added to every tolerance.
_EVALUATION_ERROR = 64 * sys.float_info.epsilon
_NOISE_GAIN = 80.0

# The seed of the subset of elements checked.
_SUBSET_SEED = 0


class _Skip(Exception):
    """Finite differences cannot be trusted at this input; the message says why."""


@dataclass(frozen=True)
class _Coordinate:
    """One scalar argument, or one element of an array argument, to perturb."""

    position: int
    index: tuple[int, ...] | None  # None for a scalar argument
    label: str  # "x", "W[1, 2]"


def _coordinates(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    positions: tuple[int, ...],
    max_elements: int | None,
) -> list[_Coordinate]:
    names = _parameter_names(f, len(args))
    coordinates = []
    for position in positions:
        argument, name = args[position], names[position]
        if not isinstance(argument, np.ndarray):
            coordinates.append(_Coordinate(position, None, name))
            continue
        for index in _checked_indices(argument.shape, max_elements):
            label = f"{name}[{', '.join(map(str, index))}]" if index else name
            coordinates.append(_Coordinate(position, index, label))
    return coordinates


def _checked_indices(shape: tuple[int, ...], max_elements: int | None) -> list[tuple[int, ...]]:
    """Every index of an array of this shape, or a fixed random sample of max_elements of them."""
    size = math.prod(shape)
    if max_elements is None or size <= max_elements:
        flat: Any = range(size)
    else:
        flat = np.sort(
            np.random.default_rng(_SUBSET_SEED).choice(size, max_elements, replace=False)
        )
    return [tuple(int(i) for i in np.unravel_index(int(k), shape)) for k in flat]


def _analytic_at(derivatives: dict[int, Any], coordinate: _Coordinate) -> float:
    derivative = derivatives[coordinate.position]
    return float(derivative if coordinate.index is None else derivative[coordinate.index])


def _numeric(
    args: tuple[Any, ...], positions: tuple[int, ...], estimates: dict[_Coordinate, _Estimate]
) -> tuple[Any, ...]:
    numeric: dict[int, Any] = {
        p: np.full(args[p].shape, np.nan) for p in positions if isinstance(args[p], np.ndarray)
    }
    for coordinate, estimate in estimates.items():
        if coordinate.index is None:
            numeric[coordinate.position] = estimate.derivative
        else:
            numeric[coordinate.position][coordinate.index] = estimate.derivative
    return tuple(numeric[p] for p in positions)


@dataclass(frozen=True)
class _Estimate:
    """Finite-difference estimates of one partial derivative."""

    derivative: float  # sixth-order central
    forward: float  # fourth-order one-sided, from the right
    backward: float  # fourth-order one-sided, from the left
    noise: float  # bound on their rounding error

    def tolerance(self, rtol: float, atol: float) -> float:
        return atol + rtol * abs(self.derivative) + self.noise


def _shifted(
    args: tuple[Any, ...], coordinate: _Coordinate, offset: float
) -> tuple[list[Any], float]:
    """The arguments with one scalar or element moved by `offset`, and where it landed."""
    shifted = list(args)
    argument = args[coordinate.position]
    if coordinate.index is None:
        shifted[coordinate.position] = point = argument + offset
        return shifted, float(point)
    moved = argument.copy()
    moved[coordinate.index] += offset
    shifted[coordinate.position] = moved
    return shifted, float(moved[coordinate.index])


def _estimate(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    coordinate: _Coordinate,
    value: float,
    executed: Executed,
    step: float | None,
    rtol: float,
    atol: float,
) -> _Estimate:
    """Estimate d f / d coordinate; raise _Skip where finite differences are unreliable."""
    argument = args[coordinate.position]
    x = float(argument if coordinate.index is None else argument[coordinate.index])
    h = _power_of_two_below(
        step if step is not None else RELATIVE_STEP * max(abs(x), MIN_STEP_SCALE)
    )
    name, mine = coordinate.label, _outside_libraries(executed)  # numpy's and scipy's caches branch
    points: dict[float, float] = {}
    values: dict[float, float] = {}
    for offset in (h, -h, h / 2, -h / 2, h / 4, -h / 4, h / 8, -h / 8):
        shifted, point = _shifted(args, coordinate, offset)
        where = f"{name}={point!r} (step {offset:+.3g} from {x!r})"
        try:
            probe, probe_executed = _run_traced(f, shifted)
        except Exception as error:
            raise _Skip(f"f raises {type(error).__name__}: {error} at {where}") from None
        if (theirs := _outside_libraries(probe_executed)) != mine:
            raise _Skip(f"branch change: {_first_difference(mine, theirs)} at {where}")
        probe = _real(f, probe)
        if not math.isfinite(probe):
            raise _Skip(f"f returns {probe!r} at {where}")
        points[offset], values[offset] = point, float(probe)

    def central(offset: float) -> float:
        return (values[offset] - values[-offset]) / (points[offset] - points[-offset])

    def one_sided(offset: float) -> float:
        return (values[offset] - value) / (points[offset] - x)

    def fourth_order(offset: float) -> float:
        return (
            64 * one_sided(offset / 8)
            - 56 * one_sided(offset / 4)
            + 14 * one_sided(offset / 2)
            - one_sided(offset)
        ) / 21

    estimate = _Estimate(
        derivative=(64 * central(h / 4) - 20 * central(h / 2) + central(h)) / 45,
        forward=fourth_order(h),
        backward=fourth_order(-h),
        noise=_NOISE_GAIN * _EVALUATION_ERROR * max(map(abs, [value, *values.values()])) / h,
    )
    scale = max(abs(estimate.derivative), abs(estimate.forward), abs(estimate.backward))
    # A quarter of the tolerance: a kink on one side leaves the other side's estimate exact, so
    # estimates this close put the central one within tolerance/4 of the true derivative.
    allowed = (atol + rtol * scale) / 4 + estimate.noise
    spread = max(estimate.derivative, estimate.forward, estimate.backward) - min(
        estimate.derivative, estimate.forward, estimate.backward
    )
    if not spread <= allowed:
        raise _Skip(
            f"kink or jump near {name}={x!r}: one-sided derivatives {estimate.backward:.10g} "
            f"(left) and {estimate.forward:.10g} (right), central {estimate.derivative:.10g}, "
            f"step {h:.3g}"
        )
    return estimate


def _power_of_two_below(step: float) -> float:
    if not (step > 0 and math.isfinite(step)):
        raise ValueError(f"check_grad: step must be positive and finite, not {step!r}")
    return math.ldexp(1.0, math.frexp(step)[1] - 1)
