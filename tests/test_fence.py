"""Every construct the fence rejects: one clear `file:line:col: construct: advice` error each."""

import inspect

import pytest

import cpsgrad
from tests.cases import rejected


@pytest.mark.parametrize("name", sorted(rejected.REJECTED))
def test_rejected_construct_names_file_line_and_construct(name):
    function = getattr(rejected, name)
    construct, offset = rejected.REJECTED[name]
    with pytest.raises(cpsgrad.UnsupportedError) as raised:
        cpsgrad.grad(function)(1.0)
    error = raised.value
    line = inspect.getsourcelines(function)[1] + offset
    assert error.construct == construct
    assert error.location.filename == inspect.getsourcefile(rejected)
    assert error.location.line == line
    assert str(error).startswith(f"{error.location.filename}:{line}:{error.location.column}: {construct}: ")
    assert len(error.advice) > 10


def test_column_points_at_the_construct():
    with pytest.raises(cpsgrad.UnsupportedError) as raised:
        cpsgrad.grad(rejected.uses_del)(1.0)
    source_line = inspect.getsource(rejected).splitlines()[raised.value.location.line - 1]
    assert source_line[raised.value.location.column - 1:].startswith("del y")
