"""cpsgrad.testing.fuzz: arbitrary functions get a result or a cpsgrad error, never an internal
crash; and the programs that once crashed (tests/cases/fuzz_found.py) stay fixed."""

import inspect

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import cpsgrad
from cpsgrad.errors import UnsupportedError
from cpsgrad.testing import fuzz
from tests.cases import fuzz_found as cases


def _settings(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))


@_settings(250)
@given(fuzz.functions())
def test_grammar_functions_never_crash_cpsgrad(program):
    with program:
        fuzz.check_function(program)  # InternalError on an internal crash, misplaced error or wrong value


@_settings(12)
@given(fuzz.hypothesmith_functions())
def test_hypothesmith_functions_never_crash_cpsgrad(program):
    with program:
        fuzz.check_function(program)


@pytest.mark.parametrize(
    ("function", "arguments", "outcome"),
    [
        (cases.empty_body, (1.0,), "refused: NonScalarOutputError"),  # was an AttributeError in adjoint
        (cases.docstring_only, (1.0,), "refused: NonScalarOutputError"),
        (cases.nested_empty_def, (1.0,), "result"),  # show crashed on the nested def's program
        (cases.empty_branches, (1.0, 2.0), "result"),
        (cases.bare_undefined_name, (1.0,), "user error: NameError"),  # the read was dropped
        (cases.bare_missing_attribute, (1.0,), "user error: AttributeError"),
        (cases.keyword_only, (1.0, 2), "user error: TypeError"),  # 2 was bound to n
        (cases.unbound_in_matmul, (1.0,), "user error: UnboundLocalError"),  # was a TypeError
        (cases.unbound_copied, (1.0,), "user error: UnboundLocalError"),  # returned 1.0
        (cases.unbound_before_bad_keyword, (1.0,), "user error: UnboundLocalError"),
        (cases.unbound_after_loop, (1.0, 0), "user error: UnboundLocalError"),
        (cases.unbound_after_loop, (1.0, 3), "result"),
        (cases.unbound_in_numpy_call, (1.0,), "user error: UnboundLocalError"),
        # a read of a possibly unbound variable raises where Python reads it, before the operands after it
        (cases.unbound_before_a_later_call, (1.0,), "user error: UnboundLocalError"),  # was a TypeError
        (cases.unbound_in_a_loop_before_a_comprehension, (1.0,), "user error: UnboundLocalError"),
        (cases.maybe_unbound_compared_by_identity, (1.0, False), "user error: UnboundLocalError"),  # returned 2.0
        (cases.maybe_unbound_compared_by_identity, (1.0, True), "result"),
        (cases.maybe_unbound_before_a_comprehension, (1.0, False), "user error: UnboundLocalError"),
        (cases.maybe_unbound_before_a_comprehension, (1.0, True), "user error: TypeError"),
        (cases.raise_from_a_number, (1.0, 2), "user error: TypeError"),  # the cause was dropped: ValueError
        (cases.raise_from_an_exception, (1.0,), "user error: ValueError"),
        (cases.maybe_unbound_in_an_untaken_branch, (1.0, 2.0), "result"),  # a check of the untaken branch raised
        (  # known: captured where the closure is made, so UnboundLocalError there
            cases.closure_of_an_unbound_variable, (1.0,),
            "user error: NameError (a closure's free variable, raised where the closure is made)",
        ),
    ],
    ids=lambda value: getattr(value, "__name__", None) if callable(value) else None,
)
def test_found_programs_get_the_originals_outcome(function, arguments, outcome):
    assert fuzz.classify(function, arguments, (0,)) == outcome


def test_the_run_time_refusal_of_augmented_assignment_is_located():
    # was an UnsupportedError without a location (its place only in the construct's text)
    y = np.array([0.5, -1.0, 1.5])
    outcome = fuzz.classify(cases.augmented_assignment_on_an_array, (1.0, y), (0, 1))
    assert outcome == "refused: UnsupportedError (a1 += x (an array))"
    with pytest.raises(UnsupportedError) as raised:
        cpsgrad.grad(cases.augmented_assignment_on_an_array)(1.0, y)
    assert raised.value.location.line == inspect.getsourcelines(cases.augmented_assignment_on_an_array)[1] + 3


