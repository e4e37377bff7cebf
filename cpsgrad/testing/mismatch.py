"""check_grad's failure message: each argument's analytic and numeric derivatives and their errors
(for an array, its worst elements)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from cpsgrad.testing.describing import _describe_call, _parameter_names
from cpsgrad.testing.finite_differences import _analytic_at, _Coordinate, _Estimate

# Mismatched elements of one array argument shown in the failure message.
_SHOWN_ELEMENTS = 5


def _mismatch_message(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    argnums: Any,
    positions: tuple[int, ...],
    derivatives: dict[int, Any],
    estimates: dict[_Coordinate, _Estimate],
    failed: set[_Coordinate],
    skips: list[str],
    rtol: float,
    atol: float,
) -> str:
    names = _parameter_names(f, len(args))
    lines = [f"gradient of {_describe_call(f, args, argnums)} disagrees with finite differences:"]

    def line(coordinate: _Coordinate, estimate: _Estimate, indent: str) -> str:
        derivative = _analytic_at(derivatives, coordinate)
        error = abs(derivative - estimate.derivative)
        relative = error / abs(estimate.derivative) if estimate.derivative else math.inf
        bad = "  <-- mismatch" if coordinate in failed else ""
        return (
            f"{indent}d/d{coordinate.label}: analytic {derivative!r}, numeric "
            f"{estimate.derivative!r}, abs error {error:.3g}, rel error {relative:.3g}{bad}"
        )

    for position in positions:
        mine = [(c, e) for c, e in estimates.items() if c.position == position]
        if not isinstance(args[position], np.ndarray):
            lines.extend(line(coordinate, estimate, "  ") for coordinate, estimate in mine)
            continue
        name, size = names[position], args[position].size
        wrong = [(c, e) for c, e in mine if c in failed]
        if not wrong:
            lines.append(
                f"  d/d{name}: {len(mine)} of {size} elements checked, all within tolerance"
            )
            continue

        def badness(item: tuple[_Coordinate, _Estimate]) -> float:
            coordinate, estimate = item
            error = abs(_analytic_at(derivatives, coordinate) - estimate.derivative)
            return error / estimate.tolerance(rtol, atol) if error == error else math.inf

        wrong.sort(key=badness, reverse=True)
        lines.append(
            f"  d/d{name}: {len(wrong)} of {len(mine)} elements checked mismatch "
            f"({size} in all); the worst:"
        )
        lines.extend(line(c, e, "    ") for c, e in wrong[:_SHOWN_ELEMENTS])
        if len(wrong) > _SHOWN_ELEMENTS:
            lines.append(f"    ... and {len(wrong) - _SHOWN_ELEMENTS} more")
    if skips:
        lines.append(f"  skipped {len(skips)} (finite differences unreliable), first: {skips[0]}")
    lines.append(f"  tolerance: atol={atol:g} + rtol={rtol:g} * |numeric| + rounding noise")
    return "\n".join(lines)
