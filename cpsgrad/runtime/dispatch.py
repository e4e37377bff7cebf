"""Run-time dispatch of the calls of user functions that derivative programs make.

Each such call goes through one `CallSite` (the generated program's `call_N_site`, a wrapper
parameter). Handed the called value, the caller's continuation and the call's arguments, it
finds the Python function the value runs (`targets.target`: a function, a method with its
instance, an object's `__call__`, a partial), binds the arguments to its parameters as Python
would (defaults and keyword-only parameters included), and runs the function's derivative
program, specialised for the kinds of those arguments and differentiated with respect to the
parameters that receive differentiable values. A primitive handed as a value (`f = np.tanh`)
runs through a one-line adapter `def tanh(x0): return primitive(x0)` transformed like any
function, so its rule is inlined there. Programs are made on a function's first call and kept
per site, function and kinds; a changed function or rule table is transformed again.

Every call on this path is a call of a Python function with a fixed number of arguments, never
`f(*args)`: CPython 3.11 runs those without a C stack frame, so recursion is bounded by the
recursion limit (`cpsgrad.api.max_depth`, then DepthLimitError), never by the C stack.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
from collections.abc import Callable

import numpy as np

from cpsgrad.errors import (
    HigherOrderError,
    LocatedError,
    NoRuleError,
    SourceLocation,
    UnsupportedError,
)
from cpsgrad.rules.registry import TABLE, advice, public_name
from cpsgrad.runtime import objects, starred, targets, writes
from cpsgrad.runtime.adapters import (
    _ADAPTER_FILE,
    _adapter,
    _constructor,
    _describe,
    _object_constructor,
)
from cpsgrad.runtime.closures import DEFINITIONS, environment_adjoint, partial_adjoint
from cpsgrad.runtime.fixed_arity import _dispatcher, _invoker, key_of
from cpsgrad.runtime.kinds import ANY, NUMBER, NUMBER_TYPES
from cpsgrad.runtime.loans import loan_entry, withdrawing

_SPREAD = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


@dataclasses.dataclass(frozen=True)
class Transformer:
    """What the call sites need of the transform, handed over by transforms/pipeline.py when it
    is imported (`install`), so that this run-time module never imports the code that writes
    programs: `transform(function, argnums, argument_kinds, every_parameter=True)` makes a
    callee's program (a `pipeline.Transformed`); `check(function)` raises the fence's located
    error for a function the transform refuses outright (a `*args` or `**kwargs` parameter)."""

    transform: Callable
    check: Callable


class _NotInstalled:
    def __getattr__(self, name):
        raise RuntimeError("cpsgrad.runtime.dispatch: no transformer installed (import cpsgrad.transforms.pipeline)")


_TRANSFORMER: Transformer | _NotInstalled = _NotInstalled()


def install(transformer: Transformer) -> None:
    global _TRANSFORMER
    _TRANSFORMER = transformer
MAX_PLANS = 64  # per site; beyond it the site forgets its plans (functions made afresh on each call)


class _Slot:
    """Stands for the call's argument number `index` while binding to a signature."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


class Plan:
    """How one call site's arguments reach one function's parameters, and the programs run."""

    __slots__ = ("function", "code", "prefix", "keyword_names", "order", "defaults", "argnums", "direct",
                 "table_version", "programs", "captured", "default_names", "environment", "positional", "guard",
                 "packs", "fan")

    def __init__(self, function, prefix: int, keyword_names, order, defaults, argnums, direct: bool, captured: int = 0,
                 default_names=(), environment: int = 0):
        self.function = function
        self.code = function.__code__  # a changed code object is transformed again
        self.prefix = prefix  # how many values the target binds before the call's arguments
        self.keyword_names = keyword_names  # keyword arguments, in the order their values follow the positional ones
        self.order = order  # per parameter: its value's index in (positional, keyword values, defaults)
        self.defaults = defaults  # values of the parameters the call leaves to their defaults
        self.argnums = argnums  # the parameters receiving the differentiable arguments, in the call's order
        self.direct = direct  # the positional values are exactly the parameters
        self.table_version = TABLE.version  # a new rule may make the callee a primitive
        self.programs: dict = {}  # key (per parameter: its type, or its kind for a tuple or list) -> program
        self.captured = captured  # a nested function's captured values, its program's first parameters
        self.default_names = default_names  # the parameters the call leaves to their defaults
        self.environment = environment  # how many leading adjoints are the called closure's environment's
        self.positional = 0  # how many positional arguments the call passes (set by `plan`)
        self.guard = None  # whether the names its programs resolved still name the same objects
        self.packs, self.fan = (), None  # *args and **kwargs parameters (runtime/starred.py)

    def fresh(self, callee_code) -> bool:
        return self.table_version == TABLE.version and self.code is callee_code and (self.guard is None or self.guard())


