"""A function's lines read from its file as inspect would find them, without inspect's costs.

inspect.getsource first looks the code object's module up by file name (its first such look-up
in a process resolves the path of every module imported) and then tokenizes the file from the
function's first line to find where its block ends. Here the lines come from linecache, and the
block ends on the last line any of the function's code is on (`definition_text`): what that
leaves out (trailing comments, a trailing `pass` or string) compiles to nothing, and a block cut
where a body is needed no longer parses, so a caller that cannot parse it falls back to inspect.
"""

from __future__ import annotations

import importlib.machinery
import linecache
import os
import re
import sys
import textwrap
import types

import libcst as cst

_DEFINITION_LINE = re.compile(r"^(\s*def\s)|(\s*async\s+def\s)|(.*(?<!\w)lambda(:|\s))|^(\s*@)")
_COMPILED_SUFFIXES = (*importlib.machinery.BYTECODE_SUFFIXES, *importlib.machinery.EXTENSION_SUFFIXES)


def file_lines(function: types.FunctionType) -> tuple[list[str], int] | None:
    """(the lines of `function`'s file, the index of its first line) as inspect finds them for its
    code object, for a function of a file on disk or in linecache; None otherwise.

    Read here, not by inspect: inspect first looks the code object's module up by file name, and
    its first such look-up in a process resolves the path of every module imported (a third of
    a small function's transform)."""
    code = function.__code__
    filename = code.co_filename
    if filename.endswith(_COMPILED_SUFFIXES) or not (filename in linecache.cache or os.path.exists(filename)):
        return None
    linecache.checkcache(filename)  # an edited file is read again, as inspect would
    lines = linecache.getlines(filename, function.__globals__)
    if not lines:
        return None
    number = code.co_firstlineno - 1
    if number >= len(lines):
        raise OSError("lineno is out of bounds")
    if sys.version_info < (3, 13):  # before 3.13 inspect walks back to a def, lambda or @
        while number > 0 and not _DEFINITION_LINE.match(lines[number]):
            number -= 1
    return lines, number


def last_line(code: types.CodeType) -> int:
    """The last line any instruction of `code` or of the code objects in it ends on."""
    last = code.co_firstlineno
    pending = [code]
    while pending:
        code = pending.pop()
        for _, end, _, _ in code.co_positions():
            if end is not None and end > last:
                last = end
        pending += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return last


def definition_text(function: types.FunctionType) -> tuple[str, int] | None:
    """(the text of `function`'s lines from its first, decorators included, to the last any of its
    code is on; that first line's number), or None where its file's lines cannot be read."""
    found = file_lines(function)
    if found is None:
        return None
    lines, number = found
    return "".join(lines[number : last_line(function.__code__)]), number + 1


def parsed_definition(function: types.FunctionType) -> cst.Module | None:
    """`definition_text` dedented and parsed; None where it cannot be read or does not parse
    (cut before a body that compiles to nothing): the caller then reads it with inspect."""
    try:
        found = definition_text(function)
    except (OSError, AttributeError):  # not a plain function: inspect says why
        return None
    if found is None:
        return None
    try:
        return cst.parse_module(textwrap.dedent(found[0]))
    except cst.ParserSyntaxError:
        return None
