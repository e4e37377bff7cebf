"""A function's tangent program: made once per function, differentiated positions and argument
kinds, compiled with the user's globals and cells like the reverse program (transforms/emit.py).

`transform(f, positions)` returns a `TangentProgram` whose `run(*args, *tangents)` returns
`(f(*args), the tangent of f's result)`, the tangents being those of the positional arguments
at `positions`. The text it runs is `TangentProgram.text`, what `cpsgrad show --mode forward`
prints.
"""

from __future__ import annotations

import inspect
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from cpsgrad import runtime
from cpsgrad.errors import ArgumentError, HigherOrderError, UnsupportedError
from cpsgrad.rules.registry import TABLE, not_differentiable
from cpsgrad.runtime import adapters
from cpsgrad.runtime import kinds as runtime_kinds
from cpsgrad.runtime.tangents import zero_tangent
from cpsgrad.runtime.targets import is_gradient
from cpsgrad.transforms import emit, normalize, pipeline, source
from cpsgrad.transforms.forward_mode import pullbacks
from cpsgrad.transforms.forward_mode.render import Renderer
from cpsgrad.transforms.resolve import binding_guard

#: The name tangent programs call the run-time package by: not `cpsgrad_runtime`, which the fence keeps
#: from user code, so that the reverse mode can differentiate a tangent program (cpsgrad/higher_order.py).
TANGENT_RUNTIME = "tangent_runtime"


class _RuntimeRenamed(cst.CSTTransformer):
    def __init__(self, name: str):
        self.name = name

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        return updated.with_changes(value=self.name) if original.value == emit.RUNTIME_NAME else updated


@dataclass
class TangentProgram:
    function: types.FunctionType
    positions: tuple[int, ...]
    argument_kinds: tuple[str, ...]
    text: str
    run: Callable
    code: types.CodeType
    version: int
    holds_bindings: Callable[[], bool] | None  # None: it resolved no name that could be rebound

    def holds(self) -> bool:
        return self.code is self.function.__code__ and self.version == TABLE.version and (
            self.holds_bindings is None or self.holds_bindings()
        )


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def transform(function, positions: tuple[int, ...], argument_kinds: tuple[str, ...] | None = None) -> TangentProgram:
    """The tangent program of `function` in its positional arguments `positions`, for arguments of
    `argument_kinds` (transforms.analysis.kinds; None: anything). Cached per function."""
    function = source.unwrap(function)
    argument_kinds = argument_kinds or pipeline.default_kinds(function)
    programs = _CACHE.setdefault(function, {})
    found = programs.get((positions, argument_kinds))
    if found is not None and found.holds():
        return found
    code = function.__code__
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        raise UnsupportedError(
            None, f"{function.__qualname__}(*args, **kwargs)",
            "forward mode (cpsgrad.jvp) does not take functions with *args or **kwargs parameters yet",
        )
    read = source.read(function)
    if read.captured:
        raise UnsupportedError(None, f"nested function {function.__qualname__}",
                               "forward mode (cpsgrad.jvp) does not differentiate closures yet")
    with pipeline._collector_paused(), normalize.shared():
        front = pipeline._front(read, positions, argument_kinds)
        renderer = Renderer(front, front.differentiated, tangent_by_pullbacks, tangent_call, tangent_function)
        entry = f"{read.name}__jvp"
        definition = renderer.function(entry).visit(_RuntimeRenamed(renderer.helper(TANGENT_RUNTIME, runtime)))
    if front.normalized.definitions:
        raise UnsupportedError(
            None, f"nested functions of {function.__qualname__}",
            "forward mode (cpsgrad.jvp) does not differentiate functions that define functions yet",
        )
    wrapper = f"{read.name}__tangent_program"
    free = emit.free_variables(read.function, ())
    helpers = renderer.namespace
    helpers.update(front.resolver.extra)  # the written-argument variants its calls name (written_arguments.py)
    parameters = emit.wrapper_parameters(free, helpers)
    wrapper_function = cst.FunctionDef(
        cst.Name(wrapper),
        cst.Parameters([cst.Param(cst.Name(p)) for p in parameters]),
        cst.IndentedBlock([definition, cst.SimpleStatementLine([cst.Return(cst.Name(entry))])]),
    )
    header = _header(read, front.differentiated, renderer.suffix)
    text = cst.Module([wrapper_function], header=header).code
    filename = f"<cpsgrad tangent {read.function.__qualname__} {read.filename}:{read.first_line}>"
    run = emit.compile_program(text, filename, wrapper, entry, read.function, helpers, free)
    program = TangentProgram(
        read.function, positions, argument_kinds, text, run, code, TABLE.version,
        binding_guard(read.function, front.resolver.bindings),
    )
    programs[(positions, argument_kinds)] = program
    return program


def _header(read, differentiated: tuple[str, ...], suffix: str) -> list[cst.EmptyLine]:
    lines = [
        f"cpsgrad: the tangent program of {read.function.__qualname__} ({read.filename}:{read.first_line}), "
        f"forward mode in {', '.join(differentiated)}.",
        f"It returns the result and its tangent; <name>{suffix} is the tangent of <name>.",
    ]
    return [cst.EmptyLine(comment=cst.Comment("# " + line)) for line in lines]


