"""The backward helpers of ``cpsgrad.nn``'s derivative rules; generated code calls them as
``nn_backward.<name>(output_adjoint, inputs..., parameters...)``.

A rule's backward sees only the op's inputs, its output(s) and the output adjoint: nothing the
forward computed on the side. Each helper therefore rebuilds the residuals the table entry's
backward (``cpsgrad.kernels.dispatch(op, ...).backward(adjoint, residuals)``) needs:

* from the inputs or the output alone, on the CPU, where they are just those arrays
  (relu leaky_relu hardtanh softplus: ``x``; sigmoid softmax log_softmax: the output;
  embedding, pad, global_avg_pool2d: shapes and indices), at no cost;
* by running the op's forward once more otherwise (every op on a CUDA device but conv2d, and on
  the CPU avg_pool2d's window layout, cross-entropy's probabilities, logsumexp, batch_norm's
  statistics, dropout's mask drawn again from its seed, the LSTM/GRU gates): one extra forward
  per backward;
* by kernels of their own, with no second forward: conv2d (both devices: the input's adjoint
  needs only the weights, the weights' only ``x``'s im2col columns, so each is a helper of its
  own and the transform runs only those whose inputs are active: no input adjoint for a
  network's first layer) and, on the CPU, max_pool2d (the arg-max found again by one scan of
  each window for the output's value).

An op with several differentiable inputs has one helper returning their adjoints at once
(``conv2d_weights``: weights and bias, ``batch_norm``, ``lstm_cell``, ``gru_cell``: the kernel's
backward computes them together); its template binds them as backward locals, so the call runs
once, and not at all when no input is active (cpsgrad/rules/registry.py, ``Step``).

The elementwise activations follow ``cpsgrad.kernels.thresholds``: below the measured size (and
for numpy scalars or dtypes the kernels lack) the backward is numpy, above it the kernel;
Python numbers use Python arithmetic and never reach the table.

Every helper accepts the symbolic zero ``0.0`` as the output adjoint (zeros of any shape) and
then returns ``0.0`` (one an input for a helper of several); any other adjoint is brought to
the output's shape and dtype first (a broadcast scalar is allowed). Results have their input's
shape and dtype.
"""

from __future__ import annotations

import importlib
import operator

import numpy as np

from cpsgrad.kernels import device_array, dispatch
from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.kernels.formulas.catalog import UNARY_BY_NAME
from cpsgrad.nn import (
    _NUMPY,
    _PYTHON,
    _bias,
    _channel_constant,
    _float_input,
    _numpy_sigmoid,
    _python_sigmoid,
    _route,
)
from cpsgrad.runtime.adjoints import is_zero as _zero
from cpsgrad.runtime.broadcasting import unbroadcast

_ndarray = np.ndarray


def _conform(adjoint, like):
    """The output adjoint in the output's shape and dtype (device arrays pass as they are; a
    number for a DeviceArray output is filled on the device)."""
    if type(like) is not _ndarray:
        if type(like) is DeviceArray and type(adjoint) is not DeviceArray:
            return device_array.conformed(adjoint, like.shape, like.dtype)
        return adjoint
    if type(adjoint) is _ndarray:
        if adjoint.shape == like.shape:
            return adjoint if adjoint.dtype == like.dtype else adjoint.astype(like.dtype)
    elif not like.shape:  # a scalar adjoint of a 0-d output (np.broadcast_to costs microseconds)
        return np.asarray(adjoint, like.dtype)
    return np.broadcast_to(np.asarray(adjoint, like.dtype), like.shape)


def _shaped(shape: tuple, dtype):
    """A stand-in with an output's shape and dtype (no memory: a broadcast 0-d array)."""
    return np.broadcast_to(np.empty((), dtype), shape)


def _backward(op: str, adjoint, inputs: tuple, params: dict, cpu_saved=None) -> tuple:
    """Run ``op``'s backward: residuals from ``cpu_saved()`` (``(output, saved)`` built from the
    inputs) on the CPU when given, else from one more forward. ``adjoint`` is a tuple for an op
    with several differentiable outputs (lstm_cell), one adjoint each."""
    kernel = dispatch(op, *inputs)
    if cpu_saved is not None and kernel.device == "cpu":
        output, saved = cpu_saved()
    else:
        output, saved = kernel.forward(*inputs, **params)
    if isinstance(adjoint, tuple):  # one adjoint an output, None for a zero
        adjoint = tuple(None if _zero(a) else _conform(a, o) for a, o in zip(adjoint, output, strict=True))
    else:  # batch_norm's running statistics are outputs without adjoints
        adjoint = _conform(adjoint, output[0] if isinstance(output, tuple) else output)
    return kernel.backward(adjoint, saved)