def plan(target: targets.Target, positional: int, keywords: tuple[str, ...], active: tuple[int, ...],
         callee_active: bool = False) -> Plan:
    """Bind a call of `target` with `positional` positional arguments and keyword arguments
    `keywords` (site order, then the target's own) to its parameters; TypeError as Python's.

    A nested function's program takes its captured values first (`target.captured`); where the
    called value is differentiable (`callee_active`), it is differentiated with respect to them
    and to the parameters its defaults fill, whose adjoints make the closure's."""
    function = target.function
    # an outer partial's keyword overrides an inner one's
    own = list(dict.fromkeys(name for name, _ in target.keywords if name not in keywords))
    keyword_names = (*keywords, *own)
    count = len(target.prefix) + positional
    slots = [_Slot(i) for i in range(count + len(keyword_names))]
    try:
        bound = inspect.signature(function, follow_wrapped=False).bind(
            *slots[:count], **dict(zip(keyword_names, slots[count:], strict=True))
        )
    except TypeError as error:
        raise TypeError(f"{function.__qualname__}(): {error}") from None
    bound.apply_defaults()
    captured = len(target.captured) if target.captured is not None else 0
    order: list[int] = list(range(captured))
    defaults: list = []
    default_names: list[str] = []
    code = function.__code__
    for name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]:
        value = bound.arguments[name]
        if isinstance(value, _Slot):
            order.append(captured + value.index)
        else:
            order.append(captured + len(slots) + len(defaults))
            defaults.append(value)
            default_names.append(name)
    spread = (starred.packs(code, bound, captured, captured + len(slots) + len(defaults), order)
              if code.co_flags & _SPREAD else ())
    if spread and callee_active and target.partials and not all(
            captured + j in order for j in range(len(target.prefix))):
        raise UnsupportedError(
            None, f"call of a partial of {function.__qualname__}",
            "differentiating the arguments a partial binds to *args is not supported; pass them in the call")
    values = [captured + (len(target.prefix) + i if i < positional
                          else count + keyword_names.index(keywords[i - positional])) for i in active]
    environment: list[int] = []
    if callee_active and target.captured is not None:
        environment = [*range(captured), *(order.index(captured + len(slots) + j) for j in range(len(defaults)))]
    if callee_active and target.partials:  # their bound arguments, and keywords the call leaves them
        environment += [order.index(captured + j) for j in range(len(target.prefix))]
        environment += [order.index(captured + count + keyword_names.index(name))
                        for name in _layer_keywords(target.partials, keywords)]
    if callee_active and target.instance:  # a method of a differentiable object: its instance too, last
        environment.append(order.index(captured))
    reached, fan = (starred.fan(order, values, spread, captured + len(slots) + len(defaults)) if spread
                    else ((*(order.index(v) for v in values),), None))
    argnums = (*environment, *reached)
    direct = not captured and not keyword_names and not defaults and order == list(range(count))
    found = Plan(function, len(target.prefix), keyword_names, tuple(order), tuple(defaults), argnums, direct, captured,
                 tuple(default_names), len(environment))
    found.positional = positional
    found.packs, found.fan = spread, fan
    return found


def kinds_of_key(key: tuple) -> tuple[str, ...]:
    return tuple(part if type(part) is str else NUMBER if part in NUMBER_TYPES else ANY for part in key)


