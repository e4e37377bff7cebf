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
from tests.cases import golden_functions, golden_numpy

GOLDEN = Path(__file__).parent / "golden"
# golden name -> the module defining the function of that name
FUNCTIONS = dict.fromkeys(
    ["design_example", "loop_jumps", "early_return", "boolean_logic", "nested_ranges", "closures", "calls_a_helper"],
    golden_functions,
) | dict.fromkeys(["numpy_program", "fused_softmax"], golden_numpy)
STAGES = ["normalize", "cps", "final"]


def _shown(name: str, stage: str) -> str:
    """`cpsgrad show` of the golden function `name` at `stage`, without the checkout's absolute
    path (in headers and call sites), so goldens hold on any machine."""
    module = FUNCTIONS[name]
    text = cpsgrad.show(getattr(module, name), stage=stage)
    return text.replace(str(Path(module.__file__).resolve()), f"tests/cases/{Path(module.__file__).name}")


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_show_matches_golden(name, stage):
    text = _shown(name, stage)
    path = GOLDEN / f"{name}.{stage}.py.txt"
    if os.environ.get("CPSGRAD_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"no golden file {path}; run with CPSGRAD_UPDATE_GOLDEN=1 to create it"
    assert text == path.read_text()


def test_show_is_deterministic_across_processes():
    name = "design_example"
    script = f"import cpsgrad; from tests.cases import golden_functions as g; print(cpsgrad.show(g.{name}), end='')"
    command = [sys.executable, "-c", script]
    runs = {subprocess.run(command, capture_output=True, text=True, check=True).stdout for _ in range(2)}
    assert len(runs) == 1
    assert runs.pop() == cpsgrad.show(getattr(golden_functions, name))


def test_the_softmax_golden_is_fused():
    """fused_softmax's pinned final program has its backward fused (transforms/fusion.py): one
    softmax_adjoint from p's adjoint to z's, none of the statement-by-statement chain rule
    through the division, the sum, exp and the shift (e_d, t3_d, t2_d, t1_d). Read from the
    golden file, so that a regeneration that lost the fusion fails here."""
    final = (GOLDEN / "fused_softmax.final.py.txt").read_text()
    assert "# p is a softmax of z (t1, t2, e, t3, p): one backward" in final
    assert "z_d = cpsgrad_runtime.softmax_adjoint(p_d, p, None)" in final
    assert not any(f"{name}_d = " in final for name in ("e", "t3", "t2", "t1")), final
