"""Every stage `cpsgrad show` prints is a runnable program with the original's semantics.

The normalized function and the CPS program (run with `k` returning its argument) must give the
original's value exactly on the whole scalar corpus.
"""

import math
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cpsgrad
from cpsgrad import runtime
from tests.corpus.scalar_programs import CASES


def _stage_function(case, stage: str, name: str):
    namespace = dict(case.function.__globals__)
    namespace["cpsgrad_runtime"] = runtime
    exec(cpsgrad.show(case.function, stage=stage, argnums=case.argnums), namespace)
    return namespace[name]


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b and type(a) is type(b)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_normalized_and_cps_stages_compute_the_original_value(case):
    normalized = _stage_function(case, "normalize", case.name)
    continuation_passing = _stage_function(case, "cps", case.name + "__cps")

    @given(st.tuples(*case.arguments))
    def check(arguments):
        try:
            expected = case.function(*arguments)
        except (ArithmeticError, ValueError):
            return
        assert _same(normalized(*arguments), expected)
        assert _same(continuation_passing(*arguments, lambda value: value), expected)

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)
    try:
        check()
    finally:
        sys.setrecursionlimit(limit)
