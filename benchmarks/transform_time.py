"""Transform time: what a gradient's first call in a new process costs (issue 14 item 7).

A gradient's first call transforms the function (and its callees as the calls reach them); the
disk cache (transforms/disk_cache.py) lets a later process load the programs instead. Each
measurement is a fresh process that imports the workload, times the first `value_and_grad`
call and then a warm one, and reports the difference (CPU time, `time.process_time`): the cost
of transforming (or loading) on top of running. Modes: `off` (CPSGRAD_CACHE_DIR=off: every
process transforms) and `warm` (a cache directory filled by one process first, then read).
Every process's value and gradient must equal the first's exactly (else WRONG, exit status 1).

Workloads:
- `demo`: `cpsgrad.demo.landing_distance`, argnums (0, 1, 2) (the demo's 25-line function);
- `fluidsim`: HIPS autograd's `examples/fluidsim/fluidsim.py` (`project`, `advect`,
  `simulate` and an objective on a 20x20 grid, 3 steps; four programs), with only its import
  of `autograd.numpy` changed to numpy. It comes from autograd's sdist (`--autograd-sdist PATH`,
  or `pip download --no-binary :all: --no-deps autograd==1.9.1`); without it the row is n/a.

Targets (issue 14): the demo's first transform at most 40 ms, fluidsim's at most 500 ms, and
with a warm disk cache at most 10 ms for either.

    python benchmarks/transform_time.py [--quick] [--processes 7] [--autograd-sdist PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

TARGETS_MS = {"demo": (40.0, 10.0), "fluidsim": (500.0, 10.0)}  # (cache off, warm cache)

_DEMO = """
from cpsgrad.demo import landing_distance as function
arguments = (18.0, 0.7, 0.02)
argnums = (0, 1, 2)
"""

_FLUIDSIM = """
import numpy as np
from fluidsim_numpy import simulate

rows = cols = 20
grid = np.linspace(0.0, 1.0, rows * cols).reshape(rows, cols)
init_smoke = np.sin(6.0 * grid) ** 2
target = np.cos(4.0 * grid) ** 2


def function(params):
    vx = np.reshape(params[: rows * cols], (rows, cols))
    vy = np.reshape(params[rows * cols :], (rows, cols))
    final_smoke = simulate(vx, vy, init_smoke, 3)
    return np.mean((target - final_smoke) ** 2)


arguments = (np.linspace(-0.1, 0.1, 2 * rows * cols),)
argnums = 0
"""

_MEASURE = """
import os, sys, time, json
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, sys.argv[1])
import cpsgrad
from workload import function, arguments, argnums
gradient = cpsgrad.value_and_grad(function, argnums=argnums)
start = time.process_time()
value, result = gradient(*arguments)
first = time.process_time() - start
start = time.process_time()
gradient(*arguments)
warm = time.process_time() - start
import numpy as np
flat = [float(value)] + [float(v) for part in (result if isinstance(result, tuple) else (result,))
                         for v in np.ravel(part)]
print(json.dumps({"ms": 1000.0 * (first - warm), "result": flat}))
"""


def fluidsim_source(sdist: str | None) -> str | None:
    """fluidsim.py's text with numpy for autograd.numpy, or None without the sdist."""
    if sdist is None or not os.path.exists(sdist):
        return None
    with tarfile.open(sdist) as archive:
        member = next((m for m in archive.getmembers() if m.name.endswith("examples/fluidsim/fluidsim.py")), None)
        if member is None:
            return None
        text = archive.extractfile(member).read().decode()
    text = text.replace("import autograd.numpy as np", "import numpy as np")
    return text.replace("from autograd import value_and_grad\n", "")


def measure(directory: Path, cache: str) -> dict:
    environment = {**os.environ, "CPSGRAD_CACHE_DIR": cache, "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(directory)], capture_output=True, text=True, env=environment, timeout=600
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_workload(name: str, files: dict[str, str], processes: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory(prefix=f"cpsgrad-transform-{name}-") as root:
        directory = Path(root) / "workload"
        directory.mkdir()
        for filename, text in files.items():
            (directory / filename).write_text(text)
        cache = Path(root) / "cache"
        times: dict[str, list[float]] = {"off": [], "warm": []}
        reference = measure(directory, str(cache))["result"]  # fills the cache for the warm runs
        agree = True
        for _ in range(processes):  # interleaved: the load changes slowly
            for mode, where in (("off", "off"), ("warm", str(cache))):
                measured = measure(directory, where)
                times[mode].append(measured["ms"])
                agree = agree and measured["result"] == reference  # loaded programs compute the same, exactly
    return times, agree


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 processes a mode")
    parser.add_argument("--processes", type=int, default=7)
    parser.add_argument("--autograd-sdist", default=os.environ.get("AUTOGRAD_SDIST"))
    parser.add_argument("--peers", default="none", help="accepted for benchmarks/run.py; this suite has no peers")
    arguments = parser.parse_args(argv)
    processes = 2 if arguments.quick else arguments.processes
    workloads = {"demo": {"workload.py": _DEMO}}
    fluidsim = fluidsim_source(arguments.autograd_sdist)
    if fluidsim is not None:
        workloads["fluidsim"] = {"workload.py": _FLUIDSIM, "fluidsim_numpy.py": fluidsim}
    print(f"## Transform time, first call minus a warm call, CPU ms over {processes} fresh processes (min / median)\n")
    print("| workload | cache off | target | warm disk cache | target |")
    print("| --- | ---: | ---: | ---: | ---: |")
    missed = wrong = False
    for name in TARGETS_MS:
        if name not in workloads:
            print(f"| {name} | n/a (pass --autograd-sdist) | | | |")
            continue
        times, agree = run_workload(name, workloads[name], processes)
        if not agree:
            print(f"| {name} | WRONG: a process's value or gradient differs from the first's | | | |")
            missed = wrong = True
            continue
        cells = []
        for mode, target in zip(("off", "warm"), TARGETS_MS[name], strict=True):
            low, middle = min(times[mode]), statistics.median(times[mode])
            met = middle <= target
            missed = missed or not met
            cells += [f"{low:.1f} / {middle:.1f}", f"{target:g} ({'met' if met else 'missed'})"]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\nTargets judged on the median; the machine's load moves these figures (compare in one run).")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
