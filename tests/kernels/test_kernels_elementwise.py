"""Unary elementwise kernels: forward vs numpy, float32 vs float64, backward vs finite differences."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from kernel_checks import check_op
from numpy.testing import assert_allclose, assert_array_equal

from cpsgrad.kernels import dispatch


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# op -> (reference, params, lowest input, highest input); inputs stay off kinks by 0.01.
CASES = {
    "neg": (np.negative, {}, -3, 3),
    "abs": (np.abs, {}, -3, 3),
    "exp": (np.exp, {}, -3, 3),
    "log": (np.log, {}, 0.1, 3),
    "log1p": (np.log1p, {}, -0.9, 3),
    "sqrt": (np.sqrt, {}, 0.1, 3),
    "square": (np.square, {}, -3, 3),
    "sin": (np.sin, {}, -3, 3),
    "cos": (np.cos, {}, -3, 3),
    "tanh": (np.tanh, {}, -3, 3),
    "sigmoid": (_sigmoid, {}, -8, 8),
    "relu": (lambda x: np.maximum(x, 0), {}, -3, 3),
    "leaky_relu": (lambda x, negative_slope: np.where(x >= 0, x, negative_slope * x),
                   {"negative_slope": 0.2}, -3, 3),
    "hardtanh": (lambda x: np.clip(x, -1, 1), {}, -3, 3),
    "clip": (lambda x, low, high: np.clip(x, low, high), {"low": -0.5, "high": 2.0}, -3, 3),
    "softplus": (lambda x: np.log1p(np.exp(x)), {}, -8, 8),
}
KINKS = {"abs": [0], "relu": [0], "leaky_relu": [0], "hardtanh": [-1, 1], "clip": [-0.5, 2.0]}


def _off_kinks(op, low, high):
    kinks = KINKS.get(op, [])
    return st.floats(low, high).filter(lambda v: all(abs(v - k) > 0.01 for k in kinks))


@pytest.mark.parametrize("op", sorted(CASES))
@settings(max_examples=8, deadline=None, derandomize=True)
@given(data=st.data())
def test_forward_and_backward(op, data):
    reference, params, low, high = CASES[op]
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    x = data.draw(hnp.arrays(np.float64, shape, elements=_off_kinks(op, low, high)))
    check_op(op, [x], params, reference)


def test_non_contiguous_input():
    x = np.linspace(-2, 2, 24).reshape(4, 6)[:, ::2].T
    check_op("tanh", [x], {}, np.tanh)


@pytest.mark.parametrize(
    ("op", "params", "x", "slope"),
    [
        ("abs", {}, 0.0, 1.0),
        ("relu", {}, 0.0, 0.0),
        ("leaky_relu", {"negative_slope": 0.1}, 0.0, 1.0),
        ("hardtanh", {}, 1.0, 0.5),
        ("hardtanh", {}, -1.0, 0.5),
        ("clip", {"low": 0.0, "high": 2.0}, 0.0, 0.5),
    ],
)
def test_kink_conventions_follow_jax(op, params, x, slope):
    kernel = dispatch(op, np.zeros(1))
    _, saved = kernel.forward(np.array([x]), **params)
    assert_array_equal(kernel.backward(np.ones(1), saved)[0], [slope])


@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid", "relu", "softplus", "sqrt", "abs"])
def test_nan_and_inf_propagate_like_numpy(op):
    x = np.array([np.nan, np.inf, -np.inf, 1.0])
    reference = CASES[op][0]
    with np.errstate(all="ignore"):
        assert_allclose(dispatch(op, x).forward(x)[0], reference(x), equal_nan=True)


def test_backward_rejects_an_adjoint_of_the_wrong_shape():
    kernel = dispatch("tanh", np.zeros(3))
    _, saved = kernel.forward(np.zeros(3))
    with pytest.raises(ValueError, match=r"\(4,\)"):
        kernel.backward(np.zeros(4), saved)
