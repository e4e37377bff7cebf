"""check_grad: compare a function's gradient with finite differences of the original function.

The numeric derivative is a Richardson-extrapolated central difference in float64 (sixth order,
steps h, h/2 and h/4), confirmed by fourth-order one-sided estimates from each side (steps h to
h/8). Array arguments are checked one element at a time, each element perturbed alone; float32
arguments are differenced on float64 copies. Points where finite differences cannot be trusted
are skipped, never reported as failures:

- a branch changes within the step: the bytecode instructions that ran (in the function and in
  every Python function it calls outside numpy and scipy, traced with `sys.settrace`) differ
  between x and a probe point (inside those libraries, caches filled by the first call branch:
  scipy.linalg's BLAS getters; their kinks and jumps show in the one-sided estimates below);
- a kink or jump without a branch (`abs`, a tie in `min`/`max`, `//`): the forward and backward
  one-sided estimates disagree with each other or with the central one;
- the function raises, or returns a non-finite value, at the input or at a probe point.
"""

from __future__ import annotations

import gc
import importlib.util
import inspect
import math
import numbers
import os
import reprlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Any

import numpy as np

import cpsgrad

DEFAULT_RTOL = 1e-5
"""Relative tolerance of `check_grad`: |analytic - numeric| <= atol + rtol * |numeric|."""

DEFAULT_ATOL = 1e-7
"""Absolute tolerance of `check_grad`, for derivatives near zero."""

FLOAT32_RTOL = 2e-3
"""Default relative tolerance when any argument is a float32 array or scalar."""

FLOAT32_ATOL = 1e-4
"""Default absolute tolerance when any argument is a float32 array or scalar."""

DEFAULT_MAX_ELEMENTS = 64
"""Elements of one array argument checked by default; bigger arrays get a fixed random subset."""

RELATIVE_STEP = 1e-4
"""The default step is RELATIVE_STEP * max(|x|, MIN_STEP_SCALE), rounded down to a power of two."""

MIN_STEP_SCALE = 1.0

# Rounding error assumed for one evaluation of f, relative to |f|; the one-sided formula
# amplifies it by at most 73 / h, and that much is added to every tolerance.
_EVALUATION_ERROR = 64 * sys.float_info.epsilon
_NOISE_GAIN = 80.0

# Array dtypes that can be differentiated, and the seed of the subset of elements checked.
_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_SUBSET_SEED = 0
# Mismatched elements of one array argument shown in the failure message.
_SHOWN_ELEMENTS = 5


def _package_directories(*names: str) -> tuple[str, ...]:
    directories = []
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            directories.extend(os.path.join(d, "") for d in spec.submodule_search_locations)
    return tuple(directories)


# Libraries whose code may take dtype-dependent paths: ignored when comparing a float32 run with
# its float64 copy (not when comparing probe points, which all have the same dtypes).
_DTYPE_DISPATCHING = _package_directories("numpy", "scipy")

Executed = list[tuple[CodeType, int]]


@dataclass(frozen=True)
class GradCheck:
    """What `check_grad` found at one input.

    `analytic` and `numeric` hold one derivative per differentiated argument, in `argnums`
    order: a float for a scalar argument; for an array argument, `analytic` is the gradient
    array (the argument's shape and dtype) and `numeric` a float64 array of the argument's
    shape, NaN at the elements left unchecked (see `max_elements`). A skipped check says why
    in `reason`; its `analytic` is filled when the gradient was computed, and its `numeric` is
    empty.
    """

    skipped: bool
    reason: str = ""
    analytic: tuple[Any, ...] = ()
    numeric: tuple[Any, ...] = ()


class _Skip(Exception):
    """Finite differences cannot be trusted at this input; the message says why."""


