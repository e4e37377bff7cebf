"""Functions made by derivative programs: the nested defs and lambdas of a transformed function.

`make_function(definition, environment)` is what a nested `def` or `lambda` becomes
(`transforms/closures.py`): a real Python function built from the definition's own code object,
with new cells holding the captured values and the defaults it was given, so it behaves as
Python's closure wherever it goes. Its adjoint is a `SequenceAdjoint` aligned with
`environment` (the captured values, then the defaults), or `0.0`.
"""

from __future__ import annotations

import functools
import threading
import types
import weakref
from dataclasses import dataclass, field

from cpsgrad.runtime.adjoints import SequenceAdjoint

__all__ = ["make_function", "make_partial"]


@dataclass(eq=False)
class Definition:
    """One nested def or lambda of a transformed function, as `make_function` needs it."""

    code: types.CodeType
    globals: dict = field(repr=False)
    name: str
    qualname: str
    captured: tuple[str, ...]  # the free variables whose values the environment holds, in code order
    own: str | None  # the free variable naming the function itself (a recursive nested def), if any
    positional_defaults: int  # how many positional parameters have defaults
    keyword_defaults: tuple[str, ...]  # the keyword-only parameters with defaults, in order
    source: object = field(repr=False)  # transforms.source.FunctionSource of the definition
    location: object = None
    programs: dict = field(default_factory=dict, repr=False, compare=False)  # its programs (transforms.pipeline._CACHE)
    default_names: tuple[str, ...] = field(init=False)  # parameters with defaults, in environment order
    own_index: int = field(init=False)  # the function's own slot among its free variables, or -1

    def __post_init__(self) -> None:
        code = self.code
        positional = code.co_varnames[: code.co_argcount]
        self.default_names = (*positional[len(positional) - self.positional_defaults :], *self.keyword_defaults)
        self.own_index = code.co_freevars.index(self.own) if self.own is not None else -1

    def __repr__(self) -> str:
        return f"<definition of {self.qualname} at {self.location}>"


class Definitions:
    """code object -> its Definition, for the nested functions of the functions cpsgrad
    transformed, by the code object's identity (equal code objects of two functions are two
    entries), holding neither: an entry lasts while something else holds its Definition (the
    programs that make its functions, and its own programs, `pipeline._CACHE`), so transforming
    many functions and dropping them frees their definitions. The latest Definition of a code
    object that is still held is the one found."""

    def __init__(self):
        self._entries: dict[int, list[weakref.ref]] = {}  # id(code) -> weak Definitions, oldest first
        self._dead: list[int] = []  # keys with a Definition gone, swept at the next registration
        self._lock = threading.Lock()

    def __setitem__(self, code: types.CodeType, definition: Definition) -> None:
        key = id(code)  # the Definition holds its code: the id is not reused while it is held
        # a weak reference's callback may run inside any allocation, this method's too: it only
        # notes the key (a list append), and registrations sweep
        reference = weakref.ref(definition, lambda _, key=key: self._dead.append(key))
        with self._lock:
            while self._dead:
                dead = self._dead.pop()
                held = self._entries.get(dead)
                if held is not None:
                    held[:] = [r for r in held if r() is not None]
                    if not held:
                        del self._entries[dead]
            self._entries.setdefault(key, []).append(reference)

    def get(self, code, default=None):
        held = self._entries.get(id(code))
        if held:
            for reference in reversed(held[:]):
                definition = reference()
                if definition is not None and definition.code is code:
                    return definition
        return default

    def __contains__(self, code) -> bool:
        return self.get(code) is not None

    def __getitem__(self, code) -> Definition:
        definition = self.get(code)
        if definition is None:
            raise KeyError(code)
        return definition

    def __len__(self) -> int:
        return sum(1 for held in list(self._entries.values()) if any(r() is not None for r in held))


#: code object -> its Definition, for every nested function of a function cpsgrad transformed
#: whose programs are still held (weakly: `Definitions`)
DEFINITIONS = Definitions()


