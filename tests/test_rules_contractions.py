"""End-to-end programs through the rules of contractions, signals, differences, nan-reductions
and ufunc methods (cpsgrad/rules/numpy/, cpsgrad/rules/scipy/signal.py): in loops, through user
functions, with an argument used twice; and what they refuse, with errors naming the call."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal

import cpsgrad
from cpsgrad.errors import CpsgradError, NoRuleError, UnsupportedError

RNG = np.random.default_rng(7)


def _numeric(function, arguments, position, step=1e-6):
    x = np.asarray(arguments[position], float)
    gradient = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        moved = [list(arguments), list(arguments)]
        for sign, copy in zip((1, -1), moved, strict=True):
            shifted = x.copy()
            shifted[index] += sign * step
            copy[position] = shifted
        gradient[index] = (function(*moved[0]) - function(*moved[1])) / (2 * step)
    return gradient


def _check(function, *arguments):
    gradients = cpsgrad.grad(function, argnums=tuple(range(len(arguments))))(*arguments)
    for position, gradient in enumerate(gradients):
        np.testing.assert_allclose(gradient, _numeric(function, arguments, position), rtol=1e-6, atol=1e-8)


def _attention(q, k, v):
    scores = np.einsum("bqd,bkd->bqk", q, k)
    weights = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    weights = weights / np.sum(weights, axis=-1, keepdims=True)
    return np.einsum("bqk,bkd->bqd", weights, v)


def test_einsum_attention_through_a_user_function():
    def loss(q, k, v):
        return np.sum(_attention(q, k, v) ** 2)

    shape = (2, 3, 4)
    _check(loss, RNG.normal(size=shape), RNG.normal(size=shape), RNG.normal(size=shape))


def test_an_argument_used_twice_in_einsum_and_kron():
    def f(x):
        return np.einsum("i,i->", x, x) + np.sum(np.kron(x, x) * np.arange(9.0))

    x = RNG.normal(size=3)
    _check(f, x)


def test_signals_in_a_loop():
    def smooth(x, kernel):
        for _ in range(3):
            x = np.convolve(x, kernel, "same")
            x = scipy.signal.correlate(x, kernel, "same")
        return np.sum(x * np.arange(len(x)))

    _check(smooth, RNG.normal(size=8), RNG.normal(size=3))


def test_differences_and_interpolation_chained():
    samples = np.array([0.0, 0.7, 1.3, 2.0, 3.1])

    def f(values, points):
        curve = np.interp(points, samples, np.cumprod(values))
        slopes = np.gradient(curve, 0.5, edge_order=2)
        return np.sum(np.diff(slopes, prepend=0.0) ** 2) + np.polyval(values[:3], points[0])

    _check(f, RNG.uniform(0.5, 1.5, size=5), np.array([0.1, 0.9, 1.6, 2.4, 2.9]))


def test_ufunc_methods_in_a_loop_keep_their_rules():
    def f(x):
        total = 0.0
        for axis in (0, 1):
            total = total + np.sum(np.add.reduce(x, axis) * np.multiply.reduce(x, axis))
        return total + np.sum(np.add.accumulate(x, 1) * np.multiply.outer(x[0], x[1]).sum(axis=0))

    _check(f, RNG.normal(size=(2, 3)))


def test_nan_reductions_ignore_the_nans():
    x = np.array([[1.0, np.nan, 3.0], [np.nan, 2.0, -1.0]])
    gradient = cpsgrad.grad(lambda x: np.nansum(x) + np.nanmean(x) + np.nanmax(x))(x)
    expected = np.array([[1.25, 0.0, 2.25], [0.0, 1.25, 1.25]])
    np.testing.assert_array_equal(gradient, expected)


# ---- refused ----------------------------------------------------------------------------------


def test_ufunc_at_is_a_write_and_only_add_subtract_multiply_are_taken():
    index = np.array([0, 0, 2])  # more in tests/test_ufunc_at.py

    def f(x):
        totals = np.zeros(3)
        np.add.at(totals, index, x)
        return np.sum(totals * np.array([1.0, 2.0, 3.0]))

    def g(x):
        totals = np.zeros(3)
        np.maximum.at(totals, index, x)
        return np.sum(totals)

    np.testing.assert_array_equal(cpsgrad.grad(f)(np.ones(3)), [1.0, 1.0, 3.0])
    with pytest.raises(UnsupportedError, match=r"np\.maximum\.at"):
        cpsgrad.grad(g)(np.ones(3))


def test_out_arguments_are_refused():
    def f(x):
        y = np.add.reduce(x, axis=0, out=np.zeros(3))
        return np.sum(y)

    def g(x):
        y = np.einsum("ij->j", x, out=np.zeros(3))
        return np.sum(y)

    for function, name in ((f, r"np\.add\.reduce"), (g, r"np\.einsum")):
        with pytest.raises(NoRuleError, match=name):
            cpsgrad.grad(function)(np.ones((2, 3)))


def test_interp_sample_points_are_not_differentiable():
    def f(xp):
        return np.sum(np.interp(np.array([0.5, 1.5]), xp, np.array([0.0, 1.0, 4.0])))

    with pytest.raises(CpsgradError, match="sample points xp"):
        cpsgrad.grad(f)(np.array([0.0, 1.0, 2.0]))


def test_gradient_coordinate_arrays_are_not_differentiable():
    def f(coordinates):
        return np.sum(np.gradient(np.array([0.0, 1.0, 4.0, 9.0]), coordinates))

    with pytest.raises(CpsgradError, match="coordinate array"):
        cpsgrad.grad(f)(np.array([0.0, 1.0, 2.0, 3.5]))
