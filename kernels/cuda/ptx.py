"""Compile every CUDA kernel to PTX for one compute capability, without a GPU (NVRTC only).

``python -m cpsgrad.kernels.cuda.ptx`` (with ``NUMBA_ENABLE_CUDASIM=0``) compiles each kernel
recorded by ``jit.kernel`` (those of ``cpsgrad.kernels.standalone``'s modules included) for
sm_90 in float32 and float64 and prints one line a kernel; the exit status is 1 if any failed.
The simulator accepts Python that real CUDA rejects, so this is the check that the kernels are
valid CUDA.
"""

import importlib
import sys
import time
from types import SimpleNamespace

from cpsgrad.kernels import standalone

MODULES = (
    "arrays", "rows", "layout", "elementwise", "binary", "reductions", "linalg", "softmax",
    "indexing", "pooling", "conv", "normalization", "recurrent", "compare",
)
DTYPES = ("float32", "float64")
UNAVAILABLE = "NVRTC unavailable"


def _pin_device_function_target(cc) -> None:
    """numba-cuda compiles a device function called from a kernel for the *current device's*
    compute capability (``compile_ptx``'s ``cc`` is not passed down), which needs a driver;
    without a GPU, name the target here instead."""
    from numba.cuda import dispatcher

    dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=cc)


def compile_all(cc=(9, 0)) -> list[tuple[str, str, str | None]]:
    """``(kernel, dtype, error or None)`` for every recorded kernel in both dtypes."""
    from numba import cuda

    from cpsgrad.kernels.cuda.jit import KERNELS

    _pin_device_function_target(cc)
    for module in MODULES:
        importlib.import_module(f"cpsgrad.kernels.cuda.{module}")
    for op in standalone.names():  # one module an op for both devices: its kernels are built on demand
        importlib.import_module(f"cpsgrad.kernels.standalone.{op}").cuda_kernels()
    results = []
    for function, template in KERNELS:
        for dtype in DTYPES:
            name = f"{function.__module__.rsplit('.', 1)[-1]}.{function.__name__}"
            try:
                cuda.compile_ptx(function, template.format(f=dtype), cc=cc)
                results.append((name, dtype, None))
            except Exception as error:  # noqa: BLE001 - every failure is reported, none hidden
                results.append((name, dtype, f"{type(error).__name__}: {error}"))
    return results


def _nvrtc_problem() -> str | None:
    try:
        from numba import cuda

        cuda.compile_ptx(lambda x: None, "void(float32[::1])", cc=(9, 0))
    except Exception as error:  # noqa: BLE001 - any failure here means no usable NVRTC
        return f"{type(error).__name__}: {error}"
    return None


def main() -> int:
    problem = _nvrtc_problem()
    if problem is not None:
        print(f"{UNAVAILABLE}: {problem}")
        return 0
    start = time.perf_counter()
    results = compile_all()
    for name, dtype, error in results:
        print(f"{'FAIL' if error else 'ok'}  {name}  {dtype}" + (f"  {error}" if error else ""))
    failed = sum(error is not None for _, _, error in results)
    print(f"{len(results) - failed}/{len(results)} compiled in {time.perf_counter() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
