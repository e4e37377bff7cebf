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
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable

import cpsgrad
from cpsgrad.testing.programs import ENTRY, Program, check_program, programs
from tests.drawing import draw_until_seen

PROGRAMS = max(300, settings.default.max_examples)  # more under the soak profile


@settings(
    max_examples=PROGRAMS,
    deadline=None,
    derandomize=True,  # the same programs in every run: random draws are the soaks' (outside the default suite)
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(programs())
def test_generated_programs(program):
    with program:
        check_program(program)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    programs(
        numpy=False, containers=False, recursion=False, max_helpers=0,
        starred=False, exceptions=False, walrus=False, sets=False, effects=False, classes=False, subclasses=False,
        generators=False, mutation=False,
    )
)
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


# --- the aliasing grammar (repeated arguments, views, aliased containers, discarded results,
# closures called with what they captured, module globals rebound between runs) ---

ALIASING = {
    # construct -> what its source must show (a regex), in at least one program using it
    "repeated-argument": r"\b([hr]\d+)\((\w+), (\w+=)?\2\b",
    "repeated-array-argument": r"\bh\d+\(",
    "repeated-keyword-argument": r"\bh\d+\([^()]*\w+=",
    "repeated-argument-in-loop": r"\n\s+(while|for) ",
    "repeated-argument-recursion": r"def r\d+\(u, w, depth\)",
    "repeated-argument-3": r"\bh\d+\(",
    "view": r"\[::-1\]|\.T\b|\.reshape\(|\[:\]|\[0:3\]|\[1:\]|\[:2\]",
    "view-transpose": r"\.T\b|np\.transpose\(",
    "view-reshape": r"\.reshape\(",
    "view-reversed": r"\[::-1\]|\[:, ::-1\]",
    "view-slice": r"\[:\]|\[0:3\]|\[:, -?\d\]",
    "basic-slice": r"\[(1:|:2|1:-1|::2|-2:)\]",
    "matrix-argument": r"def f\(.*\bm, n\):",
    "aliased-container": r"[\[({]",
    "aliased-array-container": r"[\[(]([\w\[\]:-]+), .*\1|\"a\": ([\w\[\]:-]+), \"b\": \2",
    "container-helper": r"def h\d+\(c\):",
    "discarded-result": r"\n\s+unused\d+ = h\d+\(",
    "bare-call": r"\n\s+h\d+\(.*\)\n",
    "result-used-twice": r"\n\s+(a\d+) = h\d+\(.*\n\s+a\d+ = \1 [*+] \1\n",
    "closure-called-with-captured": r"\bg\d+\(",
    "vector-closure": r"\bg\d+ = lambda|def g\d+\(",
    "rebinding": r"\n(c|act|vact)\d+ = ",
    "global-float": r"\nc\d+ = ",
    "global-function": r"\n(act|vact)\d+ = (math|np)\.",
}


def test_the_aliasing_constructs_occur():
    """Each construct of the aliasing grammar occurs (in up to 4 rounds of 500 programs) and shows in
    the source of a program that notes it (a note can outlive text drawn and dropped later, so not
    every one)."""
    seen: dict[str, list[str]] = {}

    def collect(program):
        for construct in program.constructs & ALIASING.keys():
            seen.setdefault(construct, []).append(program.source)
        if program.rebinding:  # rebound names are module globals the program reads
            for name, value in program.rebinding.items():
                assert re.search(rf"^{name} = (?!{re.escape(value)}$)", program.source, re.MULTILINE)

    assert sorted(draw_until_seen(programs(), ALIASING.keys(), 500, each=collect)) == []
    for construct, sources in seen.items():
        assert any(re.search(ALIASING[construct], source) for source in sources), (construct, sources[0])


