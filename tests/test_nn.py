"""cpsgrad.nn under cpsgrad.grad: values against the kernels, gradients against finite
differences and PyTorch, float32, symbolic zeros, thresholds, and a small CNN end to end.

The differentiated functions are module-level (cpsgrad reads their source); the constant
arrays they multiply by are module globals, read live.
"""

import inspect
import math
import re
from pathlib import Path

import numpy as np
import pytest

import cpsgrad
import cpsgrad.kernels.nn as kernels_nn
from cpsgrad import nn, nn_backward
from cpsgrad.kernels import dispatch, thresholds
from cpsgrad.rules.registry import TABLE
from cpsgrad.testing import check_grad

try:  # torch is the bench extra: its comparisons run where it is installed, the rest always
    import torch

    F = torch.nn.functional
except ImportError:
    torch = F = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (pip install -e '.[bench]')")

RNG = np.random.default_rng(20240611)


def normal(*shape):
    return RNG.normal(size=shape)


# ---- constants the user functions read ------------------------------------------------------------

W_EW = normal(3, 4)
W_SOFTMAX = normal(3, 5)
W_LSE = normal(3)
LABELS = np.array([0, 2, 4, 1])
W_CONV = normal(2, 4, 3, 3)
W_CONV_GROUPED = normal(1, 4, 2, 2)
W_POOL = normal(2, 2, 3, 3)
W_GLOBAL = normal(2, 3)
W_BN = normal(4, 3, 2, 2)
W_DROP = normal(3, 4)
IDS = np.array([[0, 2], [2, 4]])
W_EMB = normal(2, 2, 3)
PAD_WIDTH = ((1, 0), (2, 1))
W_PAD = normal(3, 6)
W_H = normal(2, 4)
W_C = normal(2, 4)


# ---- the user functions -----------------------------------------------------------------------------


def relu_loss(x):
    return np.sum(nn.relu(x) * W_EW)


def leaky_relu_loss(x, slope):
    return np.sum(nn.leaky_relu(x, slope) * W_EW)


def hardtanh_loss(x):
    return np.sum(nn.hardtanh(x) * W_EW)


def sigmoid_loss(x):
    return np.sum(nn.sigmoid(x) * W_EW)


def softplus_loss(x):
    return np.sum(nn.softplus(x) * W_EW)


def silu_loss(x):
    return np.sum(nn.silu(x) * W_EW)


def silu_of(x):
    return nn.silu(x)


def scalar_activations(x):
    return nn.relu(x) + nn.leaky_relu(x, 0.1) + nn.hardtanh(x) + nn.sigmoid(x) + nn.softplus(x)


def softmax_loss(x):
    return np.sum(nn.softmax(x) * W_SOFTMAX)


def softmax_axis0_loss(x):
    return np.sum(nn.softmax(x, axis=0) * W_SOFTMAX)


def log_softmax_loss(x):
    return np.sum(nn.log_softmax(x, 1) * W_SOFTMAX)


def logsumexp_loss(x):
    return np.sum(nn.logsumexp(x, axis=1) * W_LSE)


def logsumexp_all(x):
    return nn.logsumexp(x)


def xent_loss(logits):
    return nn.softmax_cross_entropy(logits, LABELS)


def conv_loss(x, w, b):
    return np.sum(cpsgrad.nn.conv2d(x, w, b, stride=2, padding=1) * W_CONV)


def conv_grouped_loss(x, w):
    return np.sum(nn.conv2d(x, w, dilation=2, groups=2) * W_CONV_GROUPED)


def max_pool_loss(x):
    return np.sum(nn.max_pool2d(x, 2) * W_POOL)


def max_pool_padded_loss(x):
    return np.sum(nn.max_pool2d(x, 3, stride=2, padding=1) * W_POOL)


def avg_pool_loss(x):
    return np.sum(nn.avg_pool2d(x, 2) * W_POOL)


def avg_pool_padded_loss(x):
    return np.sum(nn.avg_pool2d(x, 3, 2, 1) * W_POOL)


def global_pool_loss(x):
    return np.sum(nn.global_avg_pool2d(x) * W_GLOBAL)


def bn_train_loss(x, gamma, beta):
    rm = np.zeros(3)
    rv = np.ones(3)
    return np.sum(nn.batch_norm(x, gamma, beta, rm, rv, training=True) * W_BN)


