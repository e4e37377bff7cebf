"""`debug_nans`: stop at the first statement that makes a NaN or an infinity, and say where.

`grad(f, debug_nans=True)` (or `CPSGRAD_DEBUG_NANS=1` in the environment when the gradient
function is made) runs the derivative program under a line tracer (`sys.settrace`, this thread
only) that looks at the generated code's own frames and nothing else. At each line it notes
whether the values the line reads are all finite; when the line has run, it looks at the names
the line assigned. The first line whose result is NaN or infinite (a float, a complex, a numpy
scalar, any element of an array, any part of a tuple, list, dict or dataclass) while everything
it read was finite is the culprit: `NonFiniteError` names the user's statement it came from
(`file:line:col`, the callee's or the nested function's own file where the line is in one), the
pass (forward or backward), the values read and made (big arrays shortened) and the generated
line as `cpsgrad show` prints it.

What a line reads is the names in its text (locals, then the program's globals); a line that
runs generated code (a continuation, a call site, an adapter) is never blamed for what comes
back, since that code was watched as it ran, and a line that only reads, copies or packs values
(`t = x[i]`, `a, b = t`, `t = (a, b)`) never makes a non-finite value, only hands one on. So a
NaN that was already in an argument, a global or a captured value is handed on from line to
line without blame; if the value or a gradient comes out non-finite and no line made it, the
error (phase "input") says so, naming the arguments that were non-finite and the first line
that saw a non-finite value.

Where each generated line came from is recorded when the program is made: the adjoint pass
tags every line it emits with the user's statement (`normalize` records each core statement's
origin) and the pass (`transforms.adjoint.Lines`), and `register` keeps that table per code
object of the compiled program, weakly (a dict keyed by the code's id, emptied by a weak
reference's callback when the program goes). Programs run without `debug_nans` are the same
code at the same speed: the tracer is installed only around a debugged run.

Watching a run changes values only by rounding: CPython 3.11 calls a Python tracer with the
frame's locals copied into its `f_locals` dict, which then holds a reference to every local, so
`runtime.accumulation.accumulate` allocates where it would have added in place and `lend` does not
lend (both read reference counts): the same contributions, some summed in another order.
"""

from __future__ import annotations

import ast
import cmath
import dataclasses
import linecache
import math
import os
import sys
import threading
import types
import weakref

import numpy as np

from cpsgrad.errors import NonFiniteError, SourceLocation
from cpsgrad.runtime.adapters import _ADAPTER_FILE

__all__ = ["ENVIRONMENT", "from_environment", "register", "run", "check_result", "origin_in"]

#: Set to 1 (or true, yes, on) to debug every gradient function made while it is set.
ENVIRONMENT = "CPSGRAD_DEBUG_NANS"

_SHOWN_CHARACTERS = 160  # a value's text in the report is cut to this
_DEPTH = 6  # how deep containers are searched for non-finite values


def from_environment() -> bool:
    """Whether `CPSGRAD_DEBUG_NANS` asks for debugging (any value but empty, 0, false, no, off)."""
    return os.environ.get(ENVIRONMENT, "").strip().lower() not in ("", "0", "false", "no", "off")


# -- what each generated line is ----------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Statement:
    line: int  # its first line in the program's text (1-based)
    targets: tuple[str, ...]  # the names it assigns
    reads: tuple[str, ...]  # the names it reads (an augmented assignment's target included)
    makes: bool  # whether it computes (a call or an operation), not just reads, copies or packs


class Provenance:
    """One compiled derivative program's text and, per line, where it came from."""

    def __init__(self, name: str, filename: str, text: str, origins: list[tuple]):
        self.name = name  # the program's wrapper, `f__program`
        self.filename = filename
        self.lines = text.splitlines()
        self.origins = origins  # per line (0-based): (SourceLocation | None, "forward" | "backward")
        self._statements: dict[int, _Statement | None] | None = None

    @property
    def statements(self) -> dict[int, _Statement | None]:
        """Line number -> the statement running on it (None: a compound statement's header)."""
        if self._statements is None:  # parsed once, on the first debugged run
            self._statements = _statements("\n".join(self.lines) + "\n")
        return self._statements

    def origin(self, line: int) -> tuple:
        if 1 <= line <= len(self.origins):
            return self.origins[line - 1]
        return None, "forward"

    def text(self, line: int) -> str:
        return self.lines[line - 1].strip() if 1 <= line <= len(self.lines) else ""


_AST_LOCK = threading.Lock()  # CPython 3.11's AST constructor is not thread-safe (gh-106905)


