"""check_grad: compare a function's gradient with finite differences of the original function.

The numeric derivative is a Richardson-extrapolated central difference in float64 (sixth order,
steps h, h/2 and h/4), confirmed by fourth-order one-sided estimates from each side (steps h to
h/8). Points where finite differences cannot be trusted are skipped, never
reported as failures:

- a branch changes within the step: the bytecode instructions that ran (in the function and in
  every Python function it calls, traced with `sys.settrace`) differ between x and a probe point;
- a kink or jump without a branch (`abs`, a tie in `min`/`max`, `//`): the forward and backward
  one-sided estimates disagree with each other or with the central one;
- the function raises, or returns a non-finite value, at the input or at a probe point.
"""

from __future__ import annotations

import gc
import inspect
import math
import numbers
import reprlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Any

import cpsgrad

DEFAULT_RTOL = 1e-5
"""Relative tolerance of `check_grad`: |analytic - numeric| <= atol + rtol * |numeric|."""

DEFAULT_ATOL = 1e-7
"""Absolute tolerance of `check_grad`, for derivatives near zero."""

RELATIVE_STEP = 1e-4
"""The default step is RELATIVE_STEP * max(|x|, MIN_STEP_SCALE), rounded down to a power of two."""

MIN_STEP_SCALE = 1.0

# Rounding error assumed for one evaluation of f, relative to |f|; the one-sided formula
# amplifies it by at most 73 / h, and that much is added to every tolerance.
_EVALUATION_ERROR = 64 * sys.float_info.epsilon
_NOISE_GAIN = 80.0

Executed = list[tuple[CodeType, int]]


@dataclass(frozen=True)
class GradCheck:
    """What `check_grad` found at one input.

    `analytic` and `numeric` hold one derivative per differentiated argument, in `argnums`
    order. A skipped check says why in `reason`; its `analytic` is filled when the gradient
    was computed, and its `numeric` is empty.
    """

    skipped: bool
    reason: str = ""
    analytic: tuple[float, ...] = ()
    numeric: tuple[float, ...] = ()


class _Skip(Exception):
    """Finite differences cannot be trusted at this input; the message says why."""


def check_grad(
    f: Callable[..., Any],
    *args: Any,
    argnums: int | Sequence[int] = 0,
    rtol: float = DEFAULT_RTOL,
    atol: float = DEFAULT_ATOL,
    step: float | None = None,
    gradient: Callable[..., Any] | None = None,
) -> GradCheck:
    """Check the gradient of `f` at `args` against finite differences of `f` itself.

    By default the gradient is `cpsgrad.grad(f, argnums=argnums)(*args)`, and the value of
    `cpsgrad.value_and_grad(f, argnums=argnums)(*args)` must equal `f(*args)` exactly (the
    same operations run; NaN equals NaN), its gradient must equal `grad`'s, and every
    derivative must be a float. Pass `gradient` (called like `f`, returning a float for an int
    `argnums` and a sequence otherwise) to check another gradient function instead; then the
    value is not checked.

    A derivative passes when |analytic - numeric| <= atol + rtol * |numeric| + noise, where
    noise bounds the rounding error of the finite differences (about 1e-12 * max|f| / step,
    negligible for well-scaled functions). Defaults: rtol=1e-5, atol=1e-7, and a step per
    argument of 1e-4 * max(|x|, 1); `step` overrides it for every argument (make it smaller
    for functions that vary on a finer scale, such as sin(100 * x)). Steps are rounded down
    to a power of two so that the probe points x +- step/2**k are exact.

    Returns a `GradCheck`; skipped inputs (a branch change or kink within the step, or `f`
    raising or returning a non-finite value at a probe point) come back with `skipped=True`
    and a reason. Raises `AssertionError` on a mismatch, naming the function, the arguments,
    `argnums`, and the analytic and numeric derivative of each argument with their errors.
    Raises `TypeError` if a differentiated argument is not a float.
    """
    positions = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for position in positions:
        if not 0 <= position < len(args):
            raise ValueError(f"argnums {argnums!r} out of range for {len(args)} arguments")
        if not isinstance(args[position], float):
            raise TypeError(
                f"check_grad: argument {position} is {type(args[position]).__name__}; "
                "differentiated arguments must be floats"
            )
    try:
        value, executed = _run_traced(f, args)
    except Exception as error:
        return GradCheck(skipped=True, reason=f"f raises {type(error).__name__}: {error}")
    _require_real(f, value)
    if gradient is None:
        analytic = _cpsgrad_gradient(f, args, argnums, positions, value)
    else:
        analytic = _as_derivatives(gradient(*args), argnums, positions)
    if not math.isfinite(value):
        return GradCheck(skipped=True, reason=f"f returns {value!r}", analytic=analytic)
    try:
        estimates = [
            _estimate(f, args, position, value, executed, step, rtol, atol)
            for position in positions
        ]
    except _Skip as skip:
        return GradCheck(skipped=True, reason=str(skip), analytic=analytic)
    numeric = tuple(estimate.derivative for estimate in estimates)
    failed = [
        not abs(derivative - estimate.derivative) <= estimate.tolerance(rtol, atol)
        for derivative, estimate in zip(analytic, estimates, strict=True)
    ]
    if any(failed):
        raise AssertionError(
            _mismatch_message(f, args, argnums, positions, analytic, estimates, failed, rtol, atol)
        )
    return GradCheck(skipped=False, analytic=analytic, numeric=numeric)