def bn_eval_loss(x, gamma, beta, running_mean, running_var):
    y = nn.batch_norm(x, gamma, beta, running_mean, running_var, training=False, eps=1e-3)
    return np.sum(y * W_BN)


def bn_with_statistics(x, gamma, beta, running_mean, running_var):
    y = nn.batch_norm(x, gamma, beta, running_mean, running_var, training=True)
    new_mean, new_var = nn.batch_norm_statistics(x, running_mean, running_var, momentum=0.2)
    return np.sum(y * W_BN) + np.sum(new_mean * 0.0)


def dropout_loss(x, p):
    return np.sum(nn.dropout(x, p, seed=7) * W_DROP)


def dropout_eval_loss(x):
    return np.sum(nn.dropout(x, 0.3, seed=7, training=False) * W_DROP)


def embedding_loss(weights):
    return np.sum(nn.embedding(weights, IDS) * W_EMB)


def pad_loss(x, value):
    return np.sum(nn.pad(x, PAD_WIDTH, value) * W_PAD)


def lstm_loss(x, h, c, w_ih, w_hh, b_ih, b_hh):
    h_new, c_new = nn.lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh)
    return np.sum(h_new * W_H) + np.sum(c_new * W_C)


def lstm_h_only(x, h, c, w_ih, w_hh):
    h_new, c_new = nn.lstm_cell(x, h, c, w_ih, w_hh)
    return np.sum(h_new * W_H)


def lstm_c_only(x, h, c, w_ih, w_hh, b_ih, b_hh):
    return np.sum(nn.lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh)[1] * W_C)


def gru_loss(x, h, w_ih, w_hh, b_ih, b_hh):
    return np.sum(nn.gru_cell(x, h, w_ih, w_hh, b_ih, b_hh) * W_H)


def gru_no_bias(x, h, w_ih, w_hh):
    return np.sum(nn.gru_cell(x, h, w_ih, w_hh) * W_H)


def lstm_unrolled(xs, h, c, w_ih, w_hh, b_ih, b_hh):
    for t in range(xs.shape[0]):
        h, c = nn.lstm_cell(xs[t], h, c, w_ih, w_hh, b_ih, b_hh)
    return np.sum(h * W_H)


# ---- arguments -------------------------------------------------------------------------------------


def lstm_args():
    return [normal(2, 3), normal(2, 4), normal(2, 4), normal(16, 3), normal(16, 4), normal(16), normal(16)]


def gru_args():
    return [normal(2, 3), normal(2, 4), normal(12, 3), normal(12, 4), normal(12), normal(12)]


def bn_eval_args():
    return [normal(4, 3, 2, 2), normal(3), normal(3), normal(3), RNG.uniform(0.5, 2.0, 3)]


CASES = {
    "relu": (relu_loss, lambda: [normal(3, 4)]),
    "leaky_relu": (leaky_relu_loss, lambda: [normal(3, 4), 0.2]),
    "hardtanh": (hardtanh_loss, lambda: [2 * normal(3, 4)]),
    "sigmoid": (sigmoid_loss, lambda: [normal(3, 4)]),
    "softplus": (softplus_loss, lambda: [normal(3, 4)]),
    "silu": (silu_loss, lambda: [3 * normal(3, 4)]),
    "softmax": (softmax_loss, lambda: [normal(3, 5)]),
    "softmax_axis0": (softmax_axis0_loss, lambda: [normal(3, 5)]),
    "log_softmax": (log_softmax_loss, lambda: [normal(3, 5)]),
    "logsumexp": (logsumexp_loss, lambda: [normal(3, 5)]),
    "logsumexp_all": (logsumexp_all, lambda: [normal(3, 5)]),
    "softmax_cross_entropy": (xent_loss, lambda: [normal(4, 5)]),
    "conv2d": (conv_loss, lambda: [normal(2, 3, 5, 5), normal(4, 3, 3, 3), normal(4)]),
    "conv2d_grouped": (conv_grouped_loss, lambda: [normal(1, 4, 6, 6), normal(4, 2, 3, 3)]),
    "max_pool2d": (max_pool_loss, lambda: [normal(2, 2, 6, 6)]),
    "max_pool2d_padded": (max_pool_padded_loss, lambda: [normal(2, 2, 6, 6)]),
    "avg_pool2d": (avg_pool_loss, lambda: [normal(2, 2, 6, 6)]),
    "avg_pool2d_padded": (avg_pool_padded_loss, lambda: [normal(2, 2, 6, 6)]),
    "global_avg_pool2d": (global_pool_loss, lambda: [normal(2, 3, 4, 4)]),
    "batch_norm_train": (bn_train_loss, lambda: [normal(4, 3, 2, 2), normal(3), normal(3)]),
    "batch_norm_eval": (bn_eval_loss, bn_eval_args),
    "batch_norm_statistics": (bn_with_statistics, bn_eval_args),
    "dropout": (dropout_loss, lambda: [normal(3, 4), 0.3]),
    "dropout_eval": (dropout_eval_loss, lambda: [normal(3, 4)]),
    "embedding": (embedding_loss, lambda: [normal(5, 3)]),
    "pad": (pad_loss, lambda: [normal(2, 3), 0.5]),
    "lstm_cell": (lstm_loss, lstm_args),
    "lstm_cell_h_only": (lstm_h_only, lambda: lstm_args()[:5]),
    "lstm_cell_c_only": (lstm_c_only, lstm_args),
    "gru_cell": (gru_loss, gru_args),
    "gru_cell_no_bias": (gru_no_bias, lambda: gru_args()[:4]),
    "lstm_unrolled": (lstm_unrolled, lambda: [normal(3, 2, 3), *lstm_args()[1:]]),
}


