"""``DeviceArray``: a small numpy-like array on the CUDA device, computed by the table's CUDA kernels.

``cpsgrad.to_device(x)`` returns one. It wraps a C-contiguous numba device array (or a CUDA
simulator array) and gives it numpy's face, so the same user code runs on the host and on the
device: the operators ``+ - * / ** @`` (with numbers and DeviceArrays, broadcasting; unary
``-``, ``abs``; comparisons give bool DeviceArrays), numpy's ufuncs and functions that have a
CUDA kernel (``__array_ufunc__`` / ``__array_function__``), the reductions, shape methods, and
basic indexing. Every operation runs CUDA kernels on device data; nothing calls numpy on it or
copies it to the host behind the caller's back:

* anything without a kernel (``np.sort(x)``, ``np.asarray(x)``, a numpy array mixed in) raises a
  TypeError naming it and saying how to move the data (``cpsgrad.to_host`` / ``cpsgrad.to_device``);
* ``float(x)`` (a one-element array), ``x.item()``, ``x.copy_to_host()`` and
  ``cpsgrad.to_host(x)`` are the explicit copies to the host.

DeviceArrays are never written in place (results are new arrays); indexing returns a copy.
No promotion beyond numpy's float rules: Python and numpy scalars are weak (a float32 array
stays float32), float32 with float64 gives float64, a bool array takes the float dtype.

This module imports neither numba nor the CUDA kernels: they load on the first operation.
"""

from __future__ import annotations

import math
import operator

import numpy as np

__all__ = ["DeviceArray", "to_device", "to_host"]

_ndarray = np.ndarray
_NUMBERS = (float, int, bool)
_MOVE = "move the data with cpsgrad.to_device(array), or the DeviceArray to the host with cpsgrad.to_host(x)"


