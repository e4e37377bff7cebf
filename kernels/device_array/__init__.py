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

This package imports neither numba nor the CUDA kernels: they load on the first operation.

The package is split by concern: ``array`` (the class, wrapping, host/device copies),
``operands`` (operands, promotion, arithmetic), ``shaping`` (reductions, shapes, constructors),
``indexing`` and ``numpy_api`` (the ufunc and function tables). The class imports none of the
others: each installs the operations it implements in the class's ``_ops`` when imported, and
this file imports them all, so a DeviceArray is never seen without them.
"""

from cpsgrad.kernels.device_array import numpy_api  # noqa: F401  (installs the numpy tables)
from cpsgrad.kernels.device_array.array import DeviceArray, to_device, to_host, unwrap, wrap
from cpsgrad.kernels.device_array.indexing import basic_view, conformed, index_adjoint
from cpsgrad.kernels.device_array.shaping import full, zeros

__all__ = [
    "DeviceArray",
    "basic_view",
    "conformed",
    "full",
    "index_adjoint",
    "to_device",
    "to_host",
    "unwrap",
    "wrap",
    "zeros",
]
