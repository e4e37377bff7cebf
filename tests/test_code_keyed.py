"""Caches keyed by code objects key them by identity (transforms/code_keyed.py): the same `def`
text in two files compiles to equal code objects, and a cache keyed by equality served one file's
source to the other (an error naming the wrong file: the soak's tolerance for a refusal at a bare
call then failed to recognise it)."""

import gc
import importlib.util
import textwrap

import numpy as np
import pytest

import cpsgrad
from cpsgrad.errors import UnsupportedError
from cpsgrad.transforms.code_keyed import ByCode

TEXT = textwrap.dedent(
    """
    import numpy as np

    SEEN = []


    def keep(u):
        SEEN.append(u)


    def f(x):
        keep(x * 2.0)
        return np.sum(x * x)
    """
)


def _module(directory, name):
    path = directory / f"{name}.py"
    path.write_text(TEXT)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, str(path)


def test_equal_code_in_two_files_is_read_from_each_file(tmp_path):
    first, first_path = _module(tmp_path, "copy_one")
    second, second_path = _module(tmp_path, "copy_two")
    assert first.f.__code__ == second.f.__code__ and first.f.__code__ is not second.f.__code__
    for module, path in ((first, first_path), (second, second_path)):
        with pytest.raises(UnsupportedError) as raised:
            cpsgrad.value_and_grad(module.f)(np.ones(2))
        assert raised.value.location.filename == path


def test_by_code_keys_by_identity_and_forgets_a_code_object_that_goes():
    def make():
        namespace = {}
        exec(compile("def g(x):\n    return x + 1\n", "<same>", "exec"), namespace)  # noqa: S102
        return namespace["g"]

    one, two = make(), make()
    assert one.__code__ == two.__code__
    cache = ByCode()
    cache[one.__code__] = "one"
    assert one.__code__ in cache and two.__code__ not in cache
    assert cache.get(two.__code__) is None and cache[one.__code__] == "one"
    cache[two.__code__] = "two"
    assert (cache[one.__code__], cache[two.__code__]) == ("one", "two")
    del one
    gc.collect()
    assert len(cache) == 1 and cache[two.__code__] == "two"