# ---- elementwise activations ------------------------------------------------------------------


def _unary(op, adjoint, x, python, numpy, cpu_saved, params=None):
    if _zero(adjoint):
        return 0.0
    where = _route(op, x, "backward")
    if where is _PYTHON:
        return python(float(adjoint))
    if where is _NUMPY:
        return unbroadcast(numpy(np.asarray(adjoint)), x)
    return _backward(op, adjoint, (x,), params or {}, cpu_saved)[0]


def relu(y_d, x):
    """relu backward (relu'(0) = 0), from ``x``."""
    return _unary(
        "relu", y_d, x,
        lambda g: g if x > 0 else 0.0,
        lambda g: np.where(x > 0, g, 0.0),
        lambda: (x, (x,)),
    )


def leaky_relu(y_d, x, negative_slope):
    """leaky_relu backward for ``x`` (leaky_relu'(0) = 1)."""
    return _unary(
        "leaky_relu", y_d, x,
        lambda g: g if x >= 0 else negative_slope * g,
        lambda g: np.where(x >= 0, g, g * np.float64(negative_slope)),
        lambda: (x, (x, float(negative_slope))),
        {"negative_slope": negative_slope},
    )


def leaky_relu_slope(y_d, x, negative_slope):
    """leaky_relu backward for ``negative_slope``: the sum of ``y_d * x`` where ``x < 0``."""
    if _zero(y_d):
        return 0.0
    if _route("leaky_relu", x, "backward") is _PYTHON:
        return float(y_d) * x if x < 0 else 0.0
    x, g = _host(x), _host(y_d)
    return unbroadcast(np.where(x < 0, g * x, 0.0), negative_slope)


def _clip_slope(x, low, high):
    """JAX's clip derivative: minimum(maximum(x, low), high), a tie passing half."""
    lower = np.where(x > low, 1.0, np.where(x == low, 0.5, 0.0))
    raised = np.maximum(x, low)
    upper = np.where(raised < high, 1.0, np.where(raised == high, 0.5, 0.0))
    return lower * upper


def hardtanh(y_d, x):
    """hardtanh backward: 1 inside (-1, 1), 0.5 at a bound, 0 outside."""
    return _unary(
        "hardtanh", y_d, x,
        lambda g: g * float(_clip_slope(x, -1.0, 1.0)),
        lambda g: g * _clip_slope(x, -1.0, 1.0),
        lambda: (x, (x, -1.0, 1.0)),
    )


def sigmoid(y_d, x, y):
    """sigmoid backward, from the output ``y``: ``y_d * y * (1 - y)``."""
    return _unary(
        "sigmoid", y_d, x,
        lambda g: g * y * (1.0 - y),
        lambda g: g * y * (1 - y),
        lambda: (y, (y,)),
    )


def softplus(y_d, x):
    """softplus backward: ``y_d * sigmoid(x)`` (numpy at every measured size on the CPU)."""
    return _unary(
        "softplus", y_d, x,
        lambda g: g * _python_sigmoid(x),
        lambda g: g * _numpy_sigmoid(x),
        lambda: (x, (x,)),
    )


def elementwise(y_d, op, x, y, **params):
    """The backward of an activation ``op`` computed by ``cpsgrad.nn._elementwise`` (no helper of
    its own; the output adjoint first, as for every helper): the catalog op's adjoint formula for a
    Python number, else its kernel's backward from the input or the output ``y`` (whichever the
    op's entry saves), a numpy scalar or an array of another dtype cast to a float array first.
    ``params`` as the forward took them."""
    if _zero(y_d):
        return 0.0
    entry = UNARY_BY_NAME[op]
    p, q = entry.params(**params)
    saved = y if entry.saves_output else x
    where = _route(op, x, "backward")
    if where is _PYTHON:
        return entry.adjoint(float(y_d), float(saved), p, q)
    if where is _NUMPY:
        x_float, saved_float = _float_input(x), _float_input(saved)
        adjoint = _backward(op, y_d, (x_float,), params, lambda: (saved_float, (saved_float, p, q)))[0]
        return unbroadcast(adjoint, x)
    # the CPU kernel's residuals: the saved array and both scalars (its backward takes them all)
    return _backward(op, y_d, (x,), params, lambda: (y, (saved, p, q)))[0]


def _host(value):
    """A numpy view of ``value`` for the few scalar-parameter adjoints computed on the host."""
    if type(value) is _ndarray or isinstance(value, (float, int, np.generic)):
        return value
    from cpsgrad.kernels import to_host

    return to_host(value)


