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
   array: the caller would see the change) is refused; a stale name that is the written array
   itself is bound to it again after the write (transforms/analysis/identities.py, then a new analysis);
   a differentiable read of any other stale name is refused, naming the write and the read.

An augmented assignment `x += y` on an array is computed as `x = x + y` where no other name shares
x's array and reads it later and x is not the caller's; where the caller's, or names that are x's
value itself, see it, as `updated` (in place); elsewhere an actual array is refused at run time
(`refuse_in_place`). The results go on `Normalized.in_place`.
"""

from __future__ import annotations

import libcst as cst

from cpsgrad.errors import UnsupportedError
from cpsgrad.transforms import augmented, syntax, writes
from cpsgrad.transforms.analysis.activity import is_active_value
from cpsgrad.transforms.analysis.callee_analysis import analysed, assignments
from cpsgrad.transforms.analysis.identities import Identities, identity_source
from cpsgrad.transforms.analysis.sharing import _STATIC_ATTRIBUTES, Sets, Sharing, _fresh
from cpsgrad.transforms.analysis.write_statements import calls_with_arrays, has_writes, update_statements
from cpsgrad.transforms.code_keyed import ByCode
from cpsgrad.transforms.naming import names_in
from cpsgrad.transforms.resolve import Resolver

_PARAMETER = "parameter"
_CLEAN = frozenset()  # a definition no write has made stale
IN_PLACE = "in place"  # Normalized.in_place: an `x op= y` into a parameter's array, written as numpy does


_ROUNDS = 8  # analyses at most: each may bind names to a written array again (two rounds for `c += b`)


def check(
    normalized,
    active: set[str],
    numbers: set[str],
    resolver: Resolver,
    user_calls: set[int] = frozenset(),
    callee_writes=None,
) -> bool:
    """Refuse the unsound writes of `normalized`; record which `x op= y` are plain, which parameters
    it writes into, which arguments of its user calls may be written into; rewrite the `x op= y` the
    caller or another name sees as writes, and bind again the names that are a written array
    itself (transforms/writes.py), analysing the result again; then check each `x op= y`'s operand
    (transforms/augmented.py). Whether it rewrote."""
    rewrote = False
    for round_ in range(_ROUNDS):
        body = normalized.definition.body.body
        updates = update_statements(normalized, body, numbers)
        normalized.in_place, normalized.written_parameters, normalized.consumable = {}, (), {}
        if not updates and not has_writes(body) and not calls_with_arrays(body, user_calls, numbers):
            break
        analysis = _Analysis(normalized, active, numbers, resolver, updates, user_calls)
        analysis.callee_writes = callee_writes  # transforms/callee_writes.written_by: what a user callee writes into
        analysis.refreshing = round_ < _ROUNDS - 1  # the last analysis refuses what it would rewrite
        analysis.run(body)
        in_place = {i for i, why in normalized.in_place.items() if why == IN_PLACE}
        aliases = {i: names for i, names in analysis.update_aliases.items() if i in in_place}
        if writes.rewrite_updates(normalized, in_place, aliases):
            # the rebindings found are of the definition before that rewrite: the next analysis, of
            # the rewritten one, finds them again, with those the rewritten updates need
            rewrote = True
        else:
            rewrote = writes.rebind_after_writes(normalized, analysis.refreshes) or rewrote
        rewrote = rewrote or bool(analysis.refreshes)
        if not aliases and not analysis.refreshes:
            if analysis.pending_refusal is not None:
                analysis.refuse_stale(*analysis.pending_refusal)
            break
    return augmented.guard_operands(normalized, numbers) or rewrote


class _Analysis(Sharing, Identities):
    def __init__(self, normalized, active, numbers, resolver, updates, user_calls=frozenset()):
        self.normalized = normalized
        self.active = active
        self.numbers = numbers
        self.resolver = resolver
        self.updates = updates  # ids of `x = x op y` statements from `x op= y`
        self.user_calls = user_calls  # ids of `y = f(...)` calls of user functions (calls.user_calls)
        self.returned: list | None = None  # returns_fresh: the definitions returned
        every = list(assignments(normalized.definition.body.body))
        self.locals = set(normalized.parameters) | {n for _, _, names in every for n in names}
        self.statements = {id(statement): statement for statement, _, _ in every}
        self.user_names = names_in(normalized.source.definition)
        self.same = Sets()  # definitions that may be the same array, or overlap in memory
        self.contains: set = set()  # (container, element): a tuple, list or dict holding a value
        self.shallow: set = set()  # (copy, original): a container's .copy() holds the original's elements
        self.displays: dict = {}  # a display's definition -> per position, the definitions of its elements
        self.copies: dict = {}  # a definition of `list(c)`, `tuple(c)`, ... -> the definitions of c
        self.containers: set = set()  # definitions that are tuples, lists or dicts (displays, copies, their writes)
        self.origin_of: dict = {}  # definition -> (kind, name) for parameters and globals
        self.old: dict[int, list] = {}  # id(`x = x op y`) -> the definitions of x it replaces
        self.marking = False  # pass 2: stale marks and refusals
        self.parameters_written: set[str] = set()  # the caller's arrays written (consented at run time)
        self.chained: dict = {}  # (id(call), position) -> the parameters a user call is given to write into
        self.callee_writes = None  # (callee, call, position) -> whether it writes there (callee_writes.writes_into)
        self.stale_updates: dict[int, str] = {}
        self.start_identities()  # names that are the written array itself, or its view or base (identities.py)

    # -- the dataflow ------------------------------------------------------------------------
    def run(self, body) -> None:
        entry = {}
        for parameter in self.normalized.parameters:
            definition = (_PARAMETER, parameter)
            self.origin_of[definition] = (_PARAMETER, parameter)
            entry[parameter] = frozenset({(definition, _CLEAN)})
        self.run_relations(body, entry)
        self.marking = True
        self.block(body, dict(entry), [])  # pass 2: stale reads
        for identifier in self.updates:
            old = self.old.get(identifier, [])
            why = self.stale_updates.get(identifier) or self.foreign(old)  # a name that does not follow: refused
            if why is None and (self.parameters_of(old) or identifier in self.update_aliases):
                why = IN_PLACE  # the caller's array, or one another name reads later: changed in place
            self.normalized.in_place[identifier] = why
        for (identifier, position), owners in self.chained.items():  # a callee may write into them: so may we
            if self.normalized.consumable[identifier][position]:
                self.parameters_written |= owners
        self.normalized.written_parameters = tuple(
            p for p in self.normalized.parameters if p in self.parameters_written
        )

    def run_relations(self, body, entry: dict | None = None) -> None:
        """Pass 1: the relations between definitions, until they stop growing."""
        if entry is None:
            entry = {}
            for parameter in self.normalized.parameters:
                definition = (_PARAMETER, parameter)
                self.origin_of[definition] = (_PARAMETER, parameter)
                entry[parameter] = frozenset({(definition, _CLEAN)})
        size = None
        while size != self.size():
            size = self.size()
            if self.returned is not None:
                self.returned = []
            self.block(body, dict(entry), [])

    def fresh(self, definitions: list) -> bool:
        """Whether none of `definitions`, nor anything they hold, may be a parameter's or a global's."""
        roots = {self.same.find(d) for d in definitions}
        pending = list(definitions)
        while pending:
            for element in self.elements(pending.pop()):
                if self.same.find(element) not in roots:
                    roots.add(self.same.find(element))
                    pending.append(element)
        return not any(self.same.find(d) in roots for d in self.origin_of)

    def size(self) -> tuple:
        roots = sum(1 for item in self.same.parent if self.same.find(item) == item)
        return (
            len(self.same.parent),
            roots,
            len(self.contains),
            len(self.shallow),
            frozenset(self.identity.items()),
            frozenset(self.loose.items()),
        )

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
        after = (
            self.block(statement.orelse.body.body, dict(current), loops) if statement.orelse and current else current
        )
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
                if self.returned is not None:
                    self.returned += self.reaching_root(small.value, state)
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
        if id(statement) in self.user_calls and self.marking:
            self.consent(statement, value, before, state)
        for name, definition in zip(names, definitions, strict=True):
            state[name] = frozenset({(definition, _CLEAN)})
        if isinstance(target, cst.Tuple):
            if isinstance(value, cst.Name):
                for position, (name, definition) in enumerate(zip(names, definitions, strict=True)):
                    if name not in self.numbers:
                        for whole in self.reaching(value.value, before):
                            self.element_of(definition, whole, position)
        elif names[0] not in self.numbers and not writes.is_write(value):
            self.relate(definitions[0], value, before)
            source = identity_source(value)
            self.note_subscript(definitions[0], value, before)
            if source is not None and source not in self.numbers:
                sources = self.reaching(source, before)
                self.identity[definitions[0]] = self.common(self.identity, sources, definitions[0])
                self.loose[definitions[0]] = self.common(self.loose, sources, definitions[0])
        if writes.is_write(value):
            self.write(statement, names[0], before, state)
        elif id(statement) in self.updates:
            self.update(statement, names[0], before, state)
        return state

    # -- how a value relates to the values it was made from ---------------------------------------
    def write(self, statement, name: str, before: dict, state: dict) -> None:
        """`x = written(x, key, v)`: x after is x before, changed; every other name sharing the
        array, or holding it, is stale from here (until assigned again)."""
        output = (id(statement), name)
        old = self.reaching(name, before)
        for definition in old:
            self.same.union(output, definition)
        in_place = syntax.dotted_name(statement.body[0].value.func) != f"{writes.RUNTIME}.updated"  # updated may rebind
        self.identity[output] = self.common(self.identity, old, output) if in_place else output
        self.loose[output] = self.common(self.loose, old, output)
        if old and all(definition in self.copies for definition in old):  # still the list it was
            self.copies[output] = [original for definition in old for original in self.copies[definition]]
        if old and all(definition in self.containers for definition in old):  # a list's or dict's item: it holds v
            self.containers.add(output)
            value = writes.write_parts(statement.body[0].value)[2]
            for element in self.reaching_root(value, before):
                self.contains.add((output, element))
        if not self.marking:
            return
        foreign = self.foreign([output])
        if foreign:
            self.fail(statement, "assignment into an element of an argument or a global", foreign)
        self.note_refreshable(statement, name, old, before, update=not in_place)  # `updated` may rebind: checked
        written = statement.body[0].value
        active = name in self.active or any(
            isinstance(a.value, cst.Name) and a.value.value in self.active for a in written.args
        )
        self.mark(state, {self.same.find(output)}, (id(statement), "write", active), keep=output)

    def update(self, statement, name: str, before: dict, state: dict) -> None:
        """`x = x op y` for `x op= y`: x is still the array it was (numpy's `+=` writes into it), so it joins the
        old definitions' class (a second update of the caller's array is in place too); names sharing it are stale."""
        self.old[id(statement)] = old = self.reaching(name, before)
        self.same.union((id(statement), name), *old)
        self.loose[(id(statement), name)] = self.common(self.loose, old, (id(statement), name))  # in place, maybe
        if self.marking:
            self.note_refreshable(statement, name, old, before, update=True)
        if self.marking and old:
            roots = {self.same.find(d) for d in old}
            self.mark(state, roots, (id(statement), "update", True), keep=(id(statement), name))

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
                (d, marks | {mark} if d != keep and self.same.find(d) in stale else marks) for d, marks in definitions
            )

    def consent(self, statement, call: cst.Call, before: dict, state: dict) -> None:
        """A call of a user function, which may write into the arrays it is given (it is checked when
        it runs, runtime/dispatch.py): an argument may be written into where it is the function's
        own array, or its parameters' (then this function may write into them too: its caller is
        asked in turn), and nothing reads it, or a name sharing it, differentiably after the call."""
        arguments = [a for a in call.args if a.keyword is None] + [a for a in call.args if a.keyword is not None]
        consumable = []
        for position, argument in enumerate(arguments):
            name = argument.value.value if isinstance(argument.value, cst.Name) else None
            if name is None or name in self.numbers or name not in self.locals:
                consumable.append(name is not None and name in self.numbers)
                continue
            old = self.reaching(name, before)
            roots = {self.same.find(d) for d in old}
            origins = [origin for d, origin in self.origin_of.items() if self.same.find(d) in roots]
            owned = not origins
            chained = (
                bool(origins) and all(kind == _PARAMETER for kind, _ in origins) and self.writes_into(call, position)
            )
            consumable.append(owned or chained)
            if owned or chained:
                self.mark(state, roots, (id(statement), ("call", position), True), keep=None)
            if chained:
                self.chained.setdefault((id(statement), position), set()).update(owner for _, owner in origins)
        previous = self.normalized.consumable.get(id(statement))
        if previous is not None:  # a loop's next visit: a read found after an earlier one still counts
            consumable = [now and before for now, before in zip(consumable, previous, strict=True)]
        self.normalized.consumable[id(statement)] = tuple(consumable)

    def reads(self, statement, node: cst.CSTNode, state: dict, differentiable) -> None:
        """In pass 2, refuse a differentiable read of a name a write made stale (`differentiable`:
        whether the statement's result has a derivative in that name)."""
        if not self.marking:
            return
        if isinstance(node, cst.Attribute) and node.attr.value in _STATIC_ATTRIBUTES:
            return  # x.shape: a write never changes it
        if self.read_on_purpose(statement, node):
            return
        for name in syntax.variables_read(node):
            for definition, marks in state.get(name, ()):
                for writer, kind, active in marks:
                    if kind == "update":  # an `x op= y` computed as a new array: any later read of the old one differs
                        # x's own object or view: x changes in place, name follows
                        if (writer, name) in self.refreshable:
                            self.update_aliases.setdefault(writer, {})[name] = self.refreshable[(writer, name)]
                        else:
                            self.stale_updates.setdefault(writer, self.shared(name, definition))
                    elif kind == "write":
                        if active and differentiable(name):
                            if (writer, name) in self.refreshable:  # bound to the written array after the write
                                self.refreshes.setdefault(writer, {})[name] = self.refreshable[(writer, name)]
                            elif self.refreshing:  # refused unless a name bound again below serves (check)
                                self.pending_refusal = self.pending_refusal or (statement, name, writer)
                            else:
                                self.refuse_stale(statement, name, writer)
                    elif differentiable(name):  # read after a call that may have written into it
                        consumable = self.normalized.consumable.get(writer)
                        if consumable is not None and consumable[kind[1]]:
                            self.normalized.consumable[writer] = (
                                *consumable[: kind[1]], False, *consumable[kind[1] + 1 :]
                            )

    def carries(self, value: cst.BaseExpression) -> bool:
        """Whether a call made for its effect may carry a gradient (not a library function's)."""
        if not isinstance(value, cst.Call):
            return False
        primitive = self.resolver.resolve(value.func)
        return primitive is None or not _fresh(primitive)

    def foreign(self, definitions: list) -> str | None:
        """Why the array of `definitions` is not the function's own (a global's, a free
        variable's), or None; the parameters it may be are added to `written_parameters`."""
        roots = {self.same.find(d) for d in definitions}
        for definition, (kind, owner) in self.origin_of.items():
            if self.same.find(definition) in roots:
                if kind == _PARAMETER:
                    self.parameters_written.add(owner)
                    continue
                return (
                    f"the array is the global or free variable {owner}'s (or a part of it); copy it into a local "
                    "array first and write into that"
                )
        return None

    def parameters_of(self, definitions: list) -> set[str]:
        """The parameters whose arrays `definitions` may be."""
        roots = {self.same.find(d) for d in definitions}
        return {
            owner for d, (kind, owner) in self.origin_of.items() if kind == _PARAMETER and self.same.find(d) in roots
        }

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

    def writes_into(self, call: cst.Call, position: int) -> bool:
        """Whether the user function `call` calls may write into the argument at `position` (this
        function's parameter's array: then this function writes into it too, asking its caller)."""
        callee = self.resolver.resolve(call.func) if isinstance(call.func, cst.Name) else None
        return self.callee_writes is not None and callee is not None and self.callee_writes(callee, call, position)

    def returns_fresh(self, function) -> bool:
        """Whether a user function's results never share an array with its parameters or globals
        (its own analysis; `advect(f, vx, vy)` returning `np.reshape(flat, ...)` of new values):
        then its result is new, as a numpy function's."""
        return returns_fresh(function)

    def fail(self, statement, construct: str, why: str) -> None:
        raise UnsupportedError(self.normalized.location(statement), construct, why)


def _join(a: dict | None, b: dict | None) -> dict | None:
    if a is None:
        return None if b is None else dict(b)
    if b is None:
        return dict(a)
    joined = dict(a)
    for name, definitions in b.items():
        joined[name] = joined.get(name, frozenset()) | definitions
    return joined


_FRESH_RESULTS = ByCode()  # code object -> whether the function's results are always new


def returns_fresh(function) -> bool:
    """Whether every value `function` returns is new (shares no array with its parameters, its
    globals or free variables, or their elements): then its result aliases none of a caller's
    values. Recursion, or anything that cannot be read or normalized, counts as not new."""
    return analysed(function, _FRESH_RESULTS, _fresh_results, False)


def _fresh_results(function, normalized, resolver) -> bool:
    analysis = _Analysis(normalized, set(), set(), resolver, set())
    analysis.returned = []
    analysis.run_relations(normalized.definition.body.body)
    return analysis.fresh(analysis.returned)
