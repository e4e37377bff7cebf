"""numpy rules call the fused kernels above the measured sizes, numpy below, never for numbers."""

import numpy as np
import pytest

import cpsgrad
import cpsgrad.kernels
from cpsgrad.kernels import thresholds

OPS = ["tanh", "sin", "cos", "square", "sqrt", "log1p"]


def weighted(op):
    function = getattr(np, op)

    def f(x, w):
        return np.sum(function(x) * w)

    return f


@pytest.fixture
def dispatched(monkeypatch):
    calls = []
    real = cpsgrad.kernels.dispatch

    def spy(op, *arrays):
        calls.append((op, arrays[0].size))
        return real(op, *arrays)

    monkeypatch.setattr(cpsgrad.kernels, "dispatch", spy)
    return calls


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", OPS)
def test_large_arrays_use_the_kernel_and_agree_with_numpy(op, dtype, dispatched):
    size = thresholds.min_size(op, "backward")
    assert size is not None
    rng = np.random.default_rng(3)
    x = rng.uniform(0.2, 2.0, size).astype(dtype)
    w = rng.normal(size=size).astype(dtype)
    gradient = cpsgrad.grad(weighted(op))(x, w)
    assert dispatched == [(op, size)]
    assert gradient.dtype == dtype
    small = cpsgrad.grad(weighted(op))(x[:16], w[:16])  # below the threshold: numpy
    assert dispatched == [(op, size)]
    tolerance = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(gradient[:16], small, rtol=tolerance)


def test_numbers_never_reach_the_table(dispatched):
    assert cpsgrad.grad(lambda x: np.tanh(x) * 2.0)(0.5) == pytest.approx(2.0 * (1 - np.tanh(0.5) ** 2))
    assert dispatched == []
