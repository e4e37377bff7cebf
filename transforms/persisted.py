"""Programs kept on disk between processes: what an entry holds, when one is valid, and how a
program is rebuilt from it without running the passes (transforms/disk_cache.py stores them).

Why a stored program is valid in a new process. The passes read: the function's source text;
the objects the names it mentions name (the closure, the module globals, builtins: which
callee is a rule's primitive, a user function, a module, a number); the rule table (which
templates are inlined, their text); cpsgrad's own code; the argnums and argument kinds; and
Python (the code objects). An entry's file is named by the function's file, qualified name and
first line, argnums, argument kinds, cpsgrad's and Python's versions; its key, compared on
reading, adds a digest of the source text, of the rule table's content (each rule's primitive
and template by qualified name, and the text of the files the templates are in: `TABLE.version`
is a counter of this process) and of cpsgrad's own source files (size and mtime). What the
names meant is checked against this process on loading: each name the function mentions must
name an object of the same description (`disk_cache.describe`: a module by name, a function or
class by module and qualified name, any other value by its type), and each dotted name the
transform resolved (its bindings) the same module or qualified object. With all of these equal
the passes would make the same program, so it is used; its run-time guard (`Transformed.holds`,
over the objects the names name in this process) is built as for a program made here and still
runs on every call. A program that writes into its parameters' arrays keeps which (the top
level refuses their sharing an array, callers are asked to consent), its call sites what each may
let a callee write into, and a written-argument variant is made again from the function it was
made from. Not stored: programs that depend on something no name finds again in
another process (a lambda or local function among the names or bindings, nested definitions
of their own, a nested function's program), and programs of functions whose source is not in
a file.
"""

from __future__ import annotations

import hashlib
import os
import sys
import types

from cpsgrad import nonfinite
from cpsgrad.errors import SourceLocation
from cpsgrad.rules.registry import TABLE
from cpsgrad.runtime import spread_sites
from cpsgrad.transforms import disk_cache, emit, naming, source, walk, written_arguments

_SITE = "site"
_VARIANT = "written variant"  # written_arguments.py: (function's module, qualname, parameters, its digest, the text)


def entry_name(function: types.FunctionType, first_line: int, argnums, argument_kinds, every_parameter: bool) -> tuple:
    """What an entry's file is named by (disk_cache.entry_path)."""
    code = function.__code__
    return (
        disk_cache.FORMAT, code.co_filename, function.__qualname__, first_line, tuple(argnums),
        tuple(argument_kinds), every_parameter, sys.version, sys.implementation.cache_tag,
        getattr(sys.modules.get("cpsgrad"), "__version__", None),  # the package, not imported here: no cycle
    )


def key(source_text: str, function: types.FunctionType) -> tuple:
    """What is compared on reading: the source text (`source.text_of`: the lines its code is on)
    and the code compiled from it (so an edit on a line past the last one code is on, which
    changes the code, changes the key), the rule table and cpsgrad's code."""
    digest = hashlib.blake2b(source_text.encode(), digest_size=16)
    _code_digest(function.__code__, digest)
    return (digest.hexdigest(), table_digest(), package_digest())


def _code_digest(code: types.CodeType, digest) -> None:
    """Feed `code` into `digest`: its bytecode, names and constants, its nested code objects'
    (not `marshal.dumps`: its output depends on reference counts, so differs between processes)."""
    digest.update(code.co_code)
    digest.update(repr((code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars, code.co_argcount,
                        code.co_kwonlyargcount, code.co_posonlyargcount, code.co_flags)).encode())
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            _code_digest(constant, digest)
        else:
            digest.update(_constant(constant).encode())


def _constant(value) -> str:
    """A constant's text, the same in every process (a frozenset's order is its strings' hashes')."""
    if isinstance(value, frozenset):
        return "frozenset(" + repr(sorted(map(_constant, value))) + ")"
    if isinstance(value, tuple):
        return "(" + ", ".join(map(_constant, value)) + ",)"
    return repr(value)


_TABLE_DIGEST: list = [None, None]  # [TABLE.version it was computed at, digest]


