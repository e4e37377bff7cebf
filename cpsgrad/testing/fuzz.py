"""Arbitrary Python functions fed to cpsgrad: every outcome must be a result or a cpsgrad error.

Two hypothesis strategies draw the source of a module whose entry is `def f(x, y, n)`:

- `functions()`, a grammar of its own, close to what cpsgrad supports, so that most programs
  get past the fence and through normalize, cps and adjoint, and run: every statement kind
  (assignment of every shape, augmented and annotated assignment, `if`/`elif`, `while`, `for`
  with `else`, `break`/`continue`/`return`, `try`/`except*`/`finally`, `with`, `global`,
  `nonlocal`, `del`, `import`, `assert`, `raise`, `match`, nested `def` with decorators,
  defaults and star parameters, `async def`, nested classes) and every expression kind (all
  operators, chained comparisons, `and`/`or`, conditional expressions, calls with keywords and
  `*`/`**` arguments, methods, attributes, subscripts and slices, every display and
  comprehension, lambdas with defaults, `:=`, f-strings, `yield`, `await`, starred elements);
  `x` is a float, `y` a float or a numpy vector, `n` a small int;
- `hypothesmith_functions()`, hypothesmith's arbitrary valid Python (drawn from the grammar)
  as the body of `f`; mostly refused by the fence, which is the point: it must refuse, never crash.

`check_function(program)` runs one through `cpsgrad.show` and `cpsgrad.value_and_grad` and
returns its outcome ("result", "refused: UnsupportedError", "user error: ZeroDivisionError",
...). Anything else is an `InternalError` (an AssertionError): an exception of cpsgrad's own
machinery that is not a `cpsgrad.errors.CpsgradError`, a `LocatedError` without a location in
the user's file, an exception the original function does not raise with the same arguments, or
a value different from the original's. See docs/testing.md.

The parts: `cpsgrad.testing.fuzz_grammar` draws the programs (both strategies),
`cpsgrad.testing.fuzz_programs` holds the module they are written after (`HEADER`) and
`FuzzProgram`; this module judges their outcomes and runs the soak.

Soak: ``python -m cpsgrad.testing.fuzz --soak 10000 [--seed N] [--jobs J] [--hypothesmith F]``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import inspect
import math
import signal
import sys
import time
import warnings
from typing import Any

import numpy as np
from hypothesis import assume, event

import cpsgrad
from cpsgrad.errors import CpsgradError, LocatedError
from cpsgrad.testing.fuzz_grammar import any_functions, functions, hypothesmith_functions
from cpsgrad.testing.fuzz_programs import ENTRY, HEADER, FuzzProgram
from cpsgrad.testing.soaking import run_chunks

__all__ = ["ENTRY", "HEADER", "TIMEOUT", "Dropped", "FuzzProgram", "InternalError", "any_functions", "check_function",
           "classify", "functions", "hypothesmith_functions", "main", "soak"]

_verbose = bool(__import__("os").environ.get("CPSGRAD_FUZZ_VERBOSE"))
TIMEOUT = 2.0
"""Seconds a program (or cpsgrad on it) may run before it is dropped as too slow."""


class InternalError(AssertionError):
    """cpsgrad's own machinery failed on a program (an internal crash, a misplaced error, a
    wrong value)."""


class _Timeout(BaseException):
    pass


@contextlib.contextmanager
def _time_limit(seconds: float):
    def expire(signum, frame):
        raise _Timeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Dropped(Exception):
    """A program that cannot be judged: it does not compile or import, or runs too long."""


def _run(callable_):
    """(value, None) or (None, exception) of callable_() within the time limit."""
    old = np.seterr(all="ignore")
    try:
        with _time_limit(TIMEOUT):
            return callable_(), None
    except _Timeout:
        raise Dropped("timeout") from None
    except Exception as error:
        return None, error
    finally:
        np.seterr(**old)


def _describe(error: BaseException) -> str:
    import traceback

    return "".join(traceback.format_exception(type(error), error, error.__traceback__, limit=-8))


def _check_located(error: CpsgradError, filename: str, lines: int | None, during: str) -> None:
    if not isinstance(error, LocatedError):
        return
    location = error.location
    if location is None:
        raise InternalError(f"{during}: {type(error).__name__} without a location: {error}") from error
    if location.filename != filename or location.line < 1 or lines is not None and location.line > lines:
        raise InternalError(
            f"{during}: {type(error).__name__} located at {location}, not in the user's source "
            f"({filename}): {error}"
        ) from error


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, (np.ndarray, np.generic)) or isinstance(b, (np.ndarray, np.generic)):
        try:
            return bool(np.array_equal(a, b, equal_nan=True))
        except TypeError:
            return bool(np.array_equal(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def classify(function, arguments: tuple, argnums: tuple[int, ...], filename: str | None = None,
             lines: int | None = None) -> str:
    """Run `function` through `cpsgrad.show(function, example=arguments)`,
    `cpsgrad.value_and_grad(function, argnums)(*arguments)` and, where that returns, `cpsgrad.grad`;
    return the outcome ("result",
    "refused: UnsupportedError (construct)", "user error: NameError") or raise `InternalError`.
    A located error must point into `filename` (default: the function's file), at most at line
    `lines`. An exception that is not a CpsgradError must be the one the original raises; a
    value must be the original's. Raises `Dropped` for a run past `TIMEOUT` seconds."""
    if filename is None:
        filename = inspect.getsourcefile(function)
    # show: nothing of the user's runs, so any exception is cpsgrad's
    _, error = _run(lambda: cpsgrad.show(function, example=arguments))
    if error is not None:
        if not isinstance(error, CpsgradError):
            raise InternalError(f"show raised {_describe(error)}") from error
        _check_located(error, filename, lines, "show")
    result, error = _run(lambda: cpsgrad.value_and_grad(function, argnums=argnums)(*arguments))
    if isinstance(error, CpsgradError):
        _check_located(error, filename, lines, "value_and_grad")
        construct = f" ({error.construct})" if isinstance(error, LocatedError) else ""
        return f"refused: {type(error).__name__}{construct}"
    expected, original_error = _run(lambda: function(*arguments))
    if error is not None:
        if original_error is None:
            raise InternalError(
                f"value_and_grad raised {_describe(error)}\nbut the function returns {expected!r}"
            ) from error
        if (
            type(original_error) is NameError
            and "free variable" in str(original_error)
            and type(error) is UnboundLocalError
        ):
            # known: a closure captures values where it is made, so a free variable not bound
            # yet raises there, as UnboundLocalError, not when the closure reads it (docs/generator.md)
            return "user error: NameError (a closure's free variable, raised where the closure is made)"
        if type(original_error) is not type(error):
            raise InternalError(
                f"value_and_grad raised {_describe(error)}\nbut the function raises "
                f"{type(original_error).__name__}: {original_error}"
            ) from error
        detail = f" ({str(error)[:60]})" if _verbose else ""
        return f"user error: {type(error).__name__}{detail}"
    if isinstance(original_error, RecursionError):  # cpsgrad's depth limit is higher than Python's
        return "result (the original: RecursionError)"
    if original_error is not None:
        raise InternalError(f"value_and_grad returned {result!r} but the function raises {_describe(original_error)}")
    if not _same_value(result[0], expected):
        raise InternalError(f"value_and_grad's value is {result[0]!r}, the function returns {expected!r}")
    _, error = _run(lambda: cpsgrad.grad(function, argnums=argnums)(*arguments))  # the same runner
    if error is not None:
        raise InternalError(f"value_and_grad returned, but grad raised {_describe(error)}") from error
    return "result"


def check_function(program: FuzzProgram) -> str:
    """`classify` a drawn program; inside a hypothesis test (records the outcome as an event,
    rejects programs that do not compile or run too long)."""
    with warnings.catch_warnings():  # drawn code is full of SyntaxWarnings (1.5[0]) and RuntimeWarnings
        warnings.simplefilter("ignore")
        try:
            compile(program.source, "<fuzz>", "exec")
            function = program.function
        except Exception:
            event("outcome: invalid Python")
            assume(False)
        try:
            outcome = classify(function, program.arguments, program.argnums, program.path, _lines(program.source))
        except Dropped:
            event("outcome: timeout")
            assume(False)
    event(f"outcome: {outcome}")
    return outcome


def _lines(source: str) -> int:
    return source.count("\n") + 1


# --- the soak ----------------------------------------------------------------------------------


def _soak_chunk(job: tuple[int, int, float]) -> dict[str, Any]:
    from hypothesis import HealthCheck, Phase, given, seed, settings

    count, chunk_seed, origin = job
    counts: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    reported: set[str] = set()

    @seed(chunk_seed)
    @settings(
        max_examples=count, deadline=None, database=None, suppress_health_check=list(HealthCheck),
        report_multiple_bugs=True, print_blob=False, phases=[p for p in Phase if p is not Phase.shrink],
    )
    @given(hypothesmith_functions() if origin == "hypothesmith" else functions())
    def run(program: FuzzProgram) -> None:
        with program:
            try:
                outcome = check_function(program)
            except InternalError as error:
                counts["internal error"] += 1
                if program.source in reported:  # hypothesis replays a failing example
                    return
                reported.add(program.source)
                failures.append(
                    f"{error}\n--- program ({program.origin}), arguments {program.arguments!r}, argnums "
                    f"{program.argnums}:\n{program.source[len(HEADER) :]}"
                )
                return
            except BaseException as error:
                if type(error).__name__ == "UnsatisfiedAssumption":
                    counts["dropped"] += 1
                raise
            counts[f"{program.origin}: {outcome}"] += 1
            counts["checked"] += 1

    import io
    from contextlib import redirect_stderr, redirect_stdout

    output = io.StringIO()
    try:
        with redirect_stdout(output), redirect_stderr(output):
            run()
    except BaseException as error:
        failures.append(f"seed {chunk_seed}: hypothesis run failed: {type(error).__name__}: {error}")
    return {"counts": counts, "failures": failures}


def soak(total: int, seed: int = 0, jobs: int = 1, chunk: int = 200, hypothesmith_share: float = 0.2):
    """Check `total` programs, `hypothesmith_share` of them hypothesmith's (chunks of `chunk`
    programs, each its own hypothesis run seeded seed, seed + 1, ...) in `jobs` processes;
    return counts by outcome and the internal errors' reports."""
    arbitrary = round(total * hypothesmith_share)
    work = []
    for origin, count in (("grammar", total - arbitrary), ("hypothesmith", arbitrary)):
        sizes = [chunk] * (count // chunk) + ([count % chunk] if count % chunk else [])
        work += [(size, seed + len(work) + k, origin) for k, size in enumerate(sizes)]
    counts: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    started = time.monotonic()

    def collect(outcome: dict[str, Any]) -> None:
        counts.update(outcome["counts"])
        failures.extend(outcome["failures"])
        for failure in outcome["failures"]:
            print("=" * 80 + "\n" + failure, flush=True)
        print(f"[{time.monotonic() - started:7.1f}s] {counts['checked']} checked, {counts['dropped']} dropped, "
              f"{counts['internal error']} internal errors", flush=True)

    run_chunks(_soak_chunk, work, jobs, collect)
    return counts, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cpsgrad.testing.fuzz",
                                     description="Feed arbitrary functions to cpsgrad; report internal errors.")
    parser.add_argument("--soak", type=int, default=1000, help="programs to check (that compile and finish in time)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first chunk")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--chunk", type=int, default=200, help="programs per hypothesis run")
    parser.add_argument("--hypothesmith", type=float, default=0.2, help="share of hypothesmith's programs (0 to 1)")
    parser.add_argument("--show", type=int, metavar="K", help="print K programs and exit")
    arguments = parser.parse_args(argv)
    if arguments.show:
        from hypothesis import HealthCheck, given, seed, settings

        @seed(arguments.seed)
        @settings(max_examples=arguments.show, database=None, suppress_health_check=list(HealthCheck))
        @given(any_functions(arguments.hypothesmith))
        def show(program: FuzzProgram) -> None:
            print(program.source[len(HEADER):], program.arguments, program.argnums, "\n")

        show()
        return 0
    started = time.monotonic()
    counts, failures = soak(arguments.soak, arguments.seed, arguments.jobs, arguments.chunk, arguments.hypothesmith)
    elapsed = time.monotonic() - started
    print(
        f"\n{counts['checked']} programs checked in {elapsed:.0f}s, {counts['dropped']} dropped (invalid or too slow)"
    )
    for key, number in sorted(counts.items()):
        if key not in ("checked", "dropped"):
            print(f"  {key:48} {number}")
    if failures:
        print(f"\n{len(failures)} internal errors; see above")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