class DeviceArray:
    """A C-contiguous array on the CUDA device with numpy's operators, ufuncs and functions,
    computed by ``cpsgrad.kernels``' CUDA kernels (see the module docstring)."""

    __slots__ = ("_array",)
    __array_priority__ = 1000.0  # numpy defers a host operator to ours (which then refuses it)
    __hash__ = None  # elementwise ==, as numpy arrays

    def __init__(self, array):
        if type(array) is DeviceArray:
            array = array._array
        elif isinstance(array, _ndarray) or not hasattr(array, "copy_to_host"):
            raise TypeError(
                f"DeviceArray wraps a numba device array, not {type(array).__name__}; "
                "use cpsgrad.to_device(array) for a numpy array"
            )
        if not array.is_c_contiguous():
            raise ValueError(f"DeviceArray needs a C-contiguous device array, got strides {array.strides}")
        self._array = array

    # ---- attributes --------------------------------------------------------------------------
    @property
    def raw(self):
        """The numba device array (or simulator array) this wraps."""
        return self._array

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._array.shape)

    @property
    def dtype(self) -> np.dtype:
        return self._array.dtype

    @property
    def ndim(self) -> int:
        return len(self._array.shape)

    @property
    def size(self) -> int:
        return math.prod(self._array.shape)

    @property
    def T(self) -> DeviceArray:
        return self.transpose()

    @property
    def __cuda_array_interface__(self) -> dict:
        # AttributeError where the raw array has none (the simulator's), so hasattr stays honest
        return self._array.__cuda_array_interface__

    def __len__(self) -> int:
        if not self._array.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self._array.shape[0]

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype})"

    # ---- explicit copies to the host -----------------------------------------------------------
    def copy_to_host(self) -> np.ndarray:
        """A numpy copy (a synchronising device-to-host copy)."""
        return self._array.copy_to_host().reshape(self.shape)

    def __float__(self) -> float:
        if self.size != 1:
            raise TypeError(f"only a one-element DeviceArray converts to float, not shape {self.shape}")
        return float(self.copy_to_host().reshape(1)[0])

    def item(self, *index):
        """One element as a Python number (a copy of that element to the host): the only one
        (no index), at a flat index, or at one index an axis."""
        index = tuple(part for part in index if part is not None)
        if not index:
            if self.size != 1:
                raise ValueError("can only convert an array of size 1 to a Python scalar")
            return self.copy_to_host().reshape(1)[0].item()
        if len(index) == 1 and not isinstance(index[0], tuple):
            index = np.unravel_index(operator.index(index[0]), self.shape)
        elif len(index) == 1:
            index = index[0]
        return self[tuple(index)].item()

    def __bool__(self):
        raise TypeError(
            "the truth value of a DeviceArray would need a copy to the host; "
            "compare float(x) (an explicit copy) or keep the decision on the device with np.where"
        )

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"numpy cannot read a DeviceArray without copying it to the host; {_MOVE}")

    def __iter__(self):
        for position in range(len(self)):
            yield self[position]

    # ---- operators -----------------------------------------------------------------------------
    def __add__(self, other):
        return _binary("add", self, other)

    def __radd__(self, other):
        return _binary("add", other, self)

    def __sub__(self, other):
        return _binary("sub", self, other)

    def __rsub__(self, other):
        return _binary("sub", other, self)

    def __mul__(self, other):
        return _binary("mul", self, other)

    def __rmul__(self, other):
        return _binary("mul", other, self)

    def __truediv__(self, other):
        return _binary("div", self, other)

    def __rtruediv__(self, other):
        return _binary("div", other, self)

    def __pow__(self, other):
        return _binary("pow", self, other)

    def __rpow__(self, other):
        return _binary("pow", other, self)

    def __matmul__(self, other):
        return _matmul(self, other)

    def __rmatmul__(self, other):
        return _matmul(other, self)

    def __neg__(self):
        return _unary("neg", self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _unary("abs", self)

    def __eq__(self, other):
        return _compare("equal", self, other)

    def __ne__(self, other):
        return _compare("not_equal", self, other)

    def __lt__(self, other):
        return _compare("less", self, other)

    def __le__(self, other):
        return _compare("less_equal", self, other)

    def __gt__(self, other):
        return _compare("greater", self, other)

    def __ge__(self, other):
        return _compare("greater_equal", self, other)

    def __getitem__(self, index):
        return _getitem(self, index)

    # ---- numpy protocols ---------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        name = f"numpy.{ufunc.__name__}"
        if method != "__call__":
            raise TypeError(f"{name}.{method} is not supported on a DeviceArray (no CUDA kernel); {_MOVE}")
        extra = sorted(key for key, value in kwargs.items() if value is not None)
        if extra:
            raise TypeError(f"{name}: keyword {', '.join(extra)} is not supported on a DeviceArray")
        implementation = _UFUNCS.get(ufunc)
        if implementation is None:
            raise TypeError(f"{name} is not supported on a DeviceArray (no CUDA kernel); {_MOVE}")
        _refuse_host(name, inputs)
        result = implementation(*inputs)
        if result is NotImplemented:
            kinds = ", ".join(type(value).__name__ for value in inputs)
            raise TypeError(f"{name}: unsupported operand types for a DeviceArray ({kinds})")
        return result

    def __array_function__(self, func, types, args, kwargs):
        implementation = _FUNCTIONS.get(func)
        name = f"numpy.{getattr(func, '__name__', func)}"
        if implementation is None:
            raise TypeError(f"{name} is not supported on a DeviceArray (no CUDA kernel); {_MOVE}")
        # each implementation refuses host arrays among its data operands (axes may be numpy ints)
        return implementation(*args, **kwargs)

    # ---- methods -------------------------------------------------------------------------------
    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        return _reduction("sum", self, axis, keepdims, dtype, out)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        return _reduction("mean", self, axis, keepdims, dtype, out)

    def max(self, axis=None, out=None, keepdims=False):
        return _reduction("max", self, axis, keepdims, None, out)

    def min(self, axis=None, out=None, keepdims=False):
        return _reduction("min", self, axis, keepdims, None, out)

    def reshape(self, *shape, order="C"):
        return _reshape(self, shape[0] if len(shape) == 1 else shape, order)

    def ravel(self, order="C"):
        return _reshape(self, (self.size,), order)

    flatten = ravel

    def squeeze(self, axis=None):
        return _squeeze(self, axis)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
            axes = axes[0]
        else:
            axes = tuple(a for a in axes if a is not None) or None
        return _transpose(self, axes)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dtype = np.dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        return _cast(self, dtype)

    def copy(self, order="K"):
        return _cast(self, self.dtype)

    def clip(self, min=None, max=None):
        return _clip(self, min, max)

    def dot(self, other):
        return _dot(self, other)


# ---- wrapping and operands ---------------------------------------------------------------------


def wrap(raw) -> DeviceArray:
    """A DeviceArray around a C-contiguous raw device array the kernels returned (no checks)."""
    array = object.__new__(DeviceArray)
    array._array = raw
    return array


def unwrap(value):
    """The raw device array of a DeviceArray; anything else as it is."""
    return value._array if type(value) is DeviceArray else value


def _refuse_host(name: str, values) -> None:
    if any(isinstance(value, _ndarray) for value in values):
        _mixed(name)


def _mixed(name: str):
    from cpsgrad.kernels.table import DeviceMismatchError

    raise DeviceMismatchError(f"{name}: a numpy (host) array mixed with a DeviceArray; {_MOVE}")


def _operand(name: str, value):
    """A raw device array or a Python float for a kernel operand; NotImplemented for a type
    that is not an array or a number; a host array raises."""
    kind = type(value)
    if kind is DeviceArray:
        return value._array
    if kind in _NUMBERS:
        return value
    if isinstance(value, np.generic) and value.dtype.kind in "fiub":
        return value.item()
    if isinstance(value, _ndarray):
        _mixed(name)
    if hasattr(value, "copy_to_host"):  # a raw device array
        return value
    return NotImplemented


def _promote(name: str, a, b):
    """Both operands in one float dtype (numpy's promotion for arrays; numbers are weak)."""
    first, second = getattr(a, "dtype", None), getattr(b, "dtype", None)
    if first is None and second is None:
        return a, b
    target = np.result_type(*(d for d in (first, second) if d is not None))
    if target.kind == "b":
        target = np.dtype(np.float64)  # a bool array with a number: numpy gives float64
    if target.kind != "f":
        return a, b  # the table words the dtype error
    if first is not None and first != target:
        a = _cast_raw(a, target)
    if second is not None and second != target:
        b = _cast_raw(b, target)
    return a, b


def _dispatch(op: str, *raw):
    from cpsgrad.kernels.table import dispatch

    return dispatch(op, *raw)


def _run(op: str, *raw, **params):
    return wrap(_dispatch(op, *raw).forward(*raw, **params)[0])


def _binary(op: str, a, b):
    a, b = _operand(op, a), _operand(op, b)
    if a is NotImplemented or b is NotImplemented:
        return NotImplemented
    a, b = _promote(op, a, b)
    return _run(op, a, b)


def _unary(op: str, x):
    x = _operand(op, x)
    if x is NotImplemented:
        return NotImplemented
    if type(x) in _NUMBERS:
        raise TypeError(f"{op}: expected a DeviceArray, got a number")
    if x.dtype.kind == "b":
        x = _cast_raw(x, np.float64)
    return _run(op, x)


def _compare(name: str, a, b):
    a, b = _operand(name, a), _operand(name, b)
    if a is NotImplemented or b is NotImplemented:
        return NotImplemented
    a, b = _promote(name, a, b)
    from cpsgrad.kernels.cuda.compare import compare

    return wrap(compare(name, a, b))


def _logical_not(x):
    from cpsgrad.kernels.cuda.compare import logical_not

    return wrap(logical_not(_device_operand("logical_not", x)))


def _device_operand(name: str, value):
    raw = _operand(name, value)
    if raw is NotImplemented or type(raw) in _NUMBERS:
        raise TypeError(f"{name}: expected a DeviceArray, got {type(value).__name__}")
    return raw


def _cast_raw(raw, dtype):
    from cpsgrad.kernels.cuda.compare import cast

    dtype = np.dtype(dtype)
    if dtype.kind != "f" or raw.dtype.kind not in "bf":
        raise TypeError(f"astype: DeviceArrays cast between bool, float32 and float64 only, not {raw.dtype} to {dtype}")
    return cast(raw, dtype)


def _cast(x, dtype) -> DeviceArray:
    return wrap(_cast_raw(_device_operand("astype", x), dtype))


def _matmul(a, b):
    a, b = _operand("matmul", a), _operand("matmul", b)
    if a is NotImplemented or b is NotImplemented:
        return NotImplemented
    if type(a) in _NUMBERS or type(b) in _NUMBERS:
        raise ValueError("matmul: a number is not a matrix (operands must be at least 1-D)")
    a, b = _promote("matmul", a, b)
    return _run("matmul", a, b)


def _dot(a, b):
    """``np.dot`` where it is a product (a 0-d operand) or a matmul (operands of at most 2-D)."""
    ndims = (np.ndim(a) if not isinstance(a, DeviceArray) else a.ndim, b.ndim if isinstance(b, DeviceArray) else np.ndim(b))
    if 0 in ndims:
        return _binary("mul", a, b)
    if max(ndims) > 2:
        raise TypeError(f"numpy.dot of {ndims[0]}-d and {ndims[1]}-d DeviceArrays is not supported; use np.matmul")
    return _matmul(a, b)


# ---- reductions and shapes ---------------------------------------------------------------------


def _axis(axis):
    if axis is None or isinstance(axis, (int, np.integer)):
        return None if axis is None else int(axis)
    return tuple(int(a) for a in axis)


def _reduction(op: str, x, axis=None, keepdims=False, dtype=None, out=None):
    raw = _device_operand(op, x)
    if out is not None:
        raise TypeError(f"{op}: out= is not supported on a DeviceArray")
    if dtype is not None and np.dtype(dtype) != raw.dtype:
        raise TypeError(f"{op}: dtype= other than the array's is not supported on a DeviceArray")
    if raw.dtype.kind == "b":
        raw = _cast_raw(raw, np.float64)
    return _run(op, raw, axis=_axis(axis), keepdims=bool(keepdims))


def _sum(a, axis=None, dtype=None, out=None, keepdims=False, **unsupported):
    _no_keywords("sum", unsupported)
    return _reduction("sum", a, axis, keepdims, dtype, out)


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, **unsupported):
    _no_keywords("mean", unsupported)
    return _reduction("mean", a, axis, keepdims, dtype, out)


