"""HIPS autograd's own test suite and example programs, run on cpsgrad through a shim.

    pip download --no-binary :all: --no-deps -d /tmp/dl autograd==1.9.1   # once: the sdist
    pip install autograd==1.9.1          # the examples compare with autograd's own gradients
    python benchmarks/peers/autograd_suite.py --sdist /tmp/dl/autograd-1.9.1.tar.gz [--out DIR]
        [--only tests|examples] [--files test_numpy.py,...] [--examples rosenbrock,...]

(or set AUTOGRAD_SDIST). Nothing is downloaded at run time. The sdist's tests/ and examples/
are unpacked into a temporary directory; its autograd package is not (`autograd_shim/autograd`
stands in for it, see its `_shim.py`), so no test needs its imports rewritten. Each test file
runs in its own pytest process (`_plugin.py` records each test); each example runs twice, once
with real autograd and once on the shim, with its iteration counts patched down, and the
gradients of its first steps are compared (`_examples.py`).

Classes, worst first: WRONG (a gradient disagreeing with finite differences or with autograd's,
or of the wrong shape), crash (an exception from cpsgrad's code other than cpsgrad.errors while
the function itself runs), assertion (the test's own assertion failed: triaged by hand in
docs/testing.md), error (the test failed outside cpsgrad: numpy/scipy versions, the shim),
refused (a cpsgrad.errors error, by kind and message), refused-order (needs forward mode or
higher order), n/a (an autograd API the shim has no counterpart for), skipped, passed.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIM = HERE / "autograd_shim"
ORDER = ["wrong", "crash", "assertion", "error", "timeout", "collection error", "refused", "refused-order",
         "n/a", "kink", "skipped", "passed"]

#: Failures read by hand and found to test autograd itself, not a gradient (node id prefix: why).
TRIAGED = {
    "test_wrappers.py::test_custom_where_dtypes": "autograd's np.where keeps Python types; numpy's returns numpy "
                                                  "scalars",
    "test_wrappers.py::test_wrapped_name_and_docs": "autograd's names and docstrings of grad",
    "test_numpy.py::test_make_diagonal": "np.make_diagonal is autograd's own function",
    "test_numpy.py::test_diagonal": "np.make_diagonal is autograd's own function",
    "test_numpy.py::test_scalar_array_box_attributes": "reads x.shape of a float: autograd's boxes have one",
    "test_linalg.py::test_pinv": "np.linalg._dot is autograd's own helper",
    "test_fft.py::test_rfftn_odd_not_implemented": "expects autograd's NotImplementedError for an odd last axis, which "
    "cpsgrad differentiates (tests/specs/fft.py)",
    "test_logic.py::test_unimplemented_falseyness": "autograd's boxes refuse truth tests",
    "test_misc.py::test_flatten_complex": "autograd.misc.flatten of complex values (the shim's is real)",
    "test_scipy.py::test_convolve_generalization": "autograd's convolve takes axes=; scipy's does not",
    "test_scipy.py::test_convolve_ignore": "autograd's convolve takes axes= and dot_axes=; scipy's does not",
}


def unpack(sdist: Path, into: Path) -> Path:
    """The sdist's tests/ and examples/ (never its autograd package) under `into`; their root."""
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers()
                   if re.match(r"[^/]+/(tests|examples)(/|$)", m.name) and (m.isfile() or m.isdir())]
        archive.extractall(into, members=members, filter="data")
    (root,) = [p for p in into.iterdir() if p.is_dir()]
    return root


def environment(extra: list[Path]) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(p) for p in extra] + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("NUMBA_NUM_THREADS", "1")
    return env


def run_tests(root: Path, files: list[str] | None, timeout: float) -> list[dict]:
    tests = root / "tests"
    chosen = sorted(p.name for p in tests.glob("test_*.py")) if not files else files
    entries: list[dict] = []
    for name in chosen:
        out = tests / f".{name}.jsonl"
        out.unlink(missing_ok=True)
        env = environment([SHIM, HERE])
        env["PEERS_OUT"] = str(out)
        started = time.perf_counter()
        command = [sys.executable, "-m", "pytest", name, "-q", "-p", "_plugin", "-p", "no:cacheprovider",
                   "--rootdir", str(tests), "-c", os.devnull, "-W", "ignore"]
        try:
            subprocess.run(command, cwd=tests, env=env, timeout=timeout, capture_output=True)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
        got = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
        if timed_out:
            got.append({"test": f"{name}::(rest of file)", "outcome": "timeout"})
        elapsed = time.perf_counter() - started
        print(f"{name}: {len(got)} tests, {elapsed:.1f} s", file=sys.stderr, flush=True)
        entries.extend(got)
    return entries


