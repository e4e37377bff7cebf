"""Derivative rules for `cpsgrad.nn`: one template an op, each backward a call of a helper in
`cpsgrad.nn_backward` (bound into generated code as `nn_backward`).

The helpers get the op's inputs, its output and the output adjoint, rebuild what the kernel's
backward needs (at no cost, or by one more forward: see `cpsgrad.nn_backward`) and call the
table. An op with several differentiable inputs has a helper returning the adjoints its kernel
computes together, bound as backward locals (`w_g, b_g = ...`): the call runs once, and is left
out when none of its inputs is active (conv2d's input adjoint is a helper of its own, so a first
layer computes none). Defaults here must equal `cpsgrad.nn`'s (an omitted argument is replaced
by the template's default); `tests/test_nn.py` checks that they do.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad import nn, nn_backward
from cpsgrad.kernels import dispatch
from cpsgrad.rules import tangents
from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import is_zero

# ---- elementwise activations ------------------------------------------------------------------


@rule(nn.relu)
def relu(x):
    y = nn.relu(x)
    y_d = yield y
    x_d += nn_backward.relu(y_d, x)


@rule(nn.leaky_relu)
def leaky_relu(x, negative_slope=0.01):
    y = nn.leaky_relu(x, negative_slope)
    y_d = yield y
    x_d += nn_backward.leaky_relu(y_d, x, negative_slope)
    negative_slope_d += nn_backward.leaky_relu_slope(y_d, x, negative_slope)


@rule(nn.hardtanh)
def hardtanh(x):
    y = nn.hardtanh(x)
    y_d = yield y
    x_d += nn_backward.hardtanh(y_d, x)


@rule(nn.sigmoid)
def sigmoid(x):
    y = nn.sigmoid(x)
    y_d = yield y
    x_d += nn_backward.sigmoid(y_d, x, y)


@rule(nn.softplus)
def softplus(x):
    y = nn.softplus(x)
    y_d = yield y
    x_d += nn_backward.softplus(y_d, x)


@rule(nn.silu)
def silu(x):
    y = nn.silu(x)
    y_d = yield y
    x_d += nn_backward.elementwise(y_d, "silu", x, y)


# ---- softmax and friends ----------------------------------------------------------------------


@rule(nn.softmax)
def softmax(x, axis=-1):
    y = nn.softmax(x, axis)
    y_d = yield y
    x_d += nn_backward.softmax(y_d, x, y, axis)


@rule(nn.log_softmax)
def log_softmax(x, axis=-1):
    y = nn.log_softmax(x, axis)
    y_d = yield y
    x_d += nn_backward.log_softmax(y_d, x, y, axis)


@rule(nn.logsumexp)
def logsumexp(x, axis=None, keepdims=False):
    y = nn.logsumexp(x, axis, keepdims)
    y_d = yield y
    x_d += nn_backward.logsumexp(y_d, x, axis, keepdims=keepdims)


@rule(nn.softmax_cross_entropy)
def softmax_cross_entropy(logits, labels):
    y = nn.softmax_cross_entropy(logits, labels)
    y_d = yield y
    logits_d += nn_backward.softmax_cross_entropy(y_d, logits, labels)


def ctc_loss_backward(y_d, log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity):
    """ctc_loss backward for ``log_probs``: the forward runs again for alpha (one more forward),
    then the kernel's backward runs beta and the occupancies."""
    if is_zero(y_d):
        return 0.0
    kernel = dispatch("ctc_loss", log_probs)
    params = {"blank": blank, "reduction": reduction, "zero_infinity": zero_infinity}
    loss, saved = kernel.forward(log_probs, targets, input_lengths, target_lengths, **params)
    return kernel.backward(nn_backward._conform(y_d, loss), saved)[0]


@rule(nn.ctc_loss)
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    y = nn.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)
    y_d = yield y
    args = (targets, input_lengths, target_lengths, blank, reduction, zero_infinity)
    log_probs_d += ctc_loss_backward(y_d, log_probs, *args)


# ---- convolution and pooling ------------------------------------------------------------------


@rule(nn.conv2d)
def conv2d(x, w, b=None, *, stride=1, padding=0, dilation=1, groups=1):
    y = nn.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
    y_d = yield y
    x_d += nn_backward.conv2d_input(y_d, x, w, y, stride=stride, padding=padding, dilation=dilation, groups=groups)
    w_g, b_g = nn_backward.conv2d_weights(y_d, x, w, b, y, stride=stride, padding=padding, dilation=dilation,
                                          groups=groups)
    w_d += w_g
    b_d += b_g


@rule(nn.max_pool2d)
def max_pool2d(x, kernel_size, stride=None, padding=0):
    y = nn.max_pool2d(x, kernel_size, stride, padding)
    y_d = yield y
    x_d += nn_backward.max_pool2d(y_d, x, y, kernel_size, stride=stride, padding=padding)


