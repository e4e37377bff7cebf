"""Which names are a written array itself, so they can follow the write (transforms/aliasing.py).

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

from cpsgrad.transforms import syntax, writes


class Identities:
    """The identity bookkeeping of aliasing's _Analysis (reads `identity`, `loose`, `numbers`,
    `refreshing`, and fills `refreshable`)."""

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



_ALIAS_CALLS = frozenset(f"{writes.RUNTIME}.{name}" for name in ("alias_after_update", "alias_after_write"))


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
