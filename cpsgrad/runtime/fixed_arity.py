"""Fixed-arity code for the call sites (runtime/dispatch.py): every call on a dispatcher's path is a
call of a Python function with a fixed number of arguments, never `f(*args)`, so that CPython 3.11
runs it without a C stack frame."""

from __future__ import annotations

import types

from cpsgrad.runtime.kinds import of as kind_of


def key_of(value):
    """What a parameter contributes to the choice of program: its type, or for a tuple or a list
    its kind (which depends on the elements). Cheaper than `kinds.of`, and determines it."""
    kind = type(value)
    return kind_of(value) if kind is tuple or kind is list else kind


_DISPATCHERS: dict[int, types.FunctionType] = {}
_INVOKERS: dict[int, types.FunctionType] = {}


def _dispatcher(positional: int, table):
    """`make(site)` -> the site's `call(callee, k, a0, ..., a{positional-1})`. Its fast path (a
    plain function or a bound method whose plan is direct, with a program for the arguments'
    key) is a few dict lookups and one call; anything else goes to `site.slow`."""
    make = _DISPATCHERS.get(positional)
    if make is None:
        names = [f"a{i}" for i in range(positional)]
        keys = "".join(
            f"                t{i} = type(a{i})\n                if t{i} is tuple or t{i} is list:\n"
            f"                    t{i} = key_of(a{i})\n"
            for i in range(positional)
        )
        key = "".join(f"t{i}, " for i in range(positional))
        arguments = "".join(f"{n}, " for n in names)
        text = (
            "def make(site):\n"
            "    functions = site.functions\n"
            "    methods = site.methods\n"
            "    slow = site.slow\n"
            f"    def call(callee, k, {arguments}):\n"
            "        kind = type(callee)\n"
            "        if kind is FUNCTION:\n"
            "            found = functions.get(callee)\n"
            "            if found is not None and found.table_version == TABLE.version and found.code is "
            "callee.__code__ and (found.guard is None or found.guard()):\n"
            f"{keys}"
            f"                program = found.programs.get(({key}))\n"
            "                if program is not None:\n"
            f"                    return program({arguments}k)\n"
            "        elif kind is METHOD:\n"
            "            function = callee.__func__\n"
            "            found = methods.get(function)\n"
            "            if found is not None and found.table_version == TABLE.version and found.code is "
            "function.__code__ and (found.guard is None or found.guard()):\n"
            "                instance = callee.__self__\n"
            "                t = type(instance)\n"
            "                if t is tuple or t is list:\n"
            "                    t = key_of(instance)\n"
            f"{keys}"
            f"                program = found.programs.get((t, {key}))\n"
            "                if program is not None:\n"
            f"                    return program(instance, {arguments}k)\n"
            f"        return slow(callee, k, ({arguments}), None)\n"
            "    return call\n"
        )
        namespace = {
            "FUNCTION": types.FunctionType,
            "METHOD": types.MethodType,
            "TABLE": table,
            "key_of": key_of,
        }
        exec(compile(text, f"<cpsgrad dispatcher of {positional} arguments>", "exec"), namespace)  # noqa: S102
        make = _DISPATCHERS[positional] = namespace["make"]
    return make


def _invoker(count: int):
    """`invoke(program, parameters, k)` calling `program(parameters[0], ..., k)`."""
    invoke = _INVOKERS.get(count)
    if invoke is None:
        spread = "".join(f"parameters[{i}], " for i in range(count))
        text = f"def invoke(program, parameters, k):\n    return program({spread}k)\n"
        namespace: dict = {}
        exec(compile(text, f"<cpsgrad invoker of {count} parameters>", "exec"), namespace)  # noqa: S102
        invoke = _INVOKERS[count] = namespace["invoke"]
    return invoke