# ---- what tangent programs call -----------------------------------------------------------


def tangent_call(function, arguments: tuple, tangents: tuple, keywords: dict | None = None,
                 keyword_tangents: dict | None = None):
    """`(function(*arguments, **keywords), its tangent)`: a user function's call in a tangent
    program, given the tangents of its arguments (None for those without one)."""
    if is_gradient(function):
        raise HigherOrderError(
            "forward mode of a gradient (cpsgrad.jvp over cpsgrad.grad) is not supported yet"
        )
    if type(function) is types.MethodType:
        arguments, tangents = (function.__self__, *arguments), (None, *tangents)
        function = function.__func__
    if keywords:
        arguments, tangents = _bound(function, arguments, tangents, keywords, keyword_tangents or {})
    positions = tuple(i for i, t in enumerate(tangents) if t is not None)
    if not positions:
        result = function(*arguments)
        return result, zero_tangent(result)
    if function in TABLE:
        function = adapters.primitive_caller(function, len(arguments))
    elif not isinstance(function, types.FunctionType):
        raise UnsupportedError(
            None, f"call of {getattr(function, '__qualname__', type(function).__name__)}",
            "forward mode (cpsgrad.jvp) calls Python functions and primitives with rules only",
        )
    arguments, tangents = _with_defaults(function, arguments, tangents)
    program = transform(function, positions, tuple(map(runtime_kinds.of, arguments)))
    return program.run(*arguments, *(tangents[i] for i in positions))


def _with_defaults(function: types.FunctionType, arguments: tuple, tangents: tuple) -> tuple[tuple, tuple]:
    """The arguments of a call that leaves out defaulted parameters, with the defaults: a tangent
    program takes every parameter, positionally (keyword-only ones last)."""
    code = function.__code__
    missing = code.co_argcount - len(arguments)
    if missing > 0:
        defaults = function.__defaults__ or ()
        if missing > len(defaults):
            raise ArgumentError(f"{function.__qualname__} is called with too few arguments")
        arguments, tangents = (*arguments, *defaults[len(defaults) - missing:]), (*tangents, *(None,) * missing)
    if code.co_kwonlyargcount and len(arguments) == code.co_argcount:
        names = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
        given = function.__kwdefaults__ or {}
        if any(n not in given for n in names):
            raise ArgumentError(f"{function.__qualname__}'s keyword-only parameters without defaults are not given")
        arguments, tangents = (*arguments, *(given[n] for n in names)), (*tangents, *(None,) * len(names))
    return arguments, tangents


def tangent_function(function, arguments: tuple, tangents: tuple):
    """The function a tangent program calls for `function(*arguments)` given the arguments'
    tangents (None for those without one): the tangent program's own `run` for a Python function,
    taking the arguments then the tangents there are; a caller through `tangent_call` for anything
    else (a method, a primitive passed as a value), taking the same."""
    whole = isinstance(function, types.FunctionType) and len(arguments) == function.__code__.co_argcount + (
        function.__code__.co_kwonlyargcount
    )  # a call that leaves defaults out goes through tangent_call, which adds them
    if whole and not is_gradient(function) and function not in TABLE:
        positions = tuple(i for i, t in enumerate(tangents) if t is not None)
        if positions:
            return transform(function, positions, tuple(map(runtime_kinds.of, arguments))).run
    return _Through(function, len(arguments), tuple(t is not None for t in tangents))


class _Through:
    """`tangent_function`'s caller of a method, a primitive or a function with nothing to differentiate."""

    def __init__(self, function, count: int, given: tuple[bool, ...]):
        self.function, self.count, self.given = function, count, given

    def __call__(self, *values):
        arguments, rest = values[: self.count], iter(values[self.count:])
        tangents = tuple(next(rest) if given else None for given in self.given)
        return tangent_call(self.function, arguments, tangents)


def _bound(function, arguments: tuple, tangents: tuple, keywords: dict, keyword_tangents: dict):
    signature = inspect.signature(function)
    names = list(signature.parameters)
    bound = signature.bind(*arguments, **keywords)
    bound.apply_defaults()
    given = dict(zip(names, tangents, strict=False))
    given.update(keyword_tangents)
    for name, parameter in signature.parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise ArgumentError(f"forward mode (cpsgrad.jvp) does not call {function.__qualname__}(**kwargs) yet")
        if parameter.kind is parameter.KEYWORD_ONLY and given.get(name) is not None:
            raise ArgumentError(
                f"forward mode (cpsgrad.jvp) does not differentiate {function.__qualname__}'s keyword-only "
                f"parameter {name} yet; make it positional"
            )
    return tuple(bound.arguments[n] for n in names), tuple(given.get(n) for n in names)


tangent_by_pullbacks = pullbacks.tangent_by_pullbacks


# the reverse mode differentiates a tangent program through the functions tangent_function picks
# (cpsgrad/higher_order.py); picking one carries no derivative
not_differentiable(tangent_function)
