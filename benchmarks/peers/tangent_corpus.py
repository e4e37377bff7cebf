"""Tangent's public corpus (google/tangent, tests/functions.py) differentiated by cpsgrad.

    python benchmarks/peers/tangent_corpus.py [--functions PATH] [--short] [--only NAME,NAME]
        [--json OUT]

Tangent's file is never part of this repository. The runner reads it from `--functions PATH`,
else from the environment variable TANGENT_FUNCTIONS, else from a bare git mirror of
google/tangent at /work/.mirror/google+tangent/repo (`git show HEAD:tests/functions.py`). Get it
with `git clone https://github.com/google/tangent` (the file is tests/functions.py; the PyPI
sdists of tangent and tangent-ad do not ship it). functions.py imports `tangent`: with
tangent-ad installed (the bench extra) its functions that call Tangent's own runtime
(`tangent.Stack`, `push`, `pop`) run as in Tangent's tests; without it a stand-in module lets the
file import and those functions count as not applicable.

Each function runs on the inputs Tangent's tests give its parameters, by name, as its
conftest.py and test_reverse_mode.py do (`a`, `b`, `c`: ten scalars from -2 to 2; `n`: 1, 2, 3;
`x`: random vectors of 3, 5 and 10 elements; `sqm`: 1x1 and 5x5 matrices; the named tests'
inputs for logistic_regression, rnn, bilinear, dict_saxpy, nested_dict ...; every combination;
`--short`: one of each, as Tangent's --short). For each input:

1. plain Python runs the function on a deep copy (raising, or a value that is not a real
   scalar, makes the input not applicable);
2. `cpsgrad.value_and_grad` with respect to every argument holding floats, on another deep
   copy: its value must equal plain Python's exactly, the arguments' final contents must equal
   those plain Python left (functions that write into their arguments), and each gradient must
   have its argument's structure;
3. `cpsgrad.testing.check_grad` compares the gradient, leaf by leaf, with finite differences
   of the original (skipped where a branch changes or a kink lies within the step);
4. HIPS autograd, where installed, differentiates the same function with the module's `np`
   bound to `autograd.numpy`, as Tangent's tests do; its gradient is shown beside ours (it
   raises on writes into arrays, `np.linalg.det` and others).

A function's class is the worst of its inputs': WRONG (a value, argument or gradient differing
from plain Python or finite differences; a gradient that disagrees with autograd where finite
differences were skipped on every input), crash (an exception from cpsgrad other than
cpsgrad.errors), refused (a cpsgrad.errors error: its message), unverified (finite differences
skipped on every input and no autograd gradient to compare), passed; n/a when plain Python
runs it on none of its inputs or its value is not a real scalar. Exits 1 on any WRONG or crash,
2 when functions.py cannot be found.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import copy
import importlib.util
import inspect
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import cpsgrad
from cpsgrad.errors import CpsgradError
from cpsgrad.testing import check_grad

MIRROR = Path("/work/.mirror/google+tangent/repo")
WHERE_TO_GET = (
    "Tangent's tests/functions.py was not found. Get it with\n"
    "    git clone https://github.com/google/tangent /tmp/tangent\n"
    "and run  python benchmarks/peers/tangent_corpus.py --functions /tmp/tangent/tests/functions.py\n"
    "(or set TANGENT_FUNCTIONS=PATH). It is not committed here, and the PyPI sdists do not ship it."
)
ORDER = ["WRONG", "crash", "refused", "unverified", "passed", "n/a"]
AUTOGRAD_RTOL = 1e-6
AUTOGRAD_ATOL = 1e-9


# --- reading Tangent's file -------------------------------------------------------------------


def functions_source(path: str | None) -> tuple[str, str]:
    """functions.py's text and where it came from; SystemExit(2) with advice when absent."""
    path = path or os.environ.get("TANGENT_FUNCTIONS")
    if path:
        if not Path(path).is_file():
            print(f"{path}: no such file.\n{WHERE_TO_GET}", file=sys.stderr)
            sys.exit(2)
        return Path(path).read_text(), path
    if MIRROR.exists():
        shown = subprocess.run(["git", "-C", str(MIRROR), "show", "HEAD:tests/functions.py"],
                               capture_output=True, text=True)
        if shown.returncode == 0:
            return shown.stdout, f"{MIRROR} (HEAD:tests/functions.py)"
    print(WHERE_TO_GET, file=sys.stderr)
    sys.exit(2)


