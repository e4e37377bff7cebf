"""Run the passes in order (source, fence, normalize, activity, cps, adjoint, emit) and cache the result.

What `cpsgrad show` prints of the programs made here is rendered by `showing.py`."""

from __future__ import annotations

import collections
import contextlib
import gc
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import libcst as cst

from cpsgrad import nonfinite
from cpsgrad.errors import ArgumentError
from cpsgrad.rules.registry import TABLE
from cpsgrad.runtime import dispatch
from cpsgrad.runtime.closures import DEFINITIONS
from cpsgrad.transforms import (
    calls,
    cps,
    emit,
    fence,
    naming,
    normalize,
    persisted,
    settling,
    source,
    starred,
    syntax,
    written_arguments,
)
from cpsgrad.transforms.adjoint import Generator
from cpsgrad.transforms.analysis import activity, aliasing, callee_writes, kinds
from cpsgrad.transforms.resolve import Resolver, binding_guard

STAGES = ("normalize", "cps", "final")
# how many programs this process made by the passes, read from the disk cache, stored there
COUNTS: collections.Counter = collections.Counter()


@dataclass
class Transformed:
    """Everything one transform produced for one function and one choice of arguments."""

    function: types.FunctionType
    parameters: list[str]
    differentiated: tuple[str, ...]
    kinds: tuple[str, ...]  # per parameter, what the program was specialised for (transforms.analysis.kinds)
    stages: dict[str, str]
    program: types.FunctionType  # f__cps(*parameters, k) -> (value, *adjoints of differentiated)
    code: types.CodeType
    table_version: int
    sites: list[calls.Site]  # its calls of user functions
    assumed: tuple[str, ...] = ()  # module globals taken for numbers (transforms.analysis.kinds)
    definitions: dict = field(default_factory=dict)  # its nested defs and lambdas (wrapper parameter -> Definition)
    borrowers: tuple[str, ...] = ()  # parameters whose adjoint starts from what a caller lent (runtime.loans.borrow)
    guard: Callable[[], bool] | None = (
        None  # whether the names it resolved still name the same objects (resolve.binding_guard)
    )
    # whether the program is still the function's: same code, same rule table, its globals taken
    # for numbers still numbers, its resolved names still naming the same objects (one generated
    # function of identity checks, called on every run: `_holds`)
    holds: Callable[[], bool] = field(default=lambda: False)
    # per line of the final text, (SourceLocation of the user's statement | None, "forward" | "backward")
    origins: tuple = ()
    # read from the disk cache (transforms/persisted.py): `sites` is empty (`show` runs the
    # passes for them), the function's other stages are made by the passes when asked for
    loaded: bool = False
    written: tuple[int, ...] = ()  # the parameters whose arrays it writes into (their positions; aliasing.py)

    @cached_property
    def positions(self) -> tuple[int, ...]:
        """Where the differentiated parameters are in `parameters`."""
        return tuple(self.parameters.index(name) for name in self.differentiated)

    def text(self, stage: str = "final") -> str:
        return self.stages[stage]


class _Stages(dict):
    """A program's text per stage: the final one, and the earlier ones rendered when first asked for."""

    def __init__(self, final: str, **renderers: Callable[[], str]):
        super().__init__(final=final)
        self.renderers = renderers

    def __missing__(self, stage: str) -> str:
        text = self[stage] = self.renderers.pop(stage)()
        return text


class _Held(dict):
    """One function's programs, in its `__dict__`. Pickled (cloudpickle pickles a function's
    `__dict__`), or copied onto another function (`functools.wraps` copies `__dict__`), it is
    an empty table of no function: programs stay with the function they were made for."""

    __slots__ = ("owner",)

    def __init__(self, owner=None):
        super().__init__()
        self.owner = owner

    def __reduce__(self):
        return (_Held, ())


class _Programs:
    """function (or a nested function's Definition) -> {(argnums, kinds, every_parameter):
    Transformed}, kept on the key itself: a function's in its `__dict__` (under `ATTRIBUTE`, a
    `_Held`), a Definition's in its `programs`. A program holds its function, so a table beside
    them would keep every function ever transformed (a WeakKeyDictionary too: its values would
    hold its keys); kept on the key, a function and its programs are freed together when
    nothing else holds them, and nothing here grows with the number of functions transformed."""

    ATTRIBUTE = "__cpsgrad_programs__"

    def get(self, key, default=None):
        if isinstance(key, types.FunctionType):
            held = key.__dict__.get(self.ATTRIBUTE)
            return held if type(held) is _Held and held.owner is key else default
        if isinstance(key, types.CodeType):  # a nested function's code: its live Definition's
            key = DEFINITIONS.get(key)
            if key is None:
                return default
        return key.programs

    def setdefault(self, key, default):
        if isinstance(key, types.FunctionType):
            held = self.get(key)
            if held is None:
                held = key.__dict__[self.ATTRIBUTE] = _Held(key)
            return held
        return key.programs


