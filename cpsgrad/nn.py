"""Neural-network ops that differentiated code can call: ``cpsgrad.nn.conv2d(x, w, b, stride=2)``.

Every function here has a derivative rule (``cpsgrad/rules/nn.py``), so a function under
``cpsgrad.grad`` may call it with differentiable arguments::

    def loss(x, w, b, labels):
        return cpsgrad.nn.softmax_cross_entropy(cpsgrad.nn.relu(x @ w + b), labels)

Conventions:

* Images are NCHW: ``(batch, channels, height, width)``; conv weights ``(out_channels,
  in_channels / groups, kernel_h, kernel_w)``. Parameter names and defaults follow PyTorch's
  functional API (``torch.nn.functional``) where it has the op; ``axis`` follows numpy.
* Arrays run through the dispatch table (``cpsgrad.kernels``): numpy arrays on the CPU kernels,
  CUDA device arrays on the CUDA kernels (``cpsgrad.DeviceArray``s in, DeviceArrays out);
  float32 and float64 (float32 stays float32, gradients included).
* The elementwise activations (relu, leaky_relu, hardtanh, sigmoid, softplus, silu) also take
  Python numbers (computed with ``math``, returning a float; never through the table) and numpy
  arrays of any dtype; a float numpy array smaller than the measured threshold of
  ``cpsgrad.kernels.thresholds`` is computed with numpy (faster there; same values), a larger
  one by the kernel. An activation without a numpy version of its own (``_elementwise``: silu)
  computes a Python number with the kernels' scalar formula and everything else by the kernel.
* Everything else (conv, pooling, softmax, cross-entropy, normalisation, cells, ...) always calls
  the table: its kernel beats numpy at every size measured.
* Positional parameters are differentiable, keyword-only ones (``stride``, ``seed``, ...) are not;
  integer arguments (``labels``, ``indices``, ``kernel_size``, ``axis``) get no gradient.
* State is explicit: ``batch_norm`` returns the normalised output only, and
  ``batch_norm_statistics`` the moved running statistics (not differentiable); ``dropout`` takes
  a ``seed``, from which its mask is drawn again for the backward.
"""

from __future__ import annotations

import math

import numpy as np

from cpsgrad.kernels import dispatch, thresholds
from cpsgrad.kernels import nn as _kernels
from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.kernels.device_array import full as device_full
from cpsgrad.kernels.formulas.catalog import UNARY_BY_NAME

__all__ = [
    "avg_pool2d",
    "batch_norm",
    "batch_norm_statistics",
    "conv2d",
    "ctc_loss",
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
    "pad",
    "relu",
    "sigmoid",
    "silu",
    "softmax",
    "softmax_cross_entropy",
    "softplus",
]

_ndarray = np.ndarray
_KERNEL_DTYPES = frozenset({np.dtype(np.float32), np.dtype(np.float64)})

# Where an elementwise op runs (see `_route`).
_PYTHON, _NUMPY, _KERNEL = "python", "numpy", "kernel"


def _route(op: str, x, phase: str) -> str:
    """Where elementwise `op` computes `phase` ("forward"/"backward") for `x`: ``"python"`` for a
    Python number, ``"numpy"`` for a numpy scalar, an array of a dtype the kernels lack, or a
    float array below the op's measured threshold, ``"kernel"`` otherwise (device arrays too)."""
    kind = type(x)
    if kind is float or kind is int or kind is bool:
        return _PYTHON
    if kind is _ndarray:
        if x.dtype in _KERNEL_DTYPES and thresholds.use_kernel(op, x.size, phase):
            return _KERNEL
        return _NUMPY
    if isinstance(x, np.generic):
        return _NUMPY
    return _KERNEL


def _python_sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _like(result, x):
    """A numpy computation's result in the form of its input: a scalar for a numpy scalar."""
    return result[()] if isinstance(x, np.generic) else result