def _statements(text: str) -> dict[int, _Statement | None]:
    found: dict[int, _Statement | None] = {}
    with _AST_LOCK:
        tree = ast.parse(text)
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        if isinstance(node, ast.Assign):
            targets = tuple(_names(node.targets, ast.Store))
            reads = tuple(_names([node.value], ast.Load))
            statement = _Statement(node.lineno, targets, reads, not _only_reads(node.value))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            reads = (node.target.id, *_names([node.value], ast.Load))
            statement = _Statement(node.lineno, (node.target.id,), reads, True)
        elif isinstance(node, (ast.If, ast.FunctionDef, ast.While, ast.For, ast.With, ast.Try)):
            found[node.lineno] = None
            continue
        else:  # an expression statement, return, raise, pass: nothing assigned to look at
            statement = _Statement(node.lineno, (), (), False)
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
            found[line] = statement
    return found


def _names(nodes: list, context: type) -> list[str]:
    names: list[str] = []
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Name) and isinstance(node.ctx, context) and node.id not in names:
                names.append(node.id)
    return names


def _only_reads(value: ast.expr) -> bool:
    """A name, a constant, an attribute or an index of one, or a display of them: a non-finite
    result was there before (it is handed on, not made)."""
    if isinstance(value, (ast.Name, ast.Constant)):
        return True
    if isinstance(value, ast.Attribute):
        return _only_reads(value.value)
    if isinstance(value, ast.Subscript):
        return _only_reads(value.value)
    if isinstance(value, (ast.Tuple, ast.List)):
        return all(_only_reads(e.value if isinstance(e, ast.Starred) else e) for e in value.elts)
    if isinstance(value, ast.Dict):
        return all(v is not None and _only_reads(v) for v in value.values)
    return False


# -- the registry of compiled programs ----------------------------------------------------------
_PROGRAMS: dict[int, tuple[weakref.ref, Provenance]] = {}  # id(code) -> (weak code, its program's)


def register(function: types.FunctionType, name: str, filename: str, text: str, origins: list[tuple]) -> None:
    """Remember where each line of the program `function` (compiled from `text`) came from, for
    every code object in it (its continuations and adapters are code constants of its code)."""
    provenance = Provenance(name, filename, text, origins)
    pending = [function.__code__]
    while pending:
        code = pending.pop()
        key = id(code)
        _PROGRAMS[key] = (weakref.ref(code, lambda _, key=key: _PROGRAMS.pop(key, None)), provenance)
        pending += [c for c in code.co_consts if isinstance(c, types.CodeType)]


def _program_of(code: types.CodeType) -> Provenance | None:
    entry = _PROGRAMS.get(id(code))
    if entry is None or entry[0]() is not code:
        return None
    return entry[1]


def origin_in(traceback: types.TracebackType | None) -> SourceLocation | None:
    """The user's statement that the innermost line of a derivative program in `traceback` came
    from (to locate an error a run-time helper raised without knowing where it was called)."""
    found = None
    while traceback is not None:
        found = _users_line(traceback.tb_frame.f_code, traceback.tb_lineno) or found
        traceback = traceback.tb_next
    return found


def registered() -> int:
    """How many code objects the registry holds (for tests of its bound)."""
    return len(_PROGRAMS)


# -- finiteness and the report ------------------------------------------------------------------
def finite(value, depth: int = 0) -> bool:
    """Whether `value` holds no NaN and no infinity (anything that is not a number counts as finite)."""
    kind = type(value)
    if kind is float:
        return math.isfinite(value)
    if kind is int or kind is bool or value is None or kind is str:
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind not in "fc" or bool(np.isfinite(value).all())
    if isinstance(value, (np.floating, np.complexfloating)):
        return bool(np.isfinite(value))
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, complex):
        return cmath.isfinite(value)
    if depth >= _DEPTH:
        return True
    if isinstance(value, (tuple, list)):
        return all(finite(part, depth + 1) for part in value)
    if isinstance(value, dict):
        return all(finite(part, depth + 1) for part in value.values())
    if _is_device_array(value):
        from cpsgrad.kernels.device_array import to_host

        return finite(to_host(value), depth)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return all(finite(getattr(value, f.name, None), depth + 1) for f in dataclasses.fields(value))
    return True


def _is_device_array(value) -> bool:
    from cpsgrad.kernels.device_array import DeviceArray

    return type(value) is DeviceArray


