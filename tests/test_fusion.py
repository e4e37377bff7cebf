"""Fused backwards (transforms/fusion.py): a softmax, the log of its picked elements, or a
log-sum-exp written out in numpy gets one backward.

For every case: whether the group is fused (and from which value) is read off `cpsgrad.show`;
the gradient passes `check_grad` against finite differences on drawn inputs, float64 and
float32; and it equals, to rounding, the gradient of the same program with fusion switched off
(the statement-by-statement chain rule). Cases that must not fuse (an intermediate read
elsewhere, a sum that does not broadcast back along its axis, a shift along other axes) keep
their gradients right through the plain rules.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cpsgrad
from cpsgrad.testing import check_grad
from cpsgrad.testing.strategies import arrays
from cpsgrad.transforms import fusion, pipeline

# ---- fused ---------------------------------------------------------------------------------


def picked(y, w):
    """min-char-rnn's step: the log-probability of one class."""
    p = np.exp(y - np.max(y))
    p = p / np.sum(p)
    return -np.log(p[1]) + np.sum(w * y)


def picked_from_a_list(y, w):
    targets = [2, 0, 4]
    loss = 0.0
    for t in targets:
        z = y * w
        p = np.exp(z - np.max(z))
        p = p / np.sum(p)
        loss = loss - np.log(p[t])
    return loss


def picked_by_math_log(y, w):
    e = np.exp(y - np.max(y))
    p = e / np.sum(e)
    return math.log(p[3]) * 2.0 + np.sum(w * y)


def picked_per_row(y, w):
    """The batched negative log-likelihood: one label per row."""
    z = y * w
    e = np.exp(z - np.max(z, axis=1, keepdims=True))
    p = e / np.sum(e, axis=1, keepdims=True)
    return -np.sum(np.log(p[np.arange(3), np.array([1, 0, 3])]))


def picked_slice(y, w):
    e = np.exp(y)
    p = e / np.sum(e)
    return np.sum(np.log(p[1:4]) * w[1:4])


def picked_and_read_elsewhere(y, w):
    e = np.exp(y - np.max(y))
    p = e / np.sum(e)
    return -np.log(p[1]) + np.sum(p * w)


def methods(y, w):
    e = np.exp(y - y.max())
    p = e / e.sum()
    return np.sum(p * w)


def unshifted(y, w):
    e = np.exp(y)
    p = e / np.sum(e)
    return np.sum(p * w)


def rows(y, w):
    e = np.exp(y - np.max(y, axis=-1, keepdims=True))
    p = e / np.sum(e, axis=-1, keepdims=True)
    return np.sum(p * w)


def columns(y, w):
    e = np.exp(y - np.max(y, axis=0))
    p = e / np.sum(e, axis=0)
    return np.sum(p * w)


def shifted_by_min(y, w):
    e = np.exp(y - np.min(y))
    p = e / np.sum(e)
    return np.sum(p * w)


def everything_shift_rows_sum(y, w):
    e = np.exp(y - np.max(y))
    p = e / np.sum(e, axis=1, keepdims=True)
    return np.sum(p * w)


def in_a_loop(y, w):
    total = 0.0
    h = y
    for _ in range(3):
        p = np.exp(h - np.max(h))
        p = p / np.sum(p)
        total = total + np.sum(p * w)
        h = np.tanh(h + p)
    return total


def logits_used_again(y, w):
    e = np.exp(y - np.max(y))
    p = e / np.sum(e)
    return np.sum(p * w) + np.sum(y * y)


def in_a_branch(y, w, weighted):
    e = np.exp(y - np.max(y))
    p = e / np.sum(e)
    if weighted:
        return np.sum(p * w)
    return np.sum(y * w)


# ---- fused from the exponential on (the shift keeps its own rules) --------------------------


def shift_read_elsewhere(y, w):
    m = np.max(y)
    e = np.exp(y - m)
    p = e / np.sum(e)
    return np.sum(p * w) + m


def shift_along_other_axes(y, w):
    e = np.exp(y - np.max(y, axis=0, keepdims=True))
    p = e / np.sum(e, axis=1, keepdims=True)
    return np.sum(p * w)


def shifted_by_parameter(y, w):
    e = np.exp(y - w[0])
    p = e / np.sum(e)
    return np.sum(p * w)


# ---- log-sum-exp ---------------------------------------------------------------------------


def log_softmax_rows(y, w):
    z = y - np.max(y, axis=1, keepdims=True)
    log_probabilities = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return np.sum(log_probabilities * w)


