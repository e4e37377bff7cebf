"""Comparisons, logical not and dtype casts on the device, for ``cpsgrad.kernels.DeviceArray``.

Not table ops (nothing differentiates through them): a comparison gives a bool device array
(the condition ``where`` takes, or a mask the backward helpers multiply by once cast), read
through broadcast strides as the binary kernels do.
"""

from numba import cuda

from cpsgrad.kernels.cuda.arrays import contiguous, empty, flat
from cpsgrad.kernels.cuda.binary import _meta, _offsets, _operands
from cpsgrad.kernels.cuda.jit import kernel, launch
from cpsgrad.kernels.cuda.layout import broadcast_shape

EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL = range(6)
CODE = {
    "equal": EQUAL, "not_equal": NOT_EQUAL, "less": LESS, "less_equal": LESS_EQUAL,
    "greater": GREATER, "greater_equal": GREATER_EQUAL,
}


@kernel("void({f}[::1], {f}[::1], boolean[::1], int64[:, ::1], int64)")
def _compare(a, b, out, meta, code):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        first, second = _offsets(i, meta)
        left, right = a[first], b[second]
        if code == EQUAL:
            out[i] = left == right
        elif code == NOT_EQUAL:
            out[i] = left != right
        elif code == LESS:
            out[i] = left < right
        elif code == LESS_EQUAL:
            out[i] = left <= right
        elif code == GREATER:
            out[i] = left > right
        else:
            out[i] = left >= right


@kernel("void(boolean[::1], boolean[::1])")
def _logical_not(x, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = not x[i]


def _cast_items(source, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = source[i]


# One function, compiled for each source dtype (the PTX check compiles every recorded template).
_cast = kernel("void(boolean[::1], {f}[::1])")(_cast_items)
kernel("void(float32[::1], {f}[::1])")(_cast_items)
kernel("void(float64[::1], {f}[::1])")(_cast_items)


def compare(name: str, a, b):
    """``a <name> b`` elementwise (numpy's ufunc names: ``"less"``, ...) as a bool device array;
    one operand may be a Python number."""
    a, b = _operands(name, a, b)
    shape = broadcast_shape(name, a.shape, b.shape)
    out = empty(shape, bool)
    launch(_compare, out.size, flat(a), flat(b), flat(out), _meta(shape, a.shape, b.shape), CODE[name])
    return out


def logical_not(x):
    """``not x`` elementwise of a bool device array."""
    if x.dtype.kind != "b":
        raise TypeError(f"logical_not: the device operand must be a bool array, got {x.dtype}")
    out = empty(x.shape, bool)
    launch(_logical_not, out.size, flat(contiguous("logical_not", x)), flat(out))
    return out


def cast(x, dtype):
    """A copy of the device array ``x`` (bool, float32 or float64) in ``dtype`` (float32 or float64)."""
    out = empty(x.shape, dtype)
    launch(_cast, out.size, flat(contiguous("astype", x)), flat(out))
    return out
