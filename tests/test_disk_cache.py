"""The disk cache of generated programs (transforms/disk_cache.py, transforms/persisted.py).

Each test runs Python processes of its own (`sys.executable`) on a cache directory of its own,
and reads what they did from `pipeline.COUNTS`: how many programs the passes made, how many
were read from disk, how many were stored.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from cpsgrad.transforms import disk_cache

ROOT = Path(__file__).resolve().parent.parent

MODULE = '''
import math

import numpy as np

SCALE = 2.0


def helper(x, w):
    return np.sum(np.tanh(x * w)) * SCALE


def f(x, w):
    total = 0.0
    for i in range(3):
        total = total + helper(x, w) * math.sin(x[i])
    return total
'''

RUN = '''
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import cpsgrad
from cpsgrad.transforms import pipeline
import user_module
x = np.linspace(0.1, 0.9, 4)
w = np.linspace(1.0, 2.0, 4)
gradient = cpsgrad.grad(user_module.f, argnums=(0, 1))(x, w)
shown = cpsgrad.show(user_module.f, argnums=(0, 1), example=(x, w))
print(json.dumps({"counts": dict(pipeline.COUNTS), "gradient": [g.tolist() for g in gradient], "shown": shown}))
'''


def _run(folder: Path, cache: Path, script: str = RUN) -> dict:
    environment = {**os.environ, "CPSGRAD_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script, str(folder)], env=environment, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "user_module.py").write_text(MODULE)
    return folder, tmp_path / "cache"


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.program"))


def test_a_second_process_loads_the_programs_and_runs_no_transform(project):
    folder, cache = project
    first = _run(folder, cache)
    assert first["counts"].get("transformed") == 2 and first["counts"].get("stored") == 2  # f and helper
    assert len(_entries(cache)) == 2
    second = _run(folder, cache)
    assert second["counts"].get("loaded") == 2
    assert "transformed" not in second["counts"] and "stored" not in second["counts"]
    assert second["gradient"] == first["gradient"]
    assert second["shown"] == first["shown"]  # the program text, and `show`'s call sites from the passes


def test_a_corrupt_or_truncated_entry_is_ignored_and_replaced(project):
    folder, cache = project
    first = _run(folder, cache)
    entries = _entries(cache)
    damaged = entries[0].read_bytes()
    entries[0].write_bytes(damaged[: len(damaged) // 2])  # truncated
    flipped = bytearray(entries[1].read_bytes())
    flipped[-5] ^= 0xFF  # one byte of the payload changed: the digest no longer matches
    entries[1].write_bytes(bytes(flipped))
    second = _run(folder, cache)
    assert second["counts"].get("transformed") == 2 and second["counts"].get("stored") == 2
    assert second["gradient"] == first["gradient"]
    third = _run(folder, cache)  # the entries were written again, whole
    assert third["counts"].get("loaded") == 2 and "transformed" not in third["counts"]


def test_a_changed_source_makes_a_new_entry(project):
    folder, cache = project
    first = _run(folder, cache)
    (folder / "user_module.py").write_text(MODULE.replace("* SCALE", "* SCALE * 3.0"))
    second = _run(folder, cache)
    assert second["counts"] == {"transformed": 1, "stored": 1, "loaded": 1}  # helper again; f loaded
    assert second["gradient"] != first["gradient"]
    third = _run(folder, cache)
    assert third["counts"] == {"loaded": 2} and third["gradient"] == second["gradient"]


def test_a_changed_global_kind_is_not_loaded(project):
    """A module global the program took for a number, now an array: the stored program is not
    used (the names the function mentions must name what they named)."""
    folder, cache = project
    _run(folder, cache)
    (folder / "user_module.py").write_text(MODULE.replace("SCALE = 2.0", "SCALE = np.array(2.0)"))
    second = _run(folder, cache)
    assert second["counts"].get("transformed") == 1 and second["counts"].get("loaded") == 1


RULE_MODULE = '''
import numpy as np

import cpsgrad


def softclip(x):
    return np.tanh(x)


@cpsgrad.rule(softclip)
def softclip_rule(x):
    y = softclip(x)
    y_d = yield y
    x_d += y_d * (1.0 - y * y) * 1.0


def f(x):
    return np.sum(softclip(x) * x)
'''

RULE_RUN = '''
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import cpsgrad
from cpsgrad.transforms import pipeline
import rule_module
gradient = cpsgrad.grad(rule_module.f)(np.linspace(0.1, 0.9, 4))
print(json.dumps({"counts": dict(pipeline.COUNTS), "gradient": gradient.tolist()}))
'''


def test_a_changed_rule_template_makes_a_new_entry(tmp_path):
    folder, cache = tmp_path / "project", tmp_path / "cache"
    folder.mkdir()
    (folder / "rule_module.py").write_text(RULE_MODULE)
    first = _run(folder, cache, RULE_RUN)
    assert first["counts"] == {"transformed": 1, "stored": 1}
    assert _run(folder, cache, RULE_RUN)["counts"] == {"loaded": 1}
    # the template's backward changes (the function does not): the program inlined the old one
    (folder / "rule_module.py").write_text(RULE_MODULE.replace("* 1.0\n", "* 2.0\n"))
    os.utime(folder / "rule_module.py", ns=(1, 1))  # a different modification time, whatever the clock
    changed = _run(folder, cache, RULE_RUN)
    assert changed["counts"] == {"transformed": 1, "stored": 1}
    assert changed["gradient"] != first["gradient"]


LAMBDA_RUN = '''
import json, sys
sys.path.insert(0, sys.argv[1])
import cpsgrad
from cpsgrad.transforms import pipeline
import lambda_module
print(json.dumps({"counts": dict(pipeline.COUNTS), "gradient": cpsgrad.grad(lambda_module.f)(1.5)}))
'''


def test_a_program_depending_on_a_lambda_is_not_stored(tmp_path):
    """A lambda cannot be found again by name in another process: a function calling one (or
    defining one) is transformed in each process."""
    folder, cache = tmp_path / "project", tmp_path / "cache"
    folder.mkdir()
    (folder / "lambda_module.py").write_text(textwrap.dedent('''
        square = lambda x: x * x


        def f(x):
            inner = lambda y: y * 3.0
            return square(x) + inner(x)
    '''))
    first = _run(folder, cache, LAMBDA_RUN)
    assert "stored" not in first["counts"] and first["gradient"] == pytest.approx(6.0)
    assert _run(folder, cache, LAMBDA_RUN)["counts"].get("loaded") is None


WRITES_MODULE = '''
import numpy as np


def bump(y, v):
    y[0] = y[0] * v
    y += v


def f(x, v):
    y = x * 2.0
    bump(y, v)  # bump's variant returns y (transforms/written_arguments.py); read again below
    return np.sum(y * y)


def writes_argument(a, b):
    a[0] = b[1] * 3.0
    return np.sum(a * b)
'''

WRITES_RUN = '''
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import cpsgrad
from cpsgrad.transforms import pipeline
import writes_module as m
x = np.array([0.3, -0.2, 0.5])
gradient = cpsgrad.grad(m.f, argnums=(0, 1))(x, 1.5)
a = np.array([1.0, 2.0, 3.0])
refused = ""
try:
    cpsgrad.grad(m.writes_argument)(a, a)  # one array for a written parameter and another
except cpsgrad.UnsupportedError as error:
    refused = str(error)
print(json.dumps({"counts": dict(pipeline.COUNTS), "gradient": [gradient[0].tolist(), gradient[1]],
                  "refused": refused}))
'''


def test_programs_that_write_into_arrays_are_stored_with_their_consents(tmp_path):
    """A program writing into its parameters keeps which (the top level still refuses one array
    passed for a written parameter and another), its call sites what they let callees write
    into, and a written-argument variant is made again from its function's unchanged source."""
    folder, cache = tmp_path / "project", tmp_path / "cache"
    folder.mkdir()
    (folder / "writes_module.py").write_text(WRITES_MODULE)
    first = _run(folder, cache, WRITES_RUN)
    assert first["counts"].get("stored") == first["counts"].get("transformed") == 3  # f, bump__written, writes_argument
    second = _run(folder, cache, WRITES_RUN)
    assert second["counts"] == {"loaded": 3}
    assert second["gradient"] == first["gradient"] and "shares memory" in second["refused"] == first["refused"]
    # bump edited: f's stored program names bump's variant, made from the old text: not used
    (folder / "writes_module.py").write_text(WRITES_MODULE.replace("y[0] * v", "y[0] * v * v"))
    os.utime(folder / "writes_module.py", ns=(1, 1))
    third = _run(folder, cache, WRITES_RUN)
    assert third["counts"].get("loaded", 0) <= 1 and third["gradient"] != first["gradient"]
    x, v = np.array([0.3, -0.2, 0.5]), 1.5
    y = x * 2.0
    y[0] = y[0] * v * v
    y += v
    expected_x = 2.0 * 2.0 * y * np.array([v * v, 1.0, 1.0])
    np.testing.assert_allclose(third["gradient"][0], expected_x)


