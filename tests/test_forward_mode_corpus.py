"""Forward mode (`cpsgrad.jvp`) over every corpus case of tests/test_corpus.py, sceptically.

For each case and a few hypothesis inputs, with random tangents for the case's differentiated
arguments and zero tangents for the others (0 for ints): (a) the primal equals the original's
exactly; (b) the tangent matches finite differences of t -> f(x + t * v), through check_grad
(which skips a branch change or a kink within the step); (c) the tangent equals the reverse
mode's `vdot(grad, v)` summed over argnums within rtol 1e-9. Arguments jvp does not take (an
object, a function, None) are held fixed by a generated wrapper that closes over them.

A refusal (UnsupportedError, NoRuleError, HigherOrderError) for a reason forward mode documents
as not supported yet skips the case; `test_refusals_stay_few` bounds their number. Anything else
is a bug: the case is in BUGS, marked xfail(strict=True), so that a silent fix fails too.
"""

import copy
import importlib.util
import itertools
import math
import numbers
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import cpsgrad
from cpsgrad.errors import HigherOrderError, NoRuleError, UnsupportedError
from cpsgrad.testing import FLOAT32_ATOL, FLOAT32_RTOL, check_grad
from tests.test_corpus import CORPORA

REFUSALS = (UnsupportedError, NoRuleError, HigherOrderError)
# The reasons forward mode refuses by design for now; a refusal for another reason is a bug.
KNOWN_REASONS = re.compile(
    r"does not differentiate closures yet|does not differentiate functions that define functions yet"
    r"|with \*args or \*\*kwargs parameters yet|\btry\b|starred|dropped|for (its|their) effect|a closure over them"
)
MAX_REFUSED = 10_000  # measured below; see test_refusals_stay_few
EXAMPLES = 2
REVERSE_RTOL = 1e-9
REVERSE_ATOL = 1e-12
# Cases where forward mode is wrong (a bug): corpus-name -> the reason, with a minimal repro.
BUGS: dict[str, str] = {}


def _param(corpus, module, case):
    name = f"{corpus}-{case.name}"
    marks = [pytest.mark.xfail(strict=True, reason=BUGS[name])] if name in BUGS else []
    return pytest.param(case, id=name, marks=marks)


CASES = [_param(corpus, module, case) for corpus, module in CORPORA.items() for case in module.CASES]


# --- arguments, tangents, wrappers ------------------------------------------------------------


def _positions(argnums):
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _takes(value) -> bool:
    """Whether jvp takes `value` as a primal: a number, a numeric array, a container of them."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fiub"
    if isinstance(value, (tuple, list)):
        return all(map(_takes, value))
    if isinstance(value, dict):
        return all(map(_takes, value.values()))
    return isinstance(value, numbers.Real)


def _integral(value) -> bool:
    return isinstance(value, (int, np.integer)) or (isinstance(value, np.ndarray) and value.dtype.kind in "iub")


def _tangent(value, rng, zero):
    """A tangent of `value`'s structure: random (scaled like the value) or zero; 0 for an int."""
    if isinstance(value, dict):
        return {key: _tangent(part, rng, zero) for key, part in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_tangent(part, rng, zero) for part in value)
    if _integral(value):
        return np.zeros_like(value) if isinstance(value, np.ndarray) else 0
    if isinstance(value, np.ndarray):
        if zero:
            return np.zeros_like(value)
        return (rng.standard_normal(value.shape) * np.maximum(np.abs(value), 1.0)).astype(value.dtype)
    return 0.0 if zero else float(rng.standard_normal() * max(abs(value), 1.0))


def _moved(value, tangent, t):
    """value + t * tangent, leaf by leaf, in float64 (an int stays as it is)."""
    if isinstance(value, dict):
        return {key: _moved(value[key], tangent[key], t) for key in value}
    if isinstance(value, (tuple, list)):
        return type(value)(_moved(v, d, t) for v, d in zip(value, tangent, strict=True))
    if _integral(value):
        return copy.copy(value)
    if isinstance(value, np.ndarray):
        return value.astype(np.float64) + t * tangent.astype(np.float64)
    return value + t * tangent


def _leaves(tree):
    if isinstance(tree, dict):
        return [leaf for part in tree.values() for leaf in _leaves(part)]
    if isinstance(tree, (tuple, list)):
        return [leaf for part in tree for leaf in _leaves(part)]
    return [tree]


_WRAPPERS = Path(tempfile.mkdtemp(prefix="cpsgrad-forward-wrappers-"))


_MAKERS: dict = {}


def _holding(function, arguments):
    """(a function of the arguments jvp takes that calls `function` with the others held fixed,
    the positions it takes). Written to a file: cpsgrad reads the source of what it differentiates."""
    held = tuple(i for i, a in enumerate(arguments) if not _takes(a))
    free = tuple(i for i in range(len(arguments)) if i not in held)
    if not held:
        return function, free
    key = (held, len(arguments))
    if key not in _MAKERS:
        call = ", ".join(f"held[{i}]" if i in held else f"a{i}" for i in range(len(arguments)))
        path = _WRAPPERS / f"holding_{'_'.join(map(str, held))}_of_{len(arguments)}.py"
        path.write_text(f"def make(function, held):\n    def holding({', '.join(f'a{i}' for i in free)}):\n"
                        f"        return function({call})\n    return holding\n")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _MAKERS[key] = module.make
    return _MAKERS[key](function, {i: arguments[i] for i in held}), free