def _cpsgrad_gradient(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    argnums: int | Sequence[int],
    positions: tuple[int, ...],
    value: Any,
) -> tuple[float, ...]:
    """cpsgrad's gradient, after checking value_and_grad against f and grad."""
    name = _describe_call(f, args, argnums)
    result = cpsgrad.grad(f, argnums=argnums)(*args)
    transformed_value, transformed_result = cpsgrad.value_and_grad(f, argnums=argnums)(*args)
    if not _same(transformed_value, value):
        raise AssertionError(
            f"value_and_grad of {name} returns the value {transformed_value!r}, "
            f"but the function returns {value!r}"
        )
    derivatives = _split(result, argnums, positions, name)
    transformed = _split(transformed_result, argnums, positions, name)
    for position, derivative in zip(positions, derivatives, strict=True):
        if not isinstance(derivative, float):
            raise AssertionError(
                f"grad of {name}: the derivative for argument {position} is "
                f"{type(derivative).__name__} {derivative!r}; a float argument needs a float"
            )
    if not all(_same(a, b) for a, b in zip(derivatives, transformed, strict=True)):
        raise AssertionError(
            f"grad of {name} returns {result!r} but value_and_grad returns {transformed_result!r}"
        )
    return tuple(derivatives)


def _as_derivatives(
    result: Any, argnums: int | Sequence[int], positions: tuple[int, ...]
) -> tuple[float, ...]:
    """A user-supplied gradient as one float per differentiated argument."""
    parts = _split(result, argnums, positions, "the gradient function")
    return tuple(float(part) for part in parts)


def _split(
    result: Any, argnums: int | Sequence[int], positions: tuple[int, ...], name: str
) -> tuple[Any, ...]:
    """The parts of a gradient: the gradient itself for an int argnums, its items otherwise."""
    if isinstance(argnums, int):
        return (result,)
    parts = tuple(result)
    if len(parts) != len(positions):
        raise AssertionError(
            f"{name} returns {len(parts)} derivatives for argnums={tuple(argnums)!r}"
        )
    return parts


def _same(a: Any, b: Any) -> bool:
    """Equality where NaN equals NaN."""
    if a == b:
        return True
    return (
        isinstance(a, numbers.Real)
        and isinstance(b, numbers.Real)
        and (math.isnan(a) and math.isnan(b))
    )


def _require_real(f: Callable[..., Any], value: Any) -> None:
    if not isinstance(value, numbers.Real):
        raise TypeError(
            f"check_grad: {_name(f)} returns {type(value).__name__}; it must return a real number"
        )


