"""grad from 8 threads at once on shared functions (loops, calls, closures, arrays), first
calls (transforms) racing, gives exactly the serial results."""

import importlib.util
import sys
import threading

import numpy as np

import cpsgrad

SOURCE = '''
import math

import numpy as np


def helper(a, b):
    return np.tanh(a) * b + a


def looped(x, n):
    s = 0.0
    for i in range(n):
        s = s + math.sin(x * i) * x
    return s


def calls(x, w):
    h = x
    for _ in range(3):
        h = helper(h @ w, 0.5)
    return np.sum(h * h)


def recursive(x, n):
    if n == 0:
        return np.sum(x)
    return recursive(np.tanh(x) * 1.5, n - 1) + np.sum(x * x)


def closures(x, w):
    f = lambda v: np.exp(v * w) / (1.0 + v * v)
    def g(u):
        return f(u) * w + u
    return np.sum(g(x)) + np.sum(f(x))


def arrays(x, w):
    z = x @ w
    m = np.max(z)
    e = np.exp(z - m)
    p = e / np.sum(e)
    return np.sum(p * z) + np.sum(x[1:] * x[:-1])
'''


def _module(path, name):
    """A fresh module of SOURCE (fresh functions: nothing of it transformed yet)."""
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cases(module):
    rng = np.random.default_rng(7)
    x, w = rng.normal(size=5), 0.4 * rng.normal(size=(5, 5))
    return [
        (cpsgrad.grad(module.looped), (1.3, 40)),
        (cpsgrad.grad(module.calls, argnums=(0, 1)), (x, w)),
        (cpsgrad.grad(module.recursive), (x, 6)),
        (cpsgrad.grad(module.closures, argnums=(0, 1)), (x, 0.7)),
        (cpsgrad.grad(module.arrays, argnums=(0, 1)), (x, w)),
        (cpsgrad.value_and_grad(module.looped), (0.2, 25)),
        # watched: each thread its own tracer
        (cpsgrad.grad(module.closures, argnums=(0, 1), debug_nans=True), (x, 0.3)),
    ]


def _same(a, b) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_same(p, q) for p, q in zip(a, b, strict=True))
    return type(a) is type(b) and np.array_equal(a, b)


def test_eight_threads_give_the_serial_results(tmp_path):
    serial = [gradient(*args) for gradient, args in _cases(_module(tmp_path / "serial_threads.py", "serial_threads"))]
    # transformed on first calls, in the threads
    shared = _cases(_module(tmp_path / "shared_threads.py", "shared_threads"))
    count, rounds = 8, 3
    start = threading.Barrier(count)
    results: list = [None] * count
    errors: list = []
    limit = sys.getrecursionlimit()

    def work(index: int) -> None:
        try:
            start.wait()
            order = list(range(len(shared)))
            order = order[index % len(order):] + order[: index % len(order)]  # each thread its own order
            found = {}
            for _ in range(rounds):
                for case in order:
                    gradient, args = shared[case]
                    found.setdefault(case, []).append(gradient(*args))
            results[index] = found
        except BaseException as error:  # reported below, with the thread
            errors.append((index, error))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(count)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: more interleavings of the first calls
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors
    for found in results:
        for case, values in found.items():
            assert len(values) == rounds
            assert all(_same(value, serial[case]) for value in values), (case, values, serial[case])
    assert sys.getrecursionlimit() == limit


def test_dict_display_keys_are_read_without_pythons_ast_module():
    """`ast.literal_eval` (CPython 3.11's AST constructor is not thread-safe: a SystemError
    'AST constructor recursion depth mismatch' in one of 8 threads) read dict keys; libcst's own
    evaluation does now."""
    import pathlib

    import libcst as cst

    from cpsgrad.transforms.adjoint import backward as adjoint

    keys = [cst.parse_expression(text) for text in ('"a"', "-2", "1.5", "True", "None", '"b" "c"')]
    assert adjoint._constant_values(keys) == ["a", -2, 1.5, True, None, "bc"]
    assert adjoint._constant_values([cst.parse_expression("x")]) is None
    package = pathlib.Path(adjoint.__file__).parent
    assert not [p.name for p in package.glob("*.py") if "ast.literal_eval(" in p.read_text()]
