"""Calls with `*` and `**`, on both sides of a call site (runtime/dispatch.py).

Callees with `*args` / `**kwargs` parameters: see `runtime/starred.py` (`packs`, `fan`).

Calls with starred arguments, `f(a, *xs, **kw)`: normalize writes `spread(f, (a, *xs), kw)`,
a user call whose dispatcher is a `SpreadSite`. When it runs it knows how many positional
arguments there are and which keywords, so it hands the call to an ordinary `CallSite` made
for that shape (kept per shape), which binds it as Python would, picks the callee's program
(a user function, a closure, a partial, or a primitive's rule through its adapter) and runs it;
the arguments' adjoints come back as the adjoint of the tuple and of each mapping.
"""

from __future__ import annotations

from cpsgrad.runtime import dispatch
from cpsgrad.runtime.starred import keywords as merged_keywords
from cpsgrad.runtime.starred import spread, spread_adjoint

SPREAD_LABEL = "cpsgrad_runtime.spread"


def site(label: str, location, active: tuple, positional: int, keywords: tuple, callee_active: bool, consumable=()):
    """The dispatcher of a call site: a `SpreadSite` for `cpsgrad_runtime.spread(...)`."""
    if label == SPREAD_LABEL:
        return SpreadSite(location, active, positional)
    return dispatch.CallSite(label, location, active, positional, keywords, callee_active, consumable)


class SpreadSite:
    """The dispatcher of `spread(f, args, *mappings)`: an ordinary CallSite per call shape."""

    __slots__ = ("location", "active", "shapes", "label")

    def __init__(self, location, active: tuple, positional: int):
        self.location = location
        self.active = frozenset(active)  # among (f, args, *mappings)
        self.shapes: dict = {}
        self.label = "a call with * or ** arguments"

    def call(self, callee, k, function, args, *mappings):
        if type(args) is not tuple:
            args = tuple(args)
        given = merged_keywords(function, mappings) if mappings else {}
        positional = tuple(i for i in range(len(args)) if 1 in self.active and dispatch._may_carry_gradient(args[i]))
        keyed = tuple(
            name
            for m, mapping in enumerate(mappings)
            if 2 + m in self.active
            for name in mapping.keys()
            if dispatch._may_carry_gradient(given[name])
        )
        names = tuple(given)
        callee_active = 0 in self.active
        shape = (len(args), names, positional, keyed, callee_active)
        inner = self.shapes.get(shape)
        if inner is None:
            if len(self.shapes) >= dispatch.MAX_PLANS:
                self.shapes.clear()
            label = getattr(function, "__qualname__", None) or getattr(function, "__name__", None) or "the callee"
            active = (*positional, *(len(args) + names.index(name) for name in keyed))
            inner = self.shapes[shape] = dispatch.CallSite(
                label, self.location, active, len(args), names, callee_active
            )
        result = inner.slow(function, k, args, given if names else None)
        rest = list(result[1:])
        callee_adjoint = rest.pop(0) if callee_active else 0.0
        positions = dict(zip(positional, rest[: len(positional)], strict=True))
        by_name = dict(zip(keyed, rest[len(positional) :], strict=True))
        args_adjoint, mapping_adjoints = spread_adjoint(args, positions, mappings, by_name)
        adjoints = [callee_adjoint, args_adjoint, *mapping_adjoints]
        return (result[0], *(adjoints[i] for i in sorted(self.active)))


__all__ = ["SPREAD_LABEL", "SpreadSite", "site", "spread"]
