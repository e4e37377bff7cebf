"""Find, read and parse the source of a user's function, and map CST nodes back to file positions."""

from __future__ import annotations

import dataclasses
import inspect
import textwrap
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from cpsgrad import source_lines
from cpsgrad.errors import SourceError, SourceLocation, UnsupportedError
from cpsgrad.transforms.code_keyed import ByCode


@dataclass
class FunctionSource:
    """A user's function with its parsed definition and the way back to file positions."""

    function: types.FunctionType
    filename: str
    first_line: int
    indent: int
    definition: cst.FunctionDef
    positions: Mapping[cst.CSTNode, CodeRange] = field(repr=False)
    # a nested def or lambda of a transformed function, read for its calls from programs: the
    # free variables its program takes as leading parameters (transforms/closures.py)
    captured: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.definition.name.value

    def location(self, node: cst.CSTNode | None) -> SourceLocation | None:
        """The file position of a node of `definition` (None for nodes made by a pass)."""
        if node is None or node not in self.positions:
            return None
        start = self.positions[node].start
        return SourceLocation(self.filename, self.first_line + start.line - 1, start.column + self.indent + 1)


def unwrap(function: Callable) -> types.FunctionType:
    """The plain Python function behind `function` (a bound method's function, a staticmethod's)."""
    if isinstance(function, (staticmethod, classmethod)):
        function = function.__func__
    if isinstance(function, types.MethodType):
        owner = function.__self__
        if isinstance(owner, type):
            raise SourceError(
                f"{function.__qualname__} is a classmethod bound to {owner.__name__}; differentiate "
                f"{owner.__name__}.{function.__name__}.__func__ and pass the class as its first argument"
            )
        raise SourceError(
            f"{function.__qualname__} is a bound method; differentiate the function "
            f"{function.__func__.__qualname__} and pass the instance as an argument"
        )
    if not isinstance(function, types.FunctionType):
        kind = type(function).__name__
        raise SourceError(
            f"{getattr(function, '__qualname__', function)!r} is a {kind}, not a Python function "
            "written in source, so cpsgrad cannot read it; declare its derivative with "
            "@cpsgrad.rule instead"
        )
    return function


def read(function: Callable, lifted: bool = False) -> FunctionSource:
    """Read and parse the source of `function` (a `def`, or the only lambda on its lines).

    A nested def or lambda of a function cpsgrad transformed is found in that function's parsed
    source; `lifted` reads it as its calls from programs take it: its free variables first, as
    parameters (otherwise they are read from its cells, as for any user closure)."""
    function = unwrap(function)
    from cpsgrad.runtime.closures import DEFINITIONS

    nested = DEFINITIONS.get(function.__code__)
    if nested is not None:
        return dataclasses.replace(nested.source, function=function, captured=nested.source.captured if lifted else ())
    known = _READ.get(function.__code__)
    if known is None:
        read = _read(function)
        _READ[function.__code__] = dataclasses.replace(read, function=None)  # not keeping the code alive
        return read
    return dataclasses.replace(known, function=function)


# code object -> its function's source (without the function), read once: a code object is the
# text it was compiled from (an edited file makes new code objects when its module is loaded
# again), and the transform of a caller reads each callee several times (the analyses of its
# writes, stores and results, then its own transform)
_READ = ByCode()


def _read(function: types.FunctionType) -> FunctionSource:
    is_lambda = function.__code__.co_name == "<lambda>"
    if not is_lambda:
        try:
            found = source_lines.definition_text(function)  # no tokenizing: most defs are read so
        except OSError:
            found = None  # told again below, as inspect words it
        if found is not None:
            read = _parsed_def(function, *found, function.__code__.co_filename, fallback=True)
            if read is not None:
                return read
    try:
        # the code object, not the function: inspect would follow a decorator's __wrapped__ to
        # another function's source, and the program must be the function that actually runs
        lines, first_line, filename = _source_lines(function)
    except (OSError, TypeError) as error:
        raise SourceError(
            f"cannot read the source of {function.__qualname__} "
            f"(defined in {function.__code__.co_filename}): {error}. cpsgrad transforms source "
            "code, so the function must be defined in a file, not typed at an interactive prompt "
            "or built with exec"
        ) from None
    if not is_lambda:  # its block as inspect finds it
        return _parsed_def(function, "".join(lines), first_line, filename)
    lines = _lambda_lines(function, lines, first_line)
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = _common_indent(text, dedented)
    try:
        wrapper = MetadataWrapper(cst.parse_module(dedented), unsafe_skip_copy=True)
    except cst.ParserSyntaxError:
        wrapper = None
    read = _whole_lambda(function, wrapper, filename, first_line) if wrapper is not None else None
    if read is None and text[:1] in (" ", "\t"):  # `f(\n    lambda x: a\n    + b,`: inside parentheses inspect
        try:  # does not see: parsed in a parenthesis put in the first column (lines and columns kept)
            wrapper = MetadataWrapper(cst.parse_module(f"({text[1:]}\n)\n"), unsafe_skip_copy=True)
            indent = 0
            read = _whole_lambda(function, wrapper, filename, first_line)
        except cst.ParserSyntaxError:
            pass
    if read is None:
        raise SourceError(
            f"{filename}:{first_line}: the lambda's source could not be read whole (its code goes on to line "
            f"{source_lines.last_line(function.__code__)}); write it as a def, or keep the lambda in parentheses of "
            "its own"
        )
    definition, positions = read
    return FunctionSource(function, filename, first_line, indent, definition, positions)


