"""Generated programs of cpsgrad/testing/subclass_forms.py: `x op= y` on lists, dicts and their
subclasses and user methods named like a container's, checked from outside: the value and the
arguments' final contents (their types too) equal Python's, the gradient finite differences'."""

import importlib.util
import itertools

import numpy as np
from hypothesis import HealthCheck, given, settings

import cpsgrad
from cpsgrad.testing import check_grad
from cpsgrad.testing.subclass_forms import SIZE, subclass_programs

_count = itertools.count()
X = np.linspace(0.15, 0.85, SIZE)


def _load(tmp_path, source: str):
    path = tmp_path / f"subclass_program_{next(_count)}.py"
    path.write_text(source + "\n\ndef g(x):\n    return f(x, Items0([1.0, 0.5]), Table0(a=0.25))\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(program=subclass_programs())
def test_generated_subclass_programs(tmp_path, program):
    module = _load(tmp_path, program.source)
    theirs = [module.Items0([1.0, 0.5]), module.Table0(a=0.25)]
    ours = [module.Items0([1.0, 0.5]), module.Table0(a=0.25)]
    expected = module.f(X.copy(), *theirs)
    value, _ = cpsgrad.value_and_grad(module.f)(X.copy(), *ours)
    assert value == expected, program.source
    assert ours == theirs and [type(a) for a in ours] == [type(a) for a in theirs], program.source
    check_grad(module.g, X.copy())