def _max(a, axis=None, out=None, keepdims=False, **unsupported):
    _no_keywords("max", unsupported)
    return _reduction("max", a, axis, keepdims, None, out)


def _min(a, axis=None, out=None, keepdims=False, **unsupported):
    _no_keywords("min", unsupported)
    return _reduction("min", a, axis, keepdims, None, out)


def _no_keywords(name: str, keywords: dict) -> None:
    if keywords:
        raise TypeError(f"numpy.{name}: keyword {', '.join(sorted(keywords))} is not supported on a DeviceArray")


def _new_shape(name: str, size: int, shape) -> tuple[int, ...]:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise ValueError(f"{name}: can only specify one unknown dimension")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or size % known:
            raise ValueError(f"{name}: cannot reshape array of size {size} into shape {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if math.prod(shape) != size:
        raise ValueError(f"{name}: cannot reshape array of size {size} into shape {shape}")
    return shape


def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    raw = _device_operand("reshape", a)
    if order != "C":
        raise TypeError(f"reshape: order={order!r} is not supported on a DeviceArray (C order only)")
    shape = newshape if shape is None else shape
    return wrap(raw.reshape(_new_shape("reshape", math.prod(raw.shape), shape)))


def _ravel(a, order="C"):
    return _reshape(a, (a.size,), order)


def _squeeze(a, axis=None):
    shape = a.shape
    if axis is None:
        dropped = {i for i, s in enumerate(shape) if s == 1}
    else:
        dropped = {int(x) % len(shape) for x in ((axis,) if isinstance(axis, (int, np.integer)) else axis)}
        if any(shape[i] != 1 for i in dropped):
            raise ValueError("squeeze: cannot select an axis to squeeze out which has size not equal to one")
    return _reshape(a, tuple(s for i, s in enumerate(shape) if i not in dropped))


def _expand_dims(a, axis):
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    ndim = a.ndim + len(axes)
    placed = {int(x) % ndim for x in axes}
    sizes = iter(a.shape)
    return _reshape(a, tuple(1 if i in placed else next(sizes) for i in range(ndim)))


def _transpose(a, axes=None):
    raw = _device_operand("transpose", a)
    if axes is not None:
        axes = tuple(int(x) for x in axes)
    if raw.dtype.kind == "b":
        raise TypeError("transpose: bool DeviceArrays are not supported")
    if len(raw.shape) < 2 and axes in (None, (0,), (-1,), ()):
        return wrap(raw)
    return _run("transpose", raw, axes=axes)


def _swapaxes(a, axis1, axis2):
    order = list(range(a.ndim))
    first, second = int(axis1) % a.ndim, int(axis2) % a.ndim
    order[first], order[second] = order[second], order[first]
    return _transpose(a, order)


def _moveaxis(a, source, destination):
    sources = [int(s) % a.ndim for s in ((source,) if isinstance(source, (int, np.integer)) else source)]
    targets = [int(d) % a.ndim for d in ((destination,) if isinstance(destination, (int, np.integer)) else destination)]
    order = [axis for axis in range(a.ndim) if axis not in sources]
    for target, axis in sorted(zip(targets, sources, strict=True)):
        order.insert(target, axis)
    return _transpose(a, order)


def _broadcast_to(array, shape, subok=False):
    raw = _device_operand("broadcast_to", array)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    from cpsgrad.kernels.cuda.layout import broadcast, broadcast_shape

    if broadcast_shape("broadcast_to", raw.shape, shape) != shape:
        raise ValueError(f"broadcast_to: cannot broadcast shape {tuple(raw.shape)} to {shape}")
    if tuple(raw.shape) == shape:
        return wrap(raw)
    return wrap(broadcast(raw, shape))


def _outer(a, b, out=None):
    a, b = _device_operand("outer", a), _device_operand("outer", b)
    a, b = _promote("outer", a, b)
    return _run("outer", a, b)


def _sequence(name: str, arrays) -> list:
    raws = [_operand(name, array) for array in arrays]
    if any(raw is NotImplemented or type(raw) in _NUMBERS for raw in raws):
        raise TypeError(f"{name}: every array must be a DeviceArray")
    dtype = np.result_type(*(raw.dtype for raw in raws))
    return [raw if raw.dtype == dtype else _cast_raw(raw, dtype) for raw in raws]


def _concatenate(arrays, axis=0, out=None, **unsupported):
    _no_keywords("concatenate", unsupported)
    raws = _sequence("concatenate", arrays)
    if axis is None:
        raws = [raw.reshape(math.prod(raw.shape)) for raw in raws]
        axis = 0
    return _run("concatenate", *raws, axis=int(axis))


def _stack(arrays, axis=0, out=None, **unsupported):
    _no_keywords("stack", unsupported)
    return _run("stack", *_sequence("stack", arrays), axis=int(axis))


def _where(condition, x=None, y=None):
    if x is None or y is None:
        raise TypeError(f"numpy.where(condition) (the indices) is not supported on a DeviceArray; {_MOVE}")
    condition = _device_operand("where", condition)
    if condition.dtype.kind != "b":
        from cpsgrad.kernels.cuda.compare import compare

        condition = compare("not_equal", condition, 0.0)
    x, y = _operand("where", x), _operand("where", y)
    if x is NotImplemented or y is NotImplemented:
        raise TypeError("numpy.where: the choices must be DeviceArrays or numbers")
    x, y = _promote("where", x, y)  # a number takes the other choice's dtype, two numbers float64 (the kernel's operands)
    return _run("where", condition, x, y)


def _clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None, **unsupported):
    _no_keywords("clip", unsupported)
    if out is not None:
        raise TypeError("clip: out= is not supported on a DeviceArray")
    low = min if a_min is None else a_min
    high = max if a_max is None else a_max
    if low is None and high is None:
        raise ValueError("clip: one of max or min must be given")
    raw = _device_operand("clip", a)
    if all(bound is None or type(bound) in _NUMBERS or isinstance(bound, np.generic) for bound in (low, high)):
        low = -math.inf if low is None else float(low)
        high = math.inf if high is None else float(high)
        return _run("clip", raw, low, high)
    result = wrap(raw)
    if low is not None:
        result = _binary("maximum", result, low)
    if high is not None:
        result = _binary("minimum", result, high)
    return result


