"""Draw generated programs until every wanted construct has occurred.

A test that a generator draws each of its constructs must not hang on one seed: hypothesis's draws
change with its version (6.170.15 and 6.170.17 drew different programs from one derandomized
test), so a construct that occurs a few times in 500 programs under one version can miss under
another. `draw_until_seen` runs seeded rounds of `examples` programs and stops as soon as every
wanted construct has occurred, so the test fails only when a construct is really rare or gone.
"""

from collections.abc import Callable, Iterable

from hypothesis import HealthCheck, given, seed, settings


def draw_until_seen(
    strategy,
    wanted: Iterable[str],
    examples: int,
    rounds: int = 4,
    each: Callable | None = None,
    found: Callable = lambda program: program.constructs,
) -> set[str]:
    """Return the wanted constructs never drawn in up to `rounds` seeded rounds of `examples`
    programs each; `each(program)` is called on every program drawn, `found(program)` names what it
    holds (its noted constructs, by default)."""
    missing = set(wanted)
    for round_ in range(rounds):

        @seed(round_)
        @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(strategy)
        def collect(program):
            missing.difference_update(found(program))
            if each is not None:
                each(program)

        collect()
        if not missing:
            break
    return missing
