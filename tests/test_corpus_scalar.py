"""The scalar corpus through cpsgrad: values equal the original's, gradients match differences."""

import math
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cpsgrad
from cpsgrad.testing import GradCheck, check_grad
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