def table_digest() -> str:
    """The rule table's content, as a digest: per rule (in the table's order), its primitive's
    and its template's qualified names and the template's file and first line; then the size and
    modification time of every file a template is in (an edited template changes its file).
    Computed again when the table changes (its version)."""
    if _TABLE_DIGEST[0] == TABLE.version:
        return _TABLE_DIGEST[1]
    version = TABLE.version
    parts = []
    files: set[str] = set()
    for primitive in TABLE.primitives():
        for rule in TABLE.rules_for(primitive):
            template = rule.template
            code = getattr(template, "__code__", None)
            where = (code.co_filename, code.co_firstlineno) if code is not None else None
            if code is not None:
                files.add(code.co_filename)
            owner = getattr(primitive, "__self__", None)
            parts.append(
                (
                    getattr(primitive, "__module__", None),
                    getattr(primitive, "__qualname__", getattr(primitive, "__name__", None)),
                    type(primitive).__qualname__,
                    type(owner).__qualname__,
                    template.__module__,
                    template.__qualname__,
                    where,
                )
            )
    for file in sorted(files):
        parts.append((file, _stamp(file)))
    _TABLE_DIGEST[:] = [version, hashlib.blake2b(repr(parts).encode(), digest_size=16).hexdigest()]
    return _TABLE_DIGEST[1]


def _stamp(file: str | None):
    """A file's size and modification time (None when it cannot be read)."""
    try:
        status = os.stat(file) if file else None
    except OSError:
        return None
    return status and (status.st_size, status.st_mtime_ns)


_PACKAGE_DIGEST: list[str] = []


def package_digest() -> str:
    """cpsgrad's own code, as a digest of the size and modification time of each of its loaded
    modules' files (so an edited checkout does not load programs an older transform made)."""
    if not _PACKAGE_DIGEST:
        digest = hashlib.blake2b(digest_size=16)
        for module_name, module in sorted(sys.modules.items()):
            if module_name != "cpsgrad" and not module_name.startswith("cpsgrad."):
                continue
            file = getattr(module, "__file__", None)
            digest.update(repr((module_name, file, _stamp(file))).encode())
        _PACKAGE_DIGEST.append(digest.hexdigest())
    return _PACKAGE_DIGEST[0]


# -- storing and loading --------------------------------------------------------------------------
def store(read, argnums, argument_kinds, every_parameter: bool, final: str, module: types.CodeType, *parts) -> bool:
    """Store the program the passes just made from `read` (`parts`: as `entry` takes them after
    `module`), when the cache is on and the program can be rebuilt elsewhere; whether it was."""
    folder = disk_cache.directory()
    where = source.text_of(read.function) if folder is not None else None
    if where is None or where[1:] != (read.first_line, read.filename):
        return False
    stored = entry(read.function, walk.names(read.definition), final, module, *parts)
    if stored is None:
        return False
    name = entry_name(read.function, read.first_line, argnums, argument_kinds, every_parameter)
    return disk_cache.write(disk_cache.entry_path(folder, name), key(where[0], read.function), stored)


def load(function: types.FunctionType, argnums, argument_kinds, every_parameter: bool) -> Restored | None:
    """`function`'s program from the disk cache, compiled and registered for `debug_nans`, or None
    when there is none that holds in this process."""
    folder = disk_cache.directory()
    where = source.text_of(function) if folder is not None else None
    if where is None:
        return None
    text, first_line, _ = where
    name = entry_name(function, first_line, argnums, argument_kinds, every_parameter)
    stored = disk_cache.read(disk_cache.entry_path(folder, name), key(text, function))
    restored = restore(function, stored) if stored is not None else None
    if restored is None:
        return None
    try:
        restored.program = emit.compile_program(
            stored["final"], stored["filename"], stored["wrapper"], stored["entry"], function, restored.namespace,
            stored["free"], stored["code"],
        )
    except Exception:  # noqa: BLE001 - an entry that does not run here: the function is transformed instead
        return None
    nonfinite.register(restored.program, stored["wrapper"], stored["filename"], stored["final"], restored.origins)
    return restored


