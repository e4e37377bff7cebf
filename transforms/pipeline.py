"""Run the passes in order (source, fence, normalize, activity, cps, adjoint, emit) and cache the result."""

from __future__ import annotations

import types
import weakref
from dataclasses import dataclass
from functools import cached_property

from cpsgrad.errors import ArgumentError
from cpsgrad.rules.registry import TABLE
from cpsgrad.transforms import activity, cps, emit, fence, naming, normalize, source, syntax
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


# function -> {argnums: Transformed}; weak, so a redefined or deleted function frees its program
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def transform(function, argnums: tuple[int, ...]) -> Transformed:
    """The derivative program of `function` w.r.t. its positional arguments `argnums` (cached
    per function object, its code object and the rule table's version)."""
    function = source.unwrap(function)
    found = cached(function, argnums)
    if found is not None:
        return found
    result = _run(source.read(function), argnums)
    _CACHE.setdefault(function, {})[argnums] = result
    return result


def cached(function, argnums: tuple[int, ...]) -> Transformed | None:
    """The cached transform, if the function's code and the rule table are unchanged."""
    entry = _CACHE.get(function, {}).get(argnums)
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


def _front(read: source.FunctionSource, argnums: tuple[int, ...]) -> _Front:
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
    return _Front(read, normalized, differentiated, resolver, program)


def stage_text(function, argnums: tuple[int, ...], stage: str) -> str:
    """What `show` prints for `stage`; the early stages do not need the later passes to succeed."""
    if stage == "final":
        return transform(function, argnums).text("final")
    front = _front(source.read(source.unwrap(function)), argnums)
    return syntax.code(front.normalized.definition) if stage == "normalize" else cps.render(front.program)


def _run(read: source.FunctionSource, argnums: tuple[int, ...]) -> Transformed:
    front = _front(read, argnums)
    program = front.program
    generator = Generator(program, front.resolver, front.differentiated)
    body = generator.generate()
    entry = naming.cps_function(program.function.name)
    wrapper = naming.program_wrapper(program.function.name)
    parameters = emit.wrapper_parameters(read.function, generator.namespace)
    indented = "".join(("    " + line if line.strip() else line) for line in body.splitlines(keepends=True))
    final = (
        _header(read, front.differentiated)
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
    return Transformed(read.function, front.normalized.parameters, front.differentiated, stages, compiled, read.function.__code__, TABLE.version)


def _header(read: source.FunctionSource, differentiated: tuple[str, ...]) -> str:
    wrt = ", ".join(differentiated) or "nothing"
    return (
        f"# cpsgrad: the derivative program of {read.function.__qualname__} "
        f"({read.filename}:{read.first_line}), with respect to {wrt}.\n"
        "# Each continuation returns the result, then the adjoints of the values it was handed.\n"
        "# The wrapper's parameters are the rules' helpers and the function's free variables.\n"
    )


def _positional_parameters(function: types.FunctionType) -> list[str]:
    code = function.__code__
    return list(code.co_varnames[: code.co_argcount])


def _assigned(normalized: normalize.Normalized) -> set[str]:
    return {name for targets, _ in activity.assignments(normalized.definition.body.body) for name in targets}
