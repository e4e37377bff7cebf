"""The user-facing entry points: grad, value_and_grad and show."""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import numbers
import sys
import threading
from collections.abc import Callable, Iterable

import numpy as np

from cpsgrad import nonfinite, runtime
from cpsgrad.errors import (
    ArgumentError,
    DepthLimitError,
    HigherOrderError,
    LocatedError,
    NonScalarOutputError,
)
from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.kernels.table import device_of
from cpsgrad.rules.registry import TABLE
from cpsgrad.runtime import device as runtime_device
from cpsgrad.runtime import object_gradients
from cpsgrad.runtime import objects as runtime_objects
from cpsgrad.runtime.adapters import primitive_caller
from cpsgrad.runtime.broadcasting import real_part
from cpsgrad.runtime.writes import check_unshared
from cpsgrad.transforms import pipeline, showing, source, starred
from cpsgrad.transforms.analysis import kinds

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
    """The outermost continuation: check the result is a real scalar and seed its adjoint with 1.

    A real numpy array of one element (shape (1,), (1, 1), ...) counts as the scalar it holds, as in
    HIPS autograd: its seed is an array of ones of its shape and dtype. Any other array is
    refused: the gradient of a vector output is not defined without a covector."""
    runtime.keep_final_writes()  # the backward restores what writes overwrote: put back after it
    if type(value) is float:
        return value, 1.0
    if isinstance(value, runtime.Unbound):
        value.check()
    if isinstance(value, (np.ndarray, DeviceArray)):
        if value.shape == () and value.dtype.kind == "f":
            return value, 1.0
        if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind == "f":
            return value, np.ones(value.shape, value.dtype)
        kind = "a DeviceArray" if type(value) is DeviceArray else "an array"
        described = f"{kind} of shape {value.shape} and dtype {value.dtype}"
        raise NonScalarOutputError(
            f"grad needs a function returning a real scalar, but it returned {described}; "
            "return a scalar (sum the outputs, or pick one); a real array of one element is taken as its scalar"
        )
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise NonScalarOutputError(
            f"grad needs a function returning a real scalar, but it returned {type(value).__name__} "
            f"{value!r}; return a float (sum the outputs, or pick one)"
        )
    return value, 1.0


def _check_differentiable(name: str, value, nested: bool = False) -> None:
    """Differentiated arguments are floats or complex numbers (Python floats and complex numbers,
    numpy floating and complex scalars and arrays, float32/float64 DeviceArrays) or containers of
    them: dicts, tuples, lists, NamedTuples and dataclass instances, nested (a None inside a
    container is allowed, and gets None as its gradient)."""
    if type(value) is float or type(value) is complex:
        return
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            return
        raise ArgumentError(
            f"cannot differentiate with respect to {name}: it is an array of dtype {value.dtype}, "
            f"not a floating or complex dtype; pass {name}.astype(float)"
        )
    if isinstance(value, (np.floating, np.complexfloating)):
        return
    if type(value) is DeviceArray:
        if value.dtype in _DEVICE_DTYPES:
            return
        raise ArgumentError(
            f"cannot differentiate with respect to {name}: it is a DeviceArray of dtype {value.dtype}; "
            f"the device differentiates float32 and float64: pass {name}.astype(np.float64)"
        )
    parts = _parts(value)
    if parts is not None:
        for label, part in parts:
            _check_differentiable(name + label, part, True)
        return
    if value is None and nested:
        return
    if device_of(value) == "cuda":
        raise ArgumentError(
            f"cannot differentiate with respect to {name}: it is a raw CUDA device array "
            f"({type(value).__name__}), which has no numpy operators; pass cpsgrad.to_device({name}) "
            "(a DeviceArray, which differentiated programs run on) or cpsgrad.to_host"
            f"({name})"
        )
    if isinstance(value, (bool, numbers.Integral)) or not isinstance(value, numbers.Real):
        kind = type(value).__name__
        if nested:
            advice = "make it a float, or keep it out of the differentiated argument"
        elif isinstance(value, numbers.Integral):
            advice = f"pass {name}=float({value!r})"
        else:
            advice = "pass a float, a float array, or a dict, tuple, list, NamedTuple or dataclass of them"
        raise ArgumentError(
            f"cannot differentiate with respect to {name}: it is {kind} {value!r}, not a float; {advice}"
        )