def entry(
    function: types.FunctionType, mentioned: set[str], final: str, module: types.CodeType, filename: str,
    wrapper: str, entry_name: str, free: tuple[str, ...], namespace: dict, sites: list, bindings: dict,
    parameters: list[str], differentiated: tuple[str, ...], assumed: tuple[str, ...],
    borrowers: tuple[str, ...], origins: tuple, written: tuple[int, ...] = (),
) -> dict | None:
    """What is stored for a program made now, or None when it cannot be rebuilt elsewhere."""
    names = []
    for identifier in sorted(mentioned):
        described = _environment(function, identifier)
        if described is None:
            return None
        names.append((identifier, described))
    resolved = []
    for dotted, value in sorted(bindings.items()):
        described = disk_cache.describe(value)
        if described is None:
            return None
        resolved.append((dotted, described))
    site_of = {naming.call_site(site.label): site for site in sites}
    helpers = []
    for helper, value in sorted(namespace.items()):
        site = site_of.get(helper)
        if site is not None:
            helpers.append((helper, (_SITE, site.callee_code, _location(site.location), tuple(site.active),
                                     site.positional, tuple(site.keywords), bool(site.callee_active),
                                     tuple(bool(c) for c in site.consumable))))
            continue
        variant_of = getattr(value, "__dict__", {}).get(naming.WRITTEN_ATTRIBUTE) if callable(value) else None
        if variant_of is not None:  # a written-argument variant: made again from its function here
            described = disk_cache.describe(variant_of[0])
            if described is None or described[0] != "object":
                return None
            where = source.text_of(variant_of[0])
            if where is None:
                return None
            digest = key(where[0], variant_of[0])[0]  # the function's source, checked when it is made again
            returned, text = tuple(variant_of[1]), variant_of[2]  # (not `parameters`: the program's own)
            helpers.append((helper, (_VARIANT, described[1], described[2], returned, digest, text)))
            continue
        described = disk_cache.describe(value)
        if described is None or described[0] == "value":
            return None
        helpers.append((helper, described))
    lines = []
    for location, role in origins:
        if not (location is None or type(location) is SourceLocation) or type(role) is not str:
            return None
        lines.append((_location(location), role))
    return {
        "final": final, "code": module, "filename": filename, "wrapper": wrapper, "entry": entry_name,
        "free": tuple(free), "names": tuple(names), "bindings": tuple(resolved), "helpers": tuple(helpers),
        "parameters": tuple(parameters), "differentiated": tuple(differentiated), "assumed": tuple(assumed),
        "borrowers": tuple(borrowers), "origins": tuple(lines), "written": tuple(written),
    }


def _environment(function: types.FunctionType, identifier: str) -> tuple | None:
    value = disk_cache.lookup(function, identifier, _UNBOUND)
    return disk_cache.MISSING if value is _UNBOUND else disk_cache.describe(value)


_UNBOUND = object()


def _location(location: SourceLocation | None):
    return None if location is None else (location.filename, location.line, location.column)


def _source_location(stored, made: dict | None = None) -> SourceLocation | None:
    """The SourceLocation `_location` stored (`made`: those made already, shared: a statement's
    location heads many lines)."""
    if stored is None:
        return None
    if made is None:
        return SourceLocation(*stored)
    location = made.get(stored)
    if location is None:
        location = made[stored] = SourceLocation(*stored)
    return location


# -- rebuilding from an entry ---------------------------------------------------------------------
class Restored:
    """A stored program's parts, checked against this process (`restore`)."""

    __slots__ = ("entry", "bindings", "namespace", "origins", "program")

    def __init__(self, entry: dict, bindings: dict, namespace: dict, origins: tuple):
        self.entry = entry
        self.bindings = bindings  # dotted name -> the object it names here (for the guards)
        self.namespace = namespace  # the program's helpers, made or found again here
        self.origins = origins
        self.program: types.FunctionType | None = None  # compiled by `load`


def restore(function: types.FunctionType, stored: dict) -> Restored | None:
    """`stored`'s program for `function`, if every name it depends on means here what it meant
    when it was made (see the module), else None."""
    for identifier, described in stored["names"]:
        if _environment(function, identifier) != described:
            return None
    bindings = {}
    for dotted, described in stored["bindings"]:
        value = disk_cache.lookup(function, dotted, _UNBOUND)
        if value is _UNBOUND or disk_cache.describe(value) != described:
            return None
        bindings[dotted] = value
    namespace = {}
    for helper, described in stored["helpers"]:
        if described[0] == _SITE:
            _, label, location, active, positional, keywords, callee_active, consumable = described
            site = spread_sites.site(
                label, _source_location(location), active, positional, keywords, callee_active, consumable
            )
            namespace[helper] = site.call
        elif described[0] == _VARIANT:
            _, module, qualname, parameters, digest, text = described
            function_of = disk_cache.found(module, qualname, load=True)
            where = source.text_of(function_of) if isinstance(function_of, types.FunctionType) else None
            if where is None or key(where[0], function_of)[0] != digest:
                return None  # the function was edited (or is not that one): transformed again
            namespace[helper] = written_arguments.variant_from_text(function_of, parameters, text)
        elif described[0] == "module":
            value = _module(described[1])
            if value is None:
                return None
            namespace[helper] = value
        else:
            value = disk_cache.found(described[1], described[2], load=True)
            if value is None:
                return None
            namespace[helper] = value
    made: dict = {}
    origins = tuple((_source_location(location, made), role) for location, role in stored["origins"])
    return Restored(stored, bindings, namespace, origins)


def _module(module_name: str):
    module = sys.modules.get(module_name)
    if module is None:
        try:
            module = __import__(module_name, fromlist=["_"])
        except Exception:  # noqa: BLE001 - a helper module that no longer imports: not restored
            return None
    return module
