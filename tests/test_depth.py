"""Deep loops and recursions end in a result or DepthLimitError, never a crash: each runs in a
subprocess, so a segfault fails the test instead of killing pytest. The slow ones (a 10^6
iteration loop, 10^5-deep recursions) are marked `slow` (run them with `pytest -m slow`)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cases import deep_functions

ROOT = Path(__file__).resolve().parent.parent
NAMES = [f.__name__ for f in deep_functions.RECURSIONS]


def _run(depth: int, names: list[str], debug_nans: bool = False, timeout: float = 600) -> dict[str, str]:
    command = [sys.executable, "-m", "tests.cases.deep_functions", str(depth), "debug" if debug_nans else "plain",
               *names]
    environment = {**os.environ, "PYTHONFAULTHANDLER": "1"}
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=environment)
    assert done.returncode == 0, f"exit status {done.returncode}\n{done.stdout}\n{done.stderr[-3000:]}"
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert set(lines) == set(names), done.stdout
    return lines


def test_recursions_ten_thousand_deep_give_their_gradients():
    found = _run(10_000, NAMES)
    for name, line in found.items():
        expected = 2.0 if name == "arrays" else 1.0
        assert line == f"result {expected}", (name, line)


def test_a_watched_recursion_ten_thousand_deep():
    assert _run(10_000, ["plain", "closure"], debug_nans=True) == {"plain": "result 1.0", "closure": "result 1.0"}


@pytest.mark.slow
def test_a_loop_of_a_million_iterations_ends_in_depth_limit_error():
    assert _run(1_000_000, ["loop"]) == {"loop": "DepthLimitError"}


@pytest.mark.slow
def test_recursions_a_hundred_thousand_deep():
    found = _run(100_000, NAMES)
    assert all(line in ("result 1.0", "result 2.0", "DepthLimitError") for line in found.values()), found
