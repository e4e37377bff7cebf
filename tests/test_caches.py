"""The caches of transforms and nested definitions do not keep what nothing else holds:
transforming many functions and dropping them frees them (pipeline._CACHE, DEFINITIONS, the
debug_nans registry, linecache)."""

import functools
import gc
import importlib.util
import linecache
import pickle
import weakref

import numpy as np

import cpsgrad
from cpsgrad import nonfinite
from cpsgrad.runtime.closures import DEFINITIONS
from cpsgrad.transforms import pipeline

SOURCE = """
SCALE = {scale}


def f(x, n):
    g = lambda v: v * SCALE + x
    def h(w):
        return g(w) * w
    s = 0.0
    for j in range(n):
        s = s + h(x * j)
    return s
"""


def _module(path, name, scale=2.0):
    path.write_text(SOURCE.format(scale=scale))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _program_files() -> set[str]:
    return {name for name in linecache.cache if name.startswith("<cpsgrad ")}


def test_dropped_functions_and_their_programs_are_freed(tmp_path):
    gc.collect()
    definitions, registered, files = len(DEFINITIONS), nonfinite.registered(), _program_files()
    modules = [_module(tmp_path / f"dropped_{i}.py", f"dropped_{i}") for i in range(5)]
    gradients = [cpsgrad.grad(module.f)(1.5, 3) for module in modules]
    assert len(set(gradients)) == 1
    assert len(DEFINITIONS) == definitions + 10  # g and h of each
    assert nonfinite.registered() > registered and _program_files() > files
    functions = [weakref.ref(module.f) for module in modules]
    del modules
    gc.collect()
    assert all(function() is None for function in functions)
    assert len(DEFINITIONS) == definitions
    assert nonfinite.registered() == registered
    assert _program_files() == files


def test_equal_code_objects_of_two_modules_keep_their_own_definitions(tmp_path):
    a = _module(tmp_path / "equal_a.py", "equal_a", scale=2.0)
    b = _module(tmp_path / "equal_b.py", "equal_b", scale=3.0)
    lambda_a = next(c for c in a.f.__code__.co_consts if getattr(c, "co_name", "") == "<lambda>")
    lambda_b = next(c for c in b.f.__code__.co_consts if getattr(c, "co_name", "") == "<lambda>")
    assert lambda_a == lambda_b and lambda_a is not lambda_b  # code objects compare by value
    value_a, gradient_a = cpsgrad.value_and_grad(a.f)(1.5, 3)
    value_b, gradient_b = cpsgrad.value_and_grad(b.f)(1.5, 3)
    assert (value_a, value_b) == (a.f(1.5, 3), b.f(1.5, 3))
    assert DEFINITIONS[lambda_a].globals is a.__dict__ and DEFINITIONS[lambda_b].globals is b.__dict__
    # alternating calls run each module's own program of the lambda, each once transformed
    assert cpsgrad.grad(a.f)(1.5, 3) == gradient_a and cpsgrad.grad(b.f)(1.5, 3) == gradient_b
    assert len(pipeline._CACHE.get(lambda_a, {})) == 1 and len(pipeline._CACHE.get(lambda_b, {})) == 1
    assert pipeline._CACHE.get(lambda_a) is not pipeline._CACHE.get(lambda_b)


def test_programs_stay_with_their_function_when_its_dict_is_copied_or_pickled(tmp_path):
    module = _module(tmp_path / "copied.py", "copied")
    cpsgrad.grad(module.f)(1.5, 3)
    held = pipeline._CACHE.get(module.f)
    assert held  # kept on the function

    @functools.wraps(module.f)
    def wrapper(x, n):
        return module.f(x, n) * 2.0

    assert wrapper.__dict__[pipeline._Programs.ATTRIBUTE] is held  # functools.wraps copied it
    assert pipeline._CACHE.get(wrapper) is None  # but it is not the wrapper's
    assert cpsgrad.grad(wrapper)(1.5, 3) == 2.0 * cpsgrad.grad(module.f)(1.5, 3)
    assert pipeline._CACHE.get(module.f) is held and pipeline._CACHE.get(wrapper) is not held
    assert pickle.loads(pickle.dumps(held)) == {}  # cloudpickle pickles a function's __dict__


def test_a_watched_run_of_a_freed_function_leaves_nothing(tmp_path):
    gc.collect()
    registered = nonfinite.registered()
    module = _module(tmp_path / "watched.py", "watched")
    gradient = cpsgrad.grad(module.f, debug_nans=True)
    assert gradient(np.float64(1.5), 3) == cpsgrad.grad(module.f)(np.float64(1.5), 3)
    del module, gradient
    gc.collect()
    assert nonfinite.registered() == registered