def test_the_cache_is_off_when_the_variable_is_empty_or_off(monkeypatch, tmp_path):
    for value in ("", "off", "OFF"):
        monkeypatch.setenv("CPSGRAD_CACHE_DIR", value)
        assert disk_cache.directory() is None
    monkeypatch.setenv("CPSGRAD_CACHE_DIR", str(tmp_path))
    assert disk_cache.directory() == tmp_path
    monkeypatch.delenv("CPSGRAD_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert disk_cache.directory() == tmp_path / "xdg" / "cpsgrad"


def test_the_test_session_never_uses_the_users_cache():
    configured = Path(os.environ["CPSGRAD_CACHE_DIR"])
    assert configured.name.startswith("cpsgrad-test-cache-")
    assert Path.home() not in configured.parents


def test_entries_are_written_whole_and_read_back_only_under_their_key(tmp_path):
    path = tmp_path / "entry.program"
    assert disk_cache.write(path, ("k", 1), {"final": "text", "code": compile("x = 1", "<t>", "exec")})
    assert disk_cache.read(path, ("k", 1))["final"] == "text"
    assert disk_cache.read(path, ("k", 2)) is None  # another key: ignored
    assert [p.name for p in tmp_path.iterdir()] == ["entry.program"]  # no temporary left behind
    path.write_bytes(path.read_bytes()[:-1])
    assert disk_cache.read(path, ("k", 1)) is None