_CACHE = _Programs()


def transform(
    function, argnums: tuple[int, ...], argument_kinds: tuple[str, ...] | None = None, every_parameter: bool = False
) -> Transformed:
    """The derivative program of `function` w.r.t. its positional arguments `argnums`,
    specialised for arguments of `argument_kinds` (one per parameter, `transforms.analysis.kinds`; None:
    anything). Cached per function object, its code object, the kinds and the rule table's version.
    With `every_parameter`, `argnums` may name keyword-only parameters too (calls from programs)."""
    function = source.unwrap(function)
    argument_kinds = argument_kinds or default_kinds(function)
    found = cached(function, argnums, argument_kinds, every_parameter)
    if found is not None:
        return found
    result = _load(function, argnums, argument_kinds, every_parameter)
    if result is None:
        with _collector_paused(), normalize.shared():
            result = _run(source.read(function, lifted=every_parameter), argnums, argument_kinds, every_parameter)
    _CACHE.setdefault(_cache_key(function, every_parameter), {})[argnums, argument_kinds, every_parameter] = result
    return result


@contextlib.contextmanager
def _collector_paused():
    """The cyclic garbage collector off while one program is generated: the adjoint pass builds
    its program as thousands of small libcst nodes, all alive until the module is rendered, and
    the collections their allocations trigger (each traversing them again) were a third of the
    demo's first transform. The nodes hold no cycles; what is garbage goes when the generation
    ends (reference counting), anything cyclic at the next collection after it."""
    if not gc.isenabled():  # paused already (a nested transform), or off by the user's choice
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _cache_key(function: types.FunctionType, every_parameter: bool):
    """A nested function's program (taking what it captured as parameters) serves its code object's functions."""
    if every_parameter:
        definition = DEFINITIONS.get(function.__code__)
        if definition is not None:
            return definition
    return function


def default_kinds(function) -> tuple[str, ...]:
    """Kinds from the parameters' annotations: `float`, `int` and `bool` are numbers, the rest any."""
    names = source.parameter_names(function)
    annotations = getattr(function, "__annotations__", {})
    number = {float, int, bool, "float", "int", "bool"}
    return tuple(kinds.NUMBER if annotations.get(name) in number else kinds.ANY for name in names)


def cached(
    function, argnums: tuple[int, ...], argument_kinds: tuple[str, ...], every_parameter: bool = False
) -> Transformed | None:
    """The cached transform, if its code, the rule table and its number globals hold."""
    entry = _CACHE.get(_cache_key(function, every_parameter), {}).get((argnums, argument_kinds, every_parameter))
    if entry is not None and entry.code is function.__code__ and entry.holds():
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
    numbers: set[str]  # variables that always hold a Python number (transforms.analysis.kinds)
    sites: list[calls.Site]  # the calls of user functions


def _front(
    read: source.FunctionSource,
    argnums: tuple[int, ...],
    argument_kinds: tuple[str, ...],
    every_parameter: bool = False,
) -> _Front:
    fence.check(read)
    normalized = normalize.normalize(read)
    positional = normalized.parameters if every_parameter else starred.positional_parameters(read.function)
    for position in argnums:
        if not -len(positional) <= position < len(positional):
            raise ArgumentError(
                f"argnums {position} is out of range: {read.function.__qualname__} has "
                f"{len(positional)} positional parameters {tuple(positional)}"
            )
    differentiated = tuple(positional[p] for p in argnums)
    if len(set(differentiated)) != len(differentiated):
        raise ArgumentError(f"argnums {argnums} names a parameter twice: {differentiated}")
    # a top-level program may take module globals holding numbers for numbers (the API checks
    # they still do on each call); the programs of callees, cached per call site, do not
    resolver = Resolver(
        read.function, set(normalized.parameters) | _assigned(normalized), assume_global_numbers=not every_parameter
    )
    resolver.bindings.update(normalized.bindings)  # what normalize's rewrites depended on is guarded too
    written_arguments.rewrite(normalized, resolver, callee_writes.written_by)  # f(y) writing into y: y bound again
    active = activity.active_names(normalized.definition, set(differentiated), resolver)
    recompute = lambda: activity.active_names(normalized.definition, set(differentiated), resolver)  # noqa: E731
    active = settling.settle(normalized, active, resolver, recompute)  # np.r_[x], obj[v], obj.f(x): rewritten
    user_calls = calls.user_calls(normalized.definition, active, resolver)
    parameter_kinds = dict(zip(normalized.parameters, argument_kinds, strict=True))
    numbers, sequences = kinds.number_variables(normalized.definition, parameter_kinds, resolver)
    writers = callee_writes.writes_into  # what a callee given this function's parameter writes into
    if aliasing.check(normalized, active, numbers, resolver, user_calls, writers):  # writes: refused where unsound
        active = activity.active_names(normalized.definition, set(differentiated), resolver)  # x op= y rewritten
        user_calls = calls.user_calls(normalized.definition, active, resolver)
    program = cps.convert(normalized, active, naming.Namer(naming.names_in(normalized.definition)), user_calls)
    sites = [_site(call, normalized, resolver, active, numbers, sequences) for call in program.calls]
    return _Front(read, normalized, differentiated, resolver, program, numbers, sites)


