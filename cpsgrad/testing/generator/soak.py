"""The soak: chunks of drawn programs, each its own seeded hypothesis run, checked with
`check_program`, in this process or in worker processes; counts and failure reports."""

from __future__ import annotations

import collections
import time
from typing import Any

from cpsgrad.testing.generator.checking import check_program
from cpsgrad.testing.generator.program import Program
from cpsgrad.testing.generator.strategy import programs
from cpsgrad.testing.soaking import run_chunks


def _soak_chunk(job: tuple[int, int, dict[str, Any]]) -> dict[str, Any]:
    """Run `count` programs with hypothesis seeded by `seed`; report counts and failures."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    count, chunk_seed, options = job
    options = dict(options)
    shrink = options.pop("shrink", True)
    counts: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    failing: dict[str, str] = {}

    @seed(chunk_seed)
    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=True,
        print_blob=False,
        phases=list(Phase) if shrink else [p for p in Phase if p is not Phase.shrink],
    )
    @given(programs(**options))
    def run(program: Program) -> None:
        with program:
            counts["drawn"] += 1
            try:
                result = check_program(program)
            except BaseException as error:
                if type(error).__name__ == "UnsatisfiedAssumption":
                    counts["rejected"] += 1
                else:  # the last failing program of each kind, in case hypothesis' report loses it
                    failing[type(error).__name__] = repr(program)
                raise
            counts["checked" if result is not None and not result.skipped else "skipped"] += 1
            for construct in program.constructs:
                counts[construct] += 1

    import io
    from contextlib import redirect_stdout

    output = io.StringIO()
    try:
        with redirect_stdout(output):
            run()
    except BaseException as error:  # the shrunk failure(s), with their programs
        last = "".join(f"\nthe last program failing with {kind}:\n{text}\n" for kind, text in failing.items())
        failures.append(f"seed {chunk_seed}:\n{output.getvalue()}\n{_describe(error)}\n{last}")
    return {"counts": counts, "failures": failures}


def _describe(error: BaseException) -> str:
    """An exception with hypothesis' notes (the falsifying example), and those of the
    exceptions in a group (several distinct failures)."""
    lines = [f"{type(error).__name__}: {error}", *getattr(error, "__notes__", [])]
    for inner in getattr(error, "exceptions", ()):
        lines += ["", _describe(inner)]
    return "\n".join(lines)


def soak(
    total: int, seed: int = 0, jobs: int = 1, chunk: int = 250, **options: Any
) -> tuple[collections.Counter[str], list[str]]:
    """Run `total` valid programs (in chunks of `chunk`, each its own hypothesis run seeded
    seed, seed + 1, ...), in `jobs` processes; return counts and failure reports."""
    sizes = [chunk] * (total // chunk) + ([total % chunk] if total % chunk else [])
    work = [(size, seed + k, options) for k, size in enumerate(sizes)]
    counts: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    started = time.monotonic()

    def collect(outcome: dict[str, Any]) -> None:
        counts.update(outcome["counts"])
        failures.extend(outcome["failures"])
        for failure in outcome["failures"]:
            print(failure, flush=True)
        rate = counts["drawn"] / (time.monotonic() - started)
        print(
            f"[{time.monotonic() - started:7.1f}s] {counts['checked']} checked, "
            f"{counts['skipped']} skipped, {counts['rejected']} rejected, "
            f"{len(failures)} failing runs ({rate:.1f} programs/s)",
            flush=True,
        )

    run_chunks(_soak_chunk, work, jobs, collect)
    return counts, failures
