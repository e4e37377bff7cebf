"""End to end: the arrangement, sorting, padding and parts rules in whole functions (tuple
results unpacked, loops), and what they refuse: in-place sorting, np.pad's median and function
modes; complex intermediates of real arguments."""

from __future__ import annotations

import numpy as np
import pytest

import cpsgrad
from cpsgrad.testing import check_grad

X = np.array([[0.3, -1.2, 0.7, 2.0], [1.1, 0.4, -0.6, -2.2], [0.9, -0.1, 1.6, 0.2]])


def unpacks_atleast(x, y):
    a, b = np.atleast_2d(x, y)
    return np.sum(a * 2.0) + np.sum(b**2)


def unpacks_hsplit(x):
    left, right = np.hsplit(x, 2)
    return np.sum(left * right) + np.sum(np.vsplit(x, [1])[1])


def smooths_periodically(x, steps):
    for _ in range(steps):
        x = 0.5 * x + 0.25 * (np.roll(x, 1, axis=1) + np.roll(x, -1, axis=1))
        x = np.pad(x, ((0, 0), (1, 1)), "wrap")[:, 1:-1]
    return np.sum(np.sort(x, axis=None)[-3:]) + np.sum(np.diag(np.tril(x[:, :3])))


def harness_style(x):
    return np.real(np.sum(np.take(np.flip(x), [0, 3, 3]) * np.tile(np.repeat(x[0], 2)[:3], 1)))


def sorts_in_place(x):
    y = x.copy()
    y.sort()
    return np.sum(y * np.arange(4.0))


def sorts_its_argument_in_place(x):
    x.sort(axis=0)
    return np.sum(x[0])


def pads_by_median(x):
    return np.sum(np.pad(x, 1, "median"))


def _mean_pad(vector, widths, axis, kwargs):
    vector[: widths[0]] = vector[widths[0]]
    vector[-widths[1] :] = vector[-widths[1] - 1]


def pads_by_a_function(x):
    return np.sum(np.pad(x, 1, _mean_pad))


def abs_of_a_complex_value(x):
    return np.sum(np.abs(x * 1j + 1.0))


def real_part_of_a_complex_exponential(x):
    return np.sum(np.real(np.exp(1j * x)))


def imaginary_part_of_a_complex_value(x):
    return np.sum(np.imag(x * 1j))


def cast_to_complex(x):
    return np.sum(np.abs(x.astype(np.complex128)) ** 2)


def imaginary_part_and_angle_of_reals(x):
    return np.sum(x) + np.sum(np.imag(x)) + np.sum(np.angle(x)) + np.sum(np.conj(x) * x.real)


@pytest.mark.parametrize(
    ("function", "arguments"),
    [
        (unpacks_atleast, (np.array([0.5, -1.0]), np.array([[2.0, 0.25]]))),
        (unpacks_hsplit, (X,)),
        (smooths_periodically, (X, 3)),
        (harness_style, (X,)),
    ],
)
def test_whole_functions_match_finite_differences(function, arguments):
    check_grad(function, *arguments)


def test_tuple_results_give_each_input_its_gradient():
    x, y = np.array([0.5, -1.0]), np.array([[2.0, 0.25]])
    gradient_x, gradient_y = cpsgrad.grad(unpacks_atleast, argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gradient_x, np.full(2, 2.0))
    np.testing.assert_array_equal(gradient_y, 2.0 * y)


def test_the_parts_of_reals():
    np.testing.assert_array_equal(cpsgrad.grad(imaginary_part_and_angle_of_reals)(X), 1.0 + 2.0 * X)


def test_sorting_in_place_is_a_write():
    # y.sort() is y[...] = np.sort(y) (transforms/writes.py); x.sort() sorts the caller's array, as in Python
    check_grad(sorts_in_place, np.array([3.0, 1.0, 2.0, 0.5]))
    x = np.array([3.0, 1.0, 2.0, 0.5])
    gradient = cpsgrad.grad(sorts_its_argument_in_place)(x)
    assert x.tolist() == [0.5, 1.0, 2.0, 3.0] and gradient.tolist() == [0.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize(
    ("function", "mode"), [(pads_by_median, "'median'"), (pads_by_a_function, "<function _mean_pad")]
)
def test_pad_modes_without_a_derivative_are_refused(function, mode):
    with pytest.raises(cpsgrad.UnsupportedError, match=f"np.pad with mode {mode}"):
        cpsgrad.grad(function)(X)


@pytest.mark.parametrize(
    "function", [abs_of_a_complex_value, real_part_of_a_complex_exponential, imaginary_part_of_a_complex_value,
                 cast_to_complex]
)
def test_complex_intermediates_of_reals_give_real_gradients(function):
    # the real part of each complex cotangent reaching a real value, as JAX's (tests/test_complex.py)
    check_grad(function, np.array([3.0, 1.0, -2.0]))
    assert cpsgrad.grad(function)(np.array([3.0, 1.0, -2.0])).dtype == np.float64
