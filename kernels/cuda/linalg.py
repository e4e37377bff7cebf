"""matmul (vector, 2-D, batched with broadcasting), outer and transpose on the device.

The product is a tiled shared-memory kernel (no cuBLAS): each block computes a TILE x TILE
output tile of one batch entry, staging tiles of both operands in shared memory, accumulating in
float64. Operands may be read transposed, so the backward needs no transposed copies.
"""

from numba import cuda, float64

from cpsgrad.kernels.cuda import jit
from cpsgrad.kernels.cuda.arrays import adjoint, contiguous, empty, size_of
from cpsgrad.kernels.cuda.jit import kernel
from cpsgrad.kernels.cuda.layout import broadcast, broadcast_shape, permute, sum_to_shape

TILE = jit.TILE


@kernel("void({f}[:, :, ::1], {f}[:, :, ::1], {f}[:, :, ::1], boolean, boolean)")
def _matmul(a, b, out, transpose_a, transpose_b):
    """out[n] = op(a[n]) @ op(b[n]); a batch of 1 in ``a`` or ``b`` is shared by every entry."""
    tile_a = cuda.shared.array((TILE, TILE), float64)
    tile_b = cuda.shared.array((TILE, TILE), float64)
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    depth = a.shape[1] if transpose_a else a.shape[2]
    for n in range(cuda.blockIdx.z, out.shape[0], cuda.gridDim.z):
        na = n if a.shape[0] > 1 else 0
        nb = n if b.shape[0] > 1 else 0
        total = 0.0
        for start in range(0, depth, TILE):
            k = start + tx
            inside = row < out.shape[1] and k < depth
            tile_a[ty, tx] = (a[na, k, row] if transpose_a else a[na, row, k]) if inside else 0.0
            k = start + ty
            inside = col < out.shape[2] and k < depth
            tile_b[ty, tx] = (b[nb, col, k] if transpose_b else b[nb, k, col]) if inside else 0.0
            cuda.syncthreads()
            for j in range(TILE):
                total += tile_a[ty, j] * tile_b[j, tx]
            cuda.syncthreads()
        if row < out.shape[1] and col < out.shape[2]:
            out[n, row, col] = total


def product(a, b, transpose_a=False, transpose_b=False):
    """Batched ``op(a) @ op(b)`` of 3-D contiguous device arrays (batch 1 broadcasts)."""
    rows = a.shape[2] if transpose_a else a.shape[1]
    columns = b.shape[1] if transpose_b else b.shape[2]
    out = empty((max(a.shape[0], b.shape[0]), rows, columns), a.dtype)
    grid = ((columns + TILE - 1) // TILE, (rows + TILE - 1) // TILE, min(out.shape[0], 65535))
    if out.size:
        _matmul[grid, (TILE, TILE)](a, b, out, transpose_a, transpose_b)
    return out


def _batched(x, batch):
    """``x`` (..., m, k) as a 3-D array over ``batch``; a 2-D ``x`` stays a shared batch of 1."""
    if x.ndim == 2:
        return x.reshape(1, *x.shape)
    shape = tuple(x.shape)
    if shape[:-2] != batch:
        x = broadcast(x, batch + shape[-2:])
    return x.reshape(size_of(batch), *shape[-2:])


def _same_dtype(op, a, b):
    if a.dtype != b.dtype:
        raise TypeError(f"{op}: device operands must share one dtype, got {a.dtype} and {b.dtype}")
    return contiguous(op, a), contiguous(op, b)


def matmul_forward(a, b):
    a, b = _same_dtype("matmul", a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: operands must be at least 1-D")
    a2 = a.reshape(1, a.shape[0]) if a.ndim == 1 else a
    b2 = b.reshape(b.shape[0], 1) if b.ndim == 1 else b
    shape_a, shape_b = tuple(a2.shape), tuple(b2.shape)
    if shape_a[-1] != shape_b[-2]:
        raise ValueError(f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} are not aligned")
    batch = broadcast_shape("matmul", shape_a[:-2], shape_b[:-2])
    full = batch + (shape_a[-2], shape_b[-1])
    y = product(_batched(a2, batch), _batched(b2, batch)).reshape(full)
    return y.reshape(_drop_vector_axes(full, a, b)), (a, b, a2, b2, batch, full)


def matmul_backward(grad, saved):
    a, b, a2, b2, batch, full = saved
    grad = adjoint("matmul", grad, _drop_vector_axes(full, a, b), a.dtype)
    g = grad.reshape(size_of(batch), *full[-2:])
    grad_a = product(g, _batched(b2, batch), transpose_b=True).reshape(batch + tuple(a2.shape)[-2:])
    grad_b = product(_batched(a2, batch), g, transpose_a=True).reshape(batch + tuple(b2.shape)[-2:])
    return (
        sum_to_shape(grad_a, a2.shape).reshape(a.shape),
        sum_to_shape(grad_b, b2.shape).reshape(b.shape),
    )


def _drop_vector_axes(full, a, b):
    return full[:-2] + full[-2:-1] * (a.ndim > 1) + full[-1:] * (b.ndim > 1)


def outer_forward(a, b):
    a, b = _same_dtype("outer", a, b)
    y = product(a.reshape(1, a.size, 1), b.reshape(1, 1, b.size))
    return y.reshape(a.size, b.size), (a, b)


def outer_backward(grad, saved):
    a, b = saved
    g = adjoint("outer", grad, (a.size, b.size), a.dtype).reshape(1, a.size, b.size)
    grad_a = product(g, b.reshape(1, b.size, 1)).reshape(a.shape)
    grad_b = product(a.reshape(1, 1, a.size), g).reshape(b.shape)
    return grad_a, grad_b


def transpose_forward(x, axes=None):
    x = contiguous("transpose", x)
    order = tuple(reversed(range(x.ndim))) if axes is None else tuple(int(a) for a in axes)
    if sorted(a % x.ndim for a in order) != list(range(x.ndim)) or len(order) != x.ndim:
        raise ValueError(f"transpose: axes {axes} invalid for shape {x.shape}")
    order = tuple(a % x.ndim for a in order)
    return permute(x, order), order


def transpose_backward(grad, saved):
    inverse = [saved.index(a) for a in range(len(saved))]
    return (permute(contiguous("transpose", grad), inverse),)