def _run_traced(f: Callable[..., Any], args: Sequence[Any]) -> tuple[Any, Executed]:
    """Call f(*args), recording each bytecode instruction run by Python code under the call.

    Instructions rather than lines, so that a conditional expression or `and`/`or` taking the
    other side within one line counts as a branch change too. The garbage collector is off
    meanwhile: its callbacks (hypothesis registers one) would run at arbitrary points.
    """
    executed: Executed = []

    def trace_instructions(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "opcode":
            executed.append((frame.f_code, frame.f_lasti))
        return trace_instructions

    def trace_calls(frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return trace_instructions

    previous = sys.gettrace()
    collecting = gc.isenabled()
    gc.disable()
    sys.settrace(trace_calls)
    try:
        value = f(*args)
    finally:
        sys.settrace(previous)
        if collecting:
            gc.enable()
    return value, executed


@dataclass(frozen=True)
class _Estimate:
    """Finite-difference estimates of one partial derivative."""

    derivative: float  # sixth-order central
    forward: float  # fourth-order one-sided, from the right
    backward: float  # fourth-order one-sided, from the left
    noise: float  # bound on their rounding error

    def tolerance(self, rtol: float, atol: float) -> float:
        return atol + rtol * abs(self.derivative) + self.noise


def _estimate(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    position: int,
    value: float,
    executed: Executed,
    step: float | None,
    rtol: float,
    atol: float,
) -> _Estimate:
    """Estimate d f / d args[position]; raise _Skip where finite differences are unreliable."""
    x = args[position]
    h = _power_of_two_below(
        step if step is not None else RELATIVE_STEP * max(abs(x), MIN_STEP_SCALE)
    )
    name = _parameter_names(f, len(args))[position]
    points: dict[float, float] = {}
    values: dict[float, float] = {}
    for offset in (h, -h, h / 2, -h / 2, h / 4, -h / 4, h / 8, -h / 8):
        shifted = list(args)
        shifted[position] = point = x + offset
        where = f"{name}={point!r} (step {offset:+.3g} from {x!r})"
        try:
            probe, probe_executed = _run_traced(f, shifted)
        except Exception as error:
            raise _Skip(f"f raises {type(error).__name__}: {error} at {where}") from None
        if probe_executed != executed:
            raise _Skip(f"branch change: {_first_difference(executed, probe_executed)} at {where}")
        _require_real(f, probe)
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


def _first_difference(expected: Executed, actual: Executed) -> str:
    """Where two instruction traces part, as 'file:line (function)' locations."""
    for left, right in zip(expected, actual, strict=False):
        if left != right:
            return f"{_line_of(*right)} runs where {_line_of(*left)} ran at the input"
    shorter, longer = sorted((expected, actual), key=len)
    count = "more" if longer is actual else "fewer"
    return f"{count} instructions run, from {_line_of(*longer[len(shorter)])} on"


def _line_of(code: CodeType, offset: int) -> str:
    line = next((line for start, end, line in code.co_lines() if start <= offset < end), None)
    return f"{code.co_filename}:{line} ({code.co_name})"


def _parameter_names(f: Callable[..., Any], count: int) -> list[str]:
    """Names for f's first `count` positional arguments (arg0, arg1, ... where unknown)."""
    try:
        parameters = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    names = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [names[i] if i < len(names) else f"arg{i}" for i in range(count)]


def _name(f: Callable[..., Any]) -> str:
    return getattr(f, "__qualname__", None) or repr(f)


def _describe_call(f: Callable[..., Any], args: tuple[Any, ...], argnums: Any) -> str:
    names = _parameter_names(f, len(args))
    shown = ", ".join(f"{n}={reprlib.repr(a)}" for n, a in zip(names, args, strict=True))
    return f"{_name(f)}({shown}) with argnums={argnums!r}"


def _mismatch_message(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    argnums: Any,
    positions: tuple[int, ...],
    analytic: tuple[float, ...],
    estimates: list[_Estimate],
    failed: list[bool],
    rtol: float,
    atol: float,
) -> str:
    names = _parameter_names(f, len(args))
    lines = [f"gradient of {_describe_call(f, args, argnums)} disagrees with finite differences:"]
    for position, derivative, estimate, bad in zip(
        positions, analytic, estimates, failed, strict=True
    ):
        error = abs(derivative - estimate.derivative)
        relative = error / abs(estimate.derivative) if estimate.derivative else math.inf
        lines.append(
            f"  d/d{names[position]}: analytic {derivative!r}, numeric {estimate.derivative!r}, "
            f"abs error {error:.3g}, rel error {relative:.3g}" + ("  <-- mismatch" if bad else "")
        )
    lines.append(f"  tolerance: atol={atol:g} + rtol={rtol:g} * |numeric| + rounding noise")
    return "\n".join(lines)
