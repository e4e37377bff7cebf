"""benchmarks/peers/tangent_corpus.py on a functions.py of our own in Tangent's conventions
(parameters named a, b, c, n, x, ...): each class it reports, its exit status, and its advice
when the file is missing. Tangent's own file is not needed (nor committed)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "benchmarks" / "peers" / "tangent_corpus.py"

FUNCTIONS = '''
import numpy as np

import cpsgrad

LOG = []


def cube(a):
    return a * a * a


def weighted_sum(x, n):
    total = 0.0
    for i in range(n):
        total = total + np.sum(x) * i
    return total


def writes_into_its_argument(x):
    x[0] = x[1] * x[2]
    return np.sum(x * x)


def unpacks(abc_packed_in_tuple):
    a, b, c = abc_packed_in_tuple
    return a * b - c


def two_results(a):
    return a, 2.0 * a


def raises_in_python(a):
    return a.shape


def keeps_in_a_global(a):
    LOG.append(a)
    return LOG[-1] * a


def softsign(a):
    return a / (1.0 + abs(a))


@cpsgrad.rule(softsign)
def softsign_rule(a):
    y = softsign(a)
    y_d = yield y
    a_d += y_d * 2.0  # wrong on purpose: the runner must call it WRONG


def uses_softsign(a):
    return softsign(a) * 3.0


def takes_a_tensor(t):
    return t
'''


def run(*arguments, cwd):
    return subprocess.run([sys.executable, str(RUNNER), *arguments], capture_output=True, text=True,
                          timeout=600, cwd=cwd)


def test_the_runner_classifies_each_function_and_fails_on_a_wrong_gradient(tmp_path):
    functions = tmp_path / "functions.py"
    functions.write_text(FUNCTIONS)
    out = tmp_path / "verdicts.json"
    result = run("--functions", str(functions), "--short", "--json", str(out), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr  # a WRONG gradient: exit 1
    kinds = {verdict["name"]: verdict["kind"] for verdict in json.loads(out.read_text())}
    assert kinds == {
        "cube": "passed",
        "weighted_sum": "passed",
        "writes_into_its_argument": "passed",
        "unpacks": "passed",
        "two_results": "n/a",
        "raises_in_python": "n/a",
        "keeps_in_a_global": "refused",
        "softsign": "WRONG",  # differentiated on its own, the primitive takes its (wrong) rule too
        "softsign_rule": "n/a",  # a generator function: its value is not a number
        "uses_softsign": "WRONG",
        "takes_a_tensor": "n/a",
    }
    assert "| WRONG | 2 |" in result.stdout and "| passed | 4 |" in result.stdout


def test_the_runner_exits_0_when_nothing_is_wrong(tmp_path):
    functions = tmp_path / "functions.py"
    functions.write_text(FUNCTIONS.split("def softsign(a):")[0])
    result = run("--functions", str(functions), "--short", "--no-autograd", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "| WRONG | 0 |" in result.stdout and "| crash | 0 |" in result.stdout


def test_the_runner_says_where_to_get_tangents_file(tmp_path):
    result = run("--functions", str(tmp_path / "absent.py"), cwd=tmp_path)
    assert result.returncode == 2
    assert "git clone https://github.com/google/tangent" in result.stdout + result.stderr
