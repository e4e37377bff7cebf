"""cpsgrad's tensor kernels: forward and backward per op and device, behind one dispatch table.

Importing this package is cheap: it neither imports numba nor compiles anything; a kernel's
module is imported (and its numba functions compiled or loaded from cache) on first dispatch.
"""

from cpsgrad.kernels.table import Kernel, describe, device_of, dispatch, ops, register

__all__ = ["Kernel", "describe", "device_of", "dispatch", "ops", "register"]
