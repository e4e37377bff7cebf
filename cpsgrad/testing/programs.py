"""Random programs from the Python cpsgrad supports, as a hypothesis strategy, and a soak runner.

`programs(...)` draws a module: an entry function `f` and 0-3 generated module-level helpers
(one of which may recurse on an int depth that decreases), built from float arithmetic (with
guarded domains), `math` functions, `abs`/`min`/`max`, comparisons and `if`/`elif`/`else`,
`and`/`or`/`not`, conditional expressions, `while` loops bounded by a counter, `for` over
`range`, tuples, lists and vectors, `break`/`continue`/early `return`, tuples (indexing,
unpacking, `len`, `sum`), lists built by the function (`append`, indexing, `sum`), dicts of
floats (displays, `d["a"]`, `d.get`), and optionally a small numpy vector argument. Each drawn
`Program` carries its source (`repr` is the source with the arguments, so hypothesis prints a
failing program as code), the arguments to call it with, the positions to differentiate, and
the constructs it uses. `check_program` runs one through cpsgrad and checks the value exactly
and the gradient against finite differences (`check_grad`). See docs/generator.md.

Soak: ``python -m cpsgrad.testing.programs --soak 10000 [--seed N] [--jobs J]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from cpsgrad.testing import forms
from cpsgrad.testing.generator.checking import _same, check_program
from cpsgrad.testing.generator.grammar import ENTRY, MAX_TRIPS, VECTOR_LENGTH, WRITE_WEIGHT
from cpsgrad.testing.generator.program import Program, cleanup
from cpsgrad.testing.generator.soak import soak
from cpsgrad.testing.generator.strategy import programs
from cpsgrad.testing.soaking import reproducible_draws

reproducible_draws()  # a seed draws the same programs in every process (soaking.py)

__all__ = [
    "ENTRY",
    "MAX_TRIPS",
    "VECTOR_LENGTH",
    "WRITE_WEIGHT",
    "Program",
    "_same",
    "check_program",
    "draw_texts",
    "main",
    "programs",
    "soak",
    "switch_sets",
]


_ALIASING_SWITCHES = (
    "repeated_arguments",
    "views",
    "aliased_containers",
    "discarded_results",
    "captured_arguments",
    "rebinding",
)


def switch_sets() -> dict[str, dict[str, bool]]:
    """The switch sets the soak's command line draws with, by its flag: the defaults (""),
    `--writes`, and each `--no-X` alone."""
    sets: dict[str, dict[str, bool]] = {"": {}, "--writes": {"writes": True}}
    for switch in ("numpy", "closures", *_ALIASING_SWITCHES, *forms.SWITCHES):
        sets[f"--no-{switch.replace('_', '-')}"] = {switch: False}
    return sets


def draw_texts(count: int, seed: int, **options: Any) -> list[str]:
    """The texts (`repr`) of the first `count` programs hypothesis draws from `programs(**options)`
    seeded `seed`, as `--show` prints them: a function of (options, seed, hypothesis's version)
    alone, in any process (tests/test_reproducible.py)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded

    texts: list[str] = []

    @seeded(seed)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        derandomize=False,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(programs(**options))
    def collect(program: Program) -> None:
        texts.append(repr(program))

    collect()
    return texts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cpsgrad.testing.programs",
        description="Generate random programs and check cpsgrad's values and gradients.",
    )
    parser.add_argument("--soak", type=int, default=1000, help="programs to check (valid ones)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first chunk")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--chunk", type=int, default=250, help="programs per hypothesis run")
    parser.add_argument("--no-numpy", action="store_true", help="no vector argument")
    parser.add_argument("--no-closures", action="store_true", help="no lambdas or nested defs")
    for switch in _ALIASING_SWITCHES + forms.SWITCHES:
        parser.add_argument(f"--no-{switch.replace('_', '-')}", action="store_true", help=f"{switch}=False")
    parser.add_argument("--writes", action="store_true", help="a mutation soak: writes in place in most programs")
    parser.add_argument("--no-shrink", action="store_true", help="report failures unshrunk")
    parser.add_argument("--show", type=int, metavar="K", help="print K programs and exit")
    arguments = parser.parse_args(argv)
    options = {"numpy": not arguments.no_numpy, "closures": not arguments.no_closures, "writes": arguments.writes}
    options.update({switch: not getattr(arguments, f"no_{switch}") for switch in _ALIASING_SWITCHES + forms.SWITCHES})
    soak_options = {**options, "shrink": not arguments.no_shrink}
    if arguments.show:
        print(*draw_texts(arguments.show, arguments.seed, **options), sep="")
        return 0
    started = time.monotonic()
    counts, failures = soak(arguments.soak, arguments.seed, arguments.jobs, arguments.chunk, **soak_options)
    elapsed = time.monotonic() - started
    print(f"\n{counts['drawn']} programs drawn in {elapsed:.0f}s ({counts['drawn'] / elapsed:.1f}/s)")
    print("outcomes:", {k: counts[k] for k in ("checked", "skipped", "rejected")})
    shown = sorted((k, v) for k, v in counts.items() if k not in ("drawn", "checked", "skipped", "rejected"))
    print("constructs (programs using each):", *(f"  {construct:24} {number}" for construct, number in shown), sep="\n")
    if failures:
        print(f"\n{len(failures)} failing runs; see above")
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        cleanup()
