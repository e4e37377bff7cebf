"""What the soak runners of `programs` and `fuzz` share: chunks of work run in this process or
in a pool of worker processes, each chunk's outcome handed to `collect` as it comes."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


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
