"""Which names are a written array itself, so they can follow the write (transforms/analysis/aliasing.py).

Python's `c = a; c[0] = v` changes the array `a` holds too, and `c = a; c += b` does where `c`'s value
is an array. The derivative program gives the written name a new version at the write; another name
for the same array must then stand for the new version, or its later reads would send their adjoint
to the state before the write. A definition's *identity* is the definition whose object it surely
is: a name copy's and a write's (`written`, `copied_into`) come from their source's where every
reaching source agrees (a loop's own earlier version aside); anything else is its own. The *loose*
identity also passes through `x = updated(x, ...)` (an `x op= y` that may have rebound a number
instead of changing it in place). After a write, a name whose every reaching definition has the
written target's identity is bound to it again (`a = c`); one that agrees only loosely is checked
when it runs (`alias_after_write`, `alias_after_update`: the array itself, a number kept, anything
else refused); any other stays stale, and its differentiable reads are refused.
"""

from __future__ import annotations

import libcst as cst

from cpsgrad.transforms import syntax, walk, writes


class Identities:
    """The identity bookkeeping of aliasing's _Analysis (reads `identity`, `loose`, `numbers`,
    `refreshing`, and fills `refreshable`)."""

    def start_identities(self) -> None:
        self.identity: dict = {}  # definition -> the definition whose object it surely is (a name copy, a write)
        self.loose: dict = {}  # the same, through `x op= y` too (the same object where it was in place)
        self.views: dict = {}  # definition of `r = x[key]` -> (x, x's loose identities, the subscript)
        self.refreshable: dict = {}  # (id(write or update), name) -> how name follows the array written there
        self.refreshes: dict[int, dict] = {}  # id(write) -> {name: "copy", "checked", ("view"/"base", subscript)}
        self.update_aliases: dict[int, dict] = {}  # id(`x = x op y`) -> {name sharing x read after it: how}
        self.refreshing = True  # whether those names are rebound (else a read of their old version is refused)
        self.pending_refusal = None  # the first stale read no name bound again serves: refused if none is

    def read_on_purpose(self, statement, node) -> bool:
        """`alias_after_update(a, x)`, `view_after_write(r, x, key)`, `checked_view`, and a view's base
        written with it (writes.py) read the stale value on purpose."""
        return id(statement) in self.normalized.base_writes or (
            isinstance(node, cst.Call)
            and (identity_source(node) is not None or syntax.dotted_name(node.func) in CHECKS)
        )

    def common(self, identity: dict, sources: list, definition):
        """The definition whose object `definition`, made from `sources` (a name copy's reaching
        definitions, a write's target before it), is by `identity`: their common one, else its own."""
        found = {identity.get(d, d) for d in sources} - {definition}  # a loop's own earlier version aside
        return found.pop() if len(found) == 1 else definition

    def note_refreshable(self, statement, name: str, old: list, before: dict, update: bool) -> None:
        """The other names that, on every path reaching `statement`, are the very object `name` holds
        (`c = a` before `c[0] = v`): after the write they can be bound to it again (`a = c`), which
        follows Python exactly, where a read of their old version would miss the change. Where an
        `x op= y` between may have rebound instead (a number's), the name is checked when it runs
        (writes.py: `alias_after_write`, `alias_after_update`)."""
        if not self.refreshing:
            return
        strict, loose = {self.identity.get(d, d) for d in old}, {self.loose.get(d, d) for d in old}
        for other, definitions in before.items():
            if other == name or other in self.numbers or not definitions:
                continue
            if len(strict) == 1 and not update and {self.identity.get(d, d) for d, _ in definitions} == strict:
                self.refreshable[(id(statement), other)] = "copy"
            elif len(loose) == 1 and {self.loose.get(d, d) for d, _ in definitions} == loose:
                self.refreshable[(id(statement), other)] = "checked"
            else:
                self.note_view(statement, other, {d for d, _ in definitions}, old, before)

    def note_view(self, statement, other: str, definitions: set, written: list, before: dict) -> None:
        """A view and its base (`r = x[1:3]`, a basic subscript): after a write into the base, `r`
        is taken again from it; after a write into the view, the base is written with the view's
        values. Both are checked where they run (writes.py `view_after_write`, `checked_view`: the
        very view, or no shared memory at all), so the loose identities serve."""
        objects = {self.loose.get(d, d) for d in definitions}
        targets = {self.loose.get(d, d) for d in written}
        if len(objects) != 1 or len(targets) != 1:
            return
        view = self.views.get(next(iter(objects)))
        if view is not None and view[1] == targets and self.key_definitions(view[2], before) == view[3]:
            self.refreshable[(id(statement), other)] = ("view", view[2])  # other is a view of the written array
            return
        made = self.views.get(next(iter(targets)))
        if made is not None and objects == made[1] and self.key_definitions(made[2], before) == made[3]:
            self.refreshable[(id(statement), other)] = ("base", made[2])  # other is the base of the written view

    def note_subscript(self, definition, value: cst.BaseExpression, before: dict) -> None:
        """Remember `definition = x[key]` with a basic key of numbers: it may be a view of x (and so
        is `view_after_write(r, x, key)` of such an r)."""
        if isinstance(value, cst.Call) and syntax.dotted_name(value.func) == f"{writes.RUNTIME}.view_after_write":
            objects = {self.loose.get(d, d) for d in self.reaching(value.args[0].value.value, before)}
            if len(objects) == 1 and next(iter(objects)) in self.views:
                self.views[definition] = self.views[next(iter(objects))]
            return
        if not (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name)):
            return
        if value.value.value in self.numbers or not all(self.basic(element.slice) for element in value.slice):
            return
        identities = {self.loose.get(d, d) for d in self.reaching(value.value.value, before)}
        if len(identities) == 1:
            self.views[definition] = (value.value.value, identities, value, self.key_definitions(value, before))

    def key_definitions(self, subscript: cst.Subscript, state: dict) -> frozenset:
        """The definitions of the names in `subscript`'s key reaching `state`: the same key is
        computed again only where they are the same (a loop's index moves on: `x[i]`, `i = i + 1`)."""
        names = {n.value for element in subscript.slice for n in walk.nodes(element.slice) if isinstance(n, cst.Name)}
        return frozenset((name, frozenset(d for d, _ in state.get(name, ()))) for name in names if name != "None")

    def basic(self, part) -> bool:
        if isinstance(part, cst.Index):
            return self.number_atom(part.value)
        return isinstance(part, cst.Slice) and all(
            bound is None or self.number_atom(bound) for bound in (part.lower, part.upper, part.step)
        )

    def number_atom(self, node) -> bool:
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            node = node.expression
        return isinstance(node, cst.Integer) or (isinstance(node, cst.Name) and node.value in self.numbers)



_ALIAS_CALLS = frozenset(f"{writes.RUNTIME}.{name}" for name in ("alias_after_update", "alias_after_write"))
CHECKS = frozenset(f"{writes.RUNTIME}.{name}" for name in ("view_after_write", "checked_view"))  # read on purpose


def identity_source(value: cst.BaseExpression) -> str | None:
    """The name whose object `value` surely is: `a` of a name copy `c = a` or of
    `alias_after_update(a, c)` and `alias_after_write(a, c)` (transforms/writes.py: a itself, or c
    where a is c), else None."""
    if isinstance(value, cst.Name):
        return value.value
    if (
        isinstance(value, cst.Call)
        and syntax.dotted_name(value.func) in _ALIAS_CALLS
        and isinstance(value.args[0].value, cst.Name)
    ):
        return value.args[0].value.value
    return None
