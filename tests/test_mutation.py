"""Mutation self-test: a rule with a flipped sign must make the gradient checks fail.

If these pass while a rule is wrong, the corpus and `check_grad` prove nothing.
"""

import math
import operator

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import cpsgrad
from cpsgrad.rules.registry import TABLE
from cpsgrad.testing import check_grad
from tests.corpus.scalar_programs import CASES


def flipped_sin(x):
    y = math.sin(x)
    y_d = yield y
    x_d += -y_d * math.cos(x)  # noqa: F821, F841  (the sign is wrong on purpose)


def flipped_mul(x, y):
    z = x * y
    z_d = yield z
    x_d += -z_d * y  # noqa: F821, F841  (the sign is wrong on purpose)
    y_d += z_d * x  # noqa: F821, F841


def _uses(function, token: str) -> bool:
    try:
        return token in cpsgrad.show(function, stage="normalize")
    except cpsgrad.CpsgradError:
        return False


def _caught(case) -> bool:
    """Whether the gradient check of `case` fails on some generated input."""

    @settings(max_examples=10, derandomize=True, database=None, deadline=None, phases=[Phase.generate])
    @given(st.tuples(*case.arguments))
    def check(arguments):
        try:
            check_grad(case.function, *arguments, argnums=case.argnums)
        except (cpsgrad.CpsgradError, ArithmeticError, ValueError):
            pass

    try:
        check()
    except AssertionError:
        return True
    return False


@pytest.mark.parametrize(
    ("primitive", "template", "token"), [(math.sin, flipped_sin, "sin("), (operator.mul, flipped_mul, " * ")]
)
def test_a_flipped_rule_fails_the_corpus(primitive, template, token):
    cases = [case for case in CASES if _uses(case.function, token)][:8]
    assert len(cases) >= 3
    rule = TABLE.add(primitive, template)
    try:
        caught = [case.name for case in cases if _caught(case)]
    finally:
        TABLE.remove(rule)
    assert caught, f"a flipped {primitive} rule went unnoticed by {[c.name for c in cases]}"


def test_the_correct_rule_passes_after_the_mutant_is_removed():
    def f(x):
        return math.sin(x) * x

    rule = TABLE.add(math.sin, flipped_sin)
    TABLE.remove(rule)
    assert cpsgrad.grad(f)(0.3) == pytest.approx(math.cos(0.3) * 0.3 + math.sin(0.3), rel=1e-14)