def _site(
    call: cps.Call,
    normalized: normalize.Normalized,
    resolver: Resolver,
    active: set[str],
    numbers: set[str],
    sequences: set[str],
) -> calls.Site:
    value = call.statement.body[0].value
    arguments = [a for a in value.args if a.keyword is None] + [a for a in value.args if a.keyword is not None]
    return calls.Site(
        call.label,
        call.statement,
        normalized.location(call.statement),
        resolver.resolve(value.func),
        sum(1 for a in value.args if a.keyword is None),
        tuple(a.keyword.value for a in value.args if a.keyword is not None),
        tuple(i for i, a in enumerate(arguments) if isinstance(a.value, cst.Name) and a.value.value in active),
        tuple(kinds.atom_kind(a.value, numbers, sequences, resolver) for a in arguments),
        calls.is_callee_active(value.func, active),
        normalized.consumable.get(id(call.statement), ()),
    )


def _run(
    read: source.FunctionSource,
    argnums: tuple[int, ...],
    argument_kinds: tuple[str, ...],
    every_parameter: bool = False,
) -> Transformed:
    front = _front(read, argnums, argument_kinds, every_parameter)
    program = front.program
    generator = Generator(
        program,
        front.resolver,
        front.differentiated,
        front.numbers,
        front.sites,
        borrows=every_parameter,
        captured=read.captured,
    )
    generator.namespace.update(front.normalized.definitions)
    generator.namespace.update(front.resolver.extra)  # the written-argument variants the calls name
    entry_function = generator.generate()
    entry = naming.cps_function(program.function.name)
    wrapper = naming.program_wrapper(program.function.name)
    free = emit.free_variables(read.function, read.captured)
    parameters = emit.wrapper_parameters(free, generator.namespace)
    # a program that only other programs call (`every_parameter`) is shown after one with the legend;
    # programs with call sites come after a function's program only through its calls and nested defs
    legend = "" if every_parameter else _legend(bool(front.sites or front.normalized.definitions))
    kinds_of = dict(zip(front.normalized.parameters, argument_kinds, strict=True))
    header = legend + _header(read, front.differentiated, kinds_of, front.sites, sorted(front.resolver.assumed))
    wrapper_body = [entry_function, cst.SimpleStatementLine([cst.Return(cst.Name(entry))])]
    wrapper_function = cst.FunctionDef(
        cst.Name(wrapper), cst.Parameters([cst.Param(cst.Name(p)) for p in parameters]), cst.IndentedBlock(wrapper_body)
    )
    # the program's text, rendered once, and where each of its lines came from (for debug_nans, show)
    final, origins = emit.render(_comments(header), wrapper_function, generator.provenance)
    filename = f"<cpsgrad {read.function.__qualname__} {read.filename}:{read.first_line}>"
    module = emit.compile_module(final, filename)
    compiled = emit.compile_program(final, filename, wrapper, entry, read.function, generator.namespace, free, module)
    nonfinite.register(compiled, wrapper, filename, final, origins)
    stages = _Stages(final, normalize=lambda: syntax.code(front.normalized.definition), cps=lambda: cps.render(program))
    assumed = tuple(sorted(front.resolver.assumed))
    borrowers = tuple(sorted(generator.borrowers.values()))
    COUNTS["transformed"] += 1
    written = tuple(front.normalized.parameters.index(p) for p in front.normalized.written_parameters)
    if not read.captured and not front.normalized.definitions:  # nested defs: their functions are this process's
        COUNTS["stored"] += persisted.store(
            read, argnums, argument_kinds, every_parameter, final, module, filename, wrapper, entry, free,
            generator.namespace, front.sites, front.resolver.bindings, front.normalized.parameters,
            front.differentiated, assumed, borrowers, origins, written,
        )
    return Transformed(
        read.function, front.normalized.parameters, front.differentiated, argument_kinds, stages, compiled,
        read.function.__code__, TABLE.version, front.sites, assumed, front.normalized.definitions,
        borrowers,
        binding_guard(read.function, front.resolver.bindings),
        _holds(read.function, front.resolver.bindings, assumed),
        origins,
        written=written,
    )


