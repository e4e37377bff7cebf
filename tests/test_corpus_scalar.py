"""The scalar corpus through cpsgrad: values equal the original's, gradients match differences."""

import math
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cpsgrad
from cpsgrad.testing import GradCheck, check_grad
from tests.corpus import scalar_programs as programs
from tests.corpus.scalar_programs import CASES, DECAY, long_decay_loop

MAX_SKIPPED_FRACTION = 0.5


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_value_and_gradient_match_the_original(case):
    outcomes: list[GradCheck] = []

    @given(st.tuples(*case.arguments))
    def check(arguments):
        outcomes.append(check_grad(case.function, *arguments, argnums=case.argnums))

    check()
    skipped = [outcome.reason for outcome in outcomes if outcome.skipped]
    assert len(skipped) <= MAX_SKIPPED_FRACTION * len(outcomes), (
        f"{len(skipped)} of {len(outcomes)} examples skipped; first reasons: {skipped[:3]}"
    )


# Inputs on a kink or a tie, where finite differences skip: the gradient follows JAX (measured
# with jax.grad on the same expressions: abs'(0) = 1, a tie in max/min gives 0.5 to each side,
# floor division has gradient 0, x ** 0 has gradient 0 at x = 0).
AT_KINKS = [
    (programs.abs_distance, (0.0, 0.0), (0, 1), (1.5, -1.0)),
    (programs.clip, (-1.0, -1.0, 2.0), (0, 1, 2), (0.5, 0.5, 0.0)),
    (programs.clip, (2.0, -1.0, 2.0), (0, 1, 2), (0.5, 0.0, 0.5)),
    (programs.select_with_flag, (1.5, 1.5, True), (0, 1), (2.25, 0.75)),
    (programs.min_of_three, (2.0, 1.0, 0.0), (0, 1, 2), (1.0, 0.5, 0.5)),
    (programs.relu_layer, (0.0, [1.0, -2.0]), 0, -0.5),
    (programs.leaky_relu, (0.0,), 0, 0.01),
    (programs.bool_arithmetic, (0.0,), 0, 0.1),
    (programs.floor_division_and_modulo, (2.0,), 0, 3.0),
    (programs.float_and_int_conversions, (2.0, 2), 0, 5.0),
    (programs.skip_odd_terms, (0.0, 3), 0, 0.0),
    (programs.countdown_series, (0.0, 3), 0, 1.0),
]


@pytest.mark.parametrize(
    ("function", "arguments", "argnums", "expected"),
    AT_KINKS,
    ids=[f"{function.__name__}{arguments}" for function, arguments, _, _ in AT_KINKS],
)
def test_gradient_at_kinks_follows_jax(function, arguments, argnums, expected):
    value, gradient = cpsgrad.value_and_grad(function, argnums=argnums)(*arguments)
    assert value == function(*arguments)
    assert gradient == expected


def test_hundred_thousand_iterations():
    n = 100_000
    x = 0.75
    recursion_limit = sys.getrecursionlimit()
    value, derivative = cpsgrad.value_and_grad(long_decay_loop)(x, n)
    assert value == long_decay_loop(x, n)
    decay_n = DECAY**n
    expected = decay_n + 1e-6 * (1.0 - decay_n) / (1.0 - DECAY)
    assert math.isclose(derivative, expected, rel_tol=1e-9)
    assert cpsgrad.grad(long_decay_loop)(x, n) == derivative
    assert sys.getrecursionlimit() == recursion_limit
