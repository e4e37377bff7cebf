"""Run the passes in order (source, fence, normalize, activity, cps, adjoint, emit) and cache the result."""

from __future__ import annotations

import types
import weakref
from dataclasses import dataclass
from functools import cached_property

from cpsgrad.errors import ArgumentError
from cpsgrad.rules.registry import TABLE
from cpsgrad.transforms import activity, cps, emit, fence, kinds, naming, normalize, source, syntax
from cpsgrad.transforms.adjoint import Generator
from cpsgrad.transforms.naming import Namer, names_in
from cpsgrad.transforms.resolve import Resolver

STAGES = ("normalize", "cps", "final")


@dataclass
class Transformed:
    """Everything one transform produced for one function and one choice of arguments."""

    function: types.FunctionType
    parameters: list[str]
    differentiated: tuple[str, ...]
    kinds: tuple[str, ...]  # per parameter, what the program was specialised for (transforms.kinds)
    stages: dict[str, str]
    program: types.FunctionType  # f__cps(*parameters, k) -> (value, *adjoints of differentiated)
    code: types.CodeType
    table_version: int

    @cached_property
    def positions(self) -> tuple[int, ...]:
        """Where the differentiated parameters are in `parameters`."""
        return tuple(self.parameters.index(name) for name in self.differentiated)

    def text(self, stage: str = "final") -> str:
        return self.stages[stage]


# function -> {(argnums, kinds): Transformed}; weak, so a redefined or deleted function frees its program
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def transform(function, argnums: tuple[int, ...], argument_kinds: tuple[str, ...] | None = None) -> Transformed:
    """The derivative program of `function` w.r.t. its positional arguments `argnums`,
    specialised for arguments of `argument_kinds` (one per parameter, `transforms.kinds`; None:
    anything). Cached per function object, its code object, the kinds and the rule table's version."""
    function = source.unwrap(function)
    argument_kinds = argument_kinds or default_kinds(function)
    found = cached(function, argnums, argument_kinds)
    if found is not None:
        return found
    result = _run(source.read(function), argnums, argument_kinds)
    _CACHE.setdefault(function, {})[argnums, argument_kinds] = result
    return result


def default_kinds(function) -> tuple[str, ...]:
    """Kinds from the parameters' annotations: `float`, `int` and `bool` are numbers, the rest any."""
    names = source.parameter_names(function)
    annotations = getattr(function, "__annotations__", {})
    number = {float, int, bool, "float", "int", "bool"}
    return tuple(kinds.NUMBER if annotations.get(name) in number else kinds.ANY for name in names)


def cached(function, argnums: tuple[int, ...], argument_kinds: tuple[str, ...]) -> Transformed | None:
    """The cached transform, if the function's code and the rule table are unchanged."""
    entry = _CACHE.get(function, {}).get((argnums, argument_kinds))
    if entry is not None and entry.code is function.__code__ and entry.table_version == TABLE.version:
        return entry
    return None


@dataclass
class _Front:
    """The passes before code generation: enough to show the normalize and cps stages."""

    read: source.FunctionSource
    normalized: normalize.Normalized
    differentiated: tuple[str, ...]
    resolver: Resolver
    program: cps.Program
    numbers: set[str]  # variables that always hold a Python number (transforms.kinds)


def _front(read: source.FunctionSource, argnums: tuple[int, ...], argument_kinds: tuple[str, ...]) -> _Front:
    fence.check(read)
    normalized = normalize.normalize(read)
    positional = _positional_parameters(read.function)
    for position in argnums:
        if not -len(positional) <= position < len(positional):
            raise ArgumentError(
                f"argnums {position} is out of range: {read.function.__qualname__} has "
                f"{len(positional)} positional parameters {tuple(positional)}"
            )
    differentiated = tuple(positional[p] for p in argnums)
    if len(set(differentiated)) != len(differentiated):
        raise ArgumentError(f"argnums {argnums} names a parameter twice: {differentiated}")
    resolver = Resolver(read.function, set(normalized.parameters) | _assigned(normalized))
    active = activity.active_names(normalized.definition, set(differentiated), resolver)
    program = cps.convert(normalized, active, Namer(names_in(normalized.definition)))
    numbers, _ = kinds.number_variables(normalized.definition, dict(zip(normalized.parameters, argument_kinds, strict=True)), resolver)
    return _Front(read, normalized, differentiated, resolver, program, numbers)


def stage_text(function, argnums: tuple[int, ...], stage: str, argument_kinds: tuple[str, ...] | None = None) -> str:
    """What `show` prints for `stage`; the early stages do not need the later passes to succeed."""
    function = source.unwrap(function)
    argument_kinds = argument_kinds or default_kinds(function)
    if stage == "final":
        return transform(function, argnums, argument_kinds).text("final")
    front = _front(source.read(function), argnums, argument_kinds)
    return syntax.code(front.normalized.definition) if stage == "normalize" else cps.render(front.program)


def _run(read: source.FunctionSource, argnums: tuple[int, ...], argument_kinds: tuple[str, ...]) -> Transformed:
    front = _front(read, argnums, argument_kinds)
    program = front.program
    generator = Generator(program, front.resolver, front.differentiated, front.numbers)
    body = generator.generate()
    entry = naming.cps_function(program.function.name)
    wrapper = naming.program_wrapper(program.function.name)
    parameters = emit.wrapper_parameters(read.function, generator.namespace)
    indented = "".join(("    " + line if line.strip() else line) for line in body.splitlines(keepends=True))
    final = (
        _header(read, front.differentiated, dict(zip(front.normalized.parameters, argument_kinds, strict=True)))
        + f"def {wrapper}({', '.join(parameters)}):\n"
        + indented
        + f"    return {entry}\n"
    )
    filename = f"<cpsgrad {read.function.__qualname__} {read.filename}:{read.first_line}>"
    compiled = emit.compile_program(final, filename, wrapper, entry, read.function, generator.namespace)
    stages = {
        "normalize": syntax.code(front.normalized.definition),
        "cps": cps.render(program),
        "final": final,
    }
    return Transformed(read.function, front.normalized.parameters, front.differentiated, argument_kinds, stages, compiled, read.function.__code__, TABLE.version)


def _header(read: source.FunctionSource, differentiated: tuple[str, ...], argument_kinds: dict[str, str]) -> str:
    wrt = ", ".join(differentiated) or "nothing"
    specialised = ", ".join(f"{name}: {kind}" for name, kind in argument_kinds.items()) or "no arguments"
    return (
        f"# cpsgrad: the derivative program of {read.function.__qualname__} "
        f"({read.filename}:{read.first_line}), with respect to {wrt}.\n"
        f"# Specialised for arguments {specialised} (a number is a Python float or int).\n"
        "# Each continuation returns the result, then the adjoints of the values it was handed.\n"
        "# The wrapper's parameters are the rules' helpers and the function's free variables.\n"
    )


def _positional_parameters(function: types.FunctionType) -> list[str]:
    code = function.__code__
    return list(code.co_varnames[: code.co_argcount])


def _assigned(normalized: normalize.Normalized) -> set[str]:
    return {name for targets, _ in activity.assignments(normalized.definition.body.body) for name in targets}
