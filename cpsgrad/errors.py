"""The exceptions cpsgrad raises, each able to name the file, line and column it is about."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLocation:
    """A place in a user's source file (1-based line, 1-based column)."""

    filename: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}"


class CpsgradError(Exception):
    """Base class of every error cpsgrad raises on purpose."""


class SourceError(CpsgradError):
    """The source of a function cannot be found or read (a REPL lambda, a builtin, ...)."""


class LocatedError(CpsgradError):
    """An error about one construct of the user's source: `file:line:col: construct: advice`."""

    def __init__(self, location: SourceLocation | None, construct: str, advice: str):
        self.location = location
        self.construct = construct
        self.advice = advice
        where = f"{location}: " if location is not None else ""
        super().__init__(f"{where}{construct}: {advice}")

    def locate(self, location: SourceLocation | None) -> None:
        """Give an error raised where the location was not known (a run-time helper) its place."""
        if location is not None and self.location is None:
            self.location = location
            self.args = (f"{location}: {self.construct}: {self.advice}",)


class UnsupportedError(LocatedError):
    """The fence rejected a construct that cpsgrad does not differentiate (yet)."""


class NoRuleError(LocatedError):
    """A differentiable value reaches a callable that has no derivative rule."""


class NonScalarOutputError(CpsgradError):
    """`grad` was asked for the gradient of a function that did not return a scalar."""


class HigherOrderError(CpsgradError):
    """A gradient of a gradient (grad of a function that calls a cpsgrad gradient function):
    higher-order differentiation is not supported yet."""


class ArgumentError(CpsgradError):
    """Bad `argnums`, or a differentiated argument that is not a float."""


class DepthLimitError(CpsgradError):
    """A loop or recursion ran deeper than the Python tier's continuation depth limit."""


class NonFiniteError(CpsgradError):
    """`debug_nans`: a value of the derivative program is NaN or infinite.

    `phase` is "forward" or "backward" where a statement made a non-finite value from finite
    ones (`location` is the user's statement it came from, `statement` the generated line that
    `cpsgrad show` prints, `inputs` and `results` the values it read and made, shortened), or
    "input" where no statement did: a value was already non-finite when the program read it
    (`inputs` then names the arguments that were, and `location` and `statement` the first
    statement that saw a non-finite value, if any did).
    """

    def __init__(
        self,
        message: str,
        *,
        phase: str,
        location: SourceLocation | None,
        source_line: str | None,
        statement: str | None,
        program: str | None,
        program_line: int | None,
        inputs: dict[str, str],
        results: dict[str, str],
    ):
        super().__init__(message)
        self.phase = phase
        self.location = location
        self.source_line = source_line
        self.statement = statement
        self.program = program
        self.program_line = program_line
        self.inputs = inputs
        self.results = results


class RuleError(CpsgradError):
    """A user's `@cpsgrad.rule` misbehaved: its backward raised, or contributed None or an
    adjoint of the wrong shape or kind. The message names the rule (function, file:line)."""