def _like(name: str, a, value, dtype=None, shape=None):
    raw = _device_operand(name, a)
    dtype = np.dtype(raw.dtype if dtype is None else dtype)
    return full(raw.shape if shape is None else shape, dtype, value)


def _zeros_like(a, dtype=None, order="K", subok=True, shape=None, **unsupported):
    _no_keywords("zeros_like", unsupported)
    return _like("zeros_like", a, 0.0, dtype, shape)


def _ones_like(a, dtype=None, order="K", subok=True, shape=None, **unsupported):
    _no_keywords("ones_like", unsupported)
    return _like("ones_like", a, 1.0, dtype, shape)


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **unsupported):
    _no_keywords("full_like", unsupported)
    fill = _operand("full_like", fill_value)
    if type(fill) not in _NUMBERS:
        raise TypeError("numpy.full_like: the fill value must be a number on a DeviceArray")
    return _like("full_like", a, float(fill), dtype, shape)


def _copy(a, order="K", subok=False):
    return _cast(a, a.dtype)


def _size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


def full(shape, dtype, value: float) -> DeviceArray:
    """A DeviceArray of ``shape`` and ``dtype`` (float32, float64 or bool) filled with ``value``."""
    from cpsgrad.kernels.cuda.arrays import full as fill

    dtype = np.dtype(dtype)
    shape = tuple(shape)
    if dtype.kind == "b":
        from cpsgrad.kernels.cuda.compare import compare

        return wrap(compare("not_equal", fill(shape, np.float64, float(value)), 0.0))
    return wrap(fill(shape, dtype, float(value)))


