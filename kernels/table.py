"""The dispatch table: op name -> forward/backward implementation per device.

Every kernel follows one calling convention:

* ``forward(*inputs, **params) -> (output, residuals)``: ``residuals`` is whatever the backward
  needs (a tuple), so nothing is recomputed;
* ``backward(output_adjoint, residuals) -> tuple``: one adjoint per differentiable input, in
  input order, already reduced to that input's shape.

Built-in kernels are listed by name in each device's catalog (``cpsgrad.kernels.cpu.CATALOG``),
or are a module of ``cpsgrad.kernels.standalone`` holding an op's kernels for both devices, and are
imported on first dispatch, so importing this module compiles nothing and does not import
numba.

The table also speaks the array type that wraps raw device arrays (``DeviceArray``): that type
installs itself with ``install_wrapper`` when its module is imported, so this module imports
nothing of it (``cpsgrad.kernels.device_array`` imports the table, not the other way round).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "DeviceMismatchError",
    "Kernel",
    "describe",
    "device_of",
    "dispatch",
    "install_wrapper",
    "lookup",
    "ops",
    "register",
]

DEVICES = ("cpu", "cuda")

# numba's CUDA simulator arrays have no __cuda_array_interface__, so they are known by type.
_SIMULATOR_ARRAYS = "numba.cuda.simulator.cudadrv.devicearray"


class DeviceMismatchError(TypeError, ValueError):
    """Host and device arrays mixed in one op (a TypeError; a ValueError for older callers)."""


@dataclass(frozen=True, slots=True)
class Kernel:
    """One op's implementation on one device; calling it runs the forward."""

    op: str
    device: str
    forward: Callable
    backward: Callable
    dtypes: frozenset

    def __call__(self, *args, **params):
        return self.forward(*args, **params)


@dataclass(slots=True)
class _Slot:
    """A table cell: a kernel, or the module that defines it until first use."""

    dtypes: frozenset
    index_args: frozenset
    kernel: Kernel | None = None
    module: str | None = None
    prefix: str | None = None  # of the module's functions: ``<prefix>_forward``; the op by default


_table: dict[str, dict[str, _Slot]] = {}

# The dispatch fast path: op -> (kernel, accepted dtypes, index_args) of its resolved CPU entry.
# Filled on the first CPU dispatch of an op, dropped whenever the op is registered again.
_fast: dict[str, tuple[Kernel, frozenset, frozenset]] = {}

_ndarray = np.ndarray
# Argument types the table skips (no device, no dtype): the fast path may step over them.
_SKIPPED = frozenset({float, int, bool, type(None)})


class _NoWrapper:
    """The wrapper type until one is installed: no array is of this type."""


# The array type wrapping raw device arrays, and its wrap / unwrap (see ``install_wrapper``).
_Wrapper: type = _NoWrapper
_wrap = _unwrap = None


def install_wrapper(array_type: type, wrap: Callable, unwrap: Callable) -> None:
    """Let ``dispatch`` take arrays of ``array_type`` (wrappers of raw device arrays: they run on
    CUDA) and return kernels that speak them: ``unwrap(array)`` is the raw array of a wrapper (or
    anything else as it is), ``wrap(raw)`` a wrapper around a raw device array a kernel returned.
    ``cpsgrad.kernels.device_array`` installs ``DeviceArray`` when imported; one type at a time."""
    global _Wrapper, _wrap, _unwrap
    _Wrapper, _wrap, _unwrap = array_type, wrap, unwrap
    _wrapped.clear()


def _dtype_set(dtypes: Iterable) -> frozenset:
    return frozenset(np.dtype(dtype) for dtype in dtypes)


def register(
    op: str,
    device: str,
    forward: Callable,
    backward: Callable,
    dtypes: Iterable,
    index_args: Iterable[int] = (),
) -> Kernel:
    """Add or replace the implementation of ``op`` on ``device``.

    ``dtypes`` are the floating dtypes the kernel accepts; ``index_args`` are positions of
    arguments that are integer or boolean arrays (indices, labels, conditions) rather than data.
    """
    if device not in DEVICES:
        raise ValueError(f"register: unknown device {device!r}; expected one of {DEVICES}")
    kernel = Kernel(op, device, forward, backward, _dtype_set(dtypes))
    _table.setdefault(op, {})[device] = _Slot(kernel.dtypes, frozenset(index_args), kernel)
    _fast.pop(op, None)
    return kernel