def _parsed_def(
    function: types.FunctionType, text: str, first_line: int, filename: str, fallback: bool = False
) -> FunctionSource | None:
    """A def read from `text`; where it does not parse, None with `fallback` (the text was cut
    before a body that compiles to nothing: source_lines.definition_text), else a SourceError."""
    dedented = textwrap.dedent(text)
    try:
        wrapper = MetadataWrapper(cst.parse_module(dedented), unsafe_skip_copy=True)
    except cst.ParserSyntaxError as error:
        if fallback:
            return None
        raise SourceError(f"{filename}:{first_line}: cannot parse the source: {error}") from None
    definition = _function_definition(function, wrapper.module, filename, first_line)
    indent = _common_indent(text, dedented)
    return FunctionSource(function, filename, first_line, indent, definition, wrapper.resolve(PositionProvider))


def _whole_lambda(function, wrapper, filename: str, first_line: int):
    """(the lambda's definition, positions) where its parsed body ends on the last line of its code;
    else None (a body cut short would be differentiated as another function: silently wrong)."""
    positions = wrapper.resolve(PositionProvider)
    definition = _lambda_definition(function, wrapper.module, filename, first_line)
    body = definition.body.body[0].body[0].value
    if positions[body].end.line + first_line - 1 < source_lines.last_line(function.__code__):
        return None
    return definition, positions


def _lambda_lines(function: types.FunctionType, lines: list[str], first_line: int) -> list[str]:
    """The lines of a lambda through the last line its code is on: inspect's block ends at the
    first line's end where the lambda continues inside a call's parentheses it does not see."""
    last = source_lines.last_line(function.__code__)
    if first_line + len(lines) - 1 >= last:
        return lines
    found = source_lines.file_lines(function)
    if found is None:
        return lines
    every, number = found
    return every[number:last]


def _source_lines(function: types.FunctionType) -> tuple[list[str], int, str]:
    """(the lines of `function`'s definition, its first line, its file), as
    `inspect.getsourcelines(function.__code__)` and `inspect.getsourcefile` find them (the rest:
    a file gone, a loader's source, a notebook cell, goes to inspect)."""
    found = source_lines.file_lines(function)
    if found is not None:
        lines, number = found
        return inspect.getblock(lines[number:]), number + 1, function.__code__.co_filename
    lines, first_line = inspect.getsourcelines(function.__code__)
    return lines, first_line, inspect.getsourcefile(function) or function.__code__.co_filename


def text_of(function: types.FunctionType) -> tuple[str, int, str] | None:
    """(the text of `function`'s lines, its first line, its file), read without parsing or
    tokenizing (the disk cache's key): from the first line `read` reads to the last line any of
    its code (or its nested functions' code) is on, which holds all that the passes read but
    trailing comments. None for a nested definition of a transformed function (it is read from
    its encloser's tree) or when the source is not in a file."""
    from cpsgrad.runtime.closures import DEFINITIONS

    if DEFINITIONS.get(function.__code__) is not None:
        return None
    try:
        found = source_lines.definition_text(function)
    except OSError:
        return None
    return None if found is None else (*found, function.__code__.co_filename)


def _common_indent(original: str, dedented: str) -> int:
    for before, after in zip(original.splitlines(), dedented.splitlines(), strict=False):
        if after.strip():
            return len(before) - len(after)
    return 0


def _function_definition(function, module: cst.Module, filename: str, first_line: int) -> cst.FunctionDef:
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == function.__code__.co_name:
            if statement.asynchronous is not None:
                raise UnsupportedError(
                    SourceLocation(filename, first_line, 1),
                    "async def",
                    "coroutines cannot be differentiated; write a plain def",
                )
            return statement
    raise SourceError(
        f"{filename}:{first_line}: no definition of {function.__code__.co_name} found in its source (if the file "
        "was edited after it was imported, its function is not the one the file holds now: import it again)"
    )


def _lambda_definition(function, module: cst.Module, filename: str, first_line: int) -> cst.FunctionDef:
    parameters = function.__code__.co_varnames[: function.__code__.co_argcount]
    found: list[cst.Lambda] = []

    class LambdaFinder(cst.CSTVisitor):
        def visit_Lambda(self, node: cst.Lambda) -> None:
            names = tuple(param.name.value for param in node.params.params)
            if names == parameters:
                found.append(node)

    module.visit(LambdaFinder())
    if len(found) != 1:
        raise SourceError(
            f"{filename}:{first_line}: {len(found)} lambdas with parameters {parameters} on these "
            "lines; cpsgrad cannot tell which one to transform. Write the function as a def"
        )
    lam = found[0]
    body = cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(lam.body)])])
    return cst.FunctionDef(cst.Name("lambda_"), lam.params, body)


def parameter_names(function) -> list[str]:
    """A function's parameters as its derivative program takes them: positional, keyword-only,
    then `*args` (a tuple) and `**kwargs` (a dict), as in `co_varnames`."""
    code = unwrap(function).__code__
    stars = bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount + stars])