def float_positions(args):
    return tuple(i for i, a in enumerate(args) if isinstance(a, (float, np.ndarray)))


@pytest.mark.parametrize("name", CASES)
def test_gradient_matches_finite_differences(name):
    function, make = CASES[name]
    args = make()
    check_grad(function, *args, argnums=float_positions(args))


@pytest.mark.parametrize(
    "name",
    ["relu", "sigmoid", "conv2d", "max_pool2d", "batch_norm_train", "softmax_cross_entropy", "lstm_cell", "gru_cell"],
)
def test_float32_gives_float32_gradients(name):
    function, make = CASES[name]
    args = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in make()]
    positions = float_positions(args)
    gradients = cpsgrad.grad(function, argnums=positions)(*args)
    for position, gradient in zip(positions, gradients, strict=True):
        assert gradient.dtype == np.float32 and gradient.shape == args[position].shape
    check_grad(function, *args, argnums=positions)


def test_scalar_activations_use_python_floats(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a Python float reached the table")

    monkeypatch.setattr(kernels_nn, "_run", refuse)
    monkeypatch.setattr(nn_backward, "dispatch", refuse)
    for x in (-1.5, -0.3, 0.4, 2.0):
        value, derivative = cpsgrad.value_and_grad(scalar_activations)(x)
        assert type(value) is float and type(derivative) is float
        sig = 1 / (1 + math.exp(-x))
        expected = max(x, 0) + (x if x >= 0 else 0.1 * x) + max(-1, min(1, x)) + sig + math.log1p(math.exp(x))
        assert value == pytest.approx(expected, rel=1e-14)
        slope = (x > 0) + (1 if x >= 0 else 0.1) + (abs(x) < 1) + sig * (1 - sig) + sig
        assert derivative == pytest.approx(slope, rel=1e-14)
    check_grad(scalar_activations, 0.7)


def test_silu_matches_jax():
    """nn.silu (added by docs/design.md's recipe "Adding an nn op") against jax.nn.silu: values and
    gradients of arrays (far tails too), float32, Python floats and numpy scalars."""
    jax = pytest.importorskip("jax")
    x = 4 * normal(3, 4)
    x[0, :4] = (0.0, -40.0, 40.0, -745.0)
    with jax.enable_x64(True):
        expected_value, expected_grad = jax.value_and_grad(lambda v: (jax.nn.silu(v) * W_EW).sum())(x)
        scalars = {v: jax.value_and_grad(jax.nn.silu)(v) for v in (-3.0, -0.5, 0.0, 2.5)}
    value, gradient = cpsgrad.value_and_grad(silu_loss)(x)
    np.testing.assert_allclose(value, expected_value, rtol=1e-13)
    np.testing.assert_allclose(gradient, expected_grad, rtol=1e-13, atol=1e-300)
    value32, gradient32 = cpsgrad.value_and_grad(silu_loss)(x.astype(np.float32))
    assert gradient32.dtype == np.float32
    np.testing.assert_allclose(gradient32, expected_grad, rtol=1e-5, atol=1e-6)
    for v, (expected_v, expected_d) in scalars.items():
        ours_v, ours_d = cpsgrad.value_and_grad(silu_of)(v)
        assert type(ours_v) is float and type(ours_d) is float
        assert ours_v == pytest.approx(float(expected_v), rel=1e-15, abs=1e-300)
        assert ours_d == pytest.approx(float(expected_d), rel=1e-15)
        numpy_v, numpy_d = cpsgrad.value_and_grad(silu_of)(np.float64(v))
        assert isinstance(numpy_v, np.float64) and isinstance(numpy_d, np.float64)
        assert (numpy_v, numpy_d) == pytest.approx((ours_v, ours_d), rel=1e-15, abs=1e-300)
    check_grad(silu_of, 0.7)
    assert nn.silu(np.arange(-2, 3)).dtype == np.float64  # an int array is computed as floats


# ---- values equal the kernels ----------------------------------------------------------------------


def kernel_value(op, *args, **params):
    return dispatch(op, *args).forward(*args, **params)[0]


@pytest.mark.parametrize("size", [12, 20000])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", ["relu", "leaky_relu", "hardtanh", "sigmoid", "softplus", "silu"])
def test_activation_values_equal_the_kernel(op, dtype, size):
    x = (3 * normal(size)).astype(dtype)
    x[:3] = (0.0, -1.0, 1.0)
    params = {"negative_slope": 0.2} if op == "leaky_relu" else {}
    ours = getattr(nn, op)(x, *params.values())
    expected = kernel_value(op, x, **params)
    assert ours.dtype == expected.dtype and ours.shape == x.shape
    if op in ("sigmoid", "softplus") and nn._route(op, x, "forward") != "kernel":
        np.testing.assert_allclose(ours, expected, rtol=1e-6)
    else:
        np.testing.assert_array_equal(ours, expected)


def test_values_equal_the_kernels():
    x4, w, b = normal(2, 3, 5, 5), normal(4, 3, 3, 3), normal(4)
    same = np.testing.assert_array_equal
    same(nn.conv2d(x4, w, b, stride=2, padding=1), kernel_value("conv2d", x4, w, b, stride=2, padding=1))
    same(nn.max_pool2d(x4, 2), kernel_value("max_pool2d", x4, kernel_size=2))
    same(nn.avg_pool2d(x4, 3, 2, 1), kernel_value("avg_pool2d", x4, kernel_size=3, stride=2, padding=1))
    same(nn.global_avg_pool2d(x4), kernel_value("global_avg_pool2d", x4))
    x = normal(4, 5)
    same(nn.softmax(x, 0), kernel_value("softmax", x, axis=0))
    same(nn.log_softmax(x), kernel_value("log_softmax", x))
    same(nn.logsumexp(x, 1, True), kernel_value("logsumexp", x, axis=1, keepdims=True))
    same(nn.softmax_cross_entropy(x, LABELS), kernel_value("softmax_cross_entropy", x, LABELS))
    same(nn.pad(x, 1, 2.0), kernel_value("pad", x, 1, value=2.0))
    same(nn.embedding(x.T, IDS), kernel_value("embedding", x.T, IDS))
    same(nn.dropout(x, 0.4, seed=3), kernel_value("dropout", x, rate=0.4, seed=3))
    xb, g, be, rm, rv = bn_eval_args()
    for training in (True, False):
        same(
            nn.batch_norm(xb, g, be, rm, rv, training=training),
            kernel_value("batch_norm", xb, g, be, rm, rv, training=training)[0],
        )
    x, h, c, w_ih, w_hh, b_ih, b_hh = lstm_args()
    for ours, theirs in zip(
        nn.lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh),
        kernel_value("lstm_cell", x, h, c, w_ih, w_hh, b_ih + b_hh),
        strict=True,
    ):
        same(ours, theirs)
    x, h, w_ih, w_hh, b_ih, b_hh = gru_args()
    same(nn.gru_cell(x, h, w_ih, w_hh, b_ih, b_hh), kernel_value("gru_cell", x, h, w_ih, w_hh, b_ih, b_hh))