def logsumexp_overall(y, w):
    return np.log(np.sum(np.exp(y * w))) + np.sum(y)


def logsumexp_by_math_log(y, w):
    return math.log(np.sum(np.exp(y))) * 2.0 + np.sum(w * y)


def logsumexp_of_columns(y, w):
    return np.sum(np.log(np.sum(np.exp(y), axis=0)) * w[0])


def logsumexp_rows_without_keepdims(y, w):
    """(n, m) summed along axis 1 without keepdims: not fused (the result does not broadcast
    back along the summed axis), still right."""
    return np.sum(np.log(np.sum(np.exp(y), axis=1)) * w[:, 0])


def logsumexp_total_read_elsewhere(y, w):
    s = np.sum(np.exp(y))
    return np.log(s) + s * np.sum(w)


# ---- not fused -------------------------------------------------------------------------------


def exponential_read_elsewhere(y, w):
    e = np.exp(y - np.max(y))
    p = e / np.sum(e)
    return np.sum(p * w) + np.sum(e)


def sum_read_elsewhere(y, w):
    e = np.exp(y)
    s = np.sum(e)
    p = e / s
    return np.sum(p * w) + np.log(s)


def sum_tested(y, w):
    e = np.exp(y)
    s = np.sum(e)
    p = e / s
    if s > 3.0:
        return np.sum(p * w)
    return np.sum(p * w * 2.0)


def not_broadcast_back(y, w):
    e = np.exp(y)
    p = e / np.sum(e, axis=1)  # (n, n) / (n,): each column divided by a row's sum
    return np.sum(p * w)


def axis_from_a_variable(y, w):
    axis = 1
    e = np.exp(y)
    p = e / np.sum(e, axis=axis, keepdims=True)
    return np.sum(p * w)


def summed_in_float64(y, w):
    e = np.exp(y)
    p = e / np.sum(e, dtype=np.float64)
    return np.sum(p * w)


VECTOR = (5,)
MATRIX = (3, 4)
SQUARE = (3, 3)

# (function, shape of y, the value the fused backward starts from: "y", the shifted value's
# name in the program, or None when nothing is fused; "log" where the log of a picked
# probability is fused too)
CASES = [
    (picked, VECTOR, "y", "log"),
    (picked_from_a_list, VECTOR, "z", "log"),
    (picked_by_math_log, VECTOR, "y", "log"),
    (picked_per_row, MATRIX, "z", "log"),
    (picked_slice, VECTOR, "y", "log"),
    (picked_and_read_elsewhere, VECTOR, "y", "softmax"),
    (methods, VECTOR, "y", "softmax"),
    (unshifted, VECTOR, "y", "softmax"),
    (rows, MATRIX, "y", "softmax"),
    (columns, MATRIX, "y", "softmax"),
    (shifted_by_min, VECTOR, "y", "softmax"),
    (everything_shift_rows_sum, MATRIX, "y", "softmax"),
    (in_a_loop, VECTOR, "h", "softmax"),
    (logits_used_again, VECTOR, "y", "softmax"),
    (in_a_branch, VECTOR, "y", "softmax"),
    (shift_read_elsewhere, VECTOR, "t1", "softmax"),
    (shift_along_other_axes, MATRIX, "t2", "softmax"),
    (shifted_by_parameter, VECTOR, "t2", "softmax"),
    (log_softmax_rows, MATRIX, "z", "lse"),
    (logsumexp_overall, VECTOR, "t1", "lse"),
    (logsumexp_by_math_log, VECTOR, "y", "lse"),
    (logsumexp_of_columns, MATRIX, "y", "lse"),
    (logsumexp_rows_without_keepdims, MATRIX, None, "lse"),
    (logsumexp_total_read_elsewhere, VECTOR, None, "lse"),
    (exponential_read_elsewhere, VECTOR, None, "softmax"),
    (sum_read_elsewhere, VECTOR, None, "softmax"),
    (sum_tested, VECTOR, None, "softmax"),
    (not_broadcast_back, SQUARE, None, "softmax"),
    (axis_from_a_variable, MATRIX, None, "softmax"),
    (summed_in_float64, VECTOR, None, "softmax"),
]
IDS = [case[0].__name__ for case in CASES]


def _arguments(function, y, w):
    return (y, w, True) if function is in_a_branch else (y, w)