def _is_data(value) -> bool:
    """Whether a value read is worth showing (numbers, arrays and containers, not functions or modules)."""
    if isinstance(value, (int, float, complex, np.ndarray, np.generic, tuple, list, dict)) or _is_device_array(value):
        return True
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def shown(value) -> str:
    """A short text of a value: big arrays summarised, long texts cut."""
    if _is_device_array(value):
        from cpsgrad.kernels.device_array import to_host

        return "DeviceArray " + shown(to_host(value))
    if isinstance(value, np.ndarray):
        body = np.array2string(value, threshold=8, edgeitems=2, precision=6, separator=", ")
        if value.ndim == 0 or value.size <= 8:
            text = f"array({body}, dtype={value.dtype})"
        else:
            text = f"array of shape {value.shape}, dtype {value.dtype}: {body}"
        if value.dtype.kind in "fc" and value.size > 1:
            bad = int(value.size - np.count_nonzero(np.isfinite(value)))
            if bad:
                text += f" ({bad} of {value.size} not finite: {_counts(value)})"
        return _cut(text)
    return _cut(repr(value))


def _counts(value: np.ndarray) -> str:
    parts = []
    nan = int(np.count_nonzero(np.isnan(value)))
    positive = int(np.count_nonzero(np.isposinf(value.real if value.dtype.kind == "c" else value)))
    negative = int(np.count_nonzero(np.isneginf(value.real if value.dtype.kind == "c" else value)))
    for count, label in ((nan, "nan"), (positive, "inf"), (negative, "-inf")):
        if count:
            parts.append(f"{count} {label}")
    return ", ".join(parts) or "complex"


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN_CHARACTERS else text[: _SHOWN_CHARACTERS - 3] + "..."


def _source_line(location: SourceLocation | None) -> str | None:
    if location is None:
        return None
    return linecache.getline(location.filename, location.line).strip() or None


# -- the watch ----------------------------------------------------------------------------------
class _Found(BaseException):
    """Raised by the tracer into the program to stop it (a BaseException: nothing in the program
    or the dispatcher catches it); `run` turns it into the NonFiniteError it carries."""

    def __init__(self, error: NonFiniteError):
        super().__init__()
        self.error = error


_MISSING = object()


def _value(frame: types.FrameType, name: str):
    found = frame.f_locals.get(name, _MISSING)
    if found is _MISSING:
        found = frame.f_globals.get(name, _MISSING)
    return found


class _Run:
    """The state of one debugged run (one thread)."""

    def __init__(self):
        self.entered = 0  # generated frames entered so far
        self.seen: tuple | None = None  # (provenance, line, names) of the first non-finite value handed on

    def call(self, frame: types.FrameType, event: str, argument):
        program = _program_of(frame.f_code)
        if program is None:
            return None
        self.entered += 1
        return _Frame(self, program)


class _Frame:
    """The tracer of one frame of generated code: checks what each line assigned."""

    __slots__ = ("run", "program", "statement", "inputs", "inputs_finite", "entered")

    def __init__(self, run: _Run, program: Provenance):
        self.run = run
        self.program = program
        self.statement: _Statement | None = None

    def __call__(self, frame: types.FrameType, event: str, argument):
        if event == "line":
            statement = self.program.statements.get(frame.f_lineno)
            if statement is self.statement and statement is not None:
                return self  # another line of the same statement
            if self.statement is not None:
                self.check(frame)
            self.begin(frame, statement)
        elif event == "return":
            if self.statement is not None and argument is not None:
                self.check(frame)
            self.statement = None
        elif event == "exception":
            self.statement = None  # the line did not finish: what it assigns was not assigned
        return self

    def begin(self, frame: types.FrameType, statement: _Statement | None) -> None:
        if statement is None or not statement.targets:
            self.statement = None
            return
        self.statement = statement
        self.inputs = [(name, _value(frame, name)) for name in statement.reads]
        self.inputs_finite = all(finite(value) for _, value in self.inputs)
        self.entered = self.run.entered

    def check(self, frame: types.FrameType) -> None:
        statement = self.statement
        self.statement = None
        values = [(name, frame.f_locals.get(name, _MISSING)) for name in statement.targets]
        bad = [(name, value) for name, value in values if value is not _MISSING and not finite(value)]
        if not bad:
            return
        # made here from finite values: not a read, not what watched code handed back
        if self.inputs_finite and statement.makes and self.entered == self.run.entered:
            raise _Found(self.error(statement, bad, frame))
        if self.run.seen is None:
            names = [name for name, value in self.inputs if not finite(value)]
            self.run.seen = (self.program, statement.line, names)

    def error(self, statement: _Statement, bad: list, frame: types.FrameType) -> NonFiniteError:
        program = self.program
        location, phase = program.origin(statement.line)
        if location is not None and location.filename.startswith(_ADAPTER_FILE):
            # a primitive called as a value (`g = np.log; g(x)`) runs in an adapter's program:
            # the user's line is the call's, in the nearest generated frame below it
            location = _calling_location(frame) or location
        source_line = _source_line(location)
        text = program.text(statement.line)
        inputs = {name: shown(value) for name, value in self.inputs if value is not _MISSING and _is_data(value)}
        results = {name: shown(value) for name, value in bad}
        where = f"{location}: " if location is not None else ""
        kinds = sorted({_kind(value) for _, value in bad})
        about = f"the {phase} pass of `{source_line}`" if source_line else f"the {phase} pass, at a line cpsgrad added,"
        lines = [
            f"{where}debug_nans: {about} made {' and '.join(kinds)} from finite values",
            f"    program line ({program.name}, line {statement.line}, as cpsgrad show prints it): {text}",
            "    read: " + (", ".join(f"{n} = {v}" for n, v in inputs.items()) or "no values"),
            "    made: " + ", ".join(f"{n} = {v}" for n, v in results.items()),
        ]
        return NonFiniteError(
            "\n".join(lines), phase=phase, location=location, source_line=source_line, statement=text,
            program=program.name, program_line=statement.line, inputs=inputs, results=results,
        )


