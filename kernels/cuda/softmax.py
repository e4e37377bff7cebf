"""softmax, log_softmax and fused softmax cross-entropy on the device, one block a row.

The softmax axis is moved last; each block finds its row's maximum and normaliser by block
reductions and writes the row in the same launch; the row formulas are
``cpsgrad.kernels.formulas.softmax``'s, shared with the CPU loops. The cross-entropy forward keeps the
probabilities, so its backward is one elementwise pass.
"""

import math

from numba import cuda, float64

from cpsgrad.kernels.cpu.shapes import reduction_axes
from cpsgrad.kernels.cuda.arrays import adjoint, contiguous, empty, operand, raise_if_flagged, zeros
from cpsgrad.kernels.cuda.jit import MAX_THREADS, compile_formulas, kernel, launch, launch_rows
from cpsgrad.kernels.cuda.layout import from_rows, to_rows
from cpsgrad.kernels.cuda.rows import MAX, SUM, block_combine, reduce_rows, row_fold
from cpsgrad.kernels.formulas import softmax

_rows = compile_formulas(softmax)
_stable_shift, _log_normalizer, _probability = _rows.stable_shift, _rows.log_normalizer, _rows.probability
_adjoint_part, _adjoint = _rows.adjoint_part, _rows.adjoint
_cross_entropy_loss, _cross_entropy_adjoint = _rows.cross_entropy_loss, _rows.cross_entropy_adjoint


@kernel("void({f}[:, ::1], {f}[:, ::1], boolean)")
def _softmax_rows(x, out, log):
    buffer = cuda.shared.array(MAX_THREADS, float64)
    for row in range(cuda.blockIdx.x, x.shape[0], cuda.gridDim.x):
        shift = _stable_shift(row_fold(buffer, x, row, MAX))
        partial = 0.0
        for j in range(cuda.threadIdx.x, x.shape[1], cuda.blockDim.x):
            partial += math.exp(x[row, j] - shift)
        total = block_combine(buffer, partial, SUM)
        norm = _log_normalizer(shift, total)
        for j in range(cuda.threadIdx.x, x.shape[1], cuda.blockDim.x):
            out[row, j] = x[row, j] - norm if log else _probability(x[row, j], shift, total)


@kernel("void({f}[:, ::1], {f}[:, ::1], {f}[:, ::1], boolean)")
def _softmax_grad_rows(g, y, out, log):
    buffer = cuda.shared.array(MAX_THREADS, float64)
    for row in range(cuda.blockIdx.x, y.shape[0], cuda.gridDim.x):
        partial = 0.0
        for j in range(cuda.threadIdx.x, y.shape[1], cuda.blockDim.x):
            partial += _adjoint_part(g[row, j], y[row, j], log)
        total = block_combine(buffer, partial, SUM)
        for j in range(cuda.threadIdx.x, y.shape[1], cuda.blockDim.x):
            out[row, j] = _adjoint(g[row, j], y[row, j], total, log)


@kernel("void({f}[:, ::1], int64[::1], {f}[:, ::1], {f}[:, ::1], {f}[::1])")
def _cross_entropy_rows(logits, labels, probabilities, losses, flag):
    """Probabilities and each row's loss; ``flag[0]`` is set if a label is out of range."""
    buffer = cuda.shared.array(MAX_THREADS, float64)
    classes = logits.shape[1]
    for row in range(cuda.blockIdx.x, logits.shape[0], cuda.gridDim.x):
        shift = _stable_shift(row_fold(buffer, logits, row, MAX))
        partial = 0.0
        for j in range(cuda.threadIdx.x, classes, cuda.blockDim.x):
            partial += math.exp(logits[row, j] - shift)
        total = block_combine(buffer, partial, SUM)
        for j in range(cuda.threadIdx.x, classes, cuda.blockDim.x):
            probabilities[row, j] = _probability(logits[row, j], shift, total)
        if cuda.threadIdx.x == 0:
            label = labels[row]
            if 0 <= label < classes:
                losses[0, row] = _cross_entropy_loss(shift, total, logits[row, label])
            else:
                flag[0] = 1
                losses[0, row] = 0


@kernel("void({f}[:, ::1], int64[::1], {f}[::1], float64, {f}[:, ::1])")
def _cross_entropy_grad(probabilities, labels, g, scale, out):
    columns = probabilities.shape[1]
    for i in range(cuda.grid(1), probabilities.size, cuda.gridsize(1)):
        row, j = i // columns, i % columns
        out[row, j] = _cross_entropy_adjoint(probabilities[row, j], g[0] * scale, labels[row] == j)


def _forward(op, x, axis, log):
    x = contiguous(op, x)
    (axis,) = reduction_axes(op, tuple(x.shape), axis)
    rows, layout = to_rows(x, (axis,))
    out = empty(rows.shape, x.dtype)
    launch_rows(_softmax_rows, rows.shape[0], rows, out, log)
    y = from_rows(out, layout)
    return y, (op, y, axis)


def _backward(grad, saved, log):
    op, y, axis = saved
    grad = adjoint(op, grad, y.shape, y.dtype)
    rows, layout = to_rows(y, (axis,))
    grad_rows, _ = to_rows(grad, (axis,))
    out = empty(rows.shape, y.dtype)
    launch_rows(_softmax_grad_rows, rows.shape[0], grad_rows, rows, out, log)
    return (from_rows(out, layout),)


def softmax_forward(x, axis=-1):
    return _forward("softmax", x, axis, False)


def softmax_backward(grad, saved):
    return _backward(grad, saved, False)


def log_softmax_forward(x, axis=-1):
    return _forward("log_softmax", x, axis, True)


def log_softmax_backward(grad, saved):
    return _backward(grad, saved, True)


def softmax_cross_entropy_forward(logits, labels):
    """Mean over rows of ``-log softmax(logits)[row, labels[row]]``; a 0-d device array.

    Checking the labels costs one synchronising copy of a flag.
    """
    op = "softmax_cross_entropy"
    if logits.ndim != 2 or tuple(labels.shape) != tuple(logits.shape[:1]) or logits.shape[0] == 0:
        raise ValueError(
            f"{op}: expected logits (batch, classes) with batch > 0 and labels (batch,), "
            f"got {logits.shape} and {labels.shape}"
        )
    logits, labels = contiguous(op, logits), contiguous(op, labels)
    probabilities = empty(logits.shape, logits.dtype)
    losses = empty((1, logits.shape[0]), logits.dtype)
    flag = zeros((1,), logits.dtype)
    launch_rows(_cross_entropy_rows, logits.shape[0], logits, labels, probabilities, losses, flag)
    raise_if_flagged(flag, ValueError(f"{op}: labels must lie in [0, {logits.shape[1]})"))
    loss = reduce_rows(losses, SUM, 1.0 / logits.shape[0]).reshape(())
    return loss, (probabilities, labels)


def softmax_cross_entropy_backward(grad, saved):
    """Adjoint of the logits (labels are not differentiable)."""
    probabilities, labels = saved
    grad = operand("softmax_cross_entropy", grad, probabilities.dtype).reshape(1)
    out = empty(probabilities.shape, probabilities.dtype)
    scale = 1.0 / probabilities.shape[0]
    launch(_cross_entropy_grad, out.size, probabilities, labels, grad, scale, out)
    return (out,)