def _tangent_stand_in() -> types.ModuleType:
    """Enough of `tangent` for functions.py to import: `trace` leaves a function as it is; the
    runtime it calls (Stack, push, pop, insert_grad_of) raises, so what uses it is n/a."""
    module = types.ModuleType("tangent")

    def missing(name):
        def call(*args, **kwargs):
            raise ModuleNotFoundError(f"tangent.{name} needs tangent-ad installed (pip install tangent-ad)")
        call.__name__ = name
        return call

    module.trace = lambda function: function
    for name in ("Stack", "push", "pop", "insert_grad_of", "init_grad"):
        setattr(module, name, missing(name))
    return module


def load(source: str, directory: Path) -> tuple[types.ModuleType, bool]:
    """functions.py imported from a file under `directory` (cpsgrad reads functions' source
    from their file); whether the real tangent was importable."""
    try:
        import tangent  # noqa: F401
        real = True
    except ImportError:
        sys.modules["tangent"] = _tangent_stand_in()
        real = False
    path = directory / "tangent_functions.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("tangent_functions", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec.loader.exec_module(module)
    return module, real


def corpus_functions(module: types.ModuleType) -> list[types.FunctionType]:
    """The functions functions.py defines (not those it imports), in file order, as Tangent's
    conftest collects them (a name defined twice counts once, its last definition)."""
    found = [value for value in vars(module).values()
             if isinstance(value, types.FunctionType) and value.__module__ == module.__name__]
    return sorted(found, key=lambda f: f.__code__.co_firstlineno)


# --- inputs, by parameter name, as Tangent's tests give them ----------------------------------


def _inputs(short: bool) -> dict[str, list[Any]]:
    rng = np.random.default_rng(0)
    scalars = [2.0] if short else [-2.0, -1.5, -1.0, -0.5, -0.1, 0.1, 0.5, 1.0, 1.5, 2.0]
    return {
        "a": scalars, "b": scalars, "c": scalars,
        "n": [1] if short else [1, 2, 3],
        "i": [0, 1, 2],  # passthru_pack's index (Tangent's conftest gives it none)
        "x": [rng.standard_normal(size) for size in ((3,) if short else (3, 5, 10))],
        "sqm": [rng.standard_normal(shape) for shape in (((3, 3),) if short else ((1, 1), (5, 5)))],
        "abc_packed_in_tuple": [(a, b, c) for a, b, c in _triples(scalars, short)],
        "val": [dict(a=a, b=b, c=c) for a, b, c in _triples(scalars, short)],
        "p": [dict(i=dict(j=3.0, k=4.0))],
    }


def _triples(scalars, short):
    return [(2.0, -1.5, 0.5)] if short else list(itertools.product(scalars[::3], scalars[1::3], scalars[2::3]))


def _special(rng) -> dict[str, list[dict[str, Any]]]:
    """The inputs of the functions Tangent's test_reverse_mode.py tests on its own inputs."""
    label = np.zeros(5)
    label[1] = 1.0
    dimension = 3
    return {
        "logistic_regression": [dict(input=rng.random(3), label=label, W=rng.standard_normal((3, 5)),
                                     b=rng.standard_normal(5))],
        "rnn": [dict(inputs=rng.standard_normal((3, 2)), W=rng.standard_normal((2, 3)))],
        "bilinear": [dict(x=rng.standard_normal((1, dimension)), h=rng.standard_normal((1, dimension)),
                          U=rng.standard_normal((dimension, dimension)),
                          W=rng.standard_normal((dimension, dimension)), b=rng.standard_normal((1, dimension)))],
    }


#: Functions whose parameter is named like a scalar but iterated (Tangent's conftest leaves them
#: out of its generic tests): run on the vectors instead.
ITERATES_ITS_SCALAR = frozenset({"listcomp"})