def test_class(entry: dict) -> str:
    """One class per test: the worst of its own outcome and of its check_grads units."""
    classes = [unit["outcome"] for unit in entry.get("units", [])]
    if entry["outcome"] == "failed":
        classes.append(entry.get("exception", {}).get("class", "error"))
    elif entry["outcome"] in ("skipped", "timeout", "collection error"):
        classes.append(entry["outcome"])
    elif not classes:
        classes.append("passed")
    if entry["outcome"] == "failed" and "DID NOT RAISE" in entry.get("longrepr", "") and "refused" in classes:
        classes.remove(entry.get("exception", {}).get("class", "error"))  # refused instead of raising autograd's error
    worst = min(classes, key=ORDER.index)
    if worst in ("assertion", "error") and any(entry["test"].startswith(t) for t in TRIAGED):
        return "n/a"
    return worst


def refusal_key(record: dict) -> str:
    message = record.get("message", "")
    message = re.sub(r"<peer objective \d+>", "<objective>", message)
    return f"{record.get('kind', '?')}: {message[:90]}"


def summarize(entries: list[dict]) -> dict:
    by_class = collections.Counter(test_class(e) for e in entries)
    units = collections.Counter(u["outcome"] for e in entries for u in e.get("units", []))
    refusals = collections.Counter()
    for e in entries:
        for u in e.get("units", []):
            if u["outcome"] in ("refused", "refused-order", "n/a"):
                refusals[f"{u['outcome']} {refusal_key(u)}"] += 1
        exception = e.get("exception")
        if e["outcome"] == "failed" and exception and exception["class"] in ("refused", "refused-order", "n/a"):
            refusals[f"{exception['class']} {refusal_key(exception)} (test)"] += 1
    sub = collections.Counter()
    for e in entries:
        sub.update(e.get("sub_refused", {}))
    return {"tests": dict(by_class), "units": dict(units), "refusals": dict(refusals.most_common()),
            "sub_checks_not_run": dict(sub)}


def report(entries: list[dict], examples: list[dict]) -> str:
    summary = summarize(entries)
    lines = ["## autograd tests", "", f"{len(entries)} tests; check_grads units: {sum(summary['units'].values())}", "",
             "| class | tests | check_grads units |", "| --- | --- | --- |"]
    for c in ORDER:
        if summary["tests"].get(c) or summary["units"].get(c):
            lines.append(f"| {c} | {summary['tests'].get(c, 0)} | {summary['units'].get(c, 0)} |")
    lines += ["", "sub-checks not run (forward mode, second order): " +
              ", ".join(f"{k} {v}" for k, v in summary["sub_checks_not_run"].items()), "", "refusals:"]
    lines += [f"- {count} x {key}" for key, count in summary["refusals"].items()]
    lines += ["", "failures triaged as testing autograd itself (n/a):"]
    lines += [f"- {e['test']}: {why}" for e in entries for t, why in TRIAGED.items()
              if e["test"].startswith(t) and e["outcome"] == "failed"]
    lines += ["", "tests by class (worse than refused):"]
    for e in entries:
        c = test_class(e)
        if ORDER.index(c) < ORDER.index("refused"):
            detail = e.get("exception", {}).get("message", "") or next(
                (u.get("reason", u.get("message", "")) for u in e.get("units", []) if u["outcome"] == c), "")
            lines.append(f"- {c}: {e['test']}: {str(detail)[:160]}")
    if examples:
        lines += ["", "## autograd examples", "", "| example | class | detail |", "| --- | --- | --- |"]
        for ex in examples:
            lines.append(f"| {ex['example']} | {ex['class']} | {ex.get('detail', '')[:150]} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdist", default=os.environ.get("AUTOGRAD_SDIST"), help="autograd-1.9.1.tar.gz")
    parser.add_argument("--out", default=None, help="directory for results.json and report.md")
    parser.add_argument("--only", choices=["tests", "examples"], default=None)
    parser.add_argument("--files", default=None, help="comma-separated test files (default: all)")
    parser.add_argument("--examples", default=None, help="comma-separated example names (default: all)")
    parser.add_argument("--steps", type=int, default=3, help="gradient calls compared per example")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per test file or example run")
    args = parser.parse_args(argv)
    if not args.sdist or not Path(args.sdist).is_file():
        parser.error("give the autograd sdist with --sdist or AUTOGRAD_SDIST (see the module docstring)")
    with tempfile.TemporaryDirectory(prefix="autograd-peer-") as scratch:
        root = unpack(Path(args.sdist), Path(scratch))
        entries = [] if args.only == "examples" else run_tests(root, args.files and args.files.split(","), args.timeout)
        examples = []
        if args.only != "tests":
            from _examples import run_examples

            sys.path.insert(0, str(HERE))
            examples = run_examples(root, args.examples and args.examples.split(","), args.steps, args.timeout,
                                    environment)
    text = report(entries, examples)
    print(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.json").write_text(json.dumps({"tests": entries, "examples": examples}, indent=1, default=repr))
        (out / "report.md").write_text(text)
    worst = [test_class(e) for e in entries] + [ex["class"] for ex in examples]
    return 1 if any(c in ("wrong", "crash") for c in worst) else 0


if __name__ == "__main__":
    sys.exit(main())