def _numpy_sigmoid(x):
    """Stable logistic function in numpy (the kernel's formula)."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(np.result_type(x, np.float32), copy=False)


def _float_input(x):
    """A numpy scalar or array of a dtype the kernels lack as a float array the kernels take."""
    dtype = np.result_type(x, np.float32)
    return np.asarray(x, dtype if dtype in _KERNEL_DTYPES else np.float64)


def _elementwise(op: str, x, **params):
    """The elementwise catalog op ``op`` (``cpsgrad.kernels.formulas.elementwise.UNARY``) for an
    activation with no numpy version of its own: a Python number by the op's scalar formula
    (plain Python), a numpy scalar or an array of another dtype cast to a float array, and every
    array by the kernel. ``params`` are the op's keyword parameters (the entry maps them to the
    formula's scalars)."""
    where = _route(op, x, "forward")
    if where is _PYTHON:
        entry = UNARY_BY_NAME[op]
        return entry.value(float(x), *entry.params(**params))
    if where is _NUMPY:
        x_float = _float_input(x)
        return _like(dispatch(op, x_float).forward(x_float, **params)[0], x)
    return dispatch(op, x).forward(x, **params)[0]


# ---- elementwise activations ------------------------------------------------------------------


def relu(x):
    """``max(x, 0)``, elementwise; any shape. relu'(0) = 0."""
    where = _route("relu", x, "forward")
    if where is _PYTHON:
        return 0.0 if x <= 0 else float(x)
    if where is _NUMPY:
        return _like(np.maximum(x, 0), x)
    return _kernels.relu(x)


def leaky_relu(x, negative_slope=0.01):
    """``x`` where ``x >= 0``, else ``negative_slope * x``; any shape. leaky_relu'(0) = 1.

    ``negative_slope`` is a number (differentiable too)."""
    where = _route("leaky_relu", x, "forward")
    if where is _PYTHON:
        return float(x) if x >= 0 else negative_slope * x
    if where is _NUMPY:
        # float64 products, as the kernel computes them (a float32 product could differ in the last bit)
        scaled = np.asarray(x, np.float64) * negative_slope
        return _like(np.where(x >= 0, x, scaled).astype(np.result_type(x, 1.0), copy=False), x)
    return _kernels.leaky_relu(x, negative_slope=negative_slope)


def hardtanh(x):
    """``x`` clipped to [-1, 1]; any shape. At a bound the derivative is 0.5 (as JAX's clip)."""
    where = _route("hardtanh", x, "forward")
    if where is _PYTHON:
        return -1.0 if x < -1 else (1.0 if x > 1 else float(x))
    if where is _NUMPY:
        return np.clip(x, -1, 1)
    return _kernels.hardtanh(x)


def sigmoid(x):
    """``1 / (1 + exp(-x))``, computed stably; any shape."""
    where = _route("sigmoid", x, "forward")
    if where is _PYTHON:
        return _python_sigmoid(x)
    if where is _NUMPY:
        return _like(_numpy_sigmoid(x), x)
    return _kernels.sigmoid(x)


def softplus(x):
    """``log(1 + exp(x))``, computed stably; any shape."""
    where = _route("softplus", x, "forward")
    if where is _PYTHON:
        return math.log1p(math.exp(-abs(x))) + max(x, 0.0)
    if where is _NUMPY:
        return _like(np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0), x)
    return _kernels.softplus(x)


def silu(x):
    """``x * sigmoid(x)`` (also called swish); any shape."""
    return _elementwise("silu", x)


# ---- softmax and friends (always the table) ---------------------------------------------------


