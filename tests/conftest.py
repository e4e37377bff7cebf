"""Shared test setup: CUDA simulator switch, the disk cache's directory and hypothesis profiles.

`NUMBA_ENABLE_CUDASIM` must be set before numba is first imported, so it is set
here, at collection time. A real-GPU run sets `CPSGRAD_REAL_GPU=1` to keep it off.

Tests never write into the user's cache of generated programs: `CPSGRAD_CACHE_DIR` points at
a temporary directory for the whole session (removed at its end), set here before anything
transforms (the processes tests start inherit it).
"""

import atexit
import os
import shutil
import tempfile

if os.environ.get("CPSGRAD_REAL_GPU") != "1":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

_CACHE_DIR = tempfile.mkdtemp(prefix="cpsgrad-test-cache-")
os.environ["CPSGRAD_CACHE_DIR"] = _CACHE_DIR
atexit.register(shutil.rmtree, _CACHE_DIR, ignore_errors=True)

from hypothesis import HealthCheck, settings  # noqa: E402

from cpsgrad.testing.soaking import reproducible_draws  # noqa: E402

reproducible_draws()  # derandomized draws the same whatever ran before (soaking.py)

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=25,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    print_blob=True,
)
settings.register_profile("dev", deadline=None, max_examples=50)
settings.register_profile("soak", deadline=None, max_examples=2000)
settings.load_profile(os.environ.get("CPSGRAD_HYPOTHESIS_PROFILE", "ci"))