def check_grad(
    f: Callable[..., Any],
    *args: Any,
    argnums: int | Sequence[int] = 0,
    rtol: float | None = None,
    atol: float | None = None,
    step: float | None = None,
    gradient: Callable[..., Any] | None = None,
    max_elements: int | None = DEFAULT_MAX_ELEMENTS,
) -> GradCheck:
    """Check the gradient of `f` at `args` against finite differences of `f` itself.

    Differentiated arguments are floats, numpy floating scalars, or float32/float64 arrays of
    any shape (0-d included). By default the gradient is `cpsgrad.grad(f, argnums=argnums)(*args)`,
    and the value of `cpsgrad.value_and_grad(f, argnums=argnums)(*args)` must equal `f(*args)`
    exactly (the same scalar: a 0-d array counts as its element; NaN equals NaN), its gradient
    must equal `grad`'s, a float argument's derivative must be a float and a numpy scalar's a
    scalar of its dtype. Pass `gradient` (called like `f`, returning one derivative for an int
    `argnums` and a sequence otherwise) to check another gradient function instead; then the
    value is not checked. Either way the derivative of an array argument must be an ndarray
    of the argument's shape and dtype (from `gradient`, a numpy scalar of the dtype will do
    for a 0-d array, as numpy computes scalars from 0-d arrays).

    A derivative passes when |analytic - numeric| <= atol + rtol * |numeric| + noise, where
    noise bounds the rounding error of the finite differences (about 1e-12 * max|f| / step,
    negligible for well-scaled functions); an array passes when each checked element does.
    Defaults: rtol=1e-5, atol=1e-7, or rtol=2e-3, atol=1e-4 when any argument is a float32
    array or scalar (f then computes in single precision, while the finite differences run on
    float64 copies of the float32 arguments). The step for each scalar or element is
    1e-4 * max(|x|, 1); `step` overrides it for all (make it smaller for functions that vary
    on a finer scale, such as sin(100 * x)). Steps are rounded down to a power of two so that
    the probe points x +- step/2**k are exact.

    Each element costs eight calls of `f`, so of an array argument with more than
    `max_elements` elements only a fixed pseudo-random subset of `max_elements` is checked
    (always the same for the same shape); `max_elements=None` checks every element.

    Returns a `GradCheck`; skipped inputs (a branch change or kink within the step of some
    scalar or element, or `f` raising or returning a non-finite value at a probe point) come
    back with `skipped=True` and a reason, unless another derivative is wrong. Raises
    `AssertionError` on a mismatch, naming the function, the arguments, `argnums`, and the
    analytic and numeric derivative of each argument with their errors (for an array, its
    worst elements by index). Raises `TypeError` if a differentiated argument is not a float
    or a float array, and `ValueError` if `f` modifies an array argument in place.
    """
    positions = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for position in positions:
        if not 0 <= position < len(args):
            raise ValueError(f"argnums {argnums!r} out of range for {len(args)} arguments")
        _require_differentiable(position, args[position])
    if max_elements is not None and (
        isinstance(max_elements, bool) or not isinstance(max_elements, int) or max_elements < 1
    ):
        raise ValueError(f"check_grad: max_elements must be a positive int or None, not {max_elements!r}")
    single = any(_is_float32(arg) for arg in args)
    if rtol is None:
        rtol = FLOAT32_RTOL if single else DEFAULT_RTOL
    if atol is None:
        atol = FLOAT32_ATOL if single else DEFAULT_ATOL
    saved = _copy_arrays(args)
    try:
        value, executed = _run_traced(f, args)
    except Exception as error:
        return GradCheck(skipped=True, reason=f"f raises {type(error).__name__}: {error}")
    _require_unmodified(f, args, saved, ValueError, f"{_name(f)} modifies its argument")
    value = _real(f, value)
    if gradient is None:
        analytic = _cpsgrad_gradient(f, args, argnums, positions, value)
    else:
        analytic = _as_derivatives(f, args, gradient(*args), argnums, positions)
    _require_unmodified(f, args, saved, AssertionError, "the gradient modifies argument")
    if not math.isfinite(value):
        return GradCheck(skipped=True, reason=f"f returns {value!r}", analytic=analytic)
    # Finite differences run on `base`: the arguments, with float32 ones copied to float64.
    base, base_value, base_executed = args, value, executed
    if single:
        try:
            base, base_value, base_executed = _in_double_precision(f, args, executed)
        except _Skip as skip:
            return GradCheck(skipped=True, reason=str(skip), analytic=analytic)

    estimates: dict[_Coordinate, _Estimate] = {}
    skips: list[str] = []
    for coordinate in _coordinates(f, args, positions, max_elements):
        try:
            estimates[coordinate] = _estimate(
                f, base, coordinate, float(base_value), base_executed, step, rtol, atol
            )
        except _Skip as skip:
            skips.append(str(skip))
    derivatives = dict(zip(positions, analytic, strict=True))
    failed = {
        coordinate
        for coordinate, estimate in estimates.items()
        if not abs(_analytic_at(derivatives, coordinate) - estimate.derivative)
        <= estimate.tolerance(rtol, atol)
    }
    if failed:
        raise AssertionError(
            _mismatch_message(
                f, args, argnums, positions, derivatives, estimates, failed, skips, rtol, atol
            )
        )
    if skips:
        more = f" (and {len(skips) - 1} more)" if len(skips) > 1 else ""
        return GradCheck(skipped=True, reason=skips[0] + more, analytic=analytic)
    return GradCheck(skipped=False, analytic=analytic, numeric=_numeric(args, positions, estimates))


