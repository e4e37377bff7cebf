"""Functional neural-network ops: forward-only wrappers that call the dispatch table.

Each function picks the kernel for its arguments' device and dtype and returns the forward's
output; derivative rules use the same table entries' backward.
"""

from cpsgrad.kernels.table import dispatch

__all__ = [
    "avg_pool2d",
    "batch_norm",
    "conv2d",
    "dropout",
    "embedding",
    "global_avg_pool2d",
    "gru_cell",
    "hardtanh",
    "leaky_relu",
    "log_softmax",
    "logsumexp",
    "lstm_cell",
    "max_pool2d",
    "relu",
    "sigmoid",
    "softmax",
    "softmax_cross_entropy",
    "softplus",
]


def _run(op, *args, **params):
    return dispatch(op, *args).forward(*args, **params)[0]


def relu(x):
    """max(x, 0)."""
    return _run("relu", x)


def leaky_relu(x, negative_slope=0.01):
    """x where x >= 0, else negative_slope * x."""
    return _run("leaky_relu", x, negative_slope=negative_slope)


def hardtanh(x):
    """x clipped to [-1, 1]."""
    return _run("hardtanh", x)


def sigmoid(x):
    """1 / (1 + exp(-x)), computed stably."""
    return _run("sigmoid", x)


def softplus(x):
    """log(1 + exp(x)), computed stably."""
    return _run("softplus", x)


def softmax(x, axis=-1):
    """exp(x) normalised along ``axis``."""
    return _run("softmax", x, axis=axis)


def log_softmax(x, axis=-1):
    """x minus its logsumexp along ``axis``."""
    return _run("log_softmax", x, axis=axis)


def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))) over ``axis``, computed stably."""
    return _run("logsumexp", x, axis=axis, keepdims=keepdims)


def softmax_cross_entropy(logits, labels):
    """Mean cross-entropy of ``logits`` (N, classes) against integer ``labels`` (N,)."""
    return _run("softmax_cross_entropy", logits, labels)


def embedding(table, ids):
    """Rows of ``table`` (vocabulary, features) for integer ``ids`` of any shape."""
    return _run("embedding", table, ids)


def conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation, NCHW input, (F, C/groups, KH, KW) weights."""
    return _run("conv2d", x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)


def max_pool2d(x, kernel_size, stride=None, padding=0):
    """Max over windows of NCHW input; ``stride`` defaults to ``kernel_size``."""
    return _run("max_pool2d", x, kernel_size=kernel_size, stride=stride, padding=padding)


def avg_pool2d(x, kernel_size, stride=None, padding=0):
    """Mean over windows of NCHW input (padding counted as zeros)."""
    return _run("avg_pool2d", x, kernel_size=kernel_size, stride=stride, padding=padding)


def global_avg_pool2d(x):
    """Mean over the spatial axes: (N, C, H, W) -> (N, C)."""
    return _run("global_avg_pool2d", x)


def batch_norm(x, gamma, beta, running_mean, running_var, training=True, momentum=0.1, eps=1e-5):
    """Batch normalisation; returns ``(y, new_running_mean, new_running_var)``."""
    return _run(
        "batch_norm", x, gamma, beta, running_mean, running_var,
        training=training, momentum=momentum, eps=eps,
    )


def dropout(x, rate=0.5, seed=0, training=True):
    """Inverted dropout with a mask drawn from ``seed``."""
    return _run("dropout", x, rate=rate, seed=seed, training=training)


def lstm_cell(x, h, c, w_ih, w_hh, b):
    """One LSTM step (gates i, f, g, o); returns ``(h_new, c_new)``."""
    return _run("lstm_cell", x, h, c, w_ih, w_hh, b)


def gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    """One GRU step (gates r, z, n); returns ``h_new``."""
    return _run("gru_cell", x, h, w_ih, w_hh, b_ih, b_hh)
