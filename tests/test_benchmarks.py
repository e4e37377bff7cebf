"""The scalar benchmark runs and checks its gradients (peers off: they are the bench extra)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_scalar_benchmark_quick_run_agrees_with_hand_written_adjoints():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "scalar.py"), "--quick", "--peers", "none"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for workload in ("loop, 100 steps", "pendulum", "Taylor sin(5)"):
        assert workload in result.stdout


def test_rnn_benchmark_quick_run_agrees_with_hand_written_gradient():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "rnn.py"), "--quick", "--peers", "none"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "| min-char-rnn, V=" in result.stdout
    assert "ERROR" not in result.stdout and "WRONG" not in result.stdout


def test_tree_benchmark_quick_run_agrees_with_hand_written_gradient():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "tree.py"), "--quick", "--peers", "none"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "| binary Tree-LSTM, 25 leaves" in result.stdout
    assert "ERROR" not in result.stdout and "WRONG" not in result.stdout


def test_writes_benchmark_quick_run_agrees_with_the_hand_written_adjoint():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "writes.py"), "--quick", "--peers", "none"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "| 1000 |" in result.stdout and "WRONG" not in result.stdout


def test_rules_benchmark_quick_run_checks_every_case_against_finite_differences():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "rules.py"), "--quick", "--peers", "none"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for case in ("solve", "slogdet", "fft_power", "einsum_chain", "mvn_logpdf", "pad_reflect"):
        assert f"| {case} |" in result.stdout
    assert "WRONG" not in result.stdout and "error:" not in result.stdout
