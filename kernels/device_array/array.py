"""The ``DeviceArray`` class (numpy's face over a raw device array), wrapping, and the copies
between host and device. The operations its methods run live in the sibling modules, which
import the class: each installs its operations in ``_ops`` when imported (the package imports
them all), so this module imports none of them."""

from __future__ import annotations

import math
import operator

import numpy as np

from cpsgrad.kernels import table

__all__ = ["DeviceArray", "to_device", "to_host", "unwrap", "wrap"]

_ndarray = np.ndarray
_NUMBERS = (float, int, bool)
_MOVE = "move the data with cpsgrad.to_device(array), or the DeviceArray to the host with cpsgrad.to_host(x)"


class _Operations:
    """The operations DeviceArray's methods run (``_ops.binary("add", self, other)``), each set by
    the sibling module that implements it (``operands``, ``shaping``, ``indexing``, ``numpy_api``)
    when the package imports it."""

    __slots__ = (
        "binary", "unary", "compare", "matmul", "dot", "cast", "refuse_host",
        "reduction", "reshape", "squeeze", "transpose", "clip", "getitem", "ufuncs", "functions",
    )

    def install(self, **operations) -> None:
        for name, operation in operations.items():
            setattr(self, name, operation)


_ops = _Operations()


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
        return _ops.binary("add", self, other)

    def __radd__(self, other):
        return _ops.binary("add", other, self)

    def __sub__(self, other):
        return _ops.binary("sub", self, other)

    def __rsub__(self, other):
        return _ops.binary("sub", other, self)

    def __mul__(self, other):
        return _ops.binary("mul", self, other)

    def __rmul__(self, other):
        return _ops.binary("mul", other, self)

    def __truediv__(self, other):
        return _ops.binary("div", self, other)

    def __rtruediv__(self, other):
        return _ops.binary("div", other, self)

    def __pow__(self, other):
        return _ops.binary("pow", self, other)

    def __rpow__(self, other):
        return _ops.binary("pow", other, self)

    def __matmul__(self, other):
        return _ops.matmul(self, other)

    def __rmatmul__(self, other):
        return _ops.matmul(other, self)

    def __neg__(self):
        return _ops.unary("neg", self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _ops.unary("abs", self)

    def __eq__(self, other):
        return _ops.compare("equal", self, other)

    def __ne__(self, other):
        return _ops.compare("not_equal", self, other)

    def __lt__(self, other):
        return _ops.compare("less", self, other)

    def __le__(self, other):
        return _ops.compare("less_equal", self, other)

    def __gt__(self, other):
        return _ops.compare("greater", self, other)

    def __ge__(self, other):
        return _ops.compare("greater_equal", self, other)

    def __getitem__(self, index):
        return _ops.getitem(self, index)

    # ---- numpy protocols ---------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        name = f"numpy.{ufunc.__name__}"
        if method != "__call__":
            raise TypeError(f"{name}.{method} is not supported on a DeviceArray (no CUDA kernel); {_MOVE}")
        extra = sorted(key for key, value in kwargs.items() if value is not None)
        if extra:
            raise TypeError(f"{name}: keyword {', '.join(extra)} is not supported on a DeviceArray")
        implementation = _ops.ufuncs.get(ufunc)
        if implementation is None:
            raise TypeError(f"{name} is not supported on a DeviceArray (no CUDA kernel); {_MOVE}")
        _ops.refuse_host(name, inputs)
        result = implementation(*inputs)
        if result is NotImplemented:
            kinds = ", ".join(type(value).__name__ for value in inputs)
            raise TypeError(f"{name}: unsupported operand types for a DeviceArray ({kinds})")
        return result

    def __array_function__(self, func, types, args, kwargs):
        implementation = _ops.functions.get(func)
        name = f"numpy.{getattr(func, '__name__', func)}"
        if implementation is None:
            raise TypeError(f"{name} is not supported on a DeviceArray (no CUDA kernel); {_MOVE}")
        # each implementation refuses host arrays among its data operands (axes may be numpy ints)
        return implementation(*args, **kwargs)

    # ---- methods -------------------------------------------------------------------------------
    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        return _ops.reduction("sum", self, axis, keepdims, dtype, out)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        return _ops.reduction("mean", self, axis, keepdims, dtype, out)

    def max(self, axis=None, out=None, keepdims=False):
        return _ops.reduction("max", self, axis, keepdims, None, out)

    def min(self, axis=None, out=None, keepdims=False):
        return _ops.reduction("min", self, axis, keepdims, None, out)

    def reshape(self, *shape, order="C"):
        return _ops.reshape(self, shape[0] if len(shape) == 1 else shape, order)

    def ravel(self, order="C"):
        return _ops.reshape(self, (self.size,), order)

    flatten = ravel

    def squeeze(self, axis=None):
        return _ops.squeeze(self, axis)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
            axes = axes[0]
        else:
            axes = tuple(a for a in axes if a is not None) or None
        return _ops.transpose(self, axes)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dtype = np.dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        return _ops.cast(self, dtype)

    def copy(self, order="K"):
        return _ops.cast(self, self.dtype)

    def clip(self, min=None, max=None):
        return _ops.clip(self, min, max)

    def dot(self, other):
        return _ops.dot(self, other)


def wrap(raw) -> DeviceArray:
    """A DeviceArray around a C-contiguous raw device array the kernels returned (no checks)."""
    array = object.__new__(DeviceArray)
    array._array = raw
    return array


def unwrap(value):
    """The raw device array of a DeviceArray; anything else as it is."""
    return value._array if type(value) is DeviceArray else value


table.install_wrapper(DeviceArray, wrap, unwrap)


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
