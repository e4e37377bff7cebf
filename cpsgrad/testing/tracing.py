"""check_grad's runs of the function: its value as a real number, and the bytecode instructions
it ran (Python code under the call, traced with `sys.settrace`), compared between the input and
a probe point to see a branch change."""

from __future__ import annotations

import gc
import importlib.util
import numbers
import os
import sys
from collections.abc import Callable, Sequence
from types import CodeType, FrameType
from typing import Any

import numpy as np

from cpsgrad.testing.describing import _name


def _package_directories(*names: str) -> tuple[str, ...]:
    directories = []
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            directories.extend(os.path.join(d, "") for d in spec.submodule_search_locations)
    return tuple(directories)


# Libraries whose code may take dtype-dependent paths: ignored when comparing a float32 run with
# its float64 copy (not when comparing probe points, which all have the same dtypes).
_DTYPE_DISPATCHING = _package_directories("numpy", "scipy")

Executed = list[tuple[CodeType, int]]


def _run_traced(f: Callable[..., Any], args: Sequence[Any]) -> tuple[Any, Executed]:
    """Call f(*args), recording each bytecode instruction run by Python code under the call.

    Instructions rather than lines, so that a conditional expression or `and`/`or` taking the
    other side within one line counts as a branch change too. The garbage collector is off
    meanwhile: its callbacks (hypothesis registers one) would run at arbitrary points.
    """
    executed: Executed = []

    def trace_instructions(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "opcode":
            executed.append((frame.f_code, frame.f_lasti))
        return trace_instructions

    def trace_calls(frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return trace_instructions

    previous = sys.gettrace()
    collecting = gc.isenabled()
    gc.disable()
    sys.settrace(trace_calls)
    try:
        value = f(*args)
    finally:
        sys.settrace(previous)
        if collecting:
            gc.enable()
    return value, executed


def _outside_libraries(executed: Executed) -> Executed:
    """The instructions run outside numpy and scipy."""
    return [
        (code, offset)
        for code, offset in executed
        if not code.co_filename.startswith(_DTYPE_DISPATCHING)
    ]


def _first_difference(expected: Executed, actual: Executed) -> str:
    """Where two instruction traces part, as 'file:line (function)' locations."""
    for left, right in zip(expected, actual, strict=False):
        if left != right:
            return f"{_line_of(*right)} runs where {_line_of(*left)} ran at the input"
    shorter, longer = sorted((expected, actual), key=len)
    count = "more" if longer is actual else "fewer"
    return f"{count} instructions run, from {_line_of(*longer[len(shorter)])} on"


def _line_of(code: CodeType, offset: int) -> str:
    line = next((line for start, end, line in code.co_lines() if start <= offset < end), None)
    return f"{code.co_filename}:{line} ({code.co_name})"


def _real(f: Callable[..., Any], value: Any) -> Any:
    """f's value as a real scalar (a 0-d array as its element); TypeError for anything else."""
    if isinstance(value, np.ndarray):
        if value.shape == () and value.dtype.kind in "fiu":
            return value[()]
        raise TypeError(
            f"check_grad: {_name(f)} returns an array of shape {value.shape} and dtype "
            f"{value.dtype}; it must return a real number"
        )
    if not isinstance(value, numbers.Real):
        raise TypeError(
            f"check_grad: {_name(f)} returns {type(value).__name__}; it must return a real number"
        )
    return value