def zeros(shape, dtype) -> DeviceArray:
    return full(shape, dtype, 0.0)


# ---- indexing ----------------------------------------------------------------------------------


def basic_view(shape: tuple, index) -> tuple[tuple, list, int] | None:
    """``(shape, element strides, start offset)`` of ``x[index]`` in a C-contiguous ``x`` of
    ``shape`` for a basic index (ints, slices, None, Ellipsis); None for any other index."""
    parts = index if type(index) is tuple else (index,)
    if any(not _basic(part) for part in parts):
        return None
    if sum(part is Ellipsis for part in parts) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(part is not None and part is not Ellipsis for part in parts)
    if used > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but {used} were indexed")
    if Ellipsis in parts:
        at = next(i for i, part in enumerate(parts) if part is Ellipsis)
        parts = parts[:at] + (slice(None),) * (len(shape) - used) + parts[at + 1 :]
    else:
        parts = parts + (slice(None),) * (len(shape) - used)
    strides, step = [0] * len(shape), 1
    for axis in range(len(shape) - 1, -1, -1):
        strides[axis] = step
        step *= shape[axis]
    out_shape, out_strides, start, axis = [], [], 0, 0
    for part in parts:
        if part is None:
            out_shape.append(1)
            out_strides.append(0)
            continue
        size = shape[axis]
        if isinstance(part, slice):
            first, stop, stride = part.indices(size)
            length = len(range(first, stop, stride))
            if length:
                start += first * strides[axis]
            out_shape.append(length)
            out_strides.append(stride * strides[axis])
        else:
            position = operator.index(part)
            if not -size <= position < size:
                raise IndexError(f"index {position} is out of bounds for axis {axis} with size {size}")
            start += (position % size) * strides[axis]
        axis += 1
    return tuple(out_shape), out_strides, start