# --- arguments -------------------------------------------------------------------------------


def _require_differentiable(position: int, value: Any) -> None:
    if isinstance(value, float) or (
        isinstance(value, np.floating) and value.dtype in _FLOAT_DTYPES
    ):
        return
    if type(value) is np.ndarray and value.dtype in _FLOAT_DTYPES:
        return
    described = _describe_value(value, values=False)
    raise TypeError(
        f"check_grad: argument {position} is {described}; differentiated arguments must be "
        "floats, numpy float32/float64 scalars, or float32/float64 arrays"
    )


def _is_float32(value: Any) -> bool:
    return isinstance(value, (np.ndarray, np.floating)) and value.dtype == np.float32


def _copy_arrays(args: tuple[Any, ...]) -> dict[int, np.ndarray]:
    return {i: arg.copy() for i, arg in enumerate(args) if isinstance(arg, np.ndarray)}


def _require_unmodified(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    saved: dict[int, np.ndarray],
    error: type[Exception],
    what: str,
) -> None:
    names = _parameter_names(f, len(args))
    for i, copy in saved.items():
        if not (args[i].shape == copy.shape and np.array_equal(args[i], copy, equal_nan=True)):
            raise error(
                f"check_grad: {what} {names[i]} in place; finite differences need it unchanged"
            )


def _in_double_precision(
    f: Callable[..., Any], args: tuple[Any, ...], executed: Executed
) -> tuple[tuple[Any, ...], Any, Executed]:
    """The arguments with float32 ones copied to float64, f's value there and its trace.

    f must take the same path on both, except inside numpy and scipy, which dispatch on dtype.
    """
    double = tuple(arg.astype(np.float64) if _is_float32(arg) else arg for arg in args)
    where = "on float64 copies of its float32 arguments"
    try:
        value, double_executed = _run_traced(f, double)
    except Exception as error:
        raise _Skip(f"f raises {type(error).__name__}: {error} {where}") from None
    value = _real(f, value)
    mine, double_mine = _outside_libraries(executed), _outside_libraries(double_executed)
    if double_mine != mine:
        raise _Skip(f"branch change: {_first_difference(mine, double_mine)} {where}")
    if getattr(value, "dtype", None) == np.float32:
        raise _Skip(
            f"f returns float32 {where}: finite differences in single precision are too noisy"
        )
    if not math.isfinite(value):
        raise _Skip(f"f returns {value!r} {where}")
    return double, value, double_executed


def _outside_libraries(executed: Executed) -> Executed:
    """The instructions run outside numpy and scipy."""
    return [
        (code, offset)
        for code, offset in executed
        if not code.co_filename.startswith(_DTYPE_DISPATCHING)
    ]


# --- the analytic gradient -------------------------------------------------------------------


def _cpsgrad_gradient(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    argnums: int | Sequence[int],
    positions: tuple[int, ...],
    value: Any,
) -> tuple[Any, ...]:
    """cpsgrad's gradient, after checking value_and_grad against f and grad."""
    name = _describe_call(f, args, argnums)
    result = cpsgrad.grad(f, argnums=argnums)(*args)
    transformed_value, transformed_result = cpsgrad.value_and_grad(f, argnums=argnums)(*args)
    if not _same(_scalar(transformed_value), value):
        raise AssertionError(
            f"value_and_grad of {name} returns the value {transformed_value!r}, "
            f"but the function returns {value!r}"
        )
    derivatives = _split(result, argnums, positions, name)
    transformed = _split(transformed_result, argnums, positions, name)
    for position, derivative in zip(positions, derivatives, strict=True):
        _require_conforming(f"grad of {name}", f, args, position, derivative)
    if not all(_same(a, b) for a, b in zip(derivatives, transformed, strict=True)):
        raise AssertionError(
            f"grad of {name} returns {result!r} but value_and_grad returns {transformed_result!r}"
        )
    return tuple(derivatives)


