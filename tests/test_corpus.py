"""Every corpus in tests/corpus/ through cpsgrad, case by case: the value equals the original's
exactly; each gradient has its argument's structure, shape and dtype (a Python float's is a
Python float) and matches finite differences; where the case has a jax.numpy transcription, it
matches jax.grad's.

What a corpus module declares, read here (the tables are optional):
- `CASES`: `Case(function, argument strategies, argnums, jax=transcription, xfail=reason)`;
  a case with `xfail` is marked xfail(strict=True) and not shrunk;
- `EXAMPLES`, `JAX_EXAMPLES`: hypothesis examples per case against finite differences and
  against jax.grad (`None`: the hypothesis profile's);
- `AT_KINKS`: (function, arguments, argnums, gradient) on a kink or tie, where finite
  differences skip: value_and_grad must give the original's value and exactly this gradient;
- `FLOAT32_SHAPES`: case name -> its arguments' shapes: value and gradients stay float32;
- `REFUSED`: (function, arguments, message): plain Python runs it, cpsgrad refuses it.
"""

import math
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import cpsgrad
from cpsgrad.errors import UnsupportedError
from cpsgrad.testing import GradCheck, check_grad
from tests.corpus import (
    array_programs,
    call_programs,
    closure_programs,
    container_method_programs,
    container_programs,
    everyday_programs,
    exception_programs,
    generator_programs,
    object_programs,
    scalar_programs,
    starred_programs,
    tangent_style_programs,
    write_programs,
)

CORPORA = {
    "scalar": scalar_programs,
    "arrays": array_programs,
    "calls": call_programs,
    "closures": closure_programs,
    "writes": write_programs,
    "containers": container_programs,
    "container_methods": container_method_programs,
    "everyday": everyday_programs,
    "starred": starred_programs,
    "exceptions": exception_programs,
    "generators": generator_programs,
    "objects": object_programs,
    "tangent_style": tangent_style_programs,
}
# At least this many cases and jax transcriptions per corpus: a list cut short fails.
LARGE_ENOUGH = {
    "scalar": (80, 0),
    "arrays": (40, 8),
    "calls": (32, 8),
    "closures": (36, 10),
    "writes": (13, 6),
    "containers": (7, 5),
    "container_methods": (9, 9),
    "everyday": (9, 5),
    "starred": (13, 10),
    "exceptions": (24, 7),
    "generators": (15, 10),
    "objects": (9, 9),
    "tangent_style": (60, 15),
}
MAX_SKIPPED_FRACTION = 0.5
JAX_RTOL = 1e-9
JAX_ATOL = 1e-12
# The phases hypothesis runs: a case expected to fail is not shrunk (each try costs seconds).
PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)
PHASES_OF_XFAIL = (Phase.explicit, Phase.reuse, Phase.generate)


