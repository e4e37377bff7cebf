"""softmax, log_softmax and fused softmax cross-entropy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from kernel_checks import check_op
from numpy.testing import assert_allclose

from cpsgrad.kernels import dispatch, nn


def naive_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def naive_log_softmax(x, axis=-1):
    return np.log(naive_softmax(x, axis))


def naive_cross_entropy(logits, labels):
    return -np.mean(naive_log_softmax(logits)[np.arange(len(labels)), labels])


@pytest.mark.parametrize(("op", "reference"), [("softmax", naive_softmax), ("log_softmax", naive_log_softmax)])
@settings(max_examples=10, deadline=None, derandomize=True)
@given(data=st.data())
def test_softmax_forward_and_backward(op, reference, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-5, 5)))
    check_op(op, [x], {"axis": axis}, reference)


@settings(max_examples=10, deadline=None, derandomize=True)
@given(batch=st.integers(1, 5), classes=st.integers(1, 6), seed=st.integers(0, 100))
def test_cross_entropy(batch, classes, seed):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((batch, classes)) * 3
    labels = rng.integers(0, classes, batch)
    check_op("softmax_cross_entropy", [logits, labels], {}, naive_cross_entropy)


def test_cross_entropy_is_stable_for_huge_logits():
    logits = np.array([[1000.0, 0.0], [0.0, -1000.0]], np.float32)
    assert_allclose(nn.softmax_cross_entropy(logits, np.array([1, 0])), 500.0, rtol=1e-6)


def test_cross_entropy_rejects_bad_labels_and_shapes():
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 3\)"):
        nn.softmax_cross_entropy(np.zeros((2, 3)), np.array([0, 3]))
    with pytest.raises(ValueError, match=r"softmax_cross_entropy: .*\(2, 3\) and \(3,\)"):
        nn.softmax_cross_entropy(np.zeros((2, 3)), np.array([0, 1, 2]))


def test_softmax_of_large_values_and_nan():
    x = np.array([[1000.0, 1000.0], [np.nan, 0.0]])
    y = dispatch("softmax", x).forward(x)[0]
    assert_allclose(y[0], [0.5, 0.5])
    assert np.isnan(y[1]).all()