class CallSite:
    """The dispatcher of one call of a user function in a generated program; the program calls
    `site.call(callee, k, *arguments, **keywords)`, which returns what `k` returned, then the
    adjoints of the differentiable arguments in the call's order."""

    __slots__ = ("label", "location", "active", "keywords", "functions", "methods", "others", "call", "callee_active",
                 "nested", "consumable")

    def __init__(self, label: str, location: SourceLocation | None, active: tuple[int, ...], positional: int,
                 keywords: tuple[str, ...], callee_active: bool = False, consumable: tuple[bool, ...] = ()):
        self.label = label  # the callee as the call names it, for messages
        # per argument: whether the callee may write into it (transforms/analysis/aliasing.py)
        self.consumable = consumable
        self.location = location
        self.active = active  # which arguments (positional, then keywords) are differentiable
        self.keywords = keywords
        # the called value is differentiable (a closure over differentiable values): its adjoint
        # comes back first, before the arguments'
        self.callee_active = callee_active
        self.functions: dict = {}  # function -> its direct Plan, for the fast path
        self.methods: dict = {}  # a bound method's function -> its direct Plan (the instance first)
        self.others: dict = {}  # (function or nested code, prefix length, keyword names) -> Plan
        self.nested: dict = {}  # a nested function's code -> its Plan, for the fast path of closures
        fast = not keywords and not callee_active
        self.call = _dispatcher(positional, TABLE)(self) if fast else self.call_with_keywords

    def call_with_keywords(self, callee, k, /, *arguments, **keywords):
        return self.slow(callee, k, arguments, keywords)

    def slow(self, callee, k, arguments: tuple, keywords: dict | None):
        """Every call the fast path does not take: find the target, bind, pick the program."""
        if not keywords and type(callee) is types.FunctionType:
            found = self.nested.get(callee.__code__)
            if found is not None and found.table_version == TABLE.version and (found.guard is None or found.guard()):
                return self.call_nested(found, callee, k, arguments)
        target = self.target(callee, len(arguments))
        if target.keywords:
            keywords = {**dict(target.keywords), **(keywords or {})}
        found = self.plan(target, len(arguments))
        values = target.prefix + arguments
        if target.captured is not None:
            # a nested function: its captured values first, its defaults its own (each made
            # function has the defaults its definition evaluated)
            values = target.captured + values
            defaults = _defaults_of(target.function, found.default_names)
            every = values + tuple([keywords[name] for name in found.keyword_names]) + defaults
            every += starred.packed(found.packs, every) if found.packs else ()
            parameters = tuple([every[i] for i in found.order])
        elif found.direct:
            parameters = values
        else:
            every = values + tuple([keywords[name] for name in found.keyword_names]) + found.defaults
            every += starred.packed(found.packs, every) if found.packs else ()
            parameters = tuple([every[i] for i in found.order])
        if (target.captured is not None and not target.prefix and not target.keywords and not self.keywords
                and len(arguments) == found.positional and not found.packs):
            self.nested[target.function.__code__] = found  # later calls of its closures: call_nested
        # parameters that are not the call's arguments must not take their loans
        if not found.direct or target.prefix or target.captured is not None:
            k = withdrawing(k, arguments + tuple((keywords or {}).values()))
        result = self.run(found, parameters, k)
        result = starred.fanned(found, result) if found.fan is not None else result
        if not self.callee_active:
            return result
        if not found.environment:  # a called value with no environment to differentiate
            if isinstance(callee, functools.partial) and (callee.args or callee.keywords):
                raise UnsupportedError(
                    self.location, f"call of {self.label}",
                    "differentiating the arguments bound in a partial of a bound method is not "
                    "supported; bind them in a functools.partial of the function (Class.method)",
                )
            return (result[0], 0.0, *result[1:])
        split = 1 + found.environment
        environment = result[1:split]
        if target.instance:  # a bound method's adjoint is its instance's
            if target.captured is not None or target.partials:
                raise UnsupportedError(
                    self.location, f"call of {self.label}",
                    "differentiating a method that is a closure is not supported; define it at class level")
            return (result[0], environment[-1], *result[split:])
        adjoint = 0.0
        own = len(found.default_names) + found.captured if target.captured is not None else 0
        if target.captured is not None:
            adjoint = _closure_adjoint(found, target.function.__code__, environment)
        if target.partials:  # innermost first: each layer's adjoint holds the one below
            position = own
            arguments = []
            for layer in target.partials:
                arguments.append(environment[position : position + len(layer.args)])
                position += len(layer.args)
            given = dict(zip(_layer_keywords(target.partials, self.keywords, layers=True), environment[position:],
                             strict=True))
            for index, layer in enumerate(target.partials):
                keywords = tuple(given.get((index, name), 0.0) for name in layer.keywords)
                adjoint = partial_adjoint(adjoint, arguments[index], keywords)
        return (result[0], adjoint, *result[split:])

    def call_nested(self, found: Plan, callee: types.FunctionType, k, arguments: tuple):
        """A call of a closure of a nested definition this site called before, by position."""
        cells = callee.__closure__
        values = tuple([cell.cell_contents for cell in cells]) + arguments if cells else arguments
        if found.default_names:
            values += _defaults_of(callee, found.default_names)
        parameters = tuple([values[i] for i in found.order])
        if cells or found.default_names:  # captured values and defaults are parameters too
            k = withdrawing(k, arguments)
        result = self.run(found, parameters, k)
        if not self.callee_active:
            return result
        split = 1 + found.environment
        return (result[0], _closure_adjoint(found, callee.__code__, result[1:split]), *result[split:])

    def run(self, found: Plan, parameters: tuple, k):
        """Run the program for the kinds of `parameters` (made on first use) with continuation
        `k`; with an environment, the result carries an adjoint for each part of it."""
        key = tuple(map(key_of, parameters))
        if not found.environment:
            program = found.programs.get(key)
            if program is None:
                program = found.programs[key] = self.program(found, kinds_of_key(key))
            return _invoker(len(parameters))(program, parameters, k)
        program, kept = self.environment_program(found, key, parameters)
        return _expanded(_invoker(len(parameters))(program, parameters, k), kept, found.environment)

    def plan(self, target: targets.Target, positional: int) -> Plan:
        function = target.function
        prefix = len(target.prefix)
        names = tuple(name for name, _ in target.keywords)
        if target.captured is not None:  # one plan for every function made from the code
            key = (function.__code__, prefix, names, positional)
            found = self.others.get(key)
            if found is not None and found.fresh(function.__code__):
                return found
            found = plan(target, positional, self.keywords, self.active, self.callee_active)
            if len(self.others) >= MAX_PLANS:
                self.others.clear()
            self.others[key] = found
            return found
        fast = None if names else {0: self.functions, 1: self.methods}.get(prefix)
        found = fast.get(function) if fast is not None else None
        if found is None or found.prefix != prefix:
            found = self.others.get((function, prefix, names))
        if found is not None and found.fresh(function.__code__):
            return found
        found = plan(target, positional, self.keywords, self.active, self.callee_active)
        table, key = (fast, function) if found.direct and fast is not None else (self.others, (function, prefix, names))
        if len(table) >= MAX_PLANS:
            table.clear()
        table[key] = found
        return found

    def environment_program(self, found: Plan, key: tuple, parameters: tuple):
        """(program, kept) for a call of a differentiable closure or partial: differentiated
        with respect to the parts of its environment that may carry a gradient (`kept`, indices
        into the environment; a captured object, module or int is read, not differentiated)."""
        entry = found.programs.get(key)
        if entry is None:
            environment = found.argnums[: found.environment]
            kept = tuple(i for i, position in enumerate(environment) if _may_carry_gradient(parameters[position]))
            argnums = (*(environment[i] for i in kept), *found.argnums[found.environment :])
            entry = found.programs[key] = (self.program(found, kinds_of_key(key), argnums), kept)
        return entry

    def program(self, found: Plan, argument_kinds: tuple[str, ...], argnums: tuple[int, ...] | None = None):
        try:
            made = _TRANSFORMER.transform(found.function, found.argnums if argnums is None else argnums, argument_kinds,
                                          every_parameter=True)
        except LocatedError as error:
            if not found.function.__code__.co_filename.startswith(_ADAPTER_FILE):
                raise
            raise type(error)(self.location, f"call of {self.label}", error.advice) from None
        if made.written:  # it writes into the arrays of some of its parameters: the caller must allow it
            writes.consent(self, found, made)
        if made.guard is not None:  # the plan holds while every program's names do
            earlier = found.guard
            found.guard = made.guard if earlier is None or earlier is made.guard else _both(earlier, made.guard)
        program = (writes.refusing_shared(made.program, made.written, self.location, self.label) if made.written
                   else made.program)
        if ANY not in argument_kinds:  # only arrays are lent: nothing to claim or void
            return program
        return loan_entry(program, len(argument_kinds), bool(made.borrowers))

    def target(self, callee, positional: int) -> targets.Target:
        """What a called value runs, or a clear error."""
        if callee in TABLE:
            return targets.Target(_adapter(callee, positional, self.keywords))
        if type(callee) is functools.partial and _has_rule(callee.func):  # partial(np.sum, axis=0)
            names = (*self.keywords, *(n for n in callee.keywords if n not in self.keywords))
            adapter = _adapter(callee.func, len(callee.args) + positional, names)
            return targets.Target(adapter, callee.args, tuple(callee.keywords.items()), partials=(callee,))
        method = _unbound_method(callee)
        if method is not None:  # d.get(k, x): the rule of dict.get, called as (d, k, x); model.f(x): of Model.f
            return targets.Target(_adapter(method, positional + 1, self.keywords), (callee.__self__,))
        found = targets.target(callee)
        if found is not None:
            return found
        if targets.is_gradient(callee):
            raise HigherOrderError(
                f"{self.where()}call of {self.label}: it is a cpsgrad gradient function; differentiating "
                "through a gradient (higher-order differentiation) is not supported yet"
            )
        if not callable(callee):
            raise TypeError(f"'{type(callee).__name__}' object is not callable")
        if targets.constructible(callee):
            return targets.Target(_constructor(callee, positional, self.keywords))
        # __init__ as a method (runtime/objects.py)
        if isinstance(callee, type) and objects.plain_class(callee) is None:
            return targets.Target(_object_constructor(callee, positional, self.keywords))
        if isinstance(callee, type):
            raise UnsupportedError(
                self.location, f"call of the class {_describe(callee)}",
                "constructing objects of classes other than plain ones (no __slots__, __new__, __setattr__, "
                f"__getattribute__, metaclass or built-in base: {objects.plain_class(callee)}), NamedTuples and "
                "dataclasses (without __post_init__) from differentiable values is not supported; pass the values "
                "themselves (in a tuple, a dict, a list or arrays) instead",
            )
        if isinstance(callee, types.BuiltinMethodType) and isinstance(callee.__self__,
                                                                      (list, dict, set, frozenset, str, bytes, tuple)):
            # xs.add(x) of a set
            raise UnsupportedError(self.location, f"method call {self.label}", objects.METHOD_ADVICE)
        name = public_name(callee) or _describe(callee)
        raise NoRuleError(
            self.location, f"call of {self.label}",
            f"{name} is not a Python function cpsgrad can transform ({type(callee).__name__}); "
            f"{advice(callee, self.label)}")

    def where(self) -> str:
        return f"{self.location}: " if self.location is not None else ""


