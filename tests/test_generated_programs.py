"""Random programs from the supported grammar (cpsgrad.testing.programs), each run through
cpsgrad: the value must be exactly the function's and the gradient must agree with finite
differences. 300 programs per run (a fixed seed under the ci profile); a failing program is
shrunk and printed as source, with the call that fails. Construct frequencies are hypothesis
events: `pytest tests/test_generated_programs.py --hypothesis-show-statistics`. A long soak:
`python -m cpsgrad.testing.programs --soak 10000` (docs/generator.md).
"""

import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import cpsgrad
from cpsgrad.testing.programs import ENTRY, Program, check_program, programs

PROGRAMS = max(300, settings.default.max_examples)  # more under the soak profile


@settings(
    max_examples=PROGRAMS,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(programs())
def test_generated_programs(program):
    with program:
        check_program(program)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(numpy=False, containers=False, recursion=False, max_helpers=0))
def test_arithmetic_and_control_flow_only(program):
    with program:
        assert "np." not in program.source and "[" not in program.source
        check_program(program)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_repr_is_a_runnable_reproducer(program):
    with program:
        namespace = {}
        exec(compile(program.source, "<generated>", "exec"), namespace)
        expected = program.function(*program.arguments)
        actual = namespace[ENTRY](*program.arguments)
        assert (expected == actual) or (
            isinstance(expected, float) and math.isnan(expected) and math.isnan(actual)
        )
        text = repr(program)
        assert program.source in text
        assert f"cpsgrad.value_and_grad({ENTRY}, argnums={program.argnums!r})" in text


def test_programs_load_from_a_file_and_clean_up():
    source = "import math\n\n\ndef f(x0, n):\n    return math.sin(x0) * n\n"
    program = Program(source, (0.5, 3), (0,), frozenset({"math.sin"}))
    with program:
        f = program.function
        assert f(0.5, 3) == math.sin(0.5) * 3
        assert cpsgrad.grad(f)(0.5, 3) == math.cos(0.5) * 3
        path = f.__code__.co_filename
        assert open(path).read() == source
    assert program._path is None
    import os

    assert not os.path.exists(path)


def test_closures_switch_generates_nested_functions():
    """closures=True (the default) puts lambdas and nested defs in."""
    seen = set()

    @settings(max_examples=60, deadline=None, database=None)
    @given(programs(numpy=False))
    def collect(program):
        seen.update(program.constructs)
        if "lambda" in program.constructs:
            assert re.search(r"= lambda p\d+(, q\d+=\w+)?:", program.source)

    collect()
    assert seen & {"lambda", "closure"}


@pytest.mark.parametrize("value", [0.5, float("nan")])
def test_values_compare_exactly(value):
    from cpsgrad.testing.programs import _same

    assert _same(value, np.float64(value))
    assert not _same(value, 1.0) and not _same(1.0, value)
