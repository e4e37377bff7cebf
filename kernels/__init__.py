"""cpsgrad's tensor kernels: forward and backward per op and device, behind one dispatch table.

Importing this package is cheap: it neither imports numba nor compiles anything; a kernel's
module is imported (and its numba functions compiled or loaded from cache) on first dispatch.
The device is chosen by array type: numpy arrays run on the CPU, numba device arrays (anything
with ``__cuda_array_interface__``, or the CUDA simulator's arrays) on CUDA.
"""

from cpsgrad.kernels import thresholds
from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.kernels.table import (
    DeviceMismatchError,
    Kernel,
    describe,
    device_of,
    dispatch,
    lookup,
    ops,
    register,
)

__all__ = [
    "DeviceArray",
    "DeviceMismatchError",
    "Kernel",
    "cuda_available",
    "describe",
    "device_of",
    "dispatch",
    "lookup",
    "ops",
    "register",
    "thresholds",
    "to_device",
    "to_host",
]


def cuda_available() -> str | None:
    """``"gpu"``, ``"simulator"`` or None (imports numba, so it is not run at import time)."""
    from cpsgrad.kernels.cuda.transfer import cuda_available as probe

    return probe()


def to_device(array):
    """Copy a numpy array to the CUDA device as a raw numba device array (what the kernels take;
    ``cpsgrad.to_device`` returns a ``DeviceArray`` instead); RuntimeError without CUDA."""
    from cpsgrad.kernels.cuda.transfer import to_device as move

    return move(array)


def to_host(array):
    """Copy a device array (raw or a ``DeviceArray``) back to a numpy array; numpy arrays pass through."""
    from cpsgrad.kernels.cuda.transfer import to_host as move

    return move(array)