def softmax(x, axis=-1):
    """``exp(x)`` normalised to sum 1 along ``axis`` (an int); same shape as ``x``."""
    return _kernels.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    """``x - logsumexp(x, axis, keepdims=True)``; same shape as ``x``."""
    return _kernels.log_softmax(x, axis=axis)


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x), axis))``, computed stably; ``axis`` None (all), an int or a tuple."""
    return _kernels.logsumexp(x, axis=axis, keepdims=keepdims)


def softmax_cross_entropy(logits, labels):
    """Cross-entropy of ``logits`` (N, C) against integer ``labels`` (N,) in ``[0, C)``, the
    **mean** over the batch (PyTorch's ``cross_entropy`` default ``reduction="mean"``), as a 0-d
    array of the logits' dtype. Labels get no gradient."""
    return _kernels.softmax_cross_entropy(logits, labels)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist temporal classification loss (PyTorch's ``ctc_loss``): the negative
    log-likelihood of each target under all alignments of ``log_probs``.

    ``log_probs`` (T, N, C) are log-probabilities over C classes at T steps (normally a
    ``log_softmax`` output; unbatched (T, C) is taken too); ``targets`` are integer labels, (N, S)
    padded or 1-D concatenated (``sum(target_lengths)`` long), none equal to ``blank``;
    ``input_lengths`` and ``target_lengths`` (N,) integers (arrays or sequences). ``reduction``:
    ``"none"`` (N,) losses, ``"sum"``, or ``"mean"`` (each loss divided by its target length, then
    the mean over the batch; a 0-d array). An impossible alignment (input too short) costs
    ``inf``, with a nan gradient; ``zero_infinity=True`` makes those losses and gradients zero.

    Only ``log_probs`` is differentiable; its derivative is the true one of the loss with respect
    to the values given (PyTorch's adds ``exp(log_probs)``, which cancels through a
    ``log_softmax``). On the CPU the batch runs in parallel; a DeviceArray ``log_probs`` runs on
    CUDA (targets and lengths may stay on the host)."""
    kernel = dispatch("ctc_loss", log_probs)
    params = {"blank": blank, "reduction": reduction, "zero_infinity": zero_infinity}
    return kernel.forward(log_probs, targets, input_lengths, target_lengths, **params)[0]


# ---- convolution and pooling (NCHW; always the table) -----------------------------------------


def conv2d(x, w, b=None, *, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation (PyTorch's ``conv2d``): ``x`` (N, C, H, W), ``w`` (F, C/groups,
    KH, KW), optional bias ``b`` (F,) -> (N, F, OH, OW) with ``OH = (H + 2*padding -
    dilation*(KH-1) - 1) // stride + 1``. ``stride``, ``padding`` and ``dilation`` are an int or
    an (h, w) pair; zero padding."""
    return _kernels.conv2d(
        x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups
    )


def max_pool2d(x, kernel_size, stride=None, padding=0):
    """Maximum over ``kernel_size`` windows of ``x`` (N, C, H, W) -> (N, C, OH, OW); ``stride``
    defaults to ``kernel_size``; padding (at most half the kernel) counts as -inf. The adjoint
    goes to the first maximum of each window."""
    return _kernels.max_pool2d(x, kernel_size, stride=stride, padding=padding)


def avg_pool2d(x, kernel_size, stride=None, padding=0):
    """Mean over ``kernel_size`` windows of ``x`` (N, C, H, W) -> (N, C, OH, OW); ``stride``
    defaults to ``kernel_size``; padding counts as zeros (PyTorch's ``count_include_pad=True``)."""
    return _kernels.avg_pool2d(x, kernel_size, stride=stride, padding=padding)


def global_avg_pool2d(x):
    """Mean over the spatial axes: (N, C, H, W) -> (N, C)."""
    return _kernels.global_avg_pool2d(x)


def pad(x, pad_width, value=0.0):
    """``x`` padded with the constant ``value`` (differentiable); ``pad_width`` as ``numpy.pad``
    takes it (an int, ``(before, after)``, or one pair an axis), non-negative."""
    return dispatch("pad", x).forward(x, pad_width, value=value)[0]


# ---- normalisation, dropout, embedding --------------------------------------------------------


def batch_norm(x, gamma, beta, running_mean, running_var, *, training, eps=1e-5):
    """Batch normalisation of ``x`` (N, C) or (N, C, H, W) per channel: ``gamma * (x - mean) /
    sqrt(var + eps) + beta``, returning that array only (not the running statistics).

    ``training=True`` uses the batch's mean and biased variance (the running statistics are then
    not read); ``training=False`` uses ``running_mean`` and ``running_var``, which are then
    differentiable like the other arrays (all are (C,)). To move the running statistics after a
    training step, call ``batch_norm_statistics``: keeping the state out of this function keeps
    it a pure function of its inputs, as the rule needs.
    """
    return _kernels.batch_norm(
        x, gamma, beta, running_mean, running_var, training=training, eps=eps
    )[0]


def batch_norm_statistics(x, running_mean, running_var, *, momentum=0.1):
    """The running statistics after one training step on ``x``: ``((1 - momentum) *
    running_mean + momentum * mean, (1 - momentum) * running_var + momentum * unbiased var)``,
    as PyTorch moves them. Not differentiable (state, not a value a loss should depend on)."""
    if type(x) is _ndarray and type(running_mean) is _ndarray and type(running_var) is _ndarray:
        from cpsgrad.kernels.cpu import normalization  # loaded on first use, as every kernel module is

        return normalization.batch_norm_statistics(x, running_mean, running_var, momentum=momentum)
    channels = np.shape(running_mean)[0]
    ones, zeros = _channel_constant(x, channels, 1.0), _channel_constant(x, channels, 0.0)
    _, new_mean, new_var = _kernels.batch_norm(
        x, ones, zeros, running_mean, running_var, training=True, momentum=momentum
    )
    return new_mean, new_var


def _channel_constant(x, size: int, value: float):
    """A (size,) array of ``value`` in ``x``'s dtype, on ``x``'s device."""
    if type(x) is DeviceArray:
        return device_full((size,), x.dtype, value)
    array = np.full(size, value, dtype=x.dtype)
    if type(x) is _ndarray:
        return array
    from cpsgrad.kernels import to_device

    return to_device(array)


def dropout(x, p=0.5, *, seed, training=True):
    """Inverted dropout: each element zeroed with probability ``p`` and the rest scaled by
    ``1 / (1 - p)``; the identity when ``training`` is False. The mask is drawn from
    ``numpy.random.default_rng(seed)``, so the backward draws the same mask again (no hidden
    state): pass a new ``seed`` each step for fresh masks."""
    return _kernels.dropout(x, rate=p, seed=seed, training=training)


def embedding(weights, indices):
    """Rows of ``weights`` (vocabulary, features) for integer ``indices`` of any shape ->
    ``indices.shape + (features,)``. (PyTorch's ``embedding`` takes the indices first.)"""
    return _kernels.embedding(weights, indices)


# ---- recurrent cells (PyTorch's layout and gate order) ----------------------------------------


def _bias(b_ih, b_hh, x, rows: int):
    if b_ih is None and b_hh is None:
        return _channel_constant(x, rows, 0.0)
    if b_hh is None:
        return b_ih
    if b_ih is None:
        return b_hh
    return dispatch("add", b_ih, b_hh).forward(b_ih, b_hh)[0]


def lstm_cell(x, h, c, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step (PyTorch's ``LSTMCell``): ``x`` (N, I), ``h`` and ``c`` (N, H), ``w_ih``
    (4H, I), ``w_hh`` (4H, H), biases (4H,) or None; gates ordered i, f, g, o. Returns the new
    ``(h, c)``."""
    b = _bias(b_ih, b_hh, x, np.shape(w_ih)[0])
    return _kernels.lstm_cell(x, h, c, w_ih, w_hh, b)


def gru_cell(x, h, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step (PyTorch's ``GRUCell``): ``x`` (N, I), ``h`` (N, H), ``w_ih`` (3H, I),
    ``w_hh`` (3H, H), biases (3H,) or None; gates ordered r, z, n. Returns the new ``h``."""
    rows = np.shape(w_ih)[0]
    if b_ih is None:
        b_ih = _channel_constant(x, rows, 0.0)
    if b_hh is None:
        b_hh = _channel_constant(x, rows, 0.0)
    return _kernels.gru_cell(x, h, w_ih, w_hh, b_ih, b_hh)
