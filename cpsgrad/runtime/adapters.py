"""Adapters: Python functions standing for a primitive or a record class handed as a value.

A primitive called as a value (`f = np.tanh; f(x)`, a rule's function in a partial) runs through
a one-line adapter `def call_tanh(x0): return tanh(x0)` that is transformed like any function, so
its rule is inlined there; a NamedTuple or dataclass constructed from differentiable values runs
through `def construct_Linear(x0, x1): return construct(kind, (x0, x1), (), ())`, for the rule
of `cpsgrad_runtime.construct`. Each is made once per primitive and call shape.
"""

from __future__ import annotations

import keyword
import linecache
import types

from cpsgrad.runtime.containers import construct
from cpsgrad.runtime.objects import new_object


def _describe(value) -> str:
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if name is None:
        return f"a {type(value).__name__} object"
    module = getattr(value, "__module__", None)
    return f"{module}.{name}" if module and module != "builtins" else name


_ADAPTER_FILE = "<cpsgrad adapter of "
_ADAPTERS: dict[tuple, tuple[object, types.FunctionType]] = {}


def _adapter(primitive, positional: int, keywords: tuple[str, ...]) -> types.FunctionType:
    """A Python function calling `primitive` as the call does (`def call_tanh(x0): return
    tanh(x0)`, `tanh` bound to the primitive), for its rule to be inlined into."""
    key = (id(primitive), positional, keywords)
    cached = _ADAPTERS.get(key)
    if cached is not None and cached[0] is primitive:
        return cached[1]
    name = getattr(primitive, "__name__", "")
    name = name if name.isidentifier() and not keyword.iskeyword(name) and name not in keywords else "primitive"
    parameters = [f"x{i}" for i in range(positional)]
    parameters = [p if p not in keywords and p != name else f"{p}_" for p in parameters]
    listed = ", ".join([*parameters, *(["*", *keywords] if keywords else [])])
    arguments = ", ".join([*parameters, *(f"{k}={k}" for k in keywords)])
    text = f"def call_{name}({listed}):\n    return {name}({arguments})\n"
    filename = f"{_ADAPTER_FILE}{_describe(primitive)} #{len(_ADAPTERS) + 1}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace = {name: primitive}
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - a one-line call of the primitive
    function = namespace[f"call_{name}"]
    _ADAPTERS[key] = (primitive, function)
    return function


def primitive_caller(primitive, positional: int) -> types.FunctionType:
    """`_adapter` for the API: `cpsgrad.grad(np.sqrt)` differentiates `def call_sqrt(x0): ...`."""
    return _adapter(primitive, positional, ())


def _constructor(kind: type, positional: int, keywords: tuple[str, ...]) -> types.FunctionType:
    """A Python function constructing a NamedTuple or dataclass `kind` as the call does
    (`def construct_Linear(x0, x1): return construct(kind, (x0, x1), (), ())`), for the rule
    of `cpsgrad_runtime.construct` to be inlined into."""
    key = (id(kind), positional, keywords, "construct")
    cached = _ADAPTERS.get(key)
    if cached is not None and cached[0] is kind:
        return cached[1]
    parameters = [f"x{i}" for i in range(positional)]
    parameters = [p if p not in keywords else f"{p}_" for p in parameters]
    listed = ", ".join([*parameters, *(["*", *keywords] if keywords else [])])
    packed = "".join(f"{p}, " for p in parameters)
    given = "".join(f"{k}, " for k in keywords)
    names = "".join(f"{k!r}, " for k in keywords)
    text = f"def construct_{kind.__name__}({listed}):\n    return construct(kind, ({packed}), ({given}), ({names}))\n"
    filename = f"{_ADAPTER_FILE}{_describe(kind)} #{len(_ADAPTERS) + 1}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace = {"construct": construct, "kind": kind}
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - one call of the constructor
    function = namespace[f"construct_{kind.__name__}"]
    _ADAPTERS[key] = (kind, function)
    return function


def _object_constructor(kind: type, positional: int, keywords: tuple[str, ...]) -> types.FunctionType:
    """A Python function making an object of the plain class `kind` as `type.__call__` does, with
    its `__init__` differentiated as a method (runtime/objects.py):
    `def new_Layer(x0, x1): obj = new_object(kind); result = init(obj, x0, x1); ...; return obj`."""
    init = kind.__init__
    if not isinstance(init, types.FunctionType):
        raise TypeError(f"{kind.__name__}() takes no arguments")
    key = (id(kind), positional, keywords, "new", init)
    cached = _ADAPTERS.get(key)
    if cached is not None and cached[0] is kind:
        return cached[1]
    parameters = [f"x{i}" for i in range(positional)]
    parameters = [p if p not in keywords else f"{p}_" for p in parameters]
    listed = ", ".join([*parameters, *(["*", *keywords] if keywords else [])])
    arguments = ", ".join(["instance", *parameters, *(f"{k}={k}" for k in keywords)])
    text = (
        f"def new_{kind.__name__}({listed}):\n    instance = new_object(kind)\n    result = init({arguments})\n"
        "    if result is not None:\n        raise TypeError('__init__() should return None')\n    return instance\n"
    )
    filename = f"{_ADAPTER_FILE}{_describe(kind)} #{len(_ADAPTERS) + 1}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace = {"new_object": new_object, "kind": kind, "init": init}
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - a class call, __init__ a method
    function = namespace[f"new_{kind.__name__}"]
    _ADAPTERS[key] = (kind, function)
    return function