def _unfused(monkeypatch):
    """Fusion off for the rest of the test: programs transformed from now on use the plain rules
    (none comes from the caches: the in-memory one is emptied, the disk cache turned off)."""
    monkeypatch.setattr(fusion, "groups", lambda records, private: [])
    monkeypatch.setattr(pipeline, "_CACHE", {})
    monkeypatch.setenv("CPSGRAD_CACHE_DIR", "off")


@pytest.mark.parametrize(("function", "shape", "logits", "fused"), CASES, ids=IDS)
def test_fused_where_exact(function, shape, logits, fused):
    y, w = (np.linspace(-1.0, 1.0, int(np.prod(shape))).reshape(shape),
            np.linspace(0.5, 2.0, int(np.prod(shape))).reshape(shape))
    program = cpsgrad.show(function, argnums=(0, 1), example=_arguments(function, y, w))
    if logits is None:
        assert "softmax_adjoint" not in program and "logsumexp_adjoint" not in program
    elif fused == "lse":
        assert f"is log(sum(exp({logits}))) (" in program and "logsumexp_adjoint" in program
    else:
        assert "softmax_adjoint" in program
        if fused == "log":
            assert f"is the log of softmax({logits})[" in program and "picked_log_softmax_adjoint" in program
        else:
            assert f"is a softmax of {logits} (" in program and "picked_log" not in program


@pytest.mark.parametrize(("function", "shape", "logits", "fused"), CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_gradient_matches_finite_differences(function, shape, logits, fused, dtype, data):
    y = data.draw(arrays(shape, dtype, -3.0, 3.0), label="y")
    w = data.draw(arrays(shape, dtype, 0.25, 2.0), label="w")
    check_grad(function, *_arguments(function, y, w), argnums=(0, 1))


FUSED = [case for case in CASES if case[2] is not None]


@pytest.mark.parametrize(("function", "shape", "logits", "fused"), FUSED, ids=[case[0].__name__ for case in FUSED])
def test_same_gradient_as_the_plain_rules(function, shape, logits, fused, monkeypatch):
    rng = np.random.default_rng(7)
    y, w = rng.standard_normal(shape), rng.uniform(0.5, 2.0, shape)
    arguments = _arguments(function, y, w)
    fused = cpsgrad.value_and_grad(function, argnums=(0, 1))(*arguments)
    _unfused(monkeypatch)
    program = cpsgrad.show(function, argnums=(0, 1), example=arguments)
    assert "softmax_adjoint" not in program and "logsumexp_adjoint" not in program
    plain = cpsgrad.value_and_grad(function, argnums=(0, 1))(*arguments)
    assert fused[0] == plain[0] == function(*arguments)
    for ours, reference in zip(fused[1], plain[1], strict=True):
        assert ours.dtype == reference.dtype and ours.shape == reference.shape
        np.testing.assert_allclose(ours, reference, rtol=1e-12, atol=1e-14)


def test_float32_stays_float32():
    y = np.linspace(-1.0, 1.0, 5, dtype=np.float32)
    w = np.linspace(0.5, 2.0, 5, dtype=np.float32)
    gradient = cpsgrad.grad(methods, argnums=(0, 1))(y, w)
    assert all(g.dtype == np.float32 for g in gradient)


def test_unused_softmax_has_no_backward():
    def unused(y, w):
        e = np.exp(y - np.max(y))
        p = e / np.sum(e)  # noqa: F841 - computed, never used
        return np.sum(y * w)

    y, w = np.linspace(-1.0, 1.0, 4), np.linspace(0.5, 2.0, 4)
    assert "softmax_adjoint" not in cpsgrad.show(unused, argnums=0, example=(y, w))
    np.testing.assert_array_equal(cpsgrad.grad(unused)(y, w), w)


def test_untaken_branch_gives_the_symbolic_zero():
    """The softmax's adjoint is 0.0 on the path that does not use it: the fused backward passes
    the symbolic zero on."""
    y, w = np.linspace(-1.0, 1.0, 4), np.linspace(0.5, 2.0, 4)
    np.testing.assert_array_equal(cpsgrad.grad(in_a_branch)(y, w, False), w)


def test_fused_program_reads_as_one_backward():
    y, w = np.linspace(-1.0, 1.0, 5), np.linspace(0.5, 2.0, 5)
    program = cpsgrad.show(methods, argnums=0, example=(y, w))
    assert "# p is a softmax of y (t1, t2, e, t3, p): one backward" in program
    assert "y_d = cpsgrad_runtime.softmax_adjoint(p_d, p, None)" in program
    assert "extremum_adjoint" not in program and program.count("sum_adjoint(") == 1  # the loss's own np.sum
