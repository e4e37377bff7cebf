"""The disk store of generated programs: where entries live, their keys, and reading and writing them.

A process's first transform of a function costs tens to hundreds of milliseconds (parsing, the
passes, compiling); the program it makes depends only on things that can be named across
processes, so it is kept on disk and a later process loads it instead (transforms/persisted.py
says what an entry holds and how a program is rebuilt from it). This module knows nothing of
programs: it stores marshalled dicts under a key, and describes objects by qualified name.

Location: `$CPSGRAD_CACHE_DIR`, else `$XDG_CACHE_HOME/cpsgrad`, else `~/.cache/cpsgrad`;
`CPSGRAD_CACHE_DIR=` (empty) or `off` turns the cache off. One file per function, argnums,
argument kinds and interpreter (`name`); the rest of the key (`key`: the source text, the rule
table, cpsgrad's own files) is stored inside and compared on reading, so an entry made stale
by an edit is replaced in place rather than left beside the new one.

Each file is MAGIC, a BLAKE2b digest of the payload, then the payload (`marshal`: plain data and
code objects, nothing that runs code when read). A file that is short, fails its digest, does
not unmarshal, or holds another key is ignored (and overwritten by the next store). Writes go
to a temporary file in the same directory, then `os.replace`: a reader sees a whole entry or
none, and concurrent writers of one entry each leave a whole one (the last wins).
"""

from __future__ import annotations

import builtins
import hashlib
import marshal
import os
import sys
import tempfile
import types
from pathlib import Path

FORMAT = 2  # bumped when what an entry holds changes (2: writes' consents and written-argument variants)
MAGIC = b"cpsgrad\x00" + FORMAT.to_bytes(4, "little")
_DIGEST_SIZE = 16
_OFF = ("", "off")


def directory() -> Path | None:
    """Where entries are kept now (read from the environment on each use), or None when the
    cache is off."""
    configured = os.environ.get("CPSGRAD_CACHE_DIR")
    if configured is not None:
        return None if configured.strip().lower() in _OFF else Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cpsgrad"


def entry_path(folder: Path, name: tuple) -> Path:
    """The file of the entry named `name` (a tuple of strings, numbers and tuples)."""
    digest = hashlib.blake2b(repr(name).encode(), digest_size=20).hexdigest()
    return folder / f"py{sys.version_info.major}{sys.version_info.minor}" / f"{digest}.program"


def read(path: Path, key: tuple) -> dict | None:
    """The payload stored at `path` under `key`, or None (no file, a damaged one, another key)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    header = len(MAGIC) + _DIGEST_SIZE
    if len(data) <= header or not data.startswith(MAGIC):
        return None
    payload = data[header:]
    if hashlib.blake2b(payload, digest_size=_DIGEST_SIZE).digest() != data[len(MAGIC):header]:
        return None
    try:
        entry = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    if type(entry) is not dict or entry.get("key") != key:
        return None
    return entry


def write(path: Path, key: tuple, entry: dict) -> bool:
    """Store `entry` under `key` at `path`, atomically; whether it was stored (a read-only or
    full disk only costs the next process a transform)."""
    try:
        payload = marshal.dumps({**entry, "key": key})
    except ValueError:  # something marshal cannot hold: the caller described it wrongly
        return False
    data = MAGIC + hashlib.blake2b(payload, digest_size=_DIGEST_SIZE).digest() + payload
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
        return True
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return False


# -- naming objects across processes --------------------------------------------------------------
MISSING = ("missing",)


def describe(value) -> tuple | None:
    """What `value` is, in terms another process can check: ("module", name) for a module,
    ("object", module, qualname) for a function, class or other callable found again by that
    name, ("value", type's module, type's qualname) for any other value (the program reads
    values live; only their kind can matter). None for a callable that has no such name (a
    lambda, a local function, a bound method, a callable instance): a program that depends on
    one is not stored."""
    if isinstance(value, types.ModuleType):
        return ("module", value.__name__)
    if callable(value):
        module = getattr(value, "__module__", None)
        qualname = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
        if type(module) is str and type(qualname) is str and found(module, qualname) is value:
            return ("object", module, qualname)
        return None
    kind = type(value)
    return ("value", kind.__module__, kind.__qualname__)


def found(module: str, qualname: str, load: bool = False):
    """The object `module`.`qualname` names in this process (None if nothing does). The module
    is imported only with `load` (rebuilding a program's helpers, never checking one)."""
    owner = sys.modules.get(module)
    if owner is None and load:
        try:
            owner = __import__(module, fromlist=["_"])
        except Exception:  # noqa: BLE001 - any failure to import: nothing is found
            return None
    if owner is None:
        return None
    value = owner
    for part in qualname.split("."):
        if part == "<locals>" or part.startswith("<"):
            return None
        value = getattr(value, part, None)
        if value is None:
            return None
    return value


def lookup(function: types.FunctionType, dotted: str, missing=None):
    """What `dotted` names as `function` reads it (its closure, its globals, builtins, then
    attributes), or `missing`; as `resolve.binding_guard` looks names up."""
    first, *rest = dotted.split(".")
    cells = dict(zip(function.__code__.co_freevars, function.__closure__ or (), strict=True))
    if first in cells:
        try:
            value = cells[first].cell_contents
        except ValueError:
            return missing
    elif first in function.__globals__:
        value = function.__globals__[first]
    elif hasattr(builtins, first):
        value = getattr(builtins, first)
    else:
        return missing
    for attribute in rest:
        value = getattr(value, attribute, _ABSENT)
        if value is _ABSENT:
            return missing
    return value


_ABSENT = object()