def _register_lazy(op: str, device: str, module: str, dtypes: Iterable, index_args, prefix=None) -> None:
    _table.setdefault(op, {})[device] = _Slot(
        _dtype_set(dtypes), frozenset(index_args), module=module, prefix=prefix
    )
    _fast.pop(op, None)


def device_of(array) -> str | None:
    """The device an array lives on, or None for anything that is not an array."""
    if isinstance(array, _ndarray):
        return "cpu"
    kind = type(array)
    if kind is _Wrapper or hasattr(array, "__cuda_array_interface__") or kind.__module__ == _SIMULATOR_ARRAYS:
        return "cuda"
    return None


def _resolve(op: str, device: str, slot: _Slot) -> Kernel:
    module = importlib.import_module(slot.module)
    prefix = slot.prefix or op
    forward = getattr(module, f"{prefix}_forward")
    backward = getattr(module, f"{prefix}_backward")
    slot.kernel = Kernel(op, device, forward, backward, slot.dtypes)
    return slot.kernel


def _kernel_of(op: str, device: str, slot: _Slot) -> Kernel:
    """The slot's kernel (importing its module on first use), remembered for the fast path."""
    kernel = slot.kernel or _resolve(op, device, slot)
    if device == "cpu":
        _fast[op] = (kernel, slot.dtypes, slot.index_args)
    return kernel


def dispatch(op: str, *arrays) -> Kernel:
    """The kernel for ``op`` on the device of ``arrays``, after checking their dtypes.

    Non-array arguments (Python scalars, None) are skipped. Raises KeyError for an unknown op,
    DeviceMismatchError (a TypeError) for host and device arrays mixed, and TypeError for an
    unsupported dtype.
    """
    # Fast path: a CPU kernel already resolved and every argument a plain numpy array of an
    # accepted dtype (or a Python scalar / None). Anything else, including every error, takes the
    # general path below, which decides exactly as before. Nothing is allocated beyond ``*arrays``
    # (and ``enumerate`` for the few ops with index arguments).
    entry = _fast.get(op)
    if entry is not None:
        kernel, accepted, index_args = entry
        seen = False
        if not index_args:
            for array in arrays:
                if type(array) is _ndarray:
                    if array.dtype not in accepted:
                        break
                    seen = True
                elif type(array) not in _SKIPPED:
                    break
            else:
                if seen:
                    return kernel
        else:
            for position, array in enumerate(arrays):
                if type(array) is _ndarray:
                    if position in index_args:
                        if array.dtype.kind not in "iub":
                            break
                    elif array.dtype not in accepted:
                        break
                    seen = True
                elif type(array) not in _SKIPPED:
                    break
            else:
                if seen:
                    return kernel
    return _dispatch(op, arrays)


def _dispatch(op: str, arrays: tuple) -> Kernel:
    """The general path of ``dispatch``: any array types, and every error."""
    devices = _table.get(op)
    if devices is None:
        raise KeyError(f"no kernel named {op!r}; see cpsgrad.kernels.describe()")
    device = None
    wrapped = False
    for array in arrays:
        wrapped = wrapped or type(array) is _Wrapper
        found = "cpu" if type(array) is _ndarray else device_of(array)
        if found is None or found == device:
            continue
        if device is not None:
            raise DeviceMismatchError(
                f"{op}: arrays on different devices ({device} and {found}); move them to one "
                "with cpsgrad.to_device or cpsgrad.to_host"
            )
        device = found
    if device is None:
        raise TypeError(f"{op}: expected at least one array argument")
    slot = devices.get(device)
    if slot is None:
        raise NotImplementedError(f"{op}: no {device} kernel; available: {sorted(devices)}")
    for position, array in enumerate(arrays):
        dtype = getattr(array, "dtype", None)
        if dtype is None:
            continue
        if position in slot.index_args:
            if dtype.kind not in "iub":
                raise TypeError(f"{op}: argument {position} must be an integer array, got {dtype}")
        elif dtype not in slot.dtypes:
            names = " ".join(sorted(d.name for d in slot.dtypes))
            raise TypeError(f"{op}: unsupported dtype {dtype}; supported: {names}")
    kernel = _kernel_of(op, device, slot)
    return _for_device_arrays(kernel) if wrapped else kernel


