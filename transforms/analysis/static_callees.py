"""What `cpsgrad show` can tell of a call site before the program runs: the function it calls,
and with which argnums and argument kinds (`callee_of`), so that the callee's program is shown too.
"""

from __future__ import annotations

import types

from cpsgrad.errors import CpsgradError
from cpsgrad.runtime import dispatch
from cpsgrad.transforms import calls
from cpsgrad.transforms.analysis import kinds


def callee_of(site: calls.Site) -> tuple[types.FunctionType, tuple[int, ...], tuple[str, ...]] | None:
    """(function, argnums, kinds) of the program a call runs, as far as the transform can tell:
    None when the callee is a local value (or will raise)."""
    target = calls.target(site.callee) if site.callee is not None else None
    if target is None:
        return None
    try:
        plan = dispatch.plan(target, site.positional, site.keywords, site.active)
    except (TypeError, CpsgradError):
        return None
    own = [value for name, value in target.keywords if name not in site.keywords]
    values = [*map(kinds.of, target.prefix), *site.kinds, *map(kinds.of, own), *map(kinds.of, plan.defaults)]
    values += [pack_kind(pack, slots, values) for pack, slots in plan.packs]  # *args, **kwargs: after the rest
    return target.function, plan.argnums, tuple(values[i] for i in plan.order)


def pack_kind(pack: str, slots: tuple, values: list) -> str:
    """The kind of a `*args` tuple (`kinds.of` of the tuple the call packs) or a `**kwargs` dict."""
    if pack == "args" and len(slots) <= kinds.MAX_CHECKED_LENGTH and all(values[i] == kinds.NUMBER for i in slots):
        return kinds.NUMBERS
    return kinds.ANY