def argument_sets(function, short: bool) -> tuple[list[tuple], str]:
    """Every combination of the inputs of the function's parameters, or [] and why none."""
    names = list(inspect.signature(function).parameters)
    special = _special(np.random.default_rng(1)).get(function.__name__)
    if special is not None:
        return [tuple(values[name] for name in names) for values in special], ""
    inputs = _inputs(short)
    if function.__name__ in ITERATES_ITS_SCALAR:
        inputs = dict(inputs, a=inputs["x"])
    if "tf" in function.__code__.co_names and function.__globals__.get("tf") is None:
        return [], "TensorFlow's (functions.py binds tf = None when tensorflow is not installed)"
    unknown = [name for name in names if name not in inputs]
    if unknown:
        return [], f"no inputs known for parameter {unknown[0]!r}"
    return list(itertools.product(*(inputs[name] for name in names))), ""


# --- one input --------------------------------------------------------------------------------


def _has_floats(value) -> bool:
    if isinstance(value, dict):
        return any(_has_floats(v) for v in value.values())
    if isinstance(value, (tuple, list)):
        return any(_has_floats(v) for v in value)
    return isinstance(value, float) or (isinstance(value, np.ndarray) and value.dtype.kind == "f")


def _leaves(tree) -> list:
    if isinstance(tree, dict):
        return [leaf for part in tree.values() for leaf in _leaves(part)]
    if isinstance(tree, (tuple, list)):
        return [leaf for part in tree for leaf in _leaves(part)]
    return [tree]


def _rebuild(tree, values):
    if isinstance(tree, dict):
        return {key: _rebuild(part, values) for key, part in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_rebuild(part, values) for part in tree)
    value = next(values)
    return value.copy() if isinstance(value, np.ndarray) else value


def _structure_error(gradient, argument, where="") -> str | None:
    if isinstance(argument, np.ndarray):
        if not (isinstance(gradient, np.ndarray) and gradient.shape == argument.shape):
            return f"gradient{where} is {type(gradient).__name__} {np.shape(gradient)}, argument {argument.shape}"
        return None
    if isinstance(argument, float):
        return None if isinstance(gradient, float) else f"gradient{where} of a float is {type(gradient).__name__}"
    if type(gradient) is not type(argument):
        return f"gradient{where} is {type(gradient).__name__}, argument {type(argument).__name__}"
    if isinstance(argument, dict):
        if list(gradient) != list(argument):
            return f"gradient{where} has keys {list(gradient)}, argument {list(argument)}"
        pairs = [(gradient[k], argument[k], f"{where}[{k!r}]") for k in argument]
    else:
        if len(gradient) != len(argument):
            return f"gradient{where} has {len(gradient)} parts, argument {len(argument)}"
        pairs = [(g, a, f"{where}[{i}]") for i, (g, a) in enumerate(zip(gradient, argument, strict=True))]
    for part, arg, at in pairs:
        if _has_floats(arg) and (problem := _structure_error(part, arg, at)):
            return problem
    return None


def _same(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(p, q) for p, q in zip(a, b, strict=True))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.shape(a) == np.shape(b) and np.array_equal(a, b, equal_nan=True)
    return a == b or (a != a and b != b)


def _real_scalar(value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (int, float, np.integer, np.floating)):
        return True
    return isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf"


@dataclass
class Outcome:
    kind: str  # WRONG, crash, refused, kink, checked, n/a
    reason: str = ""
    autograd: str = ""  # agrees, disagrees: ..., n/a: ...


def _with_numpy(module, numpy_module):
    @contextlib.contextmanager
    def bound():
        saved = module.np
        module.np = numpy_module
        try:
            yield
        finally:
            module.np = saved
    return bound()


def _autograd_gradient(module, function, arguments, positions):
    """autograd's gradient per differentiated position (its `np` bound as Tangent's tests do),
    or the exception it raised."""
    import autograd
    import autograd.numpy as anp

    with _with_numpy(module, anp):
        try:
            return [autograd.grad(function, argnum=p)(*copy.deepcopy(arguments)) for p in positions]
        except Exception as error:  # autograd's own limits: writes into arrays, det ...
            return error


def _close(ours, theirs) -> bool:
    mine, other = _leaves(ours), _leaves(theirs)
    return len(mine) == len(other) and all(
        np.allclose(np.asarray(p, dtype=float), np.asarray(q, dtype=float), rtol=AUTOGRAD_RTOL,
                    atol=AUTOGRAD_ATOL, equal_nan=True) for p, q in zip(mine, other, strict=True))


