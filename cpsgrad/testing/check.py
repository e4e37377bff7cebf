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

The parts: `finite_differences` (the estimates and the kink test), `tracing` (the traced runs that
show a branch change), `mismatch` and `describing` (the failure message); this module checks the
arguments and the analytic gradient, and runs the check.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import cpsgrad
from cpsgrad.testing.describing import _describe_call, _describe_value, _name, _parameter_names
from cpsgrad.testing.finite_differences import (
    _analytic_at,
    _Coordinate,
    _coordinates,
    _Estimate,
    _estimate,
    _numeric,
    _Skip,
)
from cpsgrad.testing.mismatch import _mismatch_message
from cpsgrad.testing.tracing import (
    Executed,
    _first_difference,
    _outside_libraries,
    _real,
    _run_traced,
)

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

# Array dtypes that can be differentiated.
_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


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
