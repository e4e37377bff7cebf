"""Which in-place writes the derivative program follows exactly, and which it must refuse.

A write `x = cpsgrad_runtime.written(x, key, v)` (transforms/writes.py) changes x's array in
place, so every name and view sharing it sees the change, exactly as in Python: the forward
values are always the original's, and the backward reads what the forward saw (each write
restores what it overwrote when its backward runs, in reverse order). What can go wrong is the
gradient's route: the adjoint pass gives `x` a new version at the write, but another name that
shares the array (`c = x`, a view `r = x[0]`, a tuple holding it, a call's result that may be
it) still stands for the array *before* the write. A differentiable read of that name after the
write would send its adjoint to the state before the write, past the write's backward: silently
wrong. So the analysis, on the normalized function:

1. reaching definitions (a forward dataflow over the structured core: ifs, `while True` loops,
   break, continue, return, raise), each assignment a definition, each parameter one at entry,
   each global or free variable read one of its own;
2. alias classes of definitions (union-find): a definition shares its array with the ones it
   was made from by a name copy, a subscript, an attribute, a display or unpacking, a numpy
   function or method that may return a view (`reshape`, `T`, `ravel`, `asarray`, ...), or any
   call cpsgrad cannot see into (a user function, a method of an unknown value): a result may be
   an argument. numpy's functions, operators and `.copy()` make new arrays; numbers never alias;
3. a second pass marks, at each write, every definition of its class reaching that point as
   *stale*. A write into a class holding a parameter, a global or a free variable (the caller's
   array: the caller would see the change) is refused, and so is a differentiable read of a stale
   name (an active assignment, a return, a call), naming the write and the read.

An augmented assignment `x += y` on an array is computed as `x = x + y` (a new array): the same
values, where no other name shares x's array and reads it later and x is not the caller's. Those
are found the same way; elsewhere the generated code refuses an actual array at run time
(`refuse_in_place`, with the reason found here). The results go on `Normalized.in_place`.
"""

from __future__ import annotations

import builtins

import libcst as cst
import numpy as np

from cpsgrad.errors import UnsupportedError
from cpsgrad.transforms import exceptions, syntax, writes
from cpsgrad.transforms.activity import is_active_value
from cpsgrad.transforms.naming import names_in
from cpsgrad.transforms.resolve import Resolver

# numpy functions and array methods whose result may share memory with an argument
_VIEW_FUNCTIONS = {
    getattr(np, name)
    for name in (
        "reshape ravel transpose swapaxes moveaxis rollaxis squeeze expand_dims broadcast_to broadcast_arrays "
        "asarray asanyarray ascontiguousarray asfortranarray asarray_chkfinite require atleast_1d atleast_2d "
        "atleast_3d diagonal diag split array_split hsplit vsplit dsplit flip fliplr flipud rot90 real imag "
        "matrix_transpose permute_dims unstack"
    ).split()
    if hasattr(np, name)
} | {np.lib.stride_tricks.as_strided, np.lib.stride_tricks.sliding_window_view}
_FRESH_METHODS = frozenset(
    "sum mean max min prod std var cumsum cumprod dot round clip argmax argmin argsort nonzero any all trace "
    "flatten tolist item conj conjugate repeat take compress searchsorted astype tobytes count index ptp".split()
)
_FRESH_BUILTINS = {
    getattr(builtins, name)
    for name in "len abs float int round sum range isinstance print bool str repr divmod pow hash id format".split()
}
_FRESH_MODULES = ("numpy", "scipy", "math", "cpsgrad.nn", "_operator", "operator")
_STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "size"})  # not changed by a write
_PARAMETER = "parameter"
_GLOBAL = "global"


def check(normalized, active: set[str], numbers: set[str], resolver: Resolver) -> None:
    """Refuse the unsound writes of `normalized`; record on it which `x op= y` are plain."""
    body = normalized.definition.body.body
    updates = _updates(normalized, body, numbers)
    normalized.in_place = {}
    if not updates and not _has_writes(body):
        return
    analysis = _Analysis(normalized, active, numbers, resolver, updates)
    analysis.run(body)


def _has_writes(statements) -> bool:
    return any(writes.is_write(value) for _, value, _ in _assignments(statements))