def _parts(value) -> list | None:
    """(label, part) for each part of a differentiable container, or None for anything else."""
    if isinstance(value, dict):
        return [(f"[{key!r}]", part) for key, part in value.items()]
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return [(f".{field}", part) for field, part in zip(type(value)._fields, value, strict=True)]
    if isinstance(value, (tuple, list)):
        return [(f"[{position}]", part) for position, part in enumerate(value)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [(f".{field.name}", getattr(value, field.name)) for field in dataclasses.fields(value)]
    if runtime_objects.is_plain_object(value):  # an object of a plain class: its float attributes
        return object_gradients.differentiable_parts(value)
    return None


_DEVICE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


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
    """The gradient of one argument, in the argument's own type, shape and dtype; a container's
    in the same structure (zeros for the parts nothing read). A real argument's gradient is the
    real part of a complex adjoint (JAX's convention: docs/design.md, "Complex numbers")."""
    if type(argument) is float:
        if type(adjoint) is float:
            return adjoint
        return float(real_part(adjoint))
    if type(argument) is np.ndarray:
        if type(adjoint) is not np.ndarray or adjoint.shape != argument.shape:
            adjoint = np.broadcast_to(adjoint, argument.shape)
        if adjoint.dtype != argument.dtype or not adjoint.flags.writeable or adjoint.base is not None:
            if argument.dtype.kind != "c":
                adjoint = real_part(adjoint)
            adjoint = adjoint.astype(argument.dtype, copy=True)
        return adjoint
    if isinstance(argument, np.floating):
        return argument.dtype.type(real_part(adjoint))
    if type(argument) is complex:
        return complex(adjoint)
    if isinstance(argument, np.complexfloating):
        return argument.dtype.type(adjoint)
    if type(argument) is DeviceArray:
        return runtime_device.as_gradient(argument, adjoint)
    if argument is None:
        return None
    if isinstance(argument, dict):
        found = adjoint if isinstance(adjoint, dict) else {}
        values = {key: _as_gradient(part, found.get(key, 0.0)) for key, part in argument.items()}
        if type(argument) is dict:
            return values
        gradient = copy.copy(argument)  # OrderedDict, defaultdict, ...: the same type
        gradient.clear()
        gradient.update(values)
        return gradient
    if isinstance(argument, (tuple, list)):
        found = adjoint if isinstance(adjoint, tuple) else (0.0,) * len(argument)
        values = [_as_gradient(part, part_adjoint) for part, part_adjoint in zip(argument, found, strict=True)]
        if isinstance(argument, tuple) and hasattr(type(argument), "_fields"):
            return type(argument)._make(values)
        return tuple(values) if isinstance(argument, tuple) else values
    if runtime_objects.is_plain_object(argument):  # a new object of its class, adjoints read off the run's books
        return object_gradients.object_gradient(argument, _as_gradient)
    if dataclasses.is_dataclass(argument) and not isinstance(argument, type):
        found = adjoint if isinstance(adjoint, dict) else {}
        gradient = copy.copy(argument)
        for field in dataclasses.fields(argument):
            value = _as_gradient(getattr(argument, field.name), found.get(field.name, 0.0))
            object.__setattr__(gradient, field.name, value)
        return gradient
    return adjoint


def _unshared(gradient, seen: set[int]):
    """`gradient` with every array that an earlier part (or gradient) holds copied."""
    if isinstance(gradient, (np.ndarray, DeviceArray)):
        if id(gradient) in seen:
            return gradient.copy()
        seen.add(id(gradient))
        return gradient
    if isinstance(gradient, dict):
        for key, part in gradient.items():
            gradient[key] = _unshared(part, seen)
    elif isinstance(gradient, list):
        gradient[:] = [_unshared(part, seen) for part in gradient]
    elif isinstance(gradient, tuple) and gradient:
        parts = [_unshared(part, seen) for part in gradient]
        if any(a is not b for a, b in zip(parts, gradient, strict=True)):
            gradient = type(gradient)._make(parts) if hasattr(type(gradient), "_fields") else tuple(parts)
    elif runtime_objects.is_plain_object(gradient) and id(gradient) not in seen:
        seen.add(id(gradient))
        for name, part in list(gradient.__dict__.items()):
            gradient.__dict__[name] = _unshared(part, seen)
    elif dataclasses.is_dataclass(gradient) and not isinstance(gradient, type):
        for field in dataclasses.fields(gradient):
            object.__setattr__(gradient, field.name, _unshared(getattr(gradient, field.name), seen))
    return gradient


def _gradients(args: tuple, positions: tuple[int, ...], adjoints) -> tuple:
    """Gradients conformed to their arguments; arrays never shared between two gradients (or
    two parts of one)."""
    gradients = tuple(_as_gradient(args[p], a) for p, a in zip(positions, adjoints, strict=True))
    if len(gradients) > 1 or not isinstance(gradients[0], (float, complex, np.ndarray, np.number, DeviceArray)):
        seen: set[int] = set()
        gradients = tuple(_unshared(gradient, seen) for gradient in gradients)
    return gradients


class _Runner:
    """Runs the derivative program of one function and `argnums`, keeping its transforms at hand
    (one per kind of arguments: Python numbers get a program without array handling)."""

    def __init__(self, function, argnums: tuple[int, ...], debug_nans: bool = False):
        self.function = function
        # with *args, argnums past the named parameters pick elements of it (transforms/starred.py)
        self.argnums, self.picks = starred.top_level_argnums(source.unwrap(function).__code__, argnums)
        self.debug_nans = debug_nans or nonfinite.from_environment()
        self.programs: dict[tuple[str, ...], pipeline.Transformed] = {}
        self.parameters = source.parameter_names(function)
        # positional arguments go straight to the program only where every parameter takes one
        self.positional = len(self.parameters) == source.unwrap(function).__code__.co_argcount
        self.signature: inspect.Signature | None = None

    def program(self, argument_kinds: tuple[str, ...]) -> pipeline.Transformed:
        transformed = self.programs.get(argument_kinds)
        if transformed is None or not transformed.holds():
            transformed = pipeline.transform(self.function, self.argnums, argument_kinds)
            self.programs[argument_kinds] = transformed
        return transformed

    def __call__(self, args, kwargs, reset=_reset):
        """Run the program on `args` and `kwargs`: `(value, gradients)`. `reset` is the outermost
        continuation, `value -> (value, seed adjoint of value)`; it must call
        `runtime.keep_final_writes()` first, as `_reset` does (`cpsgrad.vjp` passes its own)."""
        if kwargs or len(args) != len(self.parameters) or not self.positional:
            if self.signature is None:
                self.signature = inspect.signature(self.function)
            bound = self.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            args = tuple(bound.arguments[p] for p in self.parameters)
        transformed = self.program(tuple(map(kinds.of, args)))
        differentiated = transformed.positions
        for name, value in starred.checked_arguments(self.parameters, args, differentiated, self.picks):
            _check_differentiable(name, value)
        if transformed.written:  # it writes into the arrays of parameters: no other argument may see it
            check_unshared(args, transformed.written, self.function)
        _deep.enter()
        loans = runtime.open_loans()  # adjoints lent to callees (runtime.loans.lend) live one run only
        writes = runtime.open_writes()
        try:
            runtime_objects.own_arguments(tuple(args[p] for p in differentiated))  # runtime/objects.py
            if self.debug_nans:
                result, watch = nonfinite.run(transformed.program, args, reset)
            else:
                result = transformed.program(*args, reset)
            gradients = starred.picked(_gradients(args, differentiated, result[1:]), self.picks)
        except LocatedError as error:
            if error.location is None:  # a run-time helper's refusal: the line that called it
                error.locate(nonfinite.origin_in(error.__traceback__))
            raise
        except RecursionError:
            raise DepthLimitError(
                f"{self.function.__qualname__} ran deeper than the Python tier's limit of "
                f"{sys.getrecursionlimit()} calls (each loop iteration and each call of a user function "
                "is one or more continuation calls); raise cpsgrad.api.max_depth"
            ) from None
        finally:
            _deep.leave()
            runtime.close_loans(loans)
            runtime.close_writes(writes)
        if self.debug_nans:
            nonfinite.check_result(self.function, self.parameters, args, result[0], gradients, differentiated, watch)
        return result[0], gradients


def _runner(function, argnums: tuple[int, ...], debug_nans: bool = False):
    """What runs `function`'s derivative program: a `_Runner`, or for a primitive with a rule
    (`cpsgrad.grad(np.sqrt)`), one per number of arguments, of a one-line function calling it."""
    if function in TABLE:
        runners: dict[int, _Runner] = {}

        def run(args, kwargs, reset=_reset):
            found = runners.get(len(args))
            if found is None:
                found = runners[len(args)] = _Runner(primitive_caller(function, len(args)), argnums, debug_nans)
            return found(args, kwargs, reset)

        return run
    source.unwrap(function)
    return _Runner(function, argnums, debug_nans)


def original(function):
    """The user's function behind a `grad`/`value_and_grad` wrapper; anything else as it is."""
    return function.__wrapped__ if getattr(function, "__cpsgrad_gradient__", False) else function


def _refuse_nested(function) -> None:
    if getattr(function, "__cpsgrad_gradient__", False):
        raise HigherOrderError(
            "grad of a gradient (higher-order differentiation) is not supported yet: nested reverse "
            "mode would confuse perturbations and give wrong answers"
        )


def value_and_grad(function: Callable | None = None, argnums: int | tuple[int, ...] = 0, debug_nans: bool = False):
    """`function`'s value and its gradient with respect to the positional arguments `argnums`.

    Returns a function taking `function`'s arguments and returning `(value, gradient)`; the
    gradient is one value for an int `argnums`, a tuple for a tuple. Usable as a decorator,
    with or without arguments. `debug_nans` is as for `grad`.
    """
    if function is None:
        return functools.partial(value_and_grad, argnums=argnums, debug_nans=debug_nans)
    _refuse_nested(function)
    wanted = _argnums(argnums)

    run = _runner(function, wanted, debug_nans)

    @functools.wraps(function)
    def value_and_gradient(*args, **kwargs):
        value, gradients = run(args, kwargs)
        return value, gradients[0] if isinstance(argnums, int) else gradients

    value_and_gradient.__cpsgrad_gradient__ = True
    return value_and_gradient


def grad(function: Callable | None = None, argnums: int | tuple[int, ...] = 0, debug_nans: bool = False):
    """The gradient of a scalar-valued `function` with respect to its positional arguments `argnums`.

    ::

        @cpsgrad.grad
        def f(x, n):
            ...
        f(1.5, 10)   # df/dx at x = 1.5

    The function is transformed into continuation-passing style once (per function and
    `argnums`) and the generated program is reused; `cpsgrad.show(f)` prints it.

    With `debug_nans=True` (or the environment variable `CPSGRAD_DEBUG_NANS=1` set when the
    gradient function is made), each run is watched, line by line, and the first statement of
    the derivative program that makes a NaN or an infinity from finite values raises
    `cpsgrad.NonFiniteError`: the user's `file:line:col` it came from, forward or backward pass,
    the values it read and made, and the generated line as `cpsgrad show` prints it. A value
    that was already non-finite (an argument, a global) is not blamed on the lines that hand it
    on; if the value or a gradient comes out non-finite anyway, the error's phase is "input"
    and it names the arguments that were. Watched runs are many times slower
    (`cpsgrad.nonfinite`); runs without it are unchanged.
    """
    if function is None:
        return functools.partial(grad, argnums=argnums, debug_nans=debug_nans)
    _refuse_nested(function)
    wanted = _argnums(argnums)

    run = _runner(function, wanted, debug_nans)

    @functools.wraps(function)
    def gradient(*args, **kwargs):
        _, gradients = run(args, kwargs)
        return gradients[0] if isinstance(argnums, int) else gradients

    gradient.__cpsgrad_gradient__ = True
    return gradient


def show(
    function: Callable,
    stage: str = "final",
    argnums: int | tuple[int, ...] = 0,
    example: tuple | None = None,
    numbers: Iterable[str] | None = None,
    annotate: bool = False,
    mode: str = "reverse",
) -> str:
    """The source cpsgrad generates for `function` at `stage` ("normalize", "cps" or "final").

    `mode="forward"` prints the tangent program `cpsgrad.jvp` runs (final stage only), with
    `argnums` the arguments that have tangents.

    "final" is exactly the program that runs for arguments like `example` (a tuple of
    arguments, used only for their kinds: a Python number, a short tuple or list of numbers, or
    anything else such as an array). Or name the parameters that hold Python numbers with
    `numbers`. Without either, parameters annotated `float`, `int` or `bool` are numbers and
    every other parameter may be anything (arrays included). A function wrapped by `grad`
    shows its original. The programs of the functions it calls follow, each under a comment
    header naming the call (for the kinds the caller can tell; a callee known only at run time,
    such as a function passed as an argument, is named without its program). A legend on how to
    read the programs heads the output, once.

    With `annotate`, each block of the final programs' lines that comes from one statement of the
    user's is headed by a comment `# from line N: <that line>`. The comments are only for reading:
    the line numbers `debug_nans` reports count the lines of the plain output.
    """
    if stage not in pipeline.STAGES:
        raise ValueError(f"stage must be one of {', '.join(pipeline.STAGES)}, not {stage!r}")
    if mode not in ("reverse", "forward") or (mode == "forward" and (stage != "final" or annotate)):
        raise ValueError(f"mode must be 'reverse' or 'forward' (the final stage, not annotated), not {mode!r}")
    if annotate and stage != "final":
        raise ValueError(f"annotate marks the user's lines in the final stage only, not in {stage!r}")
    function = original(function)
    names = source.parameter_names(function)
    argument_kinds = None
    if example is not None and numbers is not None:
        raise ArgumentError("pass example or numbers, not both")
    if example is not None:
        if len(example) != len(names):
            raise ArgumentError(
                f"example has {len(example)} arguments; {function.__qualname__} takes {len(names)} {tuple(names)}"
            )
        argument_kinds = tuple(map(kinds.of, example))
    elif numbers is not None:
        numbers = set(numbers)
        unknown = numbers - set(names)
        if unknown:
            missing = ", ".join(sorted(unknown))
            raise ArgumentError(
                f"{function.__qualname__} has no parameter {missing}; its parameters are {tuple(names)}"
            )
        argument_kinds = tuple(kinds.NUMBER if name in numbers else kinds.ANY for name in names)
    if mode == "forward":
        from cpsgrad.transforms import forward_mode

        return forward_mode.transform(function, _argnums(argnums), argument_kinds).text
    return showing.stage_text(function, _argnums(argnums), stage, argument_kinds, annotate)