def _load(
    function: types.FunctionType, argnums: tuple[int, ...], argument_kinds: tuple[str, ...], every_parameter: bool
) -> Transformed | None:
    """The program of `function` from the disk cache (transforms/persisted.py), or None when
    there is none that holds in this process."""
    restored = persisted.load(function, argnums, argument_kinds, every_parameter)
    if restored is None:
        return None
    stored, compiled = restored.entry, restored.program
    COUNTS["loaded"] += 1

    def front() -> _Front:  # for `show`'s earlier stages and call sites: the passes, run on demand
        return _front(source.read(function, lifted=every_parameter), argnums, argument_kinds, every_parameter)

    stages = _Stages(
        stored["final"],
        normalize=lambda: syntax.code(front().normalized.definition),
        cps=lambda: cps.render(front().program),
    )
    assumed = stored["assumed"]
    return Transformed(
        function, list(stored["parameters"]), stored["differentiated"], argument_kinds, stages, compiled,
        function.__code__, TABLE.version, [], assumed, {}, stored["borrowers"],
        binding_guard(function, restored.bindings), _holds(function, restored.bindings, assumed),
        restored.origins, loaded=True, written=tuple(stored["written"]),
    )


def _holds(function: types.FunctionType, bindings: dict, assumed: tuple[str, ...]) -> Callable[[], bool]:
    """`Transformed.holds` for a program of `function` made now."""
    checks = ["T.version == V", "F.__code__ is C", *(f"type(G.get({name!r})) in N" for name in assumed)]
    values = {"T": TABLE, "V": TABLE.version, "F": function, "C": function.__code__, "N": kinds.NUMBER_TYPES}
    return binding_guard(function, bindings, checks, values)


def _legend(calls: bool) -> str:
    """How to read a derivative program. It heads the program of a function itself (as `grad`
    runs it), which `show` prints first, and no callee's program: so it is said once in `show`'s
    output, and the program line numbers `debug_nans` reports still count the lines `show` prints.
    The lines on call sites come only where the output can have call sites (`calls`)."""
    text = (
        "# Each continuation returns the result, then the adjoints of the values it was handed.\n"
        "# The wrapper's parameters are the rules' helpers and the function's free variables.\n"
    )
    if calls:
        text += (
            "# call_N_site(f, k, *arguments) runs the derivative program of the function f for its\n"
            "# arguments' kinds (made on its first call) with continuation k, and returns k's result,\n"
            "# then the adjoints of the differentiable arguments; call_N_k packs this program's own.\n"
        )
    return text + "\n"


def _header(
    read: source.FunctionSource,
    differentiated: tuple[str, ...],
    argument_kinds: dict[str, str],
    sites: list[calls.Site],
    assumed: list[str],
) -> str:
    """The program's own facts: which function, with respect to what, for which kinds of
    arguments, the module globals it takes for numbers and its call sites."""
    wrt = ", ".join(differentiated) or "nothing"
    specialised = ", ".join(f"{name}: {kind}" for name, kind in argument_kinds.items()) or "no arguments"
    nested = DEFINITIONS.get(read.function.__code__)
    line = nested.location.line if nested is not None and nested.location is not None else read.first_line
    text = (
        f"# cpsgrad: the derivative program of {read.function.__qualname__} "
        f"({read.filename}:{line}), with respect to {wrt}.\n"
        f"# Specialised for arguments {specialised} (a number is a Python float or int).\n"
    )
    if assumed:
        text += f"# Module globals taken for numbers: {', '.join(assumed)} "
        text += "(the program is made again if one stops being one).\n"
    for site in sites:
        text += f"# {site.label}: {site.callee_code}(...) at {site.location}\n"
    return text


def _comments(text: str) -> list[cst.EmptyLine]:
    """Comment lines (and blank ones) as a module's header."""
    return [cst.EmptyLine(comment=cst.Comment(line)) if line else cst.EmptyLine() for line in text.splitlines()]


def _assigned(normalized: normalize.Normalized) -> set[str]:
    return {name for targets, _ in activity.assignments(normalized.definition.body.body) for name in targets}


def _check_callee(function: types.FunctionType) -> None:
    """The fence's located error for a callee the transform refuses outright (`*args`)."""
    fence.check(source.read(function, lifted=True))


# the call sites of user functions make their callees' programs through this module
dispatch.install(dispatch.Transformer(transform=transform, check=_check_callee))