def _updates(normalized, statements, numbers: set[str]) -> set[int]:
    """The core statements `x = x op y` of a user's `x op= y` where x may be an array."""
    found = set()
    for statement, value, targets in _assignments(statements):
        origin = normalized.origins.get(id(statement))
        if (
            isinstance(origin, cst.AugAssign)
            and isinstance(origin.target, cst.Name)
            and isinstance(value, cst.BinaryOperation)
            and targets[0] not in numbers
        ):
            found.add(id(statement))
    return found


def _assignments(statements):
    """(statement, value, target names) of every core assignment, nested blocks included."""
    for statement in statements:
        if isinstance(statement, cst.If):
            yield from _assignments(statement.body.body)
            if statement.orelse is not None:
                yield from _assignments(statement.orelse.body.body)
        elif isinstance(statement, cst.While):
            yield from _assignments(statement.body.body)
        elif isinstance(statement, cst.Try):
            yield from _assignments(exceptions.parts(statement))
        elif isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assign):
            small = statement.body[0]
            target = small.targets[0].target
            names = [e.value.value for e in target.elements] if isinstance(target, cst.Tuple) else [target.value]
            yield statement, small.value, names


class _Sets:
    """Union-find over definitions (hashable keys)."""

    def __init__(self):
        self.parent: dict = {}

    def find(self, item):
        parent = self.parent.setdefault(item, item)
        if parent != item:
            parent = self.parent[item] = self.find(parent)
        return parent

    def union(self, a, b) -> None:
        self.parent[self.find(a)] = self.find(b)