def test_raise_from_keeps_its_cause():
    with pytest.raises(ValueError, match="outer") as raised:
        cpsgrad.grad(cases.raise_from_an_exception)(1.0)
    assert isinstance(raised.value.__cause__, KeyError)


def test_refusals_in_lambda_defaults_are_located():
    # statements normalize made for a lambda's default had no origin: errors without a location
    y = np.array([0.5, -1.0, 1.5])
    outcome = fuzz.classify(cases.refused_in_a_lambda_default, (1.0, y), (0, 1))
    assert outcome == "refused: UnsupportedError (operator % on a sequence)"
    assert (
        fuzz.classify(cases.no_rule_in_a_lambda_default, (1.0, y), (1,)) == "refused: NoRuleError (call of np.unwrap)"
    )
    with pytest.raises(cpsgrad.NoRuleError) as raised:
        cpsgrad.grad(cases.no_rule_in_a_lambda_default, argnums=1)(1.0, y)
    assert raised.value.location.line == inspect.getsourcelines(cases.no_rule_in_a_lambda_default)[1] + 1


def test_an_undefined_global_is_read_before_an_unbound_local_right_of_it():
    # once a known deviation (the local's UnboundLocalError came first); normalize.in_order
    with pytest.raises(NameError) as raised:
        cpsgrad.grad(cases.undefined_global_and_unbound_local)(1.0, False)
    assert type(raised.value) is NameError and "undefined_name" in str(raised.value)
    assert fuzz.classify(cases.undefined_global_and_unbound_local, (1.0, False), (0,)) == "user error: NameError"


def test_found_programs_values_and_gradients():
    assert cpsgrad.value_and_grad(cases.empty_branches, argnums=(0, 1))(1.0, 2.0) == (2.0, (2.0, 0.0))
    assert cpsgrad.value_and_grad(cases.unbound_after_loop)(1.5, 3) == (3.0, 2.0)
    assert cpsgrad.grad(cases.keyword_only)(1.5, n=2.0) == 2.0


def test_classify_reports_an_internal_crash(monkeypatch):
    def crashing(function, argnums=0):
        def run(*args):
            raise KeyError("cpsgrad's own bug")
        return run

    monkeypatch.setattr(cpsgrad, "value_and_grad", crashing)
    with pytest.raises(fuzz.InternalError, match="KeyError"):
        fuzz.classify(cases.empty_branches, (1.0, 2.0), (0,))


def test_classify_reports_a_wrong_value(monkeypatch):
    monkeypatch.setattr(cpsgrad, "value_and_grad", lambda function, argnums=0: lambda *args: (3.0, (1.0,)))
    with pytest.raises(fuzz.InternalError, match="value"):
        fuzz.classify(cases.empty_branches, (1.0, 2.0), (0,))


def test_classify_reports_a_located_error_without_a_location(monkeypatch):
    def refusing(function, argnums=0):
        def run(*args):
            raise UnsupportedError(None, "something", "advice")
        return run

    monkeypatch.setattr(cpsgrad, "value_and_grad", refusing)
    with pytest.raises(fuzz.InternalError, match="without a location"):
        fuzz.classify(cases.empty_branches, (1.0, 2.0), (0,))


def test_classify_accepts_the_users_own_exception():
    def divides(x):
        return x / 0.0

    assert fuzz.classify(divides, (1.0,), (0,)) == "user error: ZeroDivisionError"


def test_soak_counts_outcomes():
    counts, failures = fuzz.soak(12, seed=7, chunk=6, hypothesmith_share=0.0)
    assert failures == []
    assert counts["checked"] + counts["dropped"] >= 12
    assert sum(n for key, n in counts.items() if key.startswith("grammar: ")) == counts["checked"]


def test_drawn_programs_import_and_take_their_arguments():
    @_settings(20)
    @given(fuzz.functions())
    def draws(program):
        with program:
            assert program.source.startswith(fuzz.HEADER)
            assert len(program.arguments) == 3 and isinstance(program.arguments[0], float)
            assert isinstance(program.arguments[1], (float, np.ndarray, np.floating))

    draws()
