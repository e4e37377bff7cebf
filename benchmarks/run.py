"""Run every benchmark suite in benchmarks/, each in its own Python process, with the same flags.

    python benchmarks/run.py [--quick] [--peers none|all|NAME,NAME,...]

A suite is any `benchmarks/*.py` other than this file and names starting with `_`; it is run as
a script and takes `--quick` and `--peers`. A process per suite keeps one suite's thread pools
and JIT caches out of the next one's timings. The exit status is the worst of the suites'.
"""

import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent


def suites():
    """The suite scripts, in name order."""
    return [path for path in sorted(BENCHMARKS.glob("*.py"))
            if path.name != Path(__file__).name and not path.name.startswith("_")]


def main(argv):
    worst = 0
    for suite in suites():
        print(f"== {suite.stem} ==", flush=True)
        worst = max(worst, subprocess.run([sys.executable, str(suite), *argv]).returncode)
        print(flush=True)
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