def test_templates_defaults_match_the_public_functions():
    for primitive in TABLE.primitives():
        if getattr(primitive, "__module__", None) != "cpsgrad.nn":
            continue
        (rule,) = TABLE.rules_for(primitive)
        public = inspect.signature(primitive).parameters
        template = rule.signature.parameters
        assert list(public) == list(template), primitive.__name__
        for name, parameter in public.items():
            assert parameter.kind == template[name].kind, (primitive.__name__, name)
            assert parameter.default == template[name].default, (primitive.__name__, name)
    assert set(nn.__all__) <= {p.__name__ for p in TABLE.primitives() if getattr(p, "__module__", None) == "cpsgrad.nn"}


# ---- against PyTorch ---------------------------------------------------------------------------------


def torch_grads(function, args):
    tensors = [torch.tensor(a, requires_grad=True) if isinstance(a, np.ndarray) else a for a in args]
    function(*tensors).backward()
    return [t.grad.numpy() for t in tensors if isinstance(t, torch.Tensor)]


def t(a):
    return torch.tensor(a)


TORCH = {
    "conv2d": lambda x, w, b: (F.conv2d(x, w, b, stride=2, padding=1) * t(W_CONV)).sum(),
    "conv2d_grouped": lambda x, w: (F.conv2d(x, w, dilation=2, groups=2) * t(W_CONV_GROUPED)).sum(),
    "max_pool2d": lambda x: (F.max_pool2d(x, 2) * t(W_POOL)).sum(),
    "max_pool2d_padded": lambda x: (F.max_pool2d(x, 3, 2, 1) * t(W_POOL)).sum(),
    "avg_pool2d": lambda x: (F.avg_pool2d(x, 2) * t(W_POOL)).sum(),
    "avg_pool2d_padded": lambda x: (F.avg_pool2d(x, 3, 2, 1) * t(W_POOL)).sum(),
    "batch_norm_train": lambda x, g, b: (
        F.batch_norm(x, torch.zeros(3, dtype=x.dtype), torch.ones(3, dtype=x.dtype), g, b, training=True) * t(W_BN)
    ).sum(),
    "softmax_cross_entropy": lambda logits: F.cross_entropy(logits, t(LABELS)),
    "lstm_cell": lambda x, h, c, w_ih, w_hh, b_ih, b_hh: sum(
        (out * t(weight)).sum()
        for out, weight in zip(torch.lstm_cell(x, (h, c), w_ih, w_hh, b_ih, b_hh), (W_H, W_C), strict=True)
    ),
    "gru_cell": lambda x, h, w_ih, w_hh, b_ih, b_hh: (torch.gru_cell(x, h, w_ih, w_hh, b_ih, b_hh) * t(W_H)).sum(),
}