class _Analysis:
    def __init__(self, normalized, active, numbers, resolver, updates):
        self.normalized = normalized
        self.active = active
        self.numbers = numbers
        self.resolver = resolver
        self.updates = updates  # ids of `x = x op y` statements from `x op= y`
        every = list(_assignments(normalized.definition.body.body))
        self.locals = set(normalized.parameters) | {n for _, _, names in every for n in names}
        self.statements = {id(statement): statement for statement, _, _ in every}
        self.user_names = names_in(normalized.source.definition)
        self.same = _Sets()  # definitions that may be the same array, or overlap in memory
        self.contains: set = set()  # (container, element): a tuple, list or dict holding a value
        self.shallow: set = set()  # (copy, original): a container's .copy() holds the original's elements
        self.displays: dict = {}  # a display's definition -> per position, the definitions of its elements
        self.origin_of: dict = {}  # definition -> (kind, name) for parameters and globals
        self.old: dict[int, list] = {}  # id(`x = x op y`) -> the definitions of x it replaces
        self.marking = False  # pass 2: stale marks and refusals
        self.stale_updates: dict[int, str] = {}

    # -- the dataflow ------------------------------------------------------------------------
    def run(self, body) -> None:
        entry = {}
        for parameter in self.normalized.parameters:
            definition = (_PARAMETER, parameter)
            self.origin_of[definition] = (_PARAMETER, parameter)
            entry[parameter] = frozenset({(definition, None)})
        size = None
        while size != self.size():  # pass 1, until the relations stop growing
            size = self.size()
            self.block(body, dict(entry), [])
        self.marking = True
        self.block(body, dict(entry), [])  # pass 2: stale reads
        for identifier in self.updates:
            old = self.old.get(identifier, [])
            self.normalized.in_place[identifier] = self.stale_updates.get(identifier) or self.foreign(old)

    def size(self) -> tuple:
        roots = sum(1 for item in self.same.parent if self.same.find(item) == item)
        return len(self.same.parent), roots, len(self.contains), len(self.shallow)

    def block(self, statements, state: dict, loops: list) -> dict | None:
        """Run `statements` from `state`; the state after them, or None where no path continues.
        `loops` holds, per enclosing loop, the states its breaks and continues leave."""
        for statement in statements:
            if state is None:
                return None
            if isinstance(statement, cst.If):
                then = self.block(statement.body.body, dict(state), loops)
                orelse = self.block(statement.orelse.body.body, dict(state), loops) if statement.orelse else dict(state)
                state = _join(then, orelse)
            elif isinstance(statement, cst.While):
                state = self.loop(statement, state, loops)
            elif isinstance(statement, cst.Try):
                state = self.try_statement(statement, state, loops)
            else:
                state = self.simple(statement, state, loops)
        return state

    def try_statement(self, statement: cst.Try, state: dict, loops: list) -> dict | None:
        """A normalized try (transforms/exceptions.py): its handler may start after any statement
        of the body (the join of the states between them), its finally after any path."""
        states = [state]
        current: dict | None = state
        for inner in statement.body.body:
            current = self.block([inner], dict(current), loops) if current is not None else None
            states.append(current)
        raised = None
        for between in states:
            raised = _join(raised, between)
        after = self.block(statement.orelse.body.body, dict(current), loops) if statement.orelse and current else current
        for handler in statement.handlers:
            after = _join(after, self.block(handler.body.body, dict(raised), loops) if raised is not None else None)
        if statement.finalbody is None:
            return after
        final = self.block(statement.finalbody.body.body, dict(_join(after, raised)), loops)
        return final if after is not None else None

    def loop(self, statement: cst.While, state: dict, loops: list) -> dict | None:
        head = state
        while True:
            exits = {"break": None, "continue": None}
            end = self.block(statement.body.body, dict(head), [*loops, exits])
            again = _join(_join(head, end), exits["continue"])
            if again == head:
                return exits["break"]
            head = again

    def simple(self, statement, state: dict, loops: list) -> dict | None:
        small = statement.body[0]
        if isinstance(small, cst.Break):
            loops[-1]["break"] = _join(loops[-1]["break"], state)
            return None
        if isinstance(small, cst.Continue):
            loops[-1]["continue"] = _join(loops[-1]["continue"], state)
            return None
        if isinstance(small, (cst.Return, cst.Raise)):
            if isinstance(small, cst.Return) and small.value is not None:
                self.reads(statement, small.value, state, lambda name: True)
            return None
        if isinstance(small, cst.Expr):
            carries = self.carries(small.value)
            self.reads(statement, small.value, state, lambda name: carries)
            return state
        if not isinstance(small, cst.Assign):
            return state
        target = small.targets[0].target
        names = [e.value.value for e in target.elements] if isinstance(target, cst.Tuple) else [target.value]
        value = small.value
        self.reads(statement, value, state, lambda name: is_active_value(value, {name}, self.resolver))
        before = state
        state = dict(state)
        definitions = [(id(statement), name) for name in names]
        for name, definition in zip(names, definitions, strict=True):
            state[name] = frozenset({(definition, None)})
        if isinstance(target, cst.Tuple):
            if isinstance(value, cst.Name):
                for position, (name, definition) in enumerate(zip(names, definitions, strict=True)):
                    if name not in self.numbers:
                        for whole in self.reaching(value.value, before):
                            self.element_of(definition, whole, position)
        elif names[0] not in self.numbers and not writes.is_write(value):
            self.relate(definitions[0], value, before)
        if writes.is_write(value):
            self.write(statement, names[0], before, state)
        elif id(statement) in self.updates:
            self.update(statement, names[0], before, state)
        return state

    # -- how a value relates to the values it was made from ---------------------------------------
    def relate(self, definition, value: cst.BaseExpression, state: dict) -> None:
        """Record what `definition = value` may share with the definitions reaching it."""
        if isinstance(value, cst.Name) or (
            isinstance(value, cst.Attribute) and value.attr.value not in _STATIC_ATTRIBUTES
        ):
            for source in self.reaching_root(value, state):
                self.same.union(definition, source)
        elif isinstance(value, cst.Subscript):
            position = _constant_position(value)
            for whole in self.reaching_root(value.value, state):
                self.element_of(definition, whole, position)
        elif isinstance(value, (cst.Tuple, cst.List, cst.Dict)):
            elements = [e.value for e in value.elements]
            parts = [self.reaching_root(e, state) for e in elements]
            if not isinstance(value, cst.Dict):
                self.displays[definition] = parts
            for part in parts:
                for element in part:
                    self.contains.add((definition, element))
        elif isinstance(value, cst.Call):
            self.relate_call(definition, value, state)

    def relate_call(self, definition, call: cst.Call, state: dict) -> None:
        arguments = [d for a in call.args for d in self.reaching_root(a.value, state)]
        callee = call.func
        primitive = self.resolver.resolve(callee)
        if primitive is not None:
            if primitive in _VIEW_FUNCTIONS or (primitive is np.array and any(a.keyword for a in call.args)):
                for argument in arguments:
                    self.same.union(definition, argument)
                return
            if _fresh(primitive):
                return
        elif isinstance(callee, cst.Attribute) and _root(callee) is not None:  # x.method(...) of a local value
            method = callee.attr.value
            receiver = self.reaching_root(callee.value, state)
            if method == "copy":  # an array's copy is new; a list's or a dict's holds the same elements
                self.shallow.update((definition, original) for original in receiver)
                return
            if method in _FRESH_METHODS and not (method == "astype" and any(a.keyword for a in call.args)):
                return
            arguments += receiver
        else:
            arguments += self.reaching_root(callee, state)  # a function value: it may return what it holds
        for argument in arguments:  # what cpsgrad cannot see into may return an argument or a part of one
            self.element_of(definition, argument, None)

    def element_of(self, definition, whole, position: int | None) -> None:
        """`definition` is `whole[position]` (any element where `position` is None): one of the
        display's elements, or, of anything else, a part (an array's view) or any element."""
        parts = self.displays.get(whole)
        if parts is not None and position is not None and -len(parts) <= position < len(parts):
            for element in parts[position]:
                self.same.union(definition, element)
            return
        if parts is None:
            self.same.union(definition, whole)
        for element in self.elements(whole):
            self.same.union(definition, element)

    def elements(self, whole, seen=None) -> set:
        """The definitions a container (any definition the same as `whole`) may hold."""
        root = self.same.find(whole)
        seen = set() if seen is None else seen
        if root in seen:
            return set()
        seen.add(root)
        found = {e for c, e in self.contains if self.same.find(c) == root}
        for copy, original in self.shallow:
            if self.same.find(copy) == root:
                found |= self.elements(original, seen)
        return found

    def reaching_root(self, node: cst.BaseExpression, state: dict) -> list:
        """The definitions reaching the variable an atom or attribute read starts from."""
        root = _root(node)
        return [] if root is None or root in self.numbers else self.reaching(root, state)

    def reaching(self, name: str, state: dict) -> list:
        if name in state:
            return [definition for definition, _ in state[name]]
        if name in self.locals:
            return []  # a local read before it is bound: Python raises
        definition = (_GLOBAL, name)
        self.origin_of[definition] = (_GLOBAL, name)
        return [definition]

    # -- writes ----------------------------------------------------------------------------------
    def write(self, statement, name: str, before: dict, state: dict) -> None:
        """`x = written(x, key, v)`: x after is x before, changed; every other name sharing the
        array, or holding it, is stale from here (until assigned again)."""
        output = (id(statement), name)
        old = self.reaching(name, before)
        for definition in old:
            self.same.union(output, definition)
        if not self.marking:
            return
        foreign = self.foreign([output])
        if foreign:
            self.fail(statement, "assignment into an element of an argument or a global", foreign)
        written = self.statements[id(statement)].body[0].value
        active = name in self.active or any(
            isinstance(a.value, cst.Name) and a.value.value in self.active for a in written.args
        )
        self.mark(state, {self.same.find(output)}, (id(statement), False, active), keep=output)

    def update(self, statement, name: str, before: dict, state: dict) -> None:
        """`x = x op y` for `x op= y`: x's new array is its own; the names sharing its old one
        are stale (Python changed them too)."""
        old = self.reaching(name, before)
        self.old[id(statement)] = old
        if self.marking and old:
            roots = {self.same.find(d) for d in old}
            self.mark(state, roots, (id(statement), True, True), keep=(id(statement), name))

    def mark(self, state: dict, same: set, mark, keep) -> None:
        """Mark stale, in `state`, every definition the same as the written array (roots `same`)
        or holding it (a container of it, a shallow copy of such a container), but `keep`."""
        stale = set(same)
        changed = True
        while changed:
            changed = False
            for container, element in self.contains:
                if self.same.find(element) in stale and self.same.find(container) not in stale:
                    stale.add(self.same.find(container))
                    changed = True
            for copy, original in self.shallow:
                root = self.same.find(original)
                if root in stale and root not in same and self.same.find(copy) not in stale:
                    stale.add(self.same.find(copy))
                    changed = True
        for other, definitions in list(state.items()):
            state[other] = frozenset(
                (d, mark if d != keep and self.same.find(d) in stale else marked) for d, marked in definitions
            )

    def reads(self, statement, node: cst.CSTNode, state: dict, differentiable) -> None:
        """In pass 2, refuse a differentiable read of a name a write made stale (`differentiable`:
        whether the statement's result has a derivative in that name)."""
        if not self.marking:
            return
        if isinstance(node, cst.Attribute) and node.attr.value in _STATIC_ATTRIBUTES:
            return  # x.shape: a write never changes it
        for name in syntax.variables_read(node):
            for definition, stale in state.get(name, ()):
                if stale is None:
                    continue
                writer, update, active = stale
                if update:  # an `x op= y` computed as a new array: any later read of the old one differs
                    self.stale_updates.setdefault(writer, self.shared(name, definition))
                elif active and differentiable(name):
                    self.refuse_stale(statement, name, writer)

    def carries(self, value: cst.BaseExpression) -> bool:
        """Whether a call made for its effect may carry a gradient (not a library function's)."""
        if not isinstance(value, cst.Call):
            return False
        primitive = self.resolver.resolve(value.func)
        return primitive is None or not _fresh(primitive)

    def foreign(self, definitions: list) -> str | None:
        """Why the array of `definitions` is not the function's own, or None."""
        roots = {self.same.find(d) for d in definitions}
        for definition, (kind, owner) in self.origin_of.items():
            if self.same.find(definition) in roots:
                if kind == _PARAMETER:
                    return (
                        f"the array is the parameter {owner}'s (or a part of it): the caller's, which cpsgrad does "
                        f"not write into yet; copy it first ({owner} = {owner}.copy()) and write into the copy"
                    )
                return (
                    f"the array is the global or free variable {owner}'s (or a part of it); copy it into a local "
                    "array first and write into that"
                )
        return None

    def shared(self, name: str, definition) -> str:
        statement = self.statements.get(definition[0]) if isinstance(definition[0], int) else None
        where = f" (assigned at {self.normalized.location(statement)})" if statement is not None else ""
        return f"the name {name}{where} shares the array and is read after the change"

    def refuse_stale(self, statement, name: str, writer: int) -> None:
        write = self.statements.get(writer)
        if name not in self.user_names:  # normalize's own: a loop's sequence, a temporary
            what = "the sequence a for loop iterates" if name.endswith("_items") else "a value computed earlier"
            name = f"{what} ({name})"
        self.fail(
            statement,
            f"read of {name} after a write into the array it shares",
            f"{name} shares its array with the one written at {self.normalized.location(write)}, so it sees the "
            f"change, which cpsgrad cannot differentiate through it; read the written array itself, or copy "
            f"the array before writing into it (.copy())",
        )

    def fail(self, statement, construct: str, why: str) -> None:
        raise UnsupportedError(self.normalized.location(statement), construct, why)


def _constant_position(value: cst.Subscript) -> int | None:
    """`t[1]`, `t[-1]`: the constant position a subscript reads, else None."""
    if len(value.slice) != 1 or not isinstance(value.slice[0].slice, cst.Index):
        return None
    literal = syntax.literal_value(value.slice[0].slice.value)
    return literal if type(literal) is int else None


def _fresh(primitive) -> bool:
    """Whether a library function's result is a new value (numpy, scipy, math, operators, len, ...)."""
    if primitive in _FRESH_BUILTINS or isinstance(primitive, np.ufunc):
        return True
    module = getattr(primitive, "__module__", None) or ""
    return callable(primitive) and module.startswith(_FRESH_MODULES)


def _root(node: cst.BaseExpression) -> str | None:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _join(a: dict | None, b: dict | None) -> dict | None:
    if a is None:
        return None if b is None else dict(b)
    if b is None:
        return dict(a)
    joined = dict(a)
    for name, definitions in b.items():
        joined[name] = joined.get(name, frozenset()) | definitions
    return joined
