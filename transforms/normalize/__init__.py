"""Normalize: desugar a function into cpsgrad's small core language, one operation a statement.

The core (what every later pass handles):
  name = atom | atom OP atom | OP atom | atom CMP atom | callee(atoms) | atom[index] | (atoms)
  a, b = name                      (unpacking)
  callee(atoms)                    (a call for its effect)
  if atom: ... else: ...           (or `if not atom:`)
  while True: ...                  (every loop; its condition and `else` become an if + break)
  break | continue | return atom | raise atom
where an atom is a name, a constant or a dotted read (`math.pi`). elif, augmented assignment,
and/or/not, conditional expressions, chained comparisons, `for` loops, tuple assignment and
assert are rewritten here; temporaries are `t1, t2, ...`, loop state `for_1_items, ...`.

Its parts, the mixins `_Normalizer` is made of: `statements`, `loops`, `expressions` (transforms/normalize/).
"""

from __future__ import annotations

import builtins
import contextlib
import contextvars
import dataclasses
from dataclasses import dataclass, field

import libcst as cst

from cpsgrad.errors import UnsupportedError
from cpsgrad.transforms import generators, starred, syntax
from cpsgrad.transforms.analysis import lists
from cpsgrad.transforms.bindings import assigned_names as _assigned_names
from cpsgrad.transforms.naming import Namer, names_in
from cpsgrad.transforms.normalize.expressions import Expressions
from cpsgrad.transforms.normalize.loops import Loops
from cpsgrad.transforms.normalize.statements import Statements
from cpsgrad.transforms.resolve import Resolver
from cpsgrad.transforms.source import FunctionSource


@dataclass
class Normalized:
    """A function in the core language, with the way back to the user's source."""

    source: FunctionSource
    definition: cst.FunctionDef
    parameters: list[str]
    origins: dict[int, cst.CSTNode] = field(default_factory=dict)  # id(core statement) -> user node
    loop_labels: dict[int, str] = field(default_factory=dict)  # id(core while) -> "while_1", "for_2", ...
    definitions: dict = field(default_factory=dict)  # def_g, lambda_1, ... -> runtime.closures.Definition
    # earlier definitions a later pass rewrote, and the nodes `carry` gave entries (kept: the tables are keyed by id)
    superseded: list = field(default_factory=list)
    # the names this pass's choices depend on (`reduce` is functools.reduce, `map` the builtin,
    # ...), resolved as Resolver.bindings: the program holds while each names the same object
    bindings: dict = field(default_factory=dict)
    in_place: dict = field(default_factory=dict)  # id(`x = x op y` of `x op= y`) -> why not plain (aliasing.py)
    base_writes: set = field(default_factory=set)  # ids of `x = written(x, key, v)` that follow a write into a view v
    written_parameters: tuple = ()  # the parameters whose arrays it writes into (aliasing.py)
    consumable: dict = field(default_factory=dict)  # id(user call) -> per argument: may be written into

    def copy(self) -> Normalized:
        """This function in the core language, its tables copied: a pass may change the copy's."""
        return dataclasses.replace(
            self,
            origins=dict(self.origins),
            loop_labels=dict(self.loop_labels),
            definitions=dict(self.definitions),
            superseded=list(self.superseded),
            bindings=dict(self.bindings),
            in_place=dict(self.in_place),
            base_writes=set(self.base_writes),
            consumable=dict(self.consumable),
        )

    def location(self, statement: cst.CSTNode):
        return self.source.location(self.origins.get(id(statement)))

    def carry(self, original: cst.CSTNode, rebuilt: cst.CSTNode) -> None:
        """`rebuilt` takes over what every table keyed by node id holds for `original` (a pass after
        normalize rebuilds each node it visits, transforms/rewriting.py): its origin, its loop
        label, whether it writes into a view's base, why its `x op= y` is not plain and which of its
        call's arguments may be written into. A table left out here is lost by the first rewrite
        after the pass that filled it (an `x op= y` lost its run-time refusal that way). A node that
        took an entry is kept alive (in `superseded`): a pass may drop what it rebuilt, and the id
        of a freed node is reused by the next one made."""
        key, new = id(original), id(rebuilt)
        carried = False
        for table in (self.origins, self.loop_labels, self.in_place, self.consumable):
            if key in table:
                table[new] = table[key]
                carried = True
        if key in self.base_writes:
            self.base_writes.add(new)
            carried = True
        if carried:
            self.superseded.append(rebuilt)