def _both(first, second):
    return lambda: first() and second()


def _closure_adjoint(found: Plan, code, environment: tuple):
    """The adjoint of a made function from its environment's adjoints in a call's result (what
    it captured, then the defaults the call used)."""
    own = found.captured + len(found.default_names)
    defaulted = dict(zip(found.default_names, environment[found.captured : own], strict=True))
    return environment_adjoint(DEFINITIONS[code], environment[: found.captured], defaulted)


def _layer_keywords(partials: tuple, overridden, layers: bool = False) -> list:
    """The keywords of layered partials that reach the callee (the call's own override them, and
    an outer layer's an inner one's), in the order the environment holds their adjoints: their
    names, or with `layers`, (layer index, name) pairs."""
    found = []
    for index, layer in enumerate(partials):
        for name in layer.keywords:
            if name in overridden or any(name in outer.keywords for outer in partials[index + 1 :]):
                continue
            found.append((index, name) if layers else name)
    return found


def _may_carry_gradient(value) -> bool:
    """Whether a value in a closure's or a partial's environment can carry a gradient: numbers
    that are floats, arrays, containers, functions (their own environments); not ints, bools,
    strings, None, modules, classes or plain objects (whose attributes are read, as in any call)."""
    kind = type(value)
    if kind is float or kind is tuple or kind is list or kind is dict:
        return True
    if isinstance(value, (bool, int, str, type, types.ModuleType)) or value is None:
        return False
    if isinstance(value, (np.floating, np.ndarray, tuple, list, dict, types.FunctionType, types.MethodType,
                          functools.partial)):
        return True
    return dataclasses.is_dataclass(value) or objects.is_plain_object(value)  # an object: its attributes