# ---- softmax and friends ----------------------------------------------------------------------


def _axis(axis, ndim: int) -> int:
    return np.lib.array_utils.normalize_axis_index(operator.index(axis), ndim)


def softmax(y_d, x, y, axis):
    """softmax backward, from the output ``y``."""
    if _zero(y_d):
        return 0.0
    return _backward("softmax", y_d, (x,), {"axis": axis}, lambda: (y, (y, _axis(axis, y.ndim))))[0]


def log_softmax(y_d, x, y, axis):
    """log_softmax backward, from the output ``y``."""
    if _zero(y_d):
        return 0.0
    return _backward("log_softmax", y_d, (x,), {"axis": axis}, lambda: (y, (y, _axis(axis, y.ndim))))[0]


def logsumexp(y_d, x, axis, *, keepdims):
    """logsumexp backward (one more forward: the kernel keeps its row layout)."""
    if _zero(y_d):
        return 0.0
    return _backward("logsumexp", y_d, (x,), {"axis": axis, "keepdims": keepdims})[0]


def softmax_cross_entropy(y_d, logits, labels):
    """Cross-entropy backward for the logits; the probabilities are computed again."""
    if _zero(y_d):
        return 0.0
    return _backward("softmax_cross_entropy", y_d, (logits, labels), {})[0]


# ---- convolution and pooling ------------------------------------------------------------------


def _device_kernels(op: str, module: str, *arrays):
    """``cpsgrad.kernels.<device>.<module>`` for ``op`` on the arrays' device (imported by the
    forward's dispatch already), for the backwards that call kernels of their own instead of
    the table entry's ``backward``."""
    return importlib.import_module(f"cpsgrad.kernels.{dispatch(op, *arrays).device}.{module}")


def conv2d_input(y_d, x, w, y, *, stride, padding, dilation, groups):
    """conv2d backward for the input ``x``: the weights' transpose times the adjoint, folded back
    onto ``x`` (col2im); no second forward on either device."""
    if _zero(y_d):
        return 0.0
    kernels = _device_kernels("conv2d", "conv", x, w)
    return kernels.conv2d_input_backward(_conform(y_d, y), x, w, stride=stride, padding=padding,
                                         dilation=dilation, groups=groups)


def conv2d_weights(y_d, x, w, b, y, *, stride, padding, dilation, groups):
    """conv2d backward for the weights and the bias (None without one): ``x``'s columns
    (im2col) again, no second forward product."""
    if _zero(y_d):
        return 0.0, 0.0
    kernels = _device_kernels("conv2d", "conv", x, w)
    return kernels.conv2d_weight_backward(_conform(y_d, y), x, w, b, stride=stride, padding=padding,
                                          dilation=dilation, groups=groups)


def max_pool2d(y_d, x, y, kernel_size, *, stride, padding):
    """max_pool2d backward: on the CPU each window's adjoint goes to its first element equal to
    the output ``y`` (the forward's arg-max, found again by one scan); on a device one more
    forward for the arg-max."""
    if _zero(y_d):
        return 0.0
    params = {"kernel_size": kernel_size, "stride": stride, "padding": padding}
    if type(x) is _ndarray and type(y) is _ndarray:
        kernels = _device_kernels("max_pool2d", "pooling", x)
        return kernels.max_pool2d_input_backward(_conform(y_d, y), x, y, **params)
    return _backward("max_pool2d", y_d, (x,), params)[0]


def avg_pool2d(y_d, x, kernel_size, *, stride, padding):
    """avg_pool2d backward (one more forward for the window layout)."""
    if _zero(y_d):
        return 0.0
    params = {"kernel_size": kernel_size, "stride": stride, "padding": padding}
    return _backward("avg_pool2d", y_d, (x,), params)[0]


def global_avg_pool2d(y_d, x):
    """global_avg_pool2d backward."""
    if _zero(y_d):
        return 0.0
    like = lambda: (_shaped(x.shape[:2], x.dtype), (x.shape,))
    return _backward("global_avg_pool2d", y_d, (x,), {}, like)[0]


def pad(y_d, x, pad_width, value):
    """pad backward for ``x``: the inner block of the adjoint."""
    if _zero(y_d):
        return 0.0

    def saved():
        widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2))
        shape = tuple(int(n + lo + hi) for n, (lo, hi) in zip(x.shape, widths, strict=True))
        return _shaped(shape, x.dtype), (widths,)

    return _backward("pad", y_d, (x,), {"pad_width": pad_width, "value": value}, saved)[0]