@rule(nn.avg_pool2d)
def avg_pool2d(x, kernel_size, stride=None, padding=0):
    y = nn.avg_pool2d(x, kernel_size, stride, padding)
    y_d = yield y
    x_d += nn_backward.avg_pool2d(y_d, x, kernel_size, stride=stride, padding=padding)


@rule(nn.global_avg_pool2d)
def global_avg_pool2d(x):
    y = nn.global_avg_pool2d(x)
    y_d = yield y
    x_d += nn_backward.global_avg_pool2d(y_d, x)


@rule(nn.pad)
def pad(x, pad_width, value=0.0):
    y = nn.pad(x, pad_width, value)
    y_d = yield y
    x_g = nn_backward.pad(y_d, x, pad_width, value)
    x_d += x_g
    value_d += nn_backward.pad_value(y_d, x_g, value)


# ---- normalisation, dropout, embedding --------------------------------------------------------


@rule(nn.batch_norm)
def batch_norm(x, gamma, beta, running_mean, running_var, *, training, eps=1e-5):
    y = nn.batch_norm(x, gamma, beta, running_mean, running_var, training=training, eps=eps)
    y_d = yield y
    grads = nn_backward.batch_norm(y_d, x, gamma, beta, running_mean, running_var, training=training, eps=eps)
    x_g, gamma_g, beta_g = grads
    x_d += x_g
    gamma_d += gamma_g
    beta_d += beta_g
    mean_g, var_g = nn_backward.batch_norm_statistics(grads, x, gamma, running_mean, running_var, training, eps)
    running_mean_d += mean_g
    running_var_d += var_g


@rule(nn.batch_norm_statistics)
def batch_norm_statistics(x, running_mean, running_var, *, momentum=0.1):
    statistics = nn.batch_norm_statistics(x, running_mean, running_var, momentum=momentum)


@rule(nn.dropout)
def dropout(x, p=0.5, *, seed, training=True):
    y = nn.dropout(x, p, seed=seed, training=training)
    y_d = yield y
    x_d += nn_backward.dropout(y_d, x, p, seed=seed, training=training)
    p_d += nn_backward.dropout_p(y_d, y, p, training=training)


@rule(nn.embedding)
def embedding(weights, indices):
    y = nn.embedding(weights, indices)
    y_d = yield y
    weights_d += nn_backward.embedding(y_d, weights, indices)


# ---- recurrent cells --------------------------------------------------------------------------


@rule(nn.lstm_cell)
def lstm_cell(x, h, c, w_ih, w_hh, b_ih=None, b_hh=None):
    h_new, c_new = nn.lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh)
    h_new_d, c_new_d = yield h_new, c_new
    grads = nn_backward.lstm_cell(h_new_d, c_new_d, x, h, c, w_ih, w_hh, b_ih, b_hh)
    x_g, h_g, c_g, w_ih_g, w_hh_g, b_ih_g, b_hh_g = grads
    x_d += x_g
    h_d += h_g
    c_d += c_g
    w_ih_d += w_ih_g
    w_hh_d += w_hh_g
    b_ih_d += b_ih_g
    b_hh_d += b_hh_g


@rule(nn.gru_cell)
def gru_cell(x, h, w_ih, w_hh, b_ih=None, b_hh=None):
    y = nn.gru_cell(x, h, w_ih, w_hh, b_ih, b_hh)
    y_d = yield y
    x_g, h_g, w_ih_g, w_hh_g, b_ih_g, b_hh_g = nn_backward.gru_cell(y_d, x, h, w_ih, w_hh, b_ih, b_hh)
    x_d += x_g
    h_d += h_g
    w_ih_d += w_ih_g
    w_hh_d += w_hh_g
    b_ih_d += b_ih_g
    b_hh_d += b_hh_g


# ---- forward mode (cpsgrad/rules/tangents.py) -------------------------------------------------

tangents.declare(tangents.ELEMENTWISE, nn.relu, nn.sigmoid, nn.softplus, nn.silu, nn.leaky_relu, nn.hardtanh)


@tangents.explicit(nn.softmax)
def softmax_tangent(y, x, x_t, axis=-1):
    return y * (x_t - np.sum(y * x_t, axis=axis, keepdims=True))


@tangents.explicit(nn.log_softmax)
def log_softmax_tangent(y, x, x_t, axis=-1):
    return x_t - np.sum(np.exp(y) * x_t, axis=axis, keepdims=True)


@tangents.explicit(nn.logsumexp)
def logsumexp_tangent(y, x, x_t, axis=None, keepdims=False):
    kept = y if keepdims or axis is None else np.expand_dims(y, axis)
    return np.sum(np.exp(x - kept) * x_t, axis=axis, keepdims=keepdims)