def _basic(part) -> bool:
    if part is None or part is Ellipsis or isinstance(part, slice):
        return True
    return isinstance(part, (int, np.integer)) and not isinstance(part, (bool, np.bool_))


def _getitem(x: DeviceArray, index):
    raw = x._array
    view = basic_view(tuple(raw.shape), index)
    if view is not None:
        shape, strides, start = view
        from cpsgrad.kernels.cuda.layout import gather_view

        if raw.dtype.kind == "b":
            raise TypeError("indexing a bool DeviceArray is not supported")
        return wrap(gather_view(raw, shape, strides, start))
    indices = _indices(index)
    return _run("gather", raw, indices, axis=0)


def _indices(index):
    """An integer index array on the device for the gather kernel: a DeviceArray's, or a numpy
    array or list of ints copied there (indices are small metadata, as the kernel takes them)."""
    if type(index) is DeviceArray:
        index = index._array
    elif isinstance(index, list):
        index = np.asarray(index)
    dtype = getattr(index, "dtype", None)
    if dtype is None or dtype.kind not in "iu":
        kind = "a boolean mask" if dtype is not None and dtype.kind == "b" else f"the index {index!r}"
        raise TypeError(
            f"DeviceArray indexing takes ints, slices, None, ... and integer arrays (on the first "
            f"axis); {kind} is not supported on the device; {_MOVE}"
        )
    if isinstance(index, _ndarray):
        from cpsgrad.kernels.cuda.transfer import to_device as move

        index = move(index.astype(np.int64, copy=False))
    return index