# op -> (kernel, the same kernel speaking DeviceArrays), rebuilt when the op's kernel changes
_wrapped: dict[str, tuple[Kernel, Kernel]] = {}


def _for_device_arrays(kernel: Kernel) -> Kernel:
    """``kernel`` taking wrappers (``cpsgrad.to_device``'s DeviceArrays) where it takes raw device
    arrays, and returning wrappers: the forward unwraps its arguments and wraps its output(s),
    the backward unwraps the adjoint(s) and wraps the input adjoints; residuals stay raw."""
    entry = _wrapped.get(kernel.op)
    if entry is not None and entry[0] is kernel:
        return entry[1]
    forward, backward = kernel.forward, kernel.backward
    unwrap = _unwrap

    def forward_device_arrays(*args, **params):
        output, saved = forward(*map(unwrap, args), **params)
        return _wrap_all(output), saved

    def backward_device_arrays(adjoint, saved):
        if type(adjoint) is tuple:
            adjoint = tuple(map(unwrap, adjoint))
        return _wrap_all(backward(unwrap(adjoint), saved))

    speaking = Kernel(kernel.op, kernel.device, forward_device_arrays, backward_device_arrays, kernel.dtypes)
    _wrapped[kernel.op] = (kernel, speaking)
    return speaking


def _wrap_all(value):
    if type(value) is tuple:
        return tuple(map(_wrap_all, value))
    raw = hasattr(value, "copy_to_host") and not isinstance(value, _ndarray) and type(value) is not _Wrapper
    return _wrap(value) if raw else value


def lookup(op: str, device: str = "cpu") -> Kernel:
    """The kernel for ``op`` on ``device`` with no array to inspect and no dtype check.

    For a caller that calls one op many times (a derivative rule): look the kernel up once,
    keep it, and call ``kernel.forward`` / ``kernel.backward`` directly, so no dispatch cost is
    paid per call. The caller then owns the checks ``dispatch`` would make (device and dtypes of
    the arrays; ``kernel.dtypes`` lists the accepted ones). A kept kernel does not follow a later
    ``register`` of the same op. Raises KeyError for an unknown op or device name and
    NotImplementedError when the op has no kernel on ``device``.
    """
    devices = _table.get(op)
    if devices is None:
        raise KeyError(f"no kernel named {op!r}; see cpsgrad.kernels.describe()")
    if device not in DEVICES:
        raise KeyError(f"lookup: unknown device {device!r}; expected one of {DEVICES}")
    slot = devices.get(device)
    if slot is None:
        raise NotImplementedError(f"{op}: no {device} kernel; available: {sorted(devices)}")
    return _kernel_of(op, device, slot)


def ops() -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """Every op as ``(name, devices, dtypes)``, sorted by name."""
    rows = []
    for name in sorted(_table):
        devices = _table[name]
        dtypes = set().union(*(slot.dtypes for slot in devices.values()))
        rows.append((name, tuple(sorted(devices)), tuple(sorted(d.name for d in dtypes))))
    return rows


def describe() -> list[str]:
    """One aligned line an op: ``name  devices  dtypes``, e.g. ``conv2d  cpu cuda  float32 float64``."""
    rows = [(name, " ".join(devs), " ".join(dts)) for name, devs, dts in ops()]
    width = max((len(name) for name, _, _ in rows), default=0)
    devices = max((len(devs) for _, devs, _ in rows), default=0)
    return [f"{name:<{width}}  {devs:<{devices}}  {dts}" for name, devs, dts in rows]


def _load_catalogs() -> None:
    from cpsgrad.kernels import cpu, cuda, standalone

    # Both catalogs are import-free: the CUDA entries cost nothing until a device array arrives.
    for device, catalog in (("cpu", cpu.CATALOG), ("cuda", cuda.CATALOG)):
        for op, (module, index_args) in catalog.items():
            package = f"cpsgrad.kernels.{device}.{module}"
            _register_lazy(op, device, package, ("float32", "float64"), index_args)
    # An op of kernels/standalone/ is one module for both devices (``cpu_forward``, ``cuda_forward``, ...),
    # found by its file name.
    for op in standalone.names():
        for device in DEVICES:
            _register_lazy(op, device, f"cpsgrad.kernels.standalone.{op}", ("float32", "float64"), (), prefix=device)


_load_catalogs()