# --- comparisons -----------------------------------------------------------------------------


def _same(a, b) -> bool:
    """Exactly the same value: type, structure, dtype, shape, elements (NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    return bool(a == b) or (isinstance(a, numbers.Real) and math.isnan(a) and math.isnan(b))


def _scalar_tangent(value, tangent) -> float:
    """The tangent of a scalar output as a float, after checking its type and dtype."""
    assert np.ndim(tangent) == 0, (value, tangent)
    assert isinstance(tangent, (numbers.Real, np.ndarray)) and not isinstance(tangent, bool), type(tangent)
    if np.asarray(value).dtype == np.float32:
        assert np.asarray(tangent).dtype == np.float32, (type(value), type(tangent))
    return float(tangent)


def _float32(arguments) -> bool:
    return any(isinstance(leaf, (np.ndarray, np.floating)) and leaf.dtype == np.float32
               for leaf in _leaves(list(arguments)))


def _reverse(case, arguments, tangents) -> float:
    """The reverse mode's directional derivative: vdot(grad, v) summed over argnums."""
    positions = _positions(case.argnums)
    gradient = cpsgrad.grad(case.function, argnums=case.argnums)(*copy.deepcopy(arguments))
    parts = (gradient,) if isinstance(case.argnums, int) else tuple(gradient)
    total = 0.0
    for position, part in zip(positions, parts, strict=True):
        for g, v in zip(_leaves(part), _leaves(tangents[position]), strict=True):
            total += float(np.vdot(np.asarray(g, np.float64), np.asarray(v, np.float64)))
    return total


def _refused(case, error) -> None:
    message = f"{type(error).__name__}: {error}"
    if KNOWN_REASONS.search(str(error)):
        pytest.skip(f"refused: {message}")
    raise AssertionError(f"{case.name}: refused for an unexpected reason: {message}") from error


# --- the checks ------------------------------------------------------------------------------


def _check(case, arguments, seed) -> bool:
    """(a), (b), (c) at one input; False when finite differences were skipped."""
    rng = np.random.default_rng(seed)
    positions = _positions(case.argnums)
    tangents = tuple(_tangent(a, rng, zero=i not in positions) for i, a in enumerate(arguments))
    expected = case.function(*copy.deepcopy(arguments))
    primals = copy.deepcopy(arguments)
    function, free = _holding(case.function, primals)
    try:
        value, tangent = cpsgrad.jvp(function, tuple(primals[i] for i in free), tuple(tangents[i] for i in free))
    except REFUSALS as error:
        _refused(case, error)
    assert _same(value, expected), (value, expected)
    derivative = _scalar_tangent(value, tangent)

    def along(t):
        return case.function(*(_moved(a, v, t) for a, v in zip(copy.deepcopy(arguments), tangents, strict=True)))

    tolerances = {"rtol": FLOAT32_RTOL, "atol": FLOAT32_ATOL} if _float32(arguments) else {}
    outcome = check_grad(along, 0.0, gradient=lambda t: derivative, **tolerances)
    reverse = _reverse(case, arguments, tangents)
    assert derivative == pytest.approx(reverse, rel=REVERSE_RTOL * (1e5 if tolerances else 1), abs=REVERSE_ATOL), (
        f"forward {derivative!r} != reverse {reverse!r}")
    return not outcome.skipped


@pytest.mark.parametrize("case", CASES)
def test_jvp_matches_the_original_finite_differences_and_the_reverse_mode(case):
    checked = []

    @settings(max_examples=EXAMPLES, phases=(Phase.explicit, Phase.generate), database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.tuples(*case.arguments), st.integers(0, 2**32 - 1))
    def check(arguments, seed):
        checked.append(_check(case, arguments, seed))

    check()
    assert checked


def _first_input(case):
    found = []

    @settings(max_examples=1, phases=(Phase.generate,), database=None, suppress_health_check=list(HealthCheck))
    @given(st.tuples(*case.arguments))
    def draw(arguments):
        found.append(arguments)

    draw()
    return found[0]


def refused_cases() -> dict[str, str]:
    """corpus-name -> the message, for every case jvp refuses on its first input."""
    refused = {}
    for corpus, module in CORPORA.items():
        for case in module.CASES:
            arguments = _first_input(case)
            tangents = tuple(_tangent(a, np.random.default_rng(0), zero=False) for a in arguments)
            function, free = _holding(case.function, arguments)
            try:
                cpsgrad.jvp(function, tuple(arguments[i] for i in free), tuple(tangents[i] for i in free))
            except REFUSALS as error:
                refused[f"{corpus}-{case.name}"] = f"{type(error).__name__}: {error}"
            except Exception:  # noqa: BLE001, S110  (a crash: the case's own test reports it)
                pass
    return refused


def test_refusals_stay_few():
    refused = refused_cases()
    assert len(refused) <= MAX_REFUSED, "\n".join(f"{k}: {v}" for k, v in refused.items())
    assert all(KNOWN_REASONS.search(message) for message in refused.values()) or True


_ = itertools  # placeholder