def _cases(transcribed=False):
    """One pytest param (module, case) per case of every corpus (only those with a jax
    transcription when `transcribed`), id "corpus-name", xfail(strict=True) where declared."""
    return [
        pytest.param(
            module,
            case,
            id=f"{corpus}-{case.name}",
            marks=[pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else [],
        )
        for corpus, module in CORPORA.items()
        for case in module.CASES
        if case.jax or not transcribed
    ]


def _table(name):
    """One pytest param per entry of the table `name` of every corpus that declares one."""
    return [
        pytest.param(*entry, id=f"{corpus}-{entry[0].__name__}{entry[1]}")
        for corpus, module in CORPORA.items()
        for entry in getattr(module, name, [])
    ]


def _settings(examples, case):
    """Hypothesis settings for one case: `examples` (None: the profile's), no shrinking if xfail."""
    phases = PHASES_OF_XFAIL if case.xfail else PHASES
    return settings(phases=phases) if examples is None else settings(max_examples=examples, phases=phases)


def _positions(argnums):
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _parts(gradient, argnums):
    return (gradient,) if isinstance(argnums, int) else tuple(gradient)


@pytest.mark.parametrize("corpus", CORPORA)
def test_the_corpus_is_large_enough_and_well_declared(corpus):
    """Distinct names; each module-level `jax_<name>` transcription is the `jax` of case `name`
    (none written and left unused); float32 shapes name cases; enough cases and transcriptions."""
    module = CORPORA[corpus]
    names = [case.name for case in module.CASES]
    assert len(set(names)) == len(names)
    transcriptions = {name for name, value in vars(module).items() if name.startswith("jax_") and callable(value)}
    assert {f"jax_{case.name}" for case in module.CASES if case.jax} == transcriptions
    assert all(case.jax.__name__ == f"jax_{case.name}" for case in module.CASES if case.jax)
    assert all(case.xfail is None or case.xfail.strip() for case in module.CASES)
    assert set(getattr(module, "FLOAT32_SHAPES", {})) <= set(names)
    assert len(names) >= LARGE_ENOUGH[corpus][0] and len(transcriptions) >= LARGE_ENOUGH[corpus][1]


# --- finite differences; differentiated dicts, lists and tuples checked leaf by leaf ---------


def _is_container(value):
    return isinstance(value, (dict, tuple, list))


def _leaves(tree):
    if isinstance(tree, dict):
        return [leaf for part in tree.values() for leaf in _leaves(part)]
    if _is_container(tree):
        return [leaf for part in tree for leaf in _leaves(part)]
    return [tree]


def _rebuild(tree, values):
    if isinstance(tree, dict):
        return {key: _rebuild(part, values) for key, part in tree.items()}
    if _is_container(tree):
        return type(tree)(_rebuild(part, values) for part in tree)
    return next(values)


def _assert_same_structure(gradient, argument):
    assert type(gradient) is type(argument), (type(gradient), type(argument))
    if isinstance(argument, dict):
        assert list(gradient) == list(argument)
        for key in argument:
            _assert_same_structure(gradient[key], argument[key])
    elif _is_container(argument):
        assert len(gradient) == len(argument)
        for g, a in zip(gradient, argument, strict=True):
            _assert_same_structure(g, a)
    elif isinstance(argument, np.ndarray):
        assert gradient.shape == argument.shape and gradient.dtype == argument.dtype


def _check(case, arguments) -> GradCheck:
    """check_grad of the case (it runs value_and_grad and grad: the value must equal f(*args)
    exactly, each gradient have its argument's shape and dtype). Differentiated containers are
    flattened into their leaves: the value compared exactly, the gradient's structure against
    the argument's, then check_grad of the function of the leaves."""
    positions = _positions(case.argnums)
    if not any(_is_container(arguments[p]) for p in positions):
        return check_grad(case.function, *arguments, argnums=case.argnums)
    value, gradient = cpsgrad.value_and_grad(case.function, argnums=case.argnums)(*arguments)
    assert value == case.function(*arguments), (value, case.function(*arguments))
    for position, part in zip(positions, _parts(gradient, case.argnums), strict=True):
        _assert_same_structure(part, arguments[position])

    def rebuilt(values):
        remaining, rebuilt = iter(values), list(arguments)
        for position in positions:
            rebuilt[position] = _rebuild(arguments[position], remaining)
        return rebuilt

    def gradient_of_leaves(*values):
        parts = _parts(cpsgrad.grad(case.function, argnums=case.argnums)(*rebuilt(values)), case.argnums)
        return [leaf for part in parts for leaf in _leaves(part)]

    flat = [leaf for p in positions for leaf in _leaves(arguments[p])]
    def of_leaves(*values):
        return case.function(*rebuilt(values))

    return check_grad(of_leaves, *flat, argnums=tuple(range(len(flat))), gradient=gradient_of_leaves)


@pytest.mark.parametrize(("module", "case"), _cases())
def test_value_and_gradient_match_the_original(module, case):
    """On hypothesis inputs, `_check` passes, and at most MAX_SKIPPED_FRACTION of the examples
    are skipped (finite differences untrusted near a branch or kink)."""
    outcomes: list[GradCheck] = []
    positions = _positions(case.argnums)

    @_settings(module.EXAMPLES, case)
    @given(st.tuples(*case.arguments))
    def check(arguments):
        outcomes.append(outcome := _check(case, arguments))
        if not any(_is_container(arguments[p]) for p in positions):
            for position, derivative in zip(positions, outcome.analytic, strict=True):
                if type(arguments[position]) is float:  # a Python float, not a numpy scalar
                    assert type(derivative) is float, (position, type(derivative))

    check()
    skipped = [outcome.reason for outcome in outcomes if outcome.skipped]
    assert len(skipped) <= MAX_SKIPPED_FRACTION * len(outcomes), (
        f"{len(skipped)} of {len(outcomes)} examples skipped; first reasons: {skipped[:3]}"
    )


# --- jax.grad of the jax.numpy transcriptions ------------------------------------------------


@pytest.mark.parametrize(("module", "case"), _cases(transcribed=True))
def test_gradient_matches_jax(module, case):
    """cpsgrad's gradient against `jax.grad` of the case's transcription (float64), on
    hypothesis inputs; gradients of containers compared leaf by leaf, structures equal."""
    where = _positions(case.argnums)

    @_settings(module.JAX_EXAMPLES, case)
    @given(st.tuples(*case.arguments))
    def check(arguments):
        gradient = _parts(cpsgrad.grad(case.function, argnums=case.argnums)(*arguments), case.argnums)
        with jax.enable_x64(True):
            inputs = tuple(
                jax.tree_util.tree_map(jnp.asarray, argument) if i in where else argument
                for i, argument in enumerate(arguments)
            )
            expected = jax.grad(case.jax, argnums=where)(*inputs)
        for position, ours, theirs in zip(where, gradient, expected, strict=True):
            ours_leaves, ours_tree = jax.tree_util.tree_flatten(ours)
            theirs_leaves, theirs_tree = jax.tree_util.tree_flatten(theirs)
            assert ours_tree == theirs_tree, (position, ours_tree, theirs_tree)
            for mine, leaf in zip(ours_leaves, theirs_leaves, strict=True):
                np.testing.assert_allclose(
                    mine, np.asarray(leaf), rtol=JAX_RTOL, atol=JAX_ATOL, err_msg=f"argument {position}"
                )

    check()


# --- the tables: kinks, float32, refusals ----------------------------------------------------


@pytest.mark.parametrize(("function", "arguments", "argnums", "expected"), _table("AT_KINKS"))
def test_gradient_at_kinks_follows_jax(function, arguments, argnums, expected):
    value, gradient = cpsgrad.value_and_grad(function, argnums=argnums)(*arguments)
    assert value == function(*arguments)
    assert gradient == expected


FLOAT32 = [
    pytest.param(module, case, id=f"{corpus}-{case.name}")
    for corpus, module in CORPORA.items()
    for case in module.CASES
    if case.name in getattr(module, "FLOAT32_SHAPES", {})
]


@pytest.mark.parametrize(("module", "case"), FLOAT32)
def test_float32_programs_stay_float32(module, case):
    shapes = module.FLOAT32_SHAPES[case.name]
    arguments = tuple(np.linspace(-0.9, 0.8, math.prod(shape), dtype=np.float32).reshape(shape) for shape in shapes)
    value, gradient = cpsgrad.value_and_grad(case.function, argnums=case.argnums)(*arguments)
    assert value == case.function(*arguments)
    assert np.asarray(value).dtype == np.float32
    for position, derivative in zip(_positions(case.argnums), _parts(gradient, case.argnums), strict=True):
        assert type(derivative) is np.ndarray
        assert derivative.dtype == np.float32
        assert derivative.shape == arguments[position].shape


@pytest.mark.parametrize(("function", "arguments", "message"), _table("REFUSED"))
def test_late_binding_and_cycles_are_refused_with_advice(function, arguments, message):
    function(*arguments)  # plain Python runs it
    with pytest.raises(UnsupportedError, match=message):
        cpsgrad.grad(function)(*arguments)


# --- particular programs ---------------------------------------------------------------------


def test_hundred_thousand_iterations():
    """A 10^5-iteration loop: exact value, the closed-form derivative, the recursion limit kept."""
    n, x = 100_000, 0.75
    recursion_limit = sys.getrecursionlimit()
    value, derivative = cpsgrad.value_and_grad(scalar_programs.long_decay_loop)(x, n)
    assert value == scalar_programs.long_decay_loop(x, n)
    decay_n = scalar_programs.DECAY**n
    expected = decay_n + 1e-6 * (1.0 - decay_n) / (1.0 - scalar_programs.DECAY)
    assert math.isclose(derivative, expected, rel_tol=1e-9)
    assert cpsgrad.grad(scalar_programs.long_decay_loop)(x, n) == derivative
    assert sys.getrecursionlimit() == recursion_limit


def test_a_helper_raising_on_bad_input_raises_through_the_gradient():
    """Through cpsgrad exactly when the original raises, with the original's message."""
    x, mu = np.array([0.5, -1.0, 2.0]), np.zeros(3)
    with pytest.raises(ValueError, match="checked_log needs a positive value"):
        call_programs.gaussian_log_likelihood(x, mu, -1.0)
    with pytest.raises(ValueError, match="checked_log needs a positive value"):
        cpsgrad.grad(call_programs.gaussian_log_likelihood, argnums=(0, 2))(x, mu, -1.0)
    with pytest.raises(ValueError, match="shapes differ"):
        cpsgrad.grad(call_programs.gaussian_log_likelihood)(x, np.zeros(2), 1.0)


def test_recursion_two_hundred_deep_is_exact():
    function, deep = call_programs.recursion_two_hundred_deep, call_programs.DEEP
    value, gradient = cpsgrad.value_and_grad(function)(0.7, deep)
    assert value == function(0.7, deep)
    assert type(gradient) is float
    step = 1e-6
    numeric = (function(0.7 + step, deep) - function(0.7 - step, deep)) / (2 * step)
    assert gradient == pytest.approx(numeric, rel=1e-6)
