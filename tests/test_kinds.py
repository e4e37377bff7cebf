"""Programs specialised to argument kinds: numbers drop broadcasting code, arrays keep it."""

import math

import numpy as np
import pytest

import cpsgrad
from cpsgrad.transforms.analysis import kinds
from tests.cases import kinds_functions as cases


def undoes_broadcasting(text: str) -> bool:
    return "cpsgrad_runtime.unbroadcast(" in text or "cpsgrad_runtime.reduced_product(" in text


def test_kind_of_values():
    assert kinds.of(1.5) == kinds.of(3) == kinds.of(True) == kinds.NUMBER
    assert kinds.of((1.0, 2)) == kinds.of([0.5]) == kinds.NUMBERS
    assert kinds.of(np.float64(1.0)) == kinds.of(np.ones(2)) == kinds.of([np.ones(2)]) == kinds.ANY
    assert kinds.of([1.0] * (kinds.MAX_CHECKED_LENGTH + 1)) == kinds.ANY


def test_number_program_has_no_broadcasting_code_and_array_program_has():
    numbers = cpsgrad.show(cases.mixed, example=(0.5, 3))
    assert not undoes_broadcasting(numbers)
    assert "x: number, n: number" in numbers
    general = cpsgrad.show(cases.mixed)
    assert "x: any, n: any" in general
    assert undoes_broadcasting(general)


def test_one_wrapper_runs_the_program_for_each_kind():
    gradient = cpsgrad.grad(cases.scale_and_square, argnums=(0, 1))
    dx, dw = gradient(1.5, 2.0)
    assert (dx, dw) == (2 * (2.0 * 1.5 + 2.0) * 2.0, 2 * (2.0 * 1.5 + 2.0) * 1.5)
    assert type(dx) is float
    w = np.array([1.0, -2.0, 0.5])
    dx, dw = gradient(1.5, w)
    y = w * 1.5 + 2.0
    assert type(dx) is float
    assert dx == pytest.approx(float(np.sum(2 * y * w)))
    np.testing.assert_allclose(dw, 2 * y * 1.5)
    x32 = np.array([0.5, 1.0], dtype=np.float32)
    dx, _ = gradient(x32, np.float32(2.0))
    assert dx.dtype == np.float32


def test_a_global_holding_a_number_is_taken_for_one_until_it_changes(monkeypatch):
    text = cpsgrad.show(cases.with_a_global, example=(0.5, 3))
    assert not undoes_broadcasting(text)
    assert "Module globals taken for numbers: OFFSET" in text
    gradient = cpsgrad.grad(cases.with_a_global)
    expected = sum(math.cos(0.5 * i) * i for i in range(3))
    assert gradient(0.5, 3) == pytest.approx(expected)
    # OFFSET becomes an array: the same wrapper transforms again, with broadcasting undone
    monkeypatch.setattr(cases, "OFFSET", np.array([1.0, 1.0]))
    assert undoes_broadcasting(cpsgrad.show(cases.with_a_global, example=(0.5, 3)))
    with pytest.raises(cpsgrad.NonScalarOutputError):  # the function now returns an array
        gradient(0.5, 3)
    monkeypatch.setattr(cases, "OFFSET", 2.0)
    assert gradient(0.5, 3) == pytest.approx(2.0 * expected)


def test_a_sequence_of_numbers_gives_number_elements():
    text = cpsgrad.show(cases.through_a_list, example=(1.0, [1.0, 2.0]))
    assert not undoes_broadcasting(text)
    assert cpsgrad.grad(cases.through_a_list)(1.0, [1.0, 2.0]) == 3.0
    # the same function given arrays in the list
    assert cpsgrad.grad(cases.through_a_list)(1.0, [np.float64(1.0), np.float64(2.0)]) == 3.0


def test_a_parameter_reassigned_to_an_array_is_not_a_number():
    assert cpsgrad.grad(cases.becomes_an_array)(1.5) == pytest.approx(2 * 1.5 + 4 * 2 * 1.5)


def test_a_list_changed_by_a_method_is_not_a_sequence_of_numbers():
    text = cpsgrad.show(cases.appended, stage="final", argnums=0, example=(1.0, [2.0]))
    assert undoes_broadcasting(text)


def test_augmented_assignment_on_a_shared_array_changes_it_in_place():
    # y's array is also z's, read after the change: as numpy does, y changes in place and z sees it
    # (z * y = (2x)^2); a number is rebound and z keeps the old value (z * y = 2 x^2)
    np.testing.assert_array_equal(cpsgrad.grad(cases.in_place_shared)(np.ones(2)), [8.0, 8.0])
    assert cpsgrad.grad(cases.in_place_shared)(1.5) == 4.0 * 1.5
    program = cpsgrad.show(cases.in_place_shared, example=(np.ones(2),))
    assert "cpsgrad_runtime.updated(y, " in program and "z_1 = cpsgrad_runtime.alias_after_update(z, y_1, " in program
    # a list is extended in place as Python does (runtime.updated), so z sees it: sum(z) * y[0] = 2 x^2
    assert cpsgrad.value_and_grad(cases.in_place_shared_list)(1.5) == (cases.in_place_shared_list(1.5), 4.0 * 1.5)
    # an array nothing else shares: computed as y = y + x (the same values)
    np.testing.assert_array_equal(cpsgrad.grad(cases.in_place)(np.ones(2)), [2.0, 2.0])
    assert cpsgrad.grad(cases.in_place)(1.5) == 2.0
    assert cpsgrad.grad(cases.in_place_number)(1.5) == 2.0
    assert "refuse_in_place" not in cpsgrad.show(cases.in_place_number, example=(1.5,))
