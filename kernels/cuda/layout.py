"""N-d layout on the device: strided copies for transpose, broadcast, crop and placement, and
the ``(rows, reduced)`` views the row kernels work on.

One gather kernel and one scatter kernel cover them all: an element's offset in the strided
array is computed from its index in the contiguous one with per-axis sizes and strides.
"""

from numba import cuda

from cpsgrad.kernels.cuda.arrays import empty, flat, metadata, size_of
from cpsgrad.kernels.cuda.jit import kernel, launch
from cpsgrad.kernels.cuda.rows import SUM, reduce_rows


@kernel("void({f}[::1], {f}[::1], int64[:, ::1], int64)")
def _gather_strided(source, out, meta, start):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        rest, offset = i, start
        for axis in range(meta.shape[1] - 1, -1, -1):
            offset += (rest % meta[0, axis]) * meta[1, axis]
            rest //= meta[0, axis]
        out[i] = source[offset]


@kernel("void({f}[::1], {f}[::1], int64[:, ::1], int64)")
def _scatter_strided(source, out, meta, start):
    for i in range(cuda.grid(1), source.size, cuda.gridsize(1)):
        rest, offset = i, start
        for axis in range(meta.shape[1] - 1, -1, -1):
            offset += (rest % meta[0, axis]) * meta[1, axis]
            rest //= meta[0, axis]
        out[offset] = source[i]


def strides_of(shape) -> list[int]:
    """C-contiguous strides in elements."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return strides[::-1]


def _meta(shape, strides):
    return metadata([list(shape) or [1], list(strides) or [0]])


def gather_view(source, shape, strides, start: int = 0):
    """A contiguous copy of the strided view (``shape``, element ``strides``, ``start``) of ``source``."""
    out = empty(shape, source.dtype)
    launch(_gather_strided, out.size, flat(source), flat(out), _meta(shape, strides), start)
    return out


def scatter_view(source, out, strides, start: int = 0):
    """Write ``source`` into the strided view (``source.shape``, ``strides``, ``start``) of ``out``."""
    launch(_scatter_strided, source.size, flat(source), flat(out), _meta(source.shape, strides), start)
    return out


def permute(x, order):
    """``transpose(x, order)`` as a contiguous device array."""
    strides = strides_of(x.shape)
    return gather_view(x, [x.shape[a] for a in order], [strides[a] for a in order])


def broadcast(x, shape):
    """``x`` broadcast to ``shape`` (numpy's rules, already checked) as a contiguous copy."""
    extra = len(shape) - x.ndim
    strides = [0] * extra + [
        0 if size == 1 and target != 1 else stride
        for size, stride, target in zip(x.shape, strides_of(x.shape), shape[extra:], strict=True)
    ]
    return gather_view(x, shape, strides)


def broadcast_shape(op: str, *shapes) -> tuple:
    """numpy's broadcast shape, or a ValueError naming ``op`` and the shapes."""
    ndim = max(len(s) for s in shapes)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    out = []
    for sizes in zip(*padded, strict=True):
        wanted = {s for s in sizes if s != 1}
        if len(wanted) > 1:
            words = " ".join(str(tuple(s)) for s in shapes)
            raise ValueError(f"{op}: operands could not be broadcast together with shapes {words}")
        out.append(wanted.pop() if wanted else 1)
    return tuple(out)


def to_rows(x, axes):
    """Move ``axes`` last and view as a contiguous ``(rows, reduced)`` matrix, plus the layout."""
    kept = tuple(a for a in range(x.ndim) if a not in axes)
    order = kept + tuple(axes)
    moved = permute(x, order) if order != tuple(range(x.ndim)) else x
    shape = tuple(x.shape[a] for a in order)
    matrix = moved.reshape(size_of(shape[: len(kept)]), size_of(shape[len(kept) :]))
    return matrix, (order, shape)


def from_rows(rows, layout):
    """Undo ``to_rows``."""
    order, shape = layout
    moved = rows.reshape(shape)
    if order == tuple(range(len(order))):
        return moved
    inverse = [order.index(a) for a in range(len(order))]
    return permute(moved, inverse)


def sum_to_shape(grad, shape):
    """Sum ``grad`` over the axes broadcasting added or stretched, giving ``shape``."""
    shape = tuple(shape)
    if tuple(grad.shape) == shape:
        return grad
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        a + extra for a, size in enumerate(shape) if size == 1 and grad.shape[a + extra] != 1
    )
    rows, _ = to_rows(grad, axes)
    return reduce_rows(rows, SUM).reshape(shape)