@needs_torch
@pytest.mark.parametrize("name", TORCH)
def test_gradient_matches_torch(name):
    function, make = CASES[name]
    args = make()
    positions = float_positions(args)
    ours = cpsgrad.grad(function, argnums=positions)(*args)
    theirs = torch_grads(TORCH[name], args)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    value = function(*args)
    expected = TORCH[name](*(t(a) if isinstance(a, np.ndarray) else a for a in args)).item()
    assert float(value) == pytest.approx(expected, rel=1e-12)


@needs_torch
def test_batch_norm_statistics_match_torch():
    x, _, _, rm, rv = bn_eval_args()
    new_mean, new_var = nn.batch_norm_statistics(x, rm, rv, momentum=0.2)
    torch_mean, torch_var = t(rm.copy()), t(rv.copy())
    F.batch_norm(t(x), torch_mean, torch_var, training=True, momentum=0.2)
    np.testing.assert_allclose(new_mean, torch_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(new_var, torch_var.numpy(), rtol=1e-12)


# ---- symbolic zeros -------------------------------------------------------------------------------------


def conv_unused(x, w, flag):
    y = nn.conv2d(x, w, padding=1)
    if flag:
        return np.sum(y)
    return np.sum(x)


def relu_unused(x, flag):
    y = nn.relu(x)
    if flag:
        return np.sum(y)
    return np.sum(x)


def xent_unused(x, flag):
    y = nn.softmax_cross_entropy(x, LABELS)
    if flag:
        return y
    return np.sum(x)


def lstm_unused(x, h, c, w_ih, w_hh, flag):
    h_new, c_new = nn.lstm_cell(x, h, c, w_ih, w_hh)
    if flag:
        return np.sum(h_new)
    return np.sum(x)


def bn_unused(x, gamma, beta, flag):
    y = nn.batch_norm(x, gamma, beta, np.zeros(3), np.ones(3), training=True)
    if flag:
        return np.sum(y * W_BN)
    return np.sum(x)


@pytest.mark.parametrize(
    "function, args",
    [
        (conv_unused, lambda: [normal(1, 2, 4, 4), normal(3, 2, 3, 3)]),
        (relu_unused, lambda: [normal(3, 4)]),
        (xent_unused, lambda: [normal(4, 5)]),
        (lstm_unused, lambda: lstm_args()[:5]),
        (bn_unused, lambda: [normal(4, 3, 2, 2), normal(3), normal(3)]),
    ],
)
def test_symbolic_zero_output_adjoint(function, args):
    args = args()
    positions = tuple(range(len(args)))
    gradients = cpsgrad.grad(function, argnums=positions)(*args, False)
    np.testing.assert_array_equal(gradients[0], np.ones_like(args[0]))
    for gradient, arg in zip(gradients[1:], args[1:], strict=True):
        np.testing.assert_array_equal(gradient, np.zeros_like(arg))
    check_grad(function, *args, True, argnums=positions)


def public_helpers():
    return [
        (name, value) for name, value in vars(nn_backward).items()
        if inspect.isfunction(value) and not name.startswith("_") and value.__module__ == nn_backward.__name__
    ]


# helpers of several inputs: how many adjoints they return; and those taking two adjoints
SEVERAL = {"conv2d_weights": 2, "batch_norm": 3, "batch_norm_statistics": 2, "lstm_cell": 7, "gru_cell": 6}
TWO_ADJOINTS = {"lstm_cell"}


@pytest.mark.parametrize("name, helper", public_helpers())
def test_every_helper_returns_zero_for_a_zero_adjoint(name, helper):
    parameters = inspect.signature(helper).parameters
    positional = [p for p in parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD]
    keywords = {p.name: None for p in parameters.values() if p.kind is p.KEYWORD_ONLY}
    adjoints = 2 if name in TWO_ADJOINTS else 1
    args = [0.0] * adjoints + [None] * (len(positional) - adjoints)
    assert helper(*args, **keywords) == ((0.0,) * SEVERAL[name] if name in SEVERAL else 0.0)


# ---- thresholds and shared backwards --------------------------------------------------------------


def test_small_arrays_stay_in_numpy_large_ones_use_the_kernel(monkeypatch):
    calls = []
    real = nn_backward.dispatch

    def counting(op, *args):
        calls.append(op)
        return real(op, *args)

    monkeypatch.setattr(nn_backward, "dispatch", counting)
    small = normal(3, 4)
    cpsgrad.grad(relu_loss)(small)
    assert calls == []
    size = thresholds.min_size("relu", "backward")
    big = normal(size)
    g = normal(size)
    expected = np.where(big > 0, g, 0.0)
    np.testing.assert_array_equal(nn_backward.relu(g, big), expected)
    assert calls == ["relu"]
    np.testing.assert_array_equal(nn_backward.relu(g[:-1], big[:-1]), expected[:-1])
    assert calls == ["relu"]
    # softplus's backward is numpy at every size measured
    nn_backward.softplus(g, big)
    assert calls == ["relu"]


def test_one_backward_for_all_inputs(monkeypatch):
    counts = {}
    real = nn_backward._backward

    def counting(op, *args, **kwargs):
        counts[op] = counts.get(op, 0) + 1
        return real(op, *args, **kwargs)

    monkeypatch.setattr(nn_backward, "_backward", counting)
    args = lstm_args()
    cpsgrad.grad(lstm_loss, argnums=tuple(range(7)))(*args)
    args = [normal(3, 2, 3), *lstm_args()[1:]]
    cpsgrad.grad(lstm_unrolled, argnums=tuple(range(7)))(*args)
    assert counts == {"lstm_cell": 1 + 3}


def test_conv2d_computes_only_the_adjoints_of_active_inputs(monkeypatch):
    """conv2d's input adjoint and its weights' are helpers of their own: a first layer (the
    images not differentiated) never computes the input's; each runs once, with no forward."""
    calls = []
    for name in ("conv2d_input", "conv2d_weights", "_backward"):
        real = getattr(nn_backward, name)
        monkeypatch.setattr(nn_backward, name, lambda *a, _real=real, _name=name, **k: (calls.append(_name),
                                                                                        _real(*a, **k))[1])
    x, w, b = CASES["conv2d"][1]()
    cpsgrad.grad(conv_loss, argnums=(1, 2))(x, w, b)
    assert calls == ["conv2d_weights"]
    calls.clear()
    cpsgrad.grad(conv_loss, argnums=(0, 1, 2))(x, w, b)
    assert sorted(calls) == ["conv2d_input", "conv2d_weights"]
    calls.clear()
    cpsgrad.grad(conv_loss, argnums=0)(x, w, b)
    assert calls == ["conv2d_input"]


def test_dropout_mask_comes_from_the_seed():
    x = normal(50, 40)
    y = nn.dropout(x, 0.25, seed=11)
    keep = y != 0
    np.testing.assert_allclose(y[keep], x[keep] / 0.75, rtol=1e-15)
    assert 0.15 < 1 - keep.mean() < 0.35
    np.testing.assert_array_equal(nn.dropout(x, 0.25, seed=11), y)
    gradient = cpsgrad.grad(dropout_loss)(x[:3, :4], 0.25)
    np.testing.assert_allclose(gradient, np.where(nn.dropout(x[:3, :4], 0.25, seed=7) != 0, W_DROP / 0.75, 0.0),
                               rtol=1e-15)
    np.testing.assert_array_equal(nn.dropout(x, 0.5, seed=1, training=False), x)


def test_embedding_repeated_indices_add_up():
    gradient = cpsgrad.grad(embedding_loss)(normal(5, 3))
    np.testing.assert_allclose(gradient[2], W_EMB[0, 1] + W_EMB[1, 0])
    np.testing.assert_array_equal(gradient[[1, 3]], 0.0)


# ---- a small CNN end to end (DESIGN.md section 7, reduced) ------------------------------------------------

CNN_LABELS = np.array([1, 0, 3, 2])


def cnn_loss(images, conv_w, conv_b, fc_w, fc_b):
    h = nn.conv2d(images, conv_w, conv_b)
    h = nn.max_pool2d(h, 2)
    h = nn.relu(h)
    h = h.reshape(h.shape[0], -1)
    logits = h @ fc_w + fc_b
    return nn.softmax_cross_entropy(logits, CNN_LABELS)


def cnn_loss_torch(images, conv_w, conv_b, fc_w, fc_b):
    h = F.relu(F.max_pool2d(F.conv2d(images, conv_w, conv_b), 2))
    logits = h.reshape(h.shape[0], -1) @ fc_w + fc_b
    return F.cross_entropy(logits, t(CNN_LABELS))


@needs_torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_small_cnn_matches_torch(dtype):
    args = [normal(4, 1, 8, 8), normal(2, 1, 3, 3), normal(2), normal(18, 5) / 3, normal(5)]
    args = [a.astype(dtype) for a in args]
    value, gradients = cpsgrad.value_and_grad(cnn_loss, argnums=(1, 2, 3, 4))(*args)
    theirs = torch_grads(cnn_loss_torch, args)[1:]
    tolerance = {"rtol": 1e-10, "atol": 1e-12} if dtype == np.float64 else {"rtol": 2e-4, "atol": 1e-6}
    for ours, expected in zip(gradients, theirs, strict=True):
        assert ours.dtype == dtype
        np.testing.assert_allclose(ours, expected, **tolerance)
    assert float(value) == pytest.approx(cnn_loss_torch(*map(t, args)).item(), rel=tolerance["rtol"])
    if dtype == np.float64:
        check_grad(cnn_loss, *args, argnums=(1, 2, 3, 4))


# ---- device arrays (the CUDA simulator, or a GPU with CPSGRAD_REAL_GPU=1) -----------------------------


def test_device_arrays_run_on_the_device(monkeypatch):
    from cpsgrad.kernels import cuda_available, device_of, to_device, to_host

    if cuda_available() is None:
        pytest.skip("no CUDA device and NUMBA_ENABLE_CUDASIM is not set")
    from cpsgrad.kernels.cuda import jit

    # small launches, as tests/kernels/cuda_checks.py uses: a simulated thread costs ~100 us
    for name, value in (("THREADS", 32), ("ROW_THREADS", 8), ("TILE", 4)):
        monkeypatch.setattr(jit, name, value)

    def on_device(*arrays):
        return [to_device(a) if isinstance(a, np.ndarray) else a for a in arrays]

    def same(result, expected):
        assert device_of(result) == "cuda"
        np.testing.assert_allclose(to_host(result), expected, rtol=1e-12, atol=1e-14)

    x, g = normal(3, 2), normal(3, 2)
    same(nn.relu(to_device(x)), nn.relu(x))  # small, yet the kernel: numpy cannot run on a device
    same(nn_backward.relu(*on_device(g, x)), nn_backward.relu(g, x))
    same(nn_backward.sigmoid(*on_device(g, x, nn.sigmoid(x))), nn_backward.sigmoid(g, x, nn.sigmoid(x)))
    same(nn.silu(to_device(x)), nn.silu(x))
    y = nn.silu(x)
    same(nn_backward.elementwise(to_device(g), "silu", *on_device(x, y)), nn_backward.elementwise(g, "silu", x, y))
    same(nn_backward.dropout(*on_device(g, x), 0.5, seed=3, training=True),
         nn_backward.dropout(g, x, 0.5, seed=3, training=True))
    gamma, beta, mean, var = normal(2), normal(2), np.zeros(2), np.ones(2)
    ours = nn_backward.batch_norm(*on_device(g, x, gamma, beta, mean, var), training=True, eps=1e-5)
    expected = nn_backward.batch_norm(g, x, gamma, beta, mean, var, training=True, eps=1e-5)
    for part, expected_part in zip(ours, expected, strict=True):
        same(part, expected_part)
    logits, labels = normal(2, 3), np.array([0, 2])
    same(nn.softmax_cross_entropy(*on_device(logits, labels)), nn.softmax_cross_entropy(logits, labels))
    same(nn_backward.softmax_cross_entropy(1.0, *on_device(logits, labels)),
         nn_backward.softmax_cross_entropy(1.0, logits, labels))
    images, w, b = normal(1, 1, 3, 3), normal(2, 1, 2, 2), normal(2)
    gy = normal(1, 2, 2, 2)
    params = {"stride": 1, "padding": 0, "dilation": 1, "groups": 1}
    y = nn.conv2d(images, w, b)
    same(nn_backward.conv2d_input(*on_device(gy, images, w, y), **params),
         nn_backward.conv2d_input(gy, images, w, y, **params))
    ours = nn_backward.conv2d_weights(*on_device(gy, images, w, b, y), **params)
    for part, expected_part in zip(ours, nn_backward.conv2d_weights(gy, images, w, b, y, **params), strict=True):
        same(part, expected_part)


def test_kernels_doc_example_runs(tmp_path):
    text = (Path(__file__).resolve().parent.parent / "docs" / "kernels.md").read_text()
    section = text.split("## Using the ops in differentiated code", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, flags=re.DOTALL).group(1)
    module = tmp_path / "kernels_doc_example.py"
    module.write_text(block)
    namespace = {"__name__": "kernels_doc_example", "__file__": str(module)}
    exec(compile(block, str(module), "exec"), namespace)
    grads = namespace["grads"]
    assert [g.shape for g in grads] == [(4, 1, 3, 3), (4,), (144, 10), (10,)]
    assert all(np.abs(g).sum() > 0 for g in grads)


def test_raw_device_arrays_as_differentiated_arguments_are_refused_with_the_way_out():
    """A raw numba device array (cpsgrad.kernels.to_device's) has no numpy operators; it is refused,
    naming cpsgrad.to_device (whose DeviceArrays differentiated programs run on:
    tests/test_device_programs.py)."""
    from cpsgrad import kernels

    assert cpsgrad.to_device is not kernels.to_device
    if cpsgrad.cuda_available() is None:
        pytest.skip("no CUDA and no simulator")

    def loss(x):
        return np.sum(np.tanh(x))

    with pytest.raises(cpsgrad.ArgumentError, match=r"raw CUDA device array .*cpsgrad\.to_device\(x\)"):
        cpsgrad.grad(loss)(kernels.to_device(np.ones(4)))


def test_batch_norm_statistics_adjoints_only_when_asked(monkeypatch):
    def evaluated(x, gamma, beta, mean, var):
        return np.sum(nn.batch_norm(x, gamma, beta, mean, var, training=False) ** 2)

    assert "nn_backward.batch_norm_statistics(" not in cpsgrad.show(evaluated, argnums=(0, 1))
    assert "nn_backward.batch_norm_statistics(" in cpsgrad.show(evaluated, argnums=(0, 3))
    args = normal(6, 3), normal(3), normal(3), normal(3), np.abs(normal(3)) + 0.5
    check_grad(evaluated, *args, argnums=(0, 1, 2, 3, 4))