def normalize(source: FunctionSource) -> Normalized:
    """Rewrite `source`'s function into the core language (its nested defs and lambdas first
    replaced by the calls that make them, transforms/closures.py). Within `shared()`, once per
    function and captured names: a copy each time (the passes after it change what they get)."""
    results = _SHARED.get()
    if results is None:
        return _normalize(source)
    key = (id(source.function), source.captured)
    known = results.get(key)
    if known is None or known[0] is not source.function or known[1].source.definition is not source.definition:
        known = results[key] = (source.function, _normalize(source))
    return known[1].copy()


_SHARED: contextvars.ContextVar = contextvars.ContextVar("cpsgrad_normalized", default=None)


@contextlib.contextmanager
def shared():
    """Normalize each function once while the block runs (the pipeline's transform of a function and
    the analyses of its callees, which normalize each callee for its writes, its stores and its
    results before its own transform does): the globals the results depend on do not change in it."""
    if _SHARED.get() is not None:  # a transform inside one: its session goes on
        yield
        return
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def _normalize(source: FunctionSource) -> Normalized:
    lifted = generators.lift(source)  # loops over generators first (transforms/generators.py)
    normalizer = _Normalizer(lifted.source, frozenset(lifted.definitions))
    normalized = normalizer.run()
    normalized.definitions = lifted.definitions
    normalized.bindings = {**lifted.bindings, **normalizer.resolver.bindings}
    return normalized


class _Normalizer(Statements, Loops, Expressions):
    def __init__(self, source: FunctionSource, definitions: frozenset[str] = frozenset()):
        self.source = source
        self.namer = Namer(names_in(source.definition))
        # the names the user wrote (not closures.lift's labels for the definitions it lifted)
        self.user_names = frozenset(self.namer.taken) - definitions
        self.origins: dict[int, cst.CSTNode] = {}
        self.loop_labels: dict[int, str] = {}
        self.loops = 0
        self.globals = source.function.__globals__
        self.reassigned = _assigned_names(source.definition)
        parameters = {*source.captured, *starred.parameter_names(source.definition.params)}
        self.locals = self.reassigned | parameters
        # the locals assigned (in source order) before the statement being normalized: a local
        # read before its first assignment may be unbound, and is copied where it is read
        # (`atom`), so that it raises where Python reads it, before the operands after it run
        self.assigned = set(parameters)
        self.statements: list[cst.CSTNode] = []  # the user's statements being normalized, innermost last
        self.user_locals = frozenset(self.locals)  # not the names this pass adds (comprehension accumulators)
        self.resolver = Resolver(source.function, self.locals)  # its bindings: what the program depends on
        self.lists = lists.functional_lists(source.definition, parameters, self.resolver)
        self.list_locals = lists.list_locals(source.definition, parameters, self.resolver)

    def run(self) -> Normalized:
        definition = self.source.definition
        parameters = [*self.source.captured, *starred.parameter_names(definition.params)]
        body = self.block(definition.body.body)
        if not body:  # `def f(x): pass`: the function returns None (cps needs a statement)
            self.emit(body, cst.SimpleStatementLine([cst.Return(cst.Name("None"))]), definition)
        plain_params = cst.Parameters([cst.Param(cst.Name(p)) for p in parameters])
        normalized = cst.FunctionDef(definition.name, plain_params, syntax.indented(body))
        return Normalized(self.source, normalized, parameters, self.origins, self.loop_labels)

    # -- helpers -----------------------------------------------------------------------------
    def emit(self, out: list, statement: cst.BaseStatement, origin: cst.CSTNode) -> None:
        if origin not in self.source.positions and self.statements:  # a node a pass rebuilt (a
            origin = self.statements[-1]  # lambda's default): errors name the user's statement
        self.origins[id(statement)] = origin
        out.append(statement)

    def reject(self, node: cst.CSTNode, construct: str, advice: str):
        raise UnsupportedError(self.source.location(node), construct, advice)

    def builtin(self, identifier: str) -> cst.BaseExpression:
        """A reference to a builtin for code this pass adds, safe from the user's own names."""
        shadowed = identifier in self.reassigned or identifier in self.source.function.__code__.co_freevars
        if shadowed or self.globals.get(identifier, getattr(builtins, identifier)) is not getattr(builtins, identifier):
            return cst.Attribute(cst.Attribute(cst.Name("cpsgrad_runtime"), cst.Name("builtins")), cst.Name(identifier))
        self.resolver.bindings[identifier] = getattr(builtins, identifier)  # a global of that name later: made again
        return cst.Name(identifier)

    def is_builtin(self, node: cst.BaseExpression, builtin: str) -> bool:
        return isinstance(node, cst.Name) and node.value == builtin and isinstance(self.builtin(builtin), cst.Name)
