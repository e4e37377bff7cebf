"""softmax, log_softmax and fused, stable softmax cross-entropy with integer labels.

Each is one numba pass over a ``(rows, classes)`` view (the softmax axis moved last), over the
row formulas of ``cpsgrad.kernels.formulas.softmax`` (shared with the CUDA kernels). The
cross-entropy forward keeps the probabilities, so its backward is one more pass with no
temporaries.
"""

import math

import numpy as np

from cpsgrad.kernels.cpu.jit import compile_formulas, serial
from cpsgrad.kernels.cpu.shapes import from_rows, reduction_axes, to_rows
from cpsgrad.kernels.formulas import softmax

_rows = compile_formulas(softmax)
_stable_shift, _log_normalizer, _probability = _rows.stable_shift, _rows.log_normalizer, _rows.probability
_adjoint_part, _adjoint = _rows.adjoint_part, _rows.adjoint
_cross_entropy_loss, _cross_entropy_adjoint = _rows.cross_entropy_loss, _rows.cross_entropy_adjoint


@serial
def _softmax_rows(x, out, log):
    for row in range(x.shape[0]):
        top = -np.inf
        for j in range(x.shape[1]):
            top = max(top, x[row, j])
        shift = _stable_shift(top)
        total = 0.0
        for j in range(x.shape[1]):
            total += math.exp(x[row, j] - shift)
        if log:
            norm = _log_normalizer(shift, total)
            for j in range(x.shape[1]):
                out[row, j] = x[row, j] - norm
        else:
            for j in range(x.shape[1]):
                out[row, j] = _probability(x[row, j], shift, total)


@serial
def _softmax_grad_rows(g, y, out, log):
    for row in range(y.shape[0]):
        total = 0.0
        for j in range(y.shape[1]):
            total += _adjoint_part(g[row, j], y[row, j], log)
        for j in range(y.shape[1]):
            out[row, j] = _adjoint(g[row, j], y[row, j], total, log)


def _forward(op, x, axis, log):
    (axis,) = reduction_axes(op, x.shape, axis)
    rows, layout = to_rows(x, (axis,))
    out = np.empty_like(rows)
    _softmax_rows(rows, out, log)
    y = from_rows(out, layout)
    return y, (y, axis)


def _backward(grad, saved, log):
    y, axis = saved
    if np.shape(grad) != y.shape:
        raise ValueError(f"adjoint shape {np.shape(grad)} does not match output {y.shape}")
    rows, layout = to_rows(y, (axis,))
    grad_rows, _ = to_rows(np.asarray(grad, y.dtype), (axis,))
    out = np.empty_like(rows)
    _softmax_grad_rows(grad_rows, rows, out, log)
    return (from_rows(out, layout),)


def softmax_forward(x, axis=-1):
    return _forward("softmax", x, axis, False)


def softmax_backward(grad, saved):
    return _backward(grad, saved, False)


def log_softmax_forward(x, axis=-1):
    return _forward("log_softmax", x, axis, True)


def log_softmax_backward(grad, saved):
    return _backward(grad, saved, True)


@serial
def _cross_entropy(logits, labels, probabilities):
    """Mean negative log-likelihood; -1.0 signals a label out of range."""
    rows, classes = logits.shape
    loss = 0.0
    for row in range(rows):
        label = labels[row]
        if label < 0 or label >= classes:
            return -1.0
        top = -np.inf
        for j in range(classes):
            top = max(top, logits[row, j])
        shift = _stable_shift(top)
        total = 0.0
        for j in range(classes):
            e = math.exp(logits[row, j] - shift)
            probabilities[row, j] = e
            total += e
        for j in range(classes):
            probabilities[row, j] /= total
        loss += _cross_entropy_loss(shift, total, logits[row, label])
    return loss / rows


@serial
def _cross_entropy_grad(probabilities, labels, scale, out):
    for row in range(probabilities.shape[0]):
        label = labels[row]
        for j in range(probabilities.shape[1]):
            out[row, j] = _cross_entropy_adjoint(probabilities[row, j], scale, j == label)


def softmax_cross_entropy_forward(logits, labels):
    """Mean over rows of ``-log softmax(logits)[row, labels[row]]``; a 0-d array."""
    if logits.ndim != 2 or np.shape(labels) != logits.shape[:1] or logits.shape[0] == 0:
        raise ValueError(
            "softmax_cross_entropy: expected logits (batch, classes) with batch > 0 and labels "
            f"(batch,), got {logits.shape} and {np.shape(labels)}"
        )
    logits = np.ascontiguousarray(logits)
    labels = np.asarray(labels, dtype=np.int64)
    probabilities = np.empty_like(logits)
    loss = _cross_entropy(logits, labels, probabilities)
    if loss == -1.0:
        raise ValueError(
            f"softmax_cross_entropy: labels must lie in [0, {logits.shape[1]}), "
            f"got {labels.min()}..{labels.max()}"
        )
    return np.asarray(loss, logits.dtype), (probabilities, labels)


def softmax_cross_entropy_backward(grad, saved):
    """Adjoint of the logits (labels are not differentiable)."""
    probabilities, labels = saved
    out = np.empty_like(probabilities)
    _cross_entropy_grad(probabilities, labels, float(grad) / probabilities.shape[0], out)
    return (out,)