def _calling_location(frame: types.FrameType) -> SourceLocation | None:
    """The user's statement that the nearest calling frame of generated code (not an adapter's)
    was running."""
    frame = frame.f_back
    while frame is not None:
        location = _users_line(frame.f_code, frame.f_lineno)
        if location is not None:
            return location
        frame = frame.f_back
    return None


def _users_line(code: types.CodeType, line: int) -> SourceLocation | None:
    """The user's statement that line `line` of a derivative program's `code` came from; None
    for code that is no derivative program, a line cpsgrad added, or an adapter's line (a
    primitive called as a value: its call in the user's program is the user's line)."""
    program = _program_of(code)
    if program is None:
        return None
    location, _ = program.origin(line)
    return None if location is None or location.filename.startswith(_ADAPTER_FILE) else location


def _kind(value) -> str:
    """'nan', 'inf' or 'nan and inf' for a non-finite value (of any shape)."""
    try:
        values = np.asarray(value, dtype=complex).ravel() if not isinstance(value, (tuple, list, dict)) else None
    except (TypeError, ValueError):
        values = None
    if values is None:
        return "a non-finite value"
    nan = bool(np.isnan(values).any())
    inf = bool(np.isinf(values).any())
    return "nan and inf" if nan and inf else ("nan" if nan else "inf")


def run(program: types.FunctionType, args: tuple, k):
    """`program(*args, k)`, watched: raises NonFiniteError at the first line that makes a
    non-finite value from finite ones. Returns the program's result and the run's state
    (for `check_result`)."""
    watch = _Run()
    previous = sys.gettrace()
    sys.settrace(watch.call)
    try:
        return program(*args, k), watch
    except _Found as found:
        raise found.error from None
    finally:
        sys.settrace(previous)


def check_result(
    function: types.FunctionType,
    parameters: list[str],
    args: tuple,
    value,
    gradients: tuple,
    positions: tuple[int, ...],
    watch: _Run,
) -> None:
    """After a watched run: a non-finite value or gradient that no line made came in with a
    value the program read; say which arguments were non-finite and where it was first seen."""
    labelled = ((f"the gradient of {parameters[p]}", g) for p, g in zip(positions, gradients, strict=True))
    parts = [("the value", value), *labelled]
    wrong = [label for label, part in parts if not finite(part)]
    if not wrong:
        return
    inputs = {parameters[i]: shown(a) for i, a in enumerate(args) if i < len(parameters) and not finite(a)}
    location = statement = program_name = program_line = None
    seen = ""
    if watch.seen is not None:
        program, line, names = watch.seen
        location, _ = program.origin(line)
        statement, program_name, program_line = program.text(line), program.name, line
        read = f", reading {', '.join(names)}" if names else ""
        where = location or "a line cpsgrad added"
        seen = f"; the first line that saw one: {where} ({program_name}, line {line}: {statement}{read})"
    if inputs:
        several = len(inputs) > 1
        listed = ", ".join(f"{n} = {v}" for n, v in inputs.items())
        entered = f"the argument{'s' if several else ''} {listed} {'were' if several else 'was'} already non-finite"
    else:
        entered = (
            "no argument was non-finite: a global, a captured value or a function cpsgrad does not watch "
            "handed one in"
        )
    verb = "are" if len(wrong) > 1 else "is"
    message = (
        f"debug_nans: {' and '.join(wrong)} of {function.__qualname__} {verb} not finite, but no statement made a "
        f"non-finite value from finite ones: {entered}{seen}"
    )
    raise NonFiniteError(
        message, phase="input", location=location, source_line=_source_line(location), statement=statement,
        program=program_name, program_line=program_line, inputs=inputs,
        results={label: "not finite" for label in wrong},
    )