def _as_derivatives(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    result: Any,
    argnums: int | Sequence[int],
    positions: tuple[int, ...],
) -> tuple[Any, ...]:
    """A user-supplied gradient: a float per scalar argument, an array per array argument
    (for a 0-d array, a numpy scalar of its dtype will do)."""
    parts = _split(result, argnums, positions, "the gradient function")
    derivatives = []
    for position, part in zip(positions, parts, strict=True):
        argument = args[position]
        if isinstance(argument, np.ndarray):
            if (
                argument.shape == ()
                and isinstance(part, np.generic)
                and part.dtype == argument.dtype
            ):
                part = np.asarray(part)  # numpy computes scalars from 0-d arrays
            _require_conforming("the gradient function", f, args, position, part)
            derivatives.append(part)
        else:
            derivatives.append(float(part))
    return tuple(derivatives)


def _require_conforming(
    who: str, f: Callable[..., Any], args: tuple[Any, ...], position: int, derivative: Any
) -> None:
    """An array argument needs an ndarray of its shape and dtype; a scalar a scalar of its type."""
    argument = args[position]
    if isinstance(argument, np.ndarray):
        if (
            type(derivative) is np.ndarray
            and derivative.shape == argument.shape
            and derivative.dtype == argument.dtype
        ):
            return
        needs = f"a {_describe_value(argument, values=False)} needs an array of the same shape and dtype"
    elif isinstance(argument, np.floating) and argument.dtype == np.float32:
        if isinstance(derivative, np.floating) and derivative.dtype == np.float32:
            return
        needs = "a float32 argument needs a float32 scalar"
    else:
        if isinstance(derivative, float):
            return
        needs = "a float argument needs a float"
    name = _parameter_names(f, len(args))[position]
    raise AssertionError(
        f"{who}: the derivative for argument {position} ({name}) is "
        f"{_describe_value(derivative)}; {needs}"
    )


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


def _scalar(value: Any) -> Any:
    """A 0-d array as its element; anything else as it is."""
    return value[()] if isinstance(value, np.ndarray) and value.shape == () else value


def _same(a: Any, b: Any) -> bool:
    """Equality where NaN equals NaN; arrays are equal in shape, dtype and every element."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        )
    if a == b:
        return True
    return (
        isinstance(a, numbers.Real)
        and isinstance(b, numbers.Real)
        and (math.isnan(a) and math.isnan(b))
    )


def _real(f: Callable[..., Any], value: Any) -> Any:
    """f's value as a real scalar (a 0-d array as its element); TypeError for anything else."""
    if isinstance(value, np.ndarray):
        if value.shape == () and value.dtype.kind in "fiu":
            return value[()]
        raise TypeError(
            f"check_grad: {_name(f)} returns an array of shape {value.shape} and dtype "
            f"{value.dtype}; it must return a real number"
        )
    if not isinstance(value, numbers.Real):
        raise TypeError(
            f"check_grad: {_name(f)} returns {type(value).__name__}; it must return a real number"
        )
    return value


# --- finite differences ----------------------------------------------------------------------


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


# --- messages --------------------------------------------------------------------------------


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


def _describe_value(value: Any, *, values: bool = True) -> str:
    """'float64 array of shape (2, 3)', 'float 0.5', 'float32 0.5'; without the value: 'float'."""
    if isinstance(value, np.ndarray):
        return f"{value.dtype} array of shape {value.shape}"
    if isinstance(value, np.generic):
        return f"{value.dtype} {value.item()!r}" if values else str(value.dtype)
    kind = type(value).__name__
    return f"{kind} {value!r}" if values else kind


def _show_argument(value: Any) -> str:
    """An argument in a message: small arrays in full on one line, bigger ones by shape."""
    if isinstance(value, np.ndarray):
        if value.size <= 8:
            return " ".join(repr(value).split())
        return f"array(shape={value.shape}, dtype={value.dtype})"
    return reprlib.repr(value)


def _describe_call(f: Callable[..., Any], args: tuple[Any, ...], argnums: Any) -> str:
    names = _parameter_names(f, len(args))
    shown = ", ".join(f"{n}={_show_argument(a)}" for n, a in zip(names, args, strict=True))
    return f"{_name(f)}({shown}) with argnums={argnums!r}"


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
