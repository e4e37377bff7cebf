"""The `cpsgrad` command through a subprocess: show, demo, and clear failures (exit 2, no traceback)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "cases"


def cpsgrad(*arguments, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "cpsgrad", *arguments], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def test_show_module_target():
    result = cpsgrad("show", "tests.cases.golden_functions:design_example")
    assert result.returncode == 0, result.stderr
    assert "def design_example__cps(x, n, k):" in result.stdout
    compile(result.stdout, "<show>", "exec")


def test_show_file_target_with_stage_and_argnums(tmp_path):
    result = cpsgrad("show", str(CASES / "api_functions.py") + ":polynomial", "--argnums", "0,1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "return out, x_d, y_d" in result.stdout
    normalized = cpsgrad("show", str(CASES / "api_functions.py") + ":polynomial", "--stage", "normalize", cwd=tmp_path)
    assert normalized.stdout.startswith("def polynomial(x, y):")


def test_show_numbers_picks_the_program_for_python_numbers():
    target = "tests.cases.golden_functions:design_example"
    default = cpsgrad("show", target)  # annotated x: float, n: int
    assert "x: number, n: number" in default.stdout
    assert "unbroadcast" not in default.stdout
    general = cpsgrad("show", target, "--numbers", "")
    assert "x: any, n: any" in general.stdout
    assert "cpsgrad_runtime.reduced_product(" in general.stdout
    wrong = cpsgrad("show", target, "--numbers", "y")
    assert wrong.returncode == 2
    assert wrong.stderr.strip() == "cpsgrad: design_example has no parameter y; its parameters are ('x', 'n')"


def test_show_method_target():
    result = cpsgrad("show", "tests.cases.api_functions:Model.energy", "--argnums", "1")
    assert result.returncode == 0, result.stderr
    assert "def energy__cps(self, x, k):" in result.stdout


def test_show_output_is_not_colored_when_piped():
    assert "\x1b[" not in cpsgrad("show", "tests.cases.golden_functions:design_example").stdout


@pytest.mark.parametrize(
    "target, message",
    [
        ("nonexistent.module:f", "cannot import module"),
        ("tests.cases.api_functions:missing", "has no attribute"),
        ("no_colon_here", "not a target"),
        ("missing/file.py:f", "no such file"),
        ("tests.cases.rejected:uses_match", "match statement"),
        ("math:sin", "not a Python function"),
    ],
)
def test_bad_targets_exit_2_with_one_clear_message(target, message):
    result = cpsgrad("show", target)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1


def test_demo_runs_and_checks_its_gradient():
    result = cpsgrad("demo")
    assert result.returncode == 0, result.stderr
    assert "agrees with finite differences" in result.stdout
    assert "def landing_distance__cps(speed, angle, drag, k):" in result.stdout


def test_console_script_is_installed():
    import shutil

    assert shutil.which("cpsgrad") is not None
    result = subprocess.run(["cpsgrad", "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "show" in result.stdout


def test_show_annotate_puts_the_users_lines_over_their_blocks():
    target = "tests.cases.golden_functions:design_example"
    annotated = cpsgrad("show", target, "--annotate")
    assert annotated.returncode == 0, annotated.stderr
    lines = annotated.stdout.splitlines()
    sine = next(n for n, line in enumerate(lines) if line.strip().startswith("t2 = math.sin("))
    assert lines[sine - 1].strip() == "# from line 10: y = math.sin(y) * x"
    plain = cpsgrad("show", target).stdout
    assert [line for line in lines if not line.strip().startswith("# from line ")] == plain.splitlines()
    compile(annotated.stdout, "<show>", "exec")
    wrong = cpsgrad("show", target, "--annotate", "--stage", "cps")
    assert wrong.returncode == 2 and "final stage only" in wrong.stderr
    assert "--annotate" in cpsgrad("show", "--help").stdout
