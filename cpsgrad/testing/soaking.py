"""What the soak runners of `programs` and `fuzz` share: chunks of work run in this process or
in a pool of worker processes, each chunk's outcome handed to `collect` as it comes; and draws
that depend on the seed alone (`reproducible_draws`, `pick`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from hypothesis import strategies as st


def run_chunks(chunk: Callable[[Any], Any], work: Iterable[Any], jobs: int, collect: Callable[[Any], None]) -> None:
    """`collect(chunk(job))` for each job of `work`, in order; with `jobs` > 1 in worker processes
    (`chunk` must then be a module-level function)."""
    if jobs <= 1:
        for job in work:
            collect(chunk(job))
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(jobs) as pool:
        for outcome in pool.map(chunk, work):
            collect(outcome)


def reproducible_draws() -> bool:
    """Make hypothesis's draws depend on the seed only, not on the modules imported so far.

    Hypothesis (6.1xx) now and then (p = 0.05 a draw) picks a constant from a pool it collects
    from the source of every local module in `sys.modules`, so one seed drew different programs
    in a process that had imported more: a generated program's module, another test module, a
    helper's worktree. Derandomized tests then passed alone and failed after other tests, and a
    soak's `--seed` did not reproduce its programs in a new process. This keeps the pool of
    local constants empty (hypothesis's own constants still take part). It patches a private
    function; where a hypothesis version lacks it, nothing is changed and False is returned
    (tests/test_testing.py checks that it is True with the version installed)."""
    try:
        from hypothesis.internal.conjecture import providers

        empty = providers.Constants(
            integers=providers.SortedSet(),
            floats=providers.SortedSet(key=providers.float_to_int),
            bytes=providers.SortedSet(),
            strings=providers.SortedSet(),
        )
        if not callable(getattr(providers, "_get_local_constants", None)):
            return False
    except (ImportError, AttributeError, TypeError):
        return False
    providers._get_local_constants = lambda: empty
    return True


def pick(draw: Callable[..., Any], options: Sequence[Any]) -> Any:
    """One of `options`, drawn as its index (the first is the simplest; hypothesis shrinks to it).

    Not `draw(st.sampled_from(options))`: hypothesis labels a sampled_from by the hash of its
    elements (for functions and bound methods their ids, which move with whatever the process
    allocated before; for strings their hash, which moves with PYTHONHASHSEED), and its generator
    mutates a draw by copying choices between spans of one label; so one seed drew other
    programs in another process, under pytest, or after other draws (tests/test_reproducible.py).
    An integers draw is labelled by its class alone."""
    return options[draw(st.integers(0, len(options) - 1))] if len(options) > 1 else options[0]
