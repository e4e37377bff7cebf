"""The generator's switches for starred forms, try/with, `:=`, sets, calls for their effect, classes,
numpy/scipy rule calls, list/dict subclasses and generators (cpsgrad/testing/forms.py and its modules):
each switch draws its constructs (and off, does not), and a short soak of programs drawn with each
passes check_program. Problems the
generator found in cpsgrad are pinned at the end, xfail(strict=True) until fixed.
"""

import copy
import logging
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings

import cpsgrad
from cpsgrad.testing.forms import SWITCHES
from cpsgrad.testing.programs import Program, check_program, programs
from tests.drawing import draw_until_seen

# switch -> (constructs each must draw in up to 4 rounds of 300 programs of up to 10 statements, a regex
# the source of a program noting the first must match)
CONSTRUCTS = {
    "starred": (
        {"star-parameter", "kwargs-parameter", "star-call", "starred-target", "starred-for-target", "starred-display"},
        r"def s\d\(u, \*rest|\*\w+|\w+\(\*",
    ),
    "exceptions": (
        {"try", "raise", "raise-in-helper", "try-finally", "try-else", "reraise", "with-suppress", "with-manager"},
        r"\n\s+try:\n",
    ),
    "walrus": ({"walrus-while", "walrus-if", "walrus-comprehension", "walrus-argument"}, r"\(\w+ := "),
    "sets": ({"set", "set-membership", "set-update"}, r"\w+ = (\{|set\()"),
    "effects": ({"effect-print", "effect-logging"}, r"print\(|LOGGER0\.(debug|info)\("),
    "classes": (
        {
            "class-init", "class-method-effect", "class-method-value", "class-bound-method", "class-attribute-write",
            "class-augmented-attribute", "class-list-attribute", "class-vector",
        },
        r"= (Acc0|Vec0)\(",
    ),
    "rules": (
        {
            "rules-ufunc", "rules-special", "rules-stats", "rules-scan", "rules-sort", "rules-reduction",
            "rules-arrangement", "rules-padding", "rules-difference", "rules-indexing", "rules-contraction",
            "rules-signal", "rules-linalg", "rules-fft", "rules-discarded", "rules-used-twice", "rules-passed-twice",
        },
        r"np\.(roll|flip|tile|repeat|concatenate|hstack|append|diag|diagonal|ravel|reshape|atleast_2d|stack|vstack"
        r"|column_stack|tril|triu|rot90|fliplr|flipud)\(",
    ),
    "subclasses": (
        {
            "subclass-list", "subclass-dict", "subclass-local-tuple", "subclass-reader", "subclass-extend-list",
            "subclass-extend-tuple", "subclass-repeat", "subclass-alias", "subclass-update-dict",
            "subclass-update-pairs",
        },
        r"(extend0|alias0|update0)\((Items0|Table0)\(",
    ),
    "generators": (
        {
            "local-generator", "local-generator-sum", "local-generator-expression",
            "local-generator-list-comprehension", "local-generator-next", "local-generator-loop",
        },
        r"def gen\d+\(k\):",
    ),
}
FIRST = {switch: sorted(constructs)[0] for switch, (constructs, _) in CONSTRUCTS.items()}


def _only(switch, **options):
    """programs() with this switch on and the other new ones off (so its constructs are frequent)."""
    return programs(**{name: name == switch for name in SWITCHES}, **options)


@pytest.mark.parametrize("switch", SWITCHES)
def test_each_switch_draws_its_constructs(switch):
    wanted, pattern = CONSTRUCTS[switch]
    sources = []

    def collect(program):
        if wanted & program.constructs:
            sources.append(program.source)
        compile(program.source, "<generated>", "exec")

    assert sorted(draw_until_seen(_only(switch, max_statements=10), wanted, 300, each=collect)) == []
    assert any(re.search(pattern, source) for source in sources)