def pad_value(y_d, x_d, value):
    """pad backward for the constant ``value``: the adjoint summed over the padding, which is
    all of it less the inner block ``x_d`` (``pad``'s result)."""
    if _zero(y_d):
        return 0.0
    return unbroadcast(np.asarray(np.sum(_host(y_d)) - np.sum(_host(x_d))), value)


# ---- normalisation, dropout, embedding --------------------------------------------------------


def batch_norm(y_d, x, gamma, beta, running_mean, running_var, *, training, eps):
    """batch_norm backward for ``x``, ``gamma`` and ``beta`` (statistics computed again)."""
    if _zero(y_d):
        return 0.0, 0.0, 0.0
    inputs = (x, gamma, beta, running_mean, running_var)

    def normalized():  # on the CPU the backward needs the normalised x, not the scaled output
        from cpsgrad.kernels.cpu.normalization import batch_norm_normalized

        normal, mean, var, saved = batch_norm_normalized(*inputs, training=training, eps=eps)
        output = _shaped(normal.shape, np.result_type(normal, gamma, beta))  # y's shape and dtype
        return (output, mean, var), saved

    return _backward("batch_norm", y_d, inputs, {"training": training, "eps": eps}, normalized)


def batch_norm_statistics(grads, x, gamma, running_mean, running_var, training, eps):
    """batch_norm backward for ``running_mean`` and ``running_var``, from ``grads``, what
    ``batch_norm`` returned (the adjoints of ``x``, ``gamma``, ``beta``): zero in training, where
    the output does not depend on them; in evaluation, ``y = gamma * (x - mean) * s + beta`` with
    ``s = 1 / sqrt(var + eps)``."""
    if training or _zero(grads):
        return 0.0, 0.0
    _, gamma_d, beta_d = grads
    if _zero(gamma_d) and _zero(beta_d):
        return 0.0, 0.0
    if type(x) is not _ndarray:
        raise NotImplementedError(
            "batch_norm: adjoints of running_mean/running_var (training=False) are computed for "
            "numpy arrays only; pass them as constants on a device"
        )
    scale = 1 / np.sqrt(running_var + eps)
    mean_d = -beta_d * gamma * scale
    var_d = -0.5 * gamma_d * gamma * scale * scale
    return mean_d.astype(running_mean.dtype, copy=False), var_d.astype(running_var.dtype, copy=False)


def dropout(y_d, x, p, *, seed, training):
    """dropout backward for ``x``: the mask is drawn again from ``seed``."""
    if _zero(y_d):
        return 0.0
    params = {"rate": p, "seed": seed, "training": training}
    return _backward("dropout", y_d, (x,), params)[0]


def dropout_p(y_d, y, p, *, training):
    """dropout backward for ``p`` with the mask held fixed (the derivative almost everywhere):
    ``y = x * mask / (1 - p)`` gives ``sum(y_d * y) / (1 - p)``; zero when not training."""
    if _zero(y_d) or not training:
        return 0.0
    return unbroadcast(np.asarray(np.sum(_host(y_d) * _host(y)) / (1 - p)), p)


def embedding(y_d, weights, indices):
    """embedding backward for the weights: rows scatter-added (repeated indices add up)."""
    if _zero(y_d):
        return 0.0

    def saved():
        ids = np.asarray(indices)
        return _shaped(ids.shape + weights.shape[1:], weights.dtype), (weights.shape, weights.dtype, ids, 0)

    return _backward("embedding", y_d, (weights, indices), {}, saved)[0]


# ---- recurrent cells ------------------------------------------------------------------------------


def lstm_cell(h_d, c_d, x, h, c, w_ih, w_hh, b_ih, b_hh):
    """lstm_cell backward (gates computed again): the adjoints of ``x, h, c, w_ih, w_hh, b_ih,
    b_hh``, the bias adjoint going to both biases."""
    if _zero(h_d) and _zero(c_d):
        return (0.0,) * 7
    b = _bias(b_ih, b_hh, x, np.shape(w_ih)[0])
    grads = _backward("lstm_cell", (h_d, c_d), (x, h, c, w_ih, w_hh, b), {})
    return (*grads, grads[-1])


def gru_cell(y_d, x, h, w_ih, w_hh, b_ih, b_hh):
    """gru_cell backward (gates computed again): the adjoints of ``x, h, w_ih, w_hh, b_ih, b_hh``."""
    if _zero(y_d):
        return (0.0,) * 6
    rows = np.shape(w_ih)[0]
    biases = tuple(_channel_constant(x, rows, 0.0) if b is None else b for b in (b_ih, b_hh))
    return _backward("gru_cell", y_d, (x, h, w_ih, w_hh, *biases), {})
