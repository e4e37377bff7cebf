"""The pytest plugin the autograd runner loads (`-p _plugin`): one JSON line per test.

Each line has the test's node id, pytest's outcome, the exception sorted into a class
(`classify`), and the check_grads units the shim recorded while it ran (`autograd._shim`)."""

import json
import os
from pathlib import Path

import pytest
from autograd import _shim

import cpsgrad
from cpsgrad.errors import CpsgradError, HigherOrderError

_CPSGRAD_DIRS = tuple(str(Path(p).resolve()) for p in (Path(cpsgrad.__file__).parent,))
_OUT = os.environ.get("PEERS_OUT")
_reports: dict[str, dict] = {}


def _in_cpsgrad(filename: str) -> bool:
    if filename.startswith("<cpsgrad"):
        return True
    try:
        resolved = str(Path(filename).resolve())
    except OSError:
        return False
    return resolved.startswith(_CPSGRAD_DIRS) or "/transforms/" in resolved or "/kernels/" in resolved


def classify(excinfo) -> dict:
    """The class of a test's exception: refused, n/a, refused-order, crash, assertion or error."""
    error = excinfo.value
    message = str(error).strip().splitlines()[0][:200] if str(error).strip() else ""
    if isinstance(error, HigherOrderError):  # a gradient of a gradient: second order, not run yet
        return {"class": "refused-order", "kind": type(error).__name__, "message": message}
    if isinstance(error, CpsgradError):
        text = message
        if getattr(error, "location", None) is not None:
            text = text.split(": ", 1)[-1]
        return {"class": "refused", "kind": type(error).__name__, "message": text}
    if isinstance(error, _shim.ShimUnsupported):
        return {"class": "n/a", "kind": "ShimUnsupported", "message": message}
    if isinstance(error, _shim.NeedsForwardOrHigherOrder):
        return {"class": "refused-order", "kind": type(error).__name__, "message": message}
    if isinstance(error, _shim.InternalCrash):
        return {"class": "crash", "kind": "InternalCrash", "message": message}
    if getattr(error, "__peer_function_fails__", False):
        return {"class": "error", "kind": type(error).__name__, "message": "the function itself raises: " + message}
    frames = [entry.path for entry in excinfo.traceback]
    inside = any(_in_cpsgrad(str(f)) for f in frames)
    if isinstance(error, AssertionError):
        return {"class": "assertion", "kind": "AssertionError", "message": message, "inside_cpsgrad": inside}
    if inside:
        return {"class": "crash", "kind": type(error).__name__, "message": message}
    return {"class": "error", "kind": type(error).__name__, "message": message}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _shim.RECORDS.clear()
    _shim.SUB_REFUSED.clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    entry = _reports.setdefault(item.nodeid, {"test": item.nodeid, "outcome": "passed"})
    if report.skipped and report.when in ("setup", "call"):
        entry["outcome"] = "skipped"
    elif report.failed:
        entry["outcome"] = "failed"
        if call.excinfo is not None and "exception" not in entry:
            entry["exception"] = classify(call.excinfo)
            entry["longrepr"] = str(report.longrepr)[-4000:]
    if report.when == "teardown":
        entry["units"] = list(_shim.RECORDS)
        entry["sub_refused"] = dict(_shim.SUB_REFUSED)
        _write(entry)


def pytest_collectreport(report):
    if report.failed:
        _write({"test": report.nodeid, "outcome": "collection error", "longrepr": str(report.longrepr)[-4000:]})


def _write(entry: dict) -> None:
    if _OUT:
        with open(_OUT, "a") as handle:
            handle.write(json.dumps(entry, default=repr) + "\n")