def check_input(module, function, arguments: tuple, with_autograd: bool) -> Outcome:
    plain_arguments = copy.deepcopy(arguments)
    try:
        expected = function(*plain_arguments)
    except Exception as error:
        return Outcome("n/a", f"plain Python raises {type(error).__name__}: {error}")
    if not _real_scalar(expected):
        return Outcome("n/a", f"the value is {type(expected).__name__}, not a real scalar")
    positions = tuple(p for p, argument in enumerate(arguments) if _has_floats(argument))
    if not positions:
        return Outcome("n/a", "no argument holds a float")

    ours_arguments = copy.deepcopy(arguments)
    try:
        value, gradient = cpsgrad.value_and_grad(function, argnums=positions)(*ours_arguments)
    except CpsgradError as error:
        return Outcome("refused", f"{type(error).__name__}: {error}")
    except Exception as error:
        return Outcome("crash", f"{type(error).__name__}: {error}\n{traceback.format_exc(limit=-3)}")
    if not _same(value, expected):
        return Outcome("WRONG", f"value {value!r}, plain Python {expected!r}")
    if not _same(ours_arguments, plain_arguments):
        return Outcome("WRONG", f"arguments left {ours_arguments!r}, plain Python left {plain_arguments!r}")
    for position, part in zip(positions, gradient, strict=True):
        if problem := _structure_error(part, arguments[position]):
            return Outcome("WRONG", f"argument {position}: {problem}")

    theirs = _autograd_gradient(module, function, arguments, positions) if with_autograd else None
    if theirs is None:
        autograd_says = "n/a: not installed"
    elif isinstance(theirs, Exception):
        autograd_says = f"n/a: raises {type(theirs).__name__}: {str(theirs)[:80]}"
    elif _close(list(gradient), theirs):
        autograd_says = "agrees"
    else:
        autograd_says = f"disagrees: ours {list(gradient)!r}, autograd's {theirs!r}"

    flat = [leaf for p in positions for leaf in _leaves(arguments[p])]
    leaf_positions = tuple(i for i, leaf in enumerate(flat) if _has_floats(leaf))

    def rebuilt(values):
        remaining, rebuilt = iter(values), list(copy.deepcopy(arguments))
        for position in positions:
            rebuilt[position] = _rebuild(arguments[position], remaining)
        return rebuilt

    def of_leaves(*values):
        return function(*rebuilt(values))

    def gradient_of_leaves(*values):
        parts = cpsgrad.grad(function, argnums=positions)(*rebuilt(values))
        leaves = [leaf for part in parts for leaf in _leaves(part)]
        return [leaves[i] for i in leaf_positions]

    try:
        checked = check_grad(of_leaves, *flat, argnums=leaf_positions, gradient=gradient_of_leaves,
                             max_elements=None)
    except AssertionError as error:
        return Outcome("WRONG", f"finite differences: {error}", autograd_says)
    if checked.skipped:
        if autograd_says.startswith("disagrees"):
            return Outcome("WRONG", f"finite differences skipped ({checked.reason}); autograd {autograd_says}",
                           autograd_says)
        return Outcome("kink", checked.reason, autograd_says)
    return Outcome("checked", "", autograd_says)


# --- one function, the table ------------------------------------------------------------------


@dataclass
class Verdict:
    name: str
    kind: str
    inputs: int = 0
    checked: int = 0
    reason: str = ""
    autograd: collections.Counter = field(default_factory=collections.Counter)


