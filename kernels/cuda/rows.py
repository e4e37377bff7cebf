"""Block reductions over the rows of a ``(rows, width)`` matrix: one block a row.

Each thread folds a strided slice of the row, then the block combines the partial results in
shared memory by a tree (``blockDim.x`` a power of two); sums accumulate in float64.
"""

import math

from numba import cuda, float64

from cpsgrad.kernels.cuda.arrays import empty
from cpsgrad.kernels.cuda.jit import MAX_THREADS, device, kernel, launch_rows

SUM, MAX, MIN, LOGSUMEXP = 0, 1, 2, 3
SPREAD, TIES, EXP_SHIFTED = 0, 1, 2


@device
def block_combine(buffer, value, code):
    """Combine ``value`` across the block (SUM, MAX or MIN); every thread gets the result."""
    t = cuda.threadIdx.x
    buffer[t] = value
    cuda.syncthreads()
    step = cuda.blockDim.x // 2
    while step > 0:
        if t < step:
            other = buffer[t + step]
            if code == SUM:
                buffer[t] += other
            elif code == MAX:
                buffer[t] = max(buffer[t], other)
            else:
                buffer[t] = min(buffer[t], other)
        cuda.syncthreads()
        step //= 2
    result = buffer[0]
    cuda.syncthreads()
    return result


@device
def row_fold(buffer, x, row, code):
    """SUM, MAX or MIN of ``x[row, :]`` across the block."""
    start = math.inf if code == MIN else (-math.inf if code == MAX else 0.0)
    partial = start
    for j in range(cuda.threadIdx.x, x.shape[1], cuda.blockDim.x):
        value = float64(x[row, j])
        if code == SUM:
            partial += value
        elif code == MAX:
            partial = max(partial, value)
        else:
            partial = min(partial, value)
    return block_combine(buffer, partial, code)


@device
def row_logsumexp(buffer, x, row):
    """Stable log-sum-exp of ``x[row, :]`` across the block."""
    top = row_fold(buffer, x, row, MAX)
    shift = top if math.isfinite(top) else 0.0
    partial = 0.0
    for j in range(cuda.threadIdx.x, x.shape[1], cuda.blockDim.x):
        partial += math.exp(x[row, j] - shift)
    return shift + math.log(block_combine(buffer, partial, SUM))


@kernel("void({f}[:, ::1], {f}[::1], int64, float64)")
def _reduce_rows(x, out, code, scale):
    buffer = cuda.shared.array(MAX_THREADS, float64)
    for row in range(cuda.blockIdx.x, x.shape[0], cuda.gridDim.x):
        if code == LOGSUMEXP:
            result = row_logsumexp(buffer, x, row)
        else:
            result = row_fold(buffer, x, row, code) * scale
        if cuda.threadIdx.x == 0:
            out[row] = result


@kernel("void({f}[:, ::1], {f}[::1], {f}[::1], {f}[:, ::1], int64, float64)")
def _spread_rows(x, y, g, out, code, scale):
    buffer = cuda.shared.array(MAX_THREADS, float64)
    for row in range(cuda.blockIdx.x, out.shape[0], cuda.gridDim.x):
        share = g[row] * scale
        if code == TIES:
            count = 0.0
            for j in range(cuda.threadIdx.x, x.shape[1], cuda.blockDim.x):
                if x[row, j] == y[row]:
                    count += 1.0
            share = g[row] / block_combine(buffer, count, SUM)
        for j in range(cuda.threadIdx.x, out.shape[1], cuda.blockDim.x):
            if code == SPREAD:
                out[row, j] = share
            elif code == TIES:
                out[row, j] = share if x[row, j] == y[row] else 0.0
            else:
                out[row, j] = g[row] * math.exp(x[row, j] - y[row])


def reduce_rows(rows, code: int, scale: float = 1.0):
    """One value a row: SUM (times ``scale``), MAX, MIN or LOGSUMEXP; a 1-D device array."""
    out = empty((rows.shape[0],), rows.dtype)
    launch_rows(_reduce_rows, rows.shape[0], rows, out, code, float(scale))
    return out


def spread_rows(x, y, g, code: int, scale: float = 1.0):
    """The adjoint of a row reduction: SPREAD ``g * scale``, TIES (max/min) or EXP_SHIFTED (lse).

    ``x`` and ``y`` (the rows and their reduction) are read only by TIES and EXP_SHIFTED.
    """
    out = empty(x.shape, g.dtype)
    launch_rows(_spread_rows, x.shape[0], x, y, g, out, code, float(scale))
    return out
