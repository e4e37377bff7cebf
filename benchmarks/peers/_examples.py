"""autograd's example programs, each run with real autograd and on the shim, gradients compared.

`run_examples` runs `_example_driver.py` twice per example (each in its own process, same
seeds): the first STEPS gradients each computes must agree (relative 1e-6 of the largest
element, with the trajectories identical until then since both take the same steps)."""

from __future__ import annotations

import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SHIM = HERE / "autograd_shim"
RTOL = 1e-6


def _run(example: Path, shim: bool, steps: int, timeout: float, environment) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".pkl", delete=False) as handle:
        out = Path(handle.name)
    env = environment([SHIM] if shim else [])
    try:
        subprocess.run([sys.executable, str(HERE / "_example_driver.py"), str(example), str(out), str(steps)],
                       cwd=example.parent, env=env, timeout=timeout, capture_output=True)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "gradients": []}
    try:
        return pickle.loads(out.read_bytes()) if out.stat().st_size else {"status": "died", "gradients": []}
    finally:
        out.unlink(missing_ok=True)


def compare(reference: list, ours: list) -> str | None:
    """Why the gradients differ (None if every recorded step agrees)."""
    for step, (a, b) in enumerate(zip(reference, ours, strict=False)):
        if len(a) != len(b):
            return f"step {step}: {len(b)} gradient parts, autograd {len(a)}"
        for part, (p, q) in enumerate(zip(a, b, strict=True)):
            if p.shape != q.shape:
                return f"step {step} part {part}: shape {q.shape}, autograd {p.shape}"
            scale = max(float(np.max(np.abs(p))) if p.size else 0.0, 1e-300)
            error = float(np.max(np.abs(p - q))) if p.size else 0.0
            if not np.isfinite(error) and not np.array_equal(p, q, equal_nan=True):
                return f"step {step} part {part}: non-finite where autograd has {p.ravel()[:3]}"
            if error > RTOL * scale + 1e-12:
                return f"step {step} part {part}: max abs error {error:.3g}, autograd's largest {scale:.3g}"
    return None


def classify(reference: dict, ours: dict) -> tuple[str, str]:
    if ours["status"] == "raised":
        if ours.get("cpsgrad_error"):
            return "refused", f"{ours['kind']}: {ours['message'].split(': ', 1)[-1][:120]}"
        if ours["kind"] == "ShimUnsupported":
            return "n/a", ours["message"][:120]
        if ours["kind"] in ("ModuleNotFoundError", "ImportError") and "autograd" in ours["message"]:
            return "n/a", f"autograd API: {ours['message'][:110]}"
        if ours["kind"] == "_NoNetwork":
            return "n/a", "downloads its data"
        if ours["kind"] == "NeedsForwardOrHigherOrder":
            return "refused-order", ours["message"][:120]
        same = reference["status"] == "raised" and reference["kind"] == ours["kind"]
        if same or ours.get("function_fails"):
            return "error", f"{ours['kind']}: {ours['message'][:100]} (also under autograd: {same})"
        inside = (
            "/cpsgrad/" in ours["traceback"] or "<cpsgrad" in ours["traceback"] or "/transforms/" in ours["traceback"]
        )
        return ("crash" if inside else "error"), f"{ours['kind']}: {ours['message'][:120]}"
    if ours["status"] in ("timeout", "died"):
        return "crash" if reference["status"] not in ("timeout", "died") else "error", ours["status"]
    if not reference["gradients"]:
        return "no gradient", f"autograd run: {reference['status']} {reference.get('kind', '')}"
    why = compare(reference["gradients"], ours["gradients"])
    if why:
        return "wrong", why
    if len(ours["gradients"]) < len(reference["gradients"]):
        return "error", f"{len(ours['gradients'])} gradients, autograd {len(reference['gradients'])}"
    return "passed", f"{len(ours['gradients'])} gradient steps agree"


def examples_in(root: Path) -> list[Path]:
    folder = root / "examples"
    found = sorted(folder.glob("*.py")) + sorted((folder / "fluidsim").glob("*.py"))
    return [p for p in found if p.name not in ("__init__.py", "data.py", "data_mnist.py")]


def run_examples(root: Path, names: list[str] | None, steps: int, timeout: float, environment) -> list[dict]:
    results = []
    for example in examples_in(root):
        if names and example.stem not in names:
            continue
        reference = _run(example, False, steps, timeout, environment)
        ours = _run(example, True, steps, timeout, environment)
        kind, detail = classify(reference, ours)
        print(f"{example.stem}: {kind} {detail}", file=sys.stderr, flush=True)
        results.append({"example": example.relative_to(root / "examples").as_posix(), "class": kind, "detail": detail,
                        "autograd": reference["status"], "cpsgrad": ours["status"],
                        "traceback": ours.get("traceback", "")[-3000:]})
    return results
