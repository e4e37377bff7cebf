"""The rewrites of a normalized function that depend on activity, run until nothing changes:
differentiable subscripts (transforms/subscripts.py) and methods of objects called for their
effect (transforms/attributes.py: `obj.f(x)` becomes `t = obj.f(x)`), each followed by activity
again, since a rewritten call can make its receiver differentiable and so another call's."""

from __future__ import annotations

from collections.abc import Callable

from cpsgrad.transforms import attributes, subscripts


def settle(normalized, active: set[str], resolver, recompute: Callable[[], set[str]]) -> set[str]:
    """Rewrite `normalized` in place; the active names of what it became."""
    if subscripts.rewrite(normalized, active, resolver):
        active = recompute()
    while attributes.method_effects(normalized, active, resolver):  # each call rewritten once
        active = recompute()
    return active
