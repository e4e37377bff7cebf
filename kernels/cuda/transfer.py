"""Moving arrays between host and device, and finding out whether CUDA can run here."""

import os

import numpy as np


def cuda_available() -> str | None:
    """``"gpu"`` when a CUDA device is usable, ``"simulator"`` under numba's CUDA simulator
    (``NUMBA_ENABLE_CUDASIM=1``), None when numba-cuda or a device is missing."""
    try:
        from numba import config, cuda
    except ImportError:
        return None
    if config.ENABLE_CUDASIM or os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return "simulator"
    return "gpu" if cuda.is_available() else None


def to_device(array):
    """A device copy of a host array (C-contiguous); a device array is returned as it is."""
    if not isinstance(array, np.ndarray):
        if hasattr(array, "copy_to_host"):
            return array
        raise TypeError(f"to_device: expected a numpy array, got {type(array).__name__}")
    if cuda_available() is None:
        raise RuntimeError("to_device: no CUDA device (and NUMBA_ENABLE_CUDASIM is not set)")
    from numba import cuda

    # Moved as 1-D and reshaped: the simulator turns a 0-d array into shape (1,).
    return cuda.to_device(np.ascontiguousarray(array).reshape(array.size)).reshape(array.shape)


def to_host(array) -> np.ndarray:
    """A numpy copy of a device array; a numpy array is returned as it is."""
    if isinstance(array, np.ndarray):
        return array
    if hasattr(array, "copy_to_host"):
        return array.copy_to_host()
    raise TypeError(f"to_host: expected a device or numpy array, got {type(array).__name__}")