@pytest.mark.parametrize("switch", SWITCHES)
def test_a_switch_off_draws_none_of_them(switch):
    wanted, _ = CONSTRUCTS[switch]

    @settings(max_examples=60, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(programs(**{switch: False}))
    def collect(program):
        assert not wanted & program.constructs

    collect()


@pytest.mark.parametrize("switch", SWITCHES)
def test_a_short_soak_of_each_switch_passes(switch):
    wanted, _ = CONSTRUCTS[switch]
    used = []
    for round_ in range(4):  # seeded rounds until 3 checked programs used the switch (draws vary by version)

        @seed(round_)
        @settings(max_examples=30, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(_only(switch))
        def run(program):
            with program:
                check_program(program)
                used.append(bool(wanted & program.constructs))

        run()
        if sum(used) >= 3:
            break
    assert sum(used) >= 3, used


def test_the_generated_program_does_not_write_to_stdout(capsys):
    @settings(max_examples=30, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(_only("effects"))
    def run(program):
        with program:
            program.function(*program.arguments)

    run()
    assert capsys.readouterr().out == ""


# --- found by the generator --------------------------------------------------------------------


def inline_logger(x):
    logging.getLogger("cpsgrad.tests.generated").debug(x)
    return x * 2.0


def test_a_logger_got_inline_is_called_for_its_effect(caplog):
    # the method of the logger getLogger returned is checked when it runs (cpsgrad_runtime.observed)
    with caplog.at_level(logging.DEBUG, logger="cpsgrad.tests.generated"):
        assert cpsgrad.grad(inline_logger)(0.5) == 2.0
    assert [r.getMessage() for r in caplog.records] == ["0.5"]


def inline_logger_formatted(x, w):
    logging.getLogger(__name__).debug("%s and %s", x, x * w)
    return x * w


def test_a_logger_got_inline_with_a_format_and_arguments_used_twice(caplog):
    with caplog.at_level(logging.DEBUG, logger=__name__):
        assert cpsgrad.value_and_grad(inline_logger_formatted, argnums=(0, 1))(0.5, 1.5) == (0.75, (1.5, 0.5))
    assert [r.getMessage() for r in caplog.records] == ["0.5 and 0.75"]


def appended_to_what_a_call_returned(x):
    copy.copy([1.0]).append(x)  # a list's method: it keeps the value
    return x * 2.0


def kept_by_what_a_call_returned(x):
    copy.copy(RECORDER).add(x)  # a method of a user class: it could keep the value
    return x * 2.0


class _Recorder:
    def __init__(self):
        self.seen = []

    def add(self, value):
        self.seen.append(value)


RECORDER = _Recorder()


@pytest.mark.parametrize("function", [appended_to_what_a_call_returned, kept_by_what_a_call_returned])
def test_a_keeping_method_of_what_a_library_call_returned_is_refused_when_it_runs(function):
    with pytest.raises(cpsgrad.UnsupportedError, match="for its effect on a differentiable value"):
        cpsgrad.grad(function)(0.5)


# Found by the soak of seed 2000 (chunk 2001), shrunk by deleting lines: a handler that re-raises
# (`raise`) after an if/elif whose tests read the matrix, inside an outer try that catches it.
RERAISE_AFTER_ELIF = (
    'import math\nimport logging\nimport numpy as np\nLOGGER0 = logging.getLogger("cpsgrad.generated")\ndef h0(c):\n'
    '        d2 = {"a": -1.0, "b": sum([(e1 * i3) for i3 in range(0)], 0.5)}\ndef r1(u, depth):\n'
    '        return h0((u, depth, u,))\ndef f(x0, x1, m, n):\n'
    '    LOGGER0.debug("values: %s", (x0 if m[::-1][-1, -1] < float(n) else np.mean(m.T)))\n    try:\n        try:\n'
    '                raise ValueError("drawn")\n        except ValueError:\n'
    '            if np.sum(m, axis=0)[0] < (np.mean(m.reshape(9).reshape(3, 3)[2]) * float(n)):\n'
    '                w17 = m.T.T[0]\n            elif (math.tanh(x0) <= 1.5 or n > 1):\n'
    '                t18 = [m[-1], np.maximum(np.maximum(np.mean(m.reshape(3, 3), axis=1), m[::-1][1]), '
    'np.maximum(m.reshape(9).reshape(3, 3)[1], np.transpose(m)[2])), m[-1]]\n            elif n % 2 == 0:\n'
    '                    a24 = a23 * a23\n            raise\n    except ValueError:\n'
    '        a25 = a26 = h0([x0, np.mean(m[-1]), x0])\n'
)
RERAISE_ARGUMENTS = (
    0.0173,
    -0.6909566706983001,
    np.array(
        [
            [-1.3651768691355635, 0.1, 0.07798851331598344],
            [0.4346910530033763, -0.5891500164414178, 0.042986305931131924],
            [1.404768333585836, -1.4886199082591345, -0.06102492929177705],
        ]
    ),
    2,
)


def test_a_reraise_after_an_elif_to_an_outer_try():
    # found by the generator: the join after the if/elif did not receive the caught exception
    # (cps's liveness had memoized what `raise try_2_error` reads before try_2_error was a local):
    # an UnboundLocalError naming it where the function returns None
    program = Program(RERAISE_AFTER_ELIF, RERAISE_ARGUMENTS, (0, 1, 2), frozenset({"reraise"}))
    with program, pytest.raises(cpsgrad.NonScalarOutputError, match="returned NoneType None"):
        assert program.function(*RERAISE_ARGUMENTS) is None
        cpsgrad.value_and_grad(program.function, argnums=(0, 1, 2))(*RERAISE_ARGUMENTS)
