"""cpsgrad/source_lines.py: a def read from its lines up to the last its code is on, without
inspect's tokenizing, and the fallback to inspect's block where that text does not parse.

The text left out past the last line with code compiles to nothing (trailing comments, an
unreachable `pass`), so the function read is the one that runs; these cases check that the
gradient and value are those of the same function read by inspect."""

import inspect
import linecache
import textwrap

import numpy as np
import pytest

import cpsgrad
from cpsgrad import source_lines
from cpsgrad.transforms import source

_FILE = "<cpsgrad test_source_lines {}>"


def _define(text: str, name: str, number: int):
    """`name` from `text` compiled as a file of its own (kept in linecache, as a module's)."""
    filename = _FILE.format(number)
    text = textwrap.dedent(text)
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"np": np, "cpsgrad": cpsgrad}
    exec(compile(text, filename, "exec"), namespace)
    return namespace[name]


CASES = {
    "trailing comment": """
        def f(x):
            y = x * x
            return y * 3.0
            # a comment after the last statement
        """,
    "unreachable pass": """
        def f(x):
            return np.sin(x) * x
            pass
        """,
    "else ellipsis": """
        def f(x):
            if x > 10.0:
                return x
            else:
                ...
            return x * x
        """,
    "decorated": """
        import functools

        def keep(function):
            return function

        @keep
        @keep
        def f(x):
            return x ** 3
        """,
    "nested def last": """
        def f(x):
            def g(v):
                return v * x
            return g(x) + x
        """,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_text_read_as_inspect_reads_the_function(case):
    function = _define(CASES[case], "f", sorted(CASES).index(case))
    text, first = source_lines.definition_text(function)
    block, block_first = inspect.getsourcelines(function.__code__)
    assert first == block_first
    assert "".join(block).startswith(text)  # the same lines, maybe fewer at the end
    assert source_lines.parsed_definition(function) is not None
    value, gradient = cpsgrad.value_and_grad(function)(1.5)
    h = 1e-6
    assert value == function(1.5)
    assert gradient == pytest.approx((function(1.5 + h) - function(1.5 - h)) / (2 * h), rel=1e-6)


def test_a_text_that_does_not_parse_falls_back_to_inspects_block():
    """The file's lines changed under the code (an edited file): the cut at the code's last line
    lands inside a block header, so the read is inspect's, as before source_lines."""
    filename = _FILE.format("edited")
    compiled = "def f(x):\n    return x * 2.0\n"
    namespace: dict = {}
    exec(compile(compiled, filename, "exec"), namespace)
    function = namespace["f"]
    edited = "def f(x):\n    if x > 0.0:\n        return x * 2.0\n    return x\n"
    linecache.cache[filename] = (len(edited), None, edited.splitlines(True), filename)
    assert source_lines.parsed_definition(function) is None  # `def f(x):\n    if x > 0.0:\n`
    read = source.read(function)
    assert read.definition.name.value == "f"
    assert [type(s).__name__ for s in read.definition.body.body] == ["If", "SimpleStatementLine"]


def test_lines_of_no_file_give_none():
    namespace: dict = {}
    exec(compile("def f(x):\n    return x\n", "<nowhere>", "exec"), namespace)
    assert source_lines.definition_text(namespace["f"]) is None
    assert source_lines.parsed_definition(namespace["f"]) is None
