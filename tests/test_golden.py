"""Golden tests: `cpsgrad show` output is pinned, every stage, for a few functions.

Regenerate after an intended change with `CPSGRAD_UPDATE_GOLDEN=1 pytest tests/test_golden.py`
and read the diff before committing it.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import cpsgrad
from tests.cases import golden_functions

GOLDEN = Path(__file__).parent / "golden"
FUNCTIONS = ["design_example", "loop_jumps", "early_return", "boolean_logic", "nested_ranges", "closures"]
STAGES = ["normalize", "cps", "final"]


def _portable(text: str) -> str:
    """Drop the checkout's absolute path from the header, so goldens hold on any machine."""
    return text.replace(str(Path(golden_functions.__file__).resolve()), "tests/cases/golden_functions.py")


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_show_matches_golden(name, stage):
    text = _portable(cpsgrad.show(getattr(golden_functions, name), stage=stage))
    path = GOLDEN / f"{name}.{stage}.py.txt"
    if os.environ.get("CPSGRAD_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"no golden file {path}; run with CPSGRAD_UPDATE_GOLDEN=1 to create it"
    assert text == path.read_text()


def test_show_is_deterministic_across_processes():
    name = FUNCTIONS[0]
    command = [sys.executable, "-c", f"import cpsgrad; from tests.cases import golden_functions as g; print(cpsgrad.show(g.{name}), end='')"]
    runs = {subprocess.run(command, capture_output=True, text=True, check=True).stdout for _ in range(2)}
    assert len(runs) == 1
    assert runs.pop() == cpsgrad.show(getattr(golden_functions, name))