def _expanded(result: tuple, kept: tuple[int, ...], size: int) -> tuple:
    """A program's result with the environment adjoints it did not compute filled in with 0.0."""
    if len(kept) == size:
        return result
    environment = [0.0] * size
    for position, adjoint in zip(kept, result[1 : 1 + len(kept)], strict=True):
        environment[position] = adjoint
    return (result[0], *environment, *result[1 + len(kept) :])


def _has_rule(value) -> bool:
    try:
        return value in TABLE
    except TypeError:  # unhashable
        return False


def _defaults_of(function: types.FunctionType, names: tuple[str, ...]) -> tuple:
    """The values of `function`'s defaults for the parameters `names`."""
    if not names:
        return ()
    code = function.__code__
    positional = code.co_varnames[: code.co_argcount]
    given = dict(zip(positional[len(positional) - len(function.__defaults__ or ()) :], function.__defaults__ or (),
                     strict=True))
    given.update(function.__kwdefaults__ or {})
    return tuple(given[name] for name in names)


def _unbound_method(callee):
    """For a method bound to an object (`d.get`, `model.energy`), its type's method (the class's
    function) if that has a rule: the call is that rule's, the object its first argument."""
    if type(callee) is types.MethodType:
        return callee.__func__ if _has_rule(callee.__func__) else None
    if (not isinstance(callee, types.BuiltinMethodType) or isinstance(callee.__self__, types.ModuleType)
            or callee.__self__ is None):
        return None
    method = getattr(type(callee.__self__), callee.__name__, None)
    try:
        return method if method is not None and method in TABLE else None
    except TypeError:
        return None
