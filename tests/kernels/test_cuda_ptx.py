"""Every CUDA kernel compiles to PTX for sm_90 in float32 and float64 (NVRTC, no GPU needed).

The simulator accepts Python that real CUDA rejects, so this runs the real compiler, in a
subprocess because ``tests/conftest.py`` turns the simulator on for this process.
"""

import os
import subprocess
import sys

import pytest

from cpsgrad.kernels.cuda.ptx import UNAVAILABLE


def test_every_kernel_compiles_to_ptx_for_sm90():
    environment = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}
    result = subprocess.run(
        [sys.executable, "-m", "cpsgrad.kernels.cuda.ptx"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    if result.stdout.startswith(UNAVAILABLE):
        pytest.skip(result.stdout.strip())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout
