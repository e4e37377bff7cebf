"""The dispatch table: op name -> forward/backward implementation per device.

Every kernel follows one calling convention:

* ``forward(*inputs, **params) -> (output, residuals)``: ``residuals`` is whatever the backward
  needs (a tuple), so nothing is recomputed;
* ``backward(output_adjoint, residuals) -> tuple``: one adjoint per differentiable input, in
  input order, already reduced to that input's shape.

Built-in kernels are listed by name in each device's catalog (``cpsgrad.kernels.cpu.CATALOG``)
and imported on first dispatch, so importing this module compiles nothing and does not import
numba.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

__all__ = ["DeviceMismatchError", "Kernel", "describe", "device_of", "dispatch", "ops", "register"]

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


_table: dict[str, dict[str, _Slot]] = {}


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
    return kernel


def _register_lazy(op: str, device: str, module: str, dtypes: Iterable, index_args) -> None:
    _table.setdefault(op, {})[device] = _Slot(
        _dtype_set(dtypes), frozenset(index_args), module=module
    )


def device_of(array) -> str | None:
    """The device an array lives on, or None for anything that is not an array."""
    if isinstance(array, np.ndarray):
        return "cpu"
    if hasattr(array, "__cuda_array_interface__") or type(array).__module__ == _SIMULATOR_ARRAYS:
        return "cuda"
    return None


def _resolve(op: str, device: str, slot: _Slot) -> Kernel:
    module = importlib.import_module(slot.module)
    forward = getattr(module, f"{op}_forward")
    backward = getattr(module, f"{op}_backward")
    slot.kernel = Kernel(op, device, forward, backward, slot.dtypes)
    return slot.kernel


def dispatch(op: str, *arrays) -> Kernel:
    """The kernel for ``op`` on the device of ``arrays``, after checking their dtypes.

    Non-array arguments (Python scalars, None) are skipped. Raises KeyError for an unknown op,
    DeviceMismatchError (a TypeError) for host and device arrays mixed, and TypeError for an
    unsupported dtype.
    """
    devices = _table.get(op)
    if devices is None:
        raise KeyError(f"no kernel named {op!r}; see cpsgrad.kernels.describe()")
    device = None
    for array in arrays:
        found = "cpu" if type(array) is np.ndarray else device_of(array)
        if found is None or found == device:
            continue
        if device is not None:
            raise DeviceMismatchError(
                f"{op}: arrays on different devices ({device} and {found}); move them to one "
                "with cpsgrad.kernels.to_device or cpsgrad.kernels.to_host"
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
    return slot.kernel or _resolve(op, device, slot)


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
    from cpsgrad.kernels import cpu, cuda

    # Both catalogs are import-free: the CUDA entries cost nothing until a device array arrives.
    for device, catalog in (("cpu", cpu.CATALOG), ("cuda", cuda.CATALOG)):
        for op, (module, index_args) in catalog.items():
            package = f"cpsgrad.kernels.{device}.{module}"
            _register_lazy(op, device, package, ("float32", "float64"), index_args)


_load_catalogs()
