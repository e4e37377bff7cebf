"""The user-facing entry points: grad, value_and_grad and show."""

from __future__ import annotations

import functools
import inspect
import numbers
import sys
import threading
from collections.abc import Callable

from cpsgrad import runtime
from cpsgrad.errors import ArgumentError, CpsgradError, DepthLimitError, NonScalarOutputError
from cpsgrad.rules.registry import TABLE
from cpsgrad.transforms import pipeline, source

#: Deepest chain of continuation calls the Python tier allows (a loop iteration is one or more).
max_depth = 1_000_000


def _argnums(argnums) -> tuple[int, ...]:
    if isinstance(argnums, bool) or not isinstance(argnums, (int, tuple)):
        raise ArgumentError(f"argnums must be an int or a tuple of ints, not {argnums!r}")
    values = (argnums,) if isinstance(argnums, int) else argnums
    if not values or not all(isinstance(a, int) and not isinstance(a, bool) for a in values):
        raise ArgumentError(f"argnums must be an int or a non-empty tuple of ints, not {argnums!r}")
    return values


def _reset(value):
    """The outermost continuation: check the result is a scalar and seed its adjoint with 1."""
    if type(value) is float:
        return value, 1.0
    if isinstance(value, runtime.Unbound):
        value.check()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise NonScalarOutputError(
            f"grad needs a function returning a real scalar, but it returned {type(value).__name__} "
            f"{value!r}; return a float (sum the outputs, or pick one)"
        )
    return value, 1.0


def _check_differentiable(name: str, value) -> None:
    if type(value) is float:
        return
    if isinstance(value, (bool, numbers.Integral)) or not isinstance(value, numbers.Real):
        kind = type(value).__name__
        advice = f"pass {name}=float({value!r})" if isinstance(value, numbers.Integral) else "pass a float"
        raise ArgumentError(f"cannot differentiate with respect to {name}: it is {kind} {value!r}, not a float; {advice}")


class _DeepCalls:
    """Raises the interpreter's recursion limit (one per process) while any derivative program
    runs, in any thread, and restores it when the last one returns."""

    def __init__(self):
        self.lock = threading.Lock()
        self.running = 0
        self.saved = 0

    def enter(self) -> None:
        with self.lock:
            if self.running == 0:
                self.saved = sys.getrecursionlimit()
                sys.setrecursionlimit(max(self.saved, max_depth))
            self.running += 1

    def leave(self) -> None:
        with self.lock:
            self.running -= 1
            if self.running == 0:
                sys.setrecursionlimit(self.saved)


_deep = _DeepCalls()


def _as_gradient(argument, adjoint):
    if type(adjoint) is float or not isinstance(argument, float):
        return adjoint
    return float(adjoint)


class _Runner:
    """Runs the derivative program of one function and `argnums`, keeping its transform at hand."""

    def __init__(self, function, argnums: tuple[int, ...]):
        self.function = function
        self.argnums = argnums
        self.transformed: pipeline.Transformed | None = None

    def program(self) -> pipeline.Transformed:
        transformed = self.transformed
        if transformed is None or transformed.code is not self.function.__code__ or transformed.table_version != TABLE.version:
            transformed = self.transformed = pipeline.transform(self.function, self.argnums)
        return transformed

    def __call__(self, args, kwargs):
        transformed = self.program()
        parameters = transformed.parameters
        if kwargs or len(args) != len(parameters):
            bound = inspect.signature(self.function).bind(*args, **kwargs)
            bound.apply_defaults()
            args = tuple(bound.arguments[p] for p in parameters)
        differentiated = transformed.positions
        for position in differentiated:
            _check_differentiable(parameters[position], args[position])
        _deep.enter()
        try:
            result = transformed.program(*args, _reset)
        except RecursionError:
            raise DepthLimitError(
                f"{self.function.__qualname__} ran deeper than the Python tier's limit of "
                f"{sys.getrecursionlimit()} calls (each loop iteration is at least one continuation "
                "call); raise cpsgrad.api.max_depth"
            ) from None
        finally:
            _deep.leave()
        gradients = tuple(_as_gradient(args[p], a) for p, a in zip(differentiated, result[1:], strict=True))
        return result[0], gradients


def original(function):
    """The user's function behind a `grad`/`value_and_grad` wrapper; anything else as it is."""
    return function.__wrapped__ if getattr(function, "__cpsgrad_gradient__", False) else function


def _refuse_nested(function) -> None:
    if getattr(function, "__cpsgrad_gradient__", False):
        raise CpsgradError(
            "grad of a gradient (higher-order differentiation) is not supported yet: nested reverse "
            "mode would confuse perturbations and give wrong answers"
        )


def value_and_grad(function: Callable | None = None, argnums: int | tuple[int, ...] = 0):
    """`function`'s value and its gradient with respect to the positional arguments `argnums`.

    Returns a function taking `function`'s arguments and returning `(value, gradient)`; the
    gradient is one value for an int `argnums`, a tuple for a tuple. Usable as a decorator,
    with or without arguments.
    """
    if function is None:
        return functools.partial(value_and_grad, argnums=argnums)
    _refuse_nested(function)
    source.unwrap(function)
    wanted = _argnums(argnums)

    run = _Runner(function, wanted)

    @functools.wraps(function)
    def value_and_gradient(*args, **kwargs):
        value, gradients = run(args, kwargs)
        return value, gradients[0] if isinstance(argnums, int) else gradients

    value_and_gradient.__cpsgrad_gradient__ = True
    return value_and_gradient


def grad(function: Callable | None = None, argnums: int | tuple[int, ...] = 0):
    """The gradient of a scalar-valued `function` with respect to its positional arguments `argnums`.

    ::

        @cpsgrad.grad
        def f(x, n):
            ...
        f(1.5, 10)   # df/dx at x = 1.5

    The function is transformed into continuation-passing style once (per function and
    `argnums`) and the generated program is reused; `cpsgrad.show(f)` prints it.
    """
    if function is None:
        return functools.partial(grad, argnums=argnums)
    _refuse_nested(function)
    source.unwrap(function)
    wanted = _argnums(argnums)

    run = _Runner(function, wanted)

    @functools.wraps(function)
    def gradient(*args, **kwargs):
        _, gradients = run(args, kwargs)
        return gradients[0] if isinstance(argnums, int) else gradients

    gradient.__cpsgrad_gradient__ = True
    return gradient


def show(function: Callable, stage: str = "final", argnums: int | tuple[int, ...] = 0) -> str:
    """The source cpsgrad generates for `function` at `stage` ("normalize", "cps" or "final").

    "final" is exactly the program that runs. A function wrapped by `grad` shows its original.
    """
    if stage not in pipeline.STAGES:
        raise ValueError(f"stage must be one of {', '.join(pipeline.STAGES)}, not {stage!r}")
    function = original(function)
    return pipeline.stage_text(function, _argnums(argnums), stage)
