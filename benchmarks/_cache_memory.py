"""Memory cpsgrad holds after transforming N distinct functions (each in its own file, with a
lambda and a nested def) and running their gradients, and after dropping every reference to them
(tracemalloc; docs/design.md, Caching). Not a timed suite (run.py skips files starting with _):

    python benchmarks/_cache_memory.py 2000     # about 7 minutes (tracemalloc is slow)
"""
import gc
import os
import sys
import tempfile
import time
import tracemalloc

import cpsgrad
from cpsgrad.runtime import closures as runtime_closures
from cpsgrad.transforms import pipeline

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
directory = tempfile.mkdtemp()

def make(i):
    path = os.path.join(directory, f"f{i}.py")
    text = (
        f"def f{i}(x, n):\n"
        f"    g = lambda v: v * {i + 1}.0 + x\n"
        f"    def h(w):\n"
        f"        return g(w) * w\n"
        f"    s = 0.0\n"
        f"    for j in range(n):\n"
        f"        s = s + h(x * j)\n"
        f"    return s\n"
    )
    with open(path, "w") as handle:
        handle.write(text)
    namespace = {"__name__": f"f{i}"}
    exec(compile(text, path, "exec"), namespace)
    return namespace[f"f{i}"]

def state():
    gc.collect()
    current, _ = tracemalloc.get_traced_memory()
    return (
        current / 2**20,
        len(runtime_closures.DEFINITIONS),
        sum(1 for o in gc.get_objects() if type(o) is pipeline.Transformed),
    )


tracemalloc.start()
# warm up: rules, kernels, one transform
warm = make(10**6)
cpsgrad.grad(warm)(1.0, 2)
del warm
base = state()
t = time.time()
functions = [make(i) for i in range(N)]
results = [cpsgrad.grad(f)(1.5, 3) for f in functions]
elapsed = time.time() - t
held = state()
del functions, results
after = state()
print(
    f"N={N}: baseline {base[0]:.1f} MiB; with {N} transformed: {held[0]:.1f} MiB (DEFINITIONS {held[1]}, Transformed "
    f"{held[2]}), {elapsed:.1f} s; "
    f"after dropping them: {after[0]:.1f} MiB (DEFINITIONS {after[1]}, Transformed {after[2]})"
)