@pytest.mark.parametrize(
    "switch",
    ["repeated_arguments", "views", "aliased_containers", "discarded_results", "captured_arguments", "rebinding"],
)
def test_aliasing_switches_turn_their_constructs_off(switch):
    off = {
        "repeated_arguments": {"repeated-argument", "repeated-argument-recursion"},
        "views": {"view", "basic-slice", "matrix-argument"},
        "aliased_containers": {"aliased-container", "container-helper"},
        "discarded_results": {"discarded-result", "bare-call", "result-used-twice"},
        "captured_arguments": {"closure-called-with-captured", "vector-closure"},
        "rebinding": {"rebinding", "global-float", "global-function"},
    }[switch]

    @settings(max_examples=60, deadline=None, database=None, derandomize=True)
    @given(programs(**{switch: False}))
    def collect(program):
        assert not program.constructs & off
        assert not program.rebinding or switch != "rebinding"

    collect()


def _checked(program):
    """check_program of one fixed program, inside a hypothesis test (it records events)."""
    outcome = []

    @settings(max_examples=1, deadline=None, database=None)
    @given(st.none())
    def run(_):
        with program:
            outcome.append(check_program(program))

    run()
    return outcome


# a bare call still refused: a call for its effect handed only a differentiable value (h0 could
# keep it; one also handed a local object or list is differentiated: transforms/attributes.py)
BARE_CALL_READ_AGAIN = (
    "import numpy as np\n\n\ndef h0(u):\n    return u\n\n\n"
    "def f(v, n):\n    buf = [n]\n    h0(v)\n    return np.sum(v) * len(buf)\n"
)


def test_a_refusal_at_a_bare_call_rejects_the_program():
    source = BARE_CALL_READ_AGAIN
    program = Program(source, (np.array([0.3, -0.7, 1.1]), 1), (0,), frozenset({"bare-call"}))
    with pytest.raises(Unsatisfiable):  # its only run is rejected
        _checked(program)


def test_a_refusal_elsewhere_is_a_failure():
    source = BARE_CALL_READ_AGAIN
    program = Program(source, (np.array([0.3, -0.7, 1.1]), 1), (0,), frozenset())  # not a generated bare call
    with pytest.raises(cpsgrad.UnsupportedError, match="for its effect"):
        _checked(program)


REBOUND_ALIAS = "import math\n\n\nact0 = math.sin\n\n\ndef f(x0, n):\n    return act0(x0) * 2.0\n"
REBOUND_FLOAT = "import math\n\n\nc0 = 0.5\n\n\ndef f(x0, n):\n    return math.sin(c0 * x0) * x0\n"


def test_rebinding_a_module_float_is_followed():
    program = Program(REBOUND_FLOAT, (0.7, 1), (0,), frozenset({"rebinding"}), {"c0": "-1.25"})
    assert _checked(program)[0] is not None
    assert program.rebinding == {"c0": "-1.25"} and "c0 = -1.25\n" in repr(program)


def test_rebinding_a_module_function_alias_is_followed():
    # the second run kept math.sin's gradient before the binding guards (found by the aliasing
    # generator)
    program = Program(REBOUND_ALIAS, (0.5, 1), (0,), frozenset({"rebinding"}), {"act0": "math.cos"})
    _checked(program)



@pytest.mark.parametrize("options", [{"writes": True}, {}], ids=["writes", "default"])
def test_a_program_reads_no_name_before_it_is_bound(options):
    """No program may read a local before assigning it: the list-copy write once drew its slot's
    value after naming its result (`q[0] = w * v` before `w = ...`), and the set-len form its value
    after naming its target (`a1 = (... [u for i in range(1) if a1 < 0.25] ...)`): the original
    raised UnboundLocalError or NameError, cpsgrad another error (found by the mutation soak)."""

    @settings(max_examples=150, deadline=None, database=None, derandomize=True)
    @given(programs(**options))
    def run(program):
        with program:
            try:
                program.function(*program.arguments)
            except NameError as error:  # UnboundLocalError included
                raise AssertionError(f"{error}\n{program.source}") from None
            except Exception:  # raising on the data (try forms, domains) is the program's own
                pass

    run()