def judge(module, function, short: bool, with_autograd: bool) -> Verdict:
    sets, why = argument_sets(function, short)
    if not sets:
        return Verdict(function.__name__, "n/a", reason=why)
    outcomes = [check_input(module, function, arguments, with_autograd) for arguments in sets]
    verdict = Verdict(function.__name__, "passed", inputs=len(sets))
    for outcome in outcomes:
        if outcome.autograd:
            verdict.autograd[outcome.autograd.split(":")[0]] += 1
    for kind in ("WRONG", "crash", "refused"):
        bad = [(arguments, o) for arguments, o in zip(sets, outcomes, strict=True) if o.kind == kind]
        if bad:
            arguments, outcome = bad[0]
            verdict.kind, verdict.reason = kind, f"{len(bad)} of {len(sets)} inputs; at {arguments!r}: {outcome.reason}"
            return verdict
    applicable = [o for o in outcomes if o.kind != "n/a"]
    if not applicable:
        verdict.kind, verdict.reason = "n/a", outcomes[0].reason
        return verdict
    verdict.checked = sum(o.kind == "checked" for o in applicable)
    confirmed = sum(o.autograd == "agrees" for o in applicable)
    if verdict.checked == 0 and confirmed == 0:
        verdict.kind, verdict.reason = "unverified", applicable[0].reason
    elif len(applicable) < len(outcomes):
        skipped = next(o for o in outcomes if o.kind == "n/a")
        verdict.reason = f"{len(outcomes) - len(applicable)} inputs n/a: {skipped.reason}"
    return verdict


def report(verdicts: list[Verdict], origin: str, real_tangent: bool, seconds: float) -> str:
    counts = collections.Counter(v.kind for v in verdicts)
    applicable = [v for v in verdicts if v.kind != "n/a"]
    autograd = collections.Counter(_autograd_summary(v) for v in applicable)
    lines = [
        f"Tangent's corpus: {origin}; tangent {'installed' if real_tangent else 'stand-in'}; "
        f"{len(verdicts)} functions, {seconds:.0f} s",
        "",
        "| class | functions |",
        "| --- | --- |",
        *(f"| {kind} | {counts[kind]} |" for kind in ORDER),
        "",
        f"Of the {len(applicable)} functions plain Python runs (a real scalar value), "
        f"{counts['passed']} pass. HIPS autograd, on the same inputs: agrees on {autograd['agrees']}, "
        f"disagrees on {autograd['disagrees']}; no comparison on {autograd['n/a']} (autograd raises: writes into "
        "arrays ...; or cpsgrad refused).",
        "",
        "| function | class | inputs | checked by finite differences | autograd | note |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for verdict in sorted(verdicts, key=lambda v: (ORDER.index(v.kind), v.name)):
        autograd = ", ".join(f"{k} {n}" for k, n in sorted(verdict.autograd.items()))
        note = " ".join(verdict.reason.split())[:300].replace("|", "\\|")
        lines.append(
            f"| {verdict.name} | {verdict.kind} | {verdict.inputs} | {verdict.checked} | {autograd} | {note} |"
        )
    return "\n".join(lines)


def _autograd_summary(verdict: Verdict) -> str:
    """One word per function: disagrees on any input, agrees on every input it ran, or n/a."""
    if verdict.autograd["disagrees"]:
        return "disagrees"
    return "agrees" if verdict.autograd["agrees"] else "n/a"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--functions", help="path of Tangent's tests/functions.py")
    parser.add_argument("--short", action="store_true", help="one input per parameter, as Tangent's --short")
    parser.add_argument("--only", help="comma-separated function names")
    parser.add_argument("--no-autograd", action="store_true", help="do not compare with HIPS autograd")
    parser.add_argument("--json", help="write the verdicts to this file")
    options = parser.parse_args(argv)
    source, origin = functions_source(options.functions)
    with_autograd = not options.no_autograd and importlib.util.find_spec("autograd") is not None
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as directory:
        module, real_tangent = load(source, Path(directory))
        functions = corpus_functions(module)
        if options.only:
            chosen = set(options.only.split(","))
            functions = [f for f in functions if f.__name__ in chosen]
        verdicts = []
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            for function in functions:
                verdicts.append(verdict := judge(module, function, options.short, with_autograd))
                print(f"{verdict.name}: {verdict.kind}", file=sys.stderr, flush=True)
    print(report(verdicts, origin, real_tangent, time.perf_counter() - started))
    if options.json:
        Path(options.json).write_text(json.dumps(
            [dict(vars(v), autograd=dict(v.autograd)) for v in verdicts], indent=1))
    return 1 if any(v.kind in ("WRONG", "crash") for v in verdicts) else 0


if __name__ == "__main__":
    sys.exit(main())