def index_adjoint(container: DeviceArray, index, adjoint) -> DeviceArray:
    """The adjoint of ``container`` when only ``container[index]`` was read: zeros with the
    adjoint written (basic index) or scatter-added (integer arrays: repeats add up) in place."""
    raw = container._array
    view = basic_view(tuple(raw.shape), index)
    if view is None:
        indices = _indices(index)
        kernel = _dispatch("gather", raw, indices)
        output, saved = kernel.forward(raw, indices, axis=0)
        return wrap(kernel.backward(_conformed(adjoint, tuple(output.shape), raw.dtype), saved)[0])
    from cpsgrad.kernels.cuda.layout import scatter_view

    shape, strides, start = view
    result = zeros(raw.shape, raw.dtype)
    scatter_view(_conformed(adjoint, shape, raw.dtype), result._array.reshape(result.size), strides, start)
    return result


def conformed(value, shape, dtype) -> DeviceArray:
    """``value`` (a number or a device array) as a DeviceArray of ``shape`` and ``dtype``."""
    return wrap(_conformed(value, tuple(shape), np.dtype(dtype)))


def _conformed(value, shape, dtype):
    """``value`` (a number or a DeviceArray) as a raw device array of ``shape`` and ``dtype``."""
    raw = _operand("adjoint", value)
    if raw is NotImplemented:
        raise TypeError(f"expected a DeviceArray or a number, got {type(value).__name__}")
    if type(raw) in _NUMBERS:
        return full(shape, dtype, raw)._array
    if raw.dtype != dtype:
        raw = _cast_raw(raw, dtype)
    if tuple(raw.shape) != tuple(shape):
        return _broadcast_to(wrap(raw), shape)._array
    return raw


# ---- the ufunc and function tables ---------------------------------------------------------------


def _binary_ufunc(op):
    return lambda a, b: _binary(op, a, b)


def _unary_ufunc(op):
    return lambda x: _unary(op, x)


def _compare_ufunc(name):
    return lambda a, b: _compare(name, a, b)


_UFUNCS = {
    np.add: _binary_ufunc("add"),
    np.subtract: _binary_ufunc("sub"),
    np.multiply: _binary_ufunc("mul"),
    np.divide: _binary_ufunc("div"),
    np.power: _binary_ufunc("pow"),
    np.maximum: _binary_ufunc("maximum"),
    np.minimum: _binary_ufunc("minimum"),
    np.matmul: _matmul,
    np.positive: lambda x: x,
    **{getattr(np, name): _compare_ufunc(name) for name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")},
    np.logical_not: _logical_not,
    np.negative: _unary_ufunc("neg"),
    np.absolute: _unary_ufunc("abs"),
    **{getattr(np, name): _unary_ufunc(name) for name in "exp log log1p sqrt square sin cos tanh".split()},
}

_FUNCTIONS = {
    np.sum: _sum,
    np.mean: _mean,
    np.max: _max,
    np.amax: _max,
    np.min: _min,
    np.amin: _min,
    np.dot: _dot,
    np.outer: _outer,
    np.transpose: _transpose,
    np.swapaxes: _swapaxes,
    np.moveaxis: _moveaxis,
    np.where: _where,
    np.clip: _clip,
    np.concatenate: _concatenate,
    np.stack: _stack,
    np.reshape: _reshape,
    np.ravel: _ravel,
    np.squeeze: _squeeze,
    np.expand_dims: _expand_dims,
    np.broadcast_to: _broadcast_to,
    np.zeros_like: _zeros_like,
    np.ones_like: _ones_like,
    np.full_like: _full_like,
    np.copy: _copy,
    np.shape: lambda a: a.shape,
    np.ndim: lambda a: a.ndim,
    np.size: _size,
}


# ---- moving arrays -------------------------------------------------------------------------------


def to_device(array) -> DeviceArray:
    """A DeviceArray holding a copy of the numpy array ``array`` (C-contiguous on the device); a
    DeviceArray is returned as it is and a raw numba device array is wrapped (not copied).
    RuntimeError without CUDA (and without ``NUMBA_ENABLE_CUDASIM=1``)."""
    if type(array) is DeviceArray:
        return array
    from cpsgrad.kernels.cuda.transfer import to_device as move

    moved = move(array)
    return DeviceArray(moved) if moved is array else wrap(moved)


def to_host(array) -> np.ndarray:
    """A numpy copy of a DeviceArray or a raw device array; a numpy array is returned as it is."""
    if type(array) is DeviceArray:
        return array.copy_to_host()
    from cpsgrad.kernels.cuda.transfer import to_host as move

    return move(array)