def make_function(definition: Definition, environment: tuple) -> types.FunctionType:
    """A new function of `definition`'s code closing over the values in `environment`."""
    code = definition.code
    count = len(definition.captured)
    values = iter(environment[:count])
    cells = []
    own = None
    for name in code.co_freevars:
        if name == definition.own:
            own = types.CellType()
            cells.append(own)
        else:
            cells.append(types.CellType(next(values)))
    positional = tuple(environment[count : count + definition.positional_defaults])
    function = types.FunctionType(code, definition.globals, definition.name, positional or None, tuple(cells) or None)
    if definition.keyword_defaults:
        values = environment[count + definition.positional_defaults :]
        function.__kwdefaults__ = dict(zip(definition.keyword_defaults, values, strict=True))
    function.__qualname__ = definition.qualname
    if own is not None:
        own.cell_contents = function
    return function


def captured_values(function: types.FunctionType) -> tuple:
    """The values a made function's cells hold, in its code's free-variable order."""
    return tuple(cell.cell_contents for cell in function.__closure__ or ())


def environment_adjoint(definition: Definition, captured: tuple, defaulted: dict):
    """The adjoint of a made function from one call of its program: the adjoints of its captured
    values (`captured`, in free-variable order; the function's own slot holds the adjoint of the
    recursive calls it made, an environment adjoint itself, which is added in), and of the
    defaults the call used (`defaulted`: parameter name -> adjoint)."""
    parts = list(captured)
    folded = 0.0
    if definition.own_index >= 0:
        folded = parts.pop(definition.own_index)
    if definition.default_names:
        parts += [defaulted.get(name, 0.0) for name in definition.default_names]
    for part in parts:
        if type(part) is not float or part != 0.0:
            break
    else:
        return folded
    total = _sequence_adjoint()(parts)
    return total if type(folded) is float and folded == 0.0 else total + folded


_SEQUENCE_ADJOINT: list = []


def _sequence_adjoint():
    """`cpsgrad.runtime.SequenceAdjoint` (runtime imports this module, so it is found late)."""
    if not _SEQUENCE_ADJOINT:


        _SEQUENCE_ADJOINT.append(SequenceAdjoint)
    return _SEQUENCE_ADJOINT[0]


class Partial(functools.partial):
    """A partial standing for one that another partial made in a derivative program wraps:
    Python merges a partial of a plain partial into one (their arguments in one tuple), which
    would misplace the adjoint of each; a partial whose type has its own `__call__` is kept
    apart, so each layer keeps the layout its own call made (the dispatcher assembles a layered
    partial's adjoint innermost first, `runtime.dispatch`)."""

    __slots__ = ()

    def __call__(self, /, *arguments, **keywords):
        return super().__call__(*arguments, **keywords)


def make_partial(function, arguments: tuple, names: tuple, values: tuple) -> functools.partial:
    """`functools.partial(function, *arguments, **dict(zip(names, values)))`, as a transformed
    function's own call of it becomes. Its adjoint is a `SequenceAdjoint` of three: the adjoint of
    `function` (a closure's environment), of `arguments` and of `values`."""
    if isinstance(function, functools.partial) and type(function) is not Partial:
        function = Partial(function.func, *function.args, **function.keywords)
    return functools.partial(function, *arguments, **dict(zip(names, values, strict=True)))


def partial_adjoint(function_adjoint, arguments: tuple, keywords: tuple):
    """The adjoint of a partial from one call: that of its function (a closure's environment),
    of its bound positional arguments, and of its keywords in its order (0.0 for those the call
    passed itself)."""
    if type(function_adjoint) is float and all(type(a) is float and a == 0.0 for a in (*arguments, *keywords)):
        return 0.0
    sequence = _sequence_adjoint()
    return sequence((function_adjoint, sequence(arguments), sequence(keywords)))
