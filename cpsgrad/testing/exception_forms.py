"""`try` and `with` for the program generator (`programs(exceptions=True)`, forms.py).

A `try` whose body raises on the data (`if e > c: raise ValueError`, or a call of a module-level
`check0(u)` that raises past a drawn threshold), with a handler that matches (`except ValueError:`,
`except (KeyError, ValueError) as err:`, `except LookupError:`, `except Exception:`, bare
`except:`) and falls through, returns, `continue`s or `break`s (in a loop), or re-raises to an
outer `try` that catches it; sometimes an `else`, sometimes a `finally` assigning new variables
(new ones only: cpsgrad refuses `return v` where the finally assigns `v`). Names bound inside a
clause stay inside it (a raise may skip them). `with contextlib.suppress(ValueError):` around a
body that may raise, `with np.errstate(...)`, `with Guard0() as s:` of a module-level manager
class (`__enter__` gives 2.0; `Guard0(swallow=True)` swallows a `ValueError`).
"""

from __future__ import annotations

from hypothesis import strategies as st

FLOAT, VECTOR = "float", "vector"
KINDS = ("try", "with")
# raised -> handler clauses that catch it
_CATCHING = {
    "ValueError": ("ValueError", "(KeyError, ValueError)", "Exception", ""),
    "KeyError": ("KeyError", "LookupError", "(KeyError, ValueError)", "Exception"),
    "ZeroDivisionError": ("ZeroDivisionError", "ArithmeticError", "Exception", ""),
}


def kinds(builder) -> list[str]:
    return ["try", "try", "with"] if builder.forms.on("exceptions") and builder.forms.room(builder) else []


def statement(builder, indent: str, kind: str, variable) -> list[str]:
    if kind == "with":
        return _with(builder, indent, variable)
    if builder.draw(st.integers(0, 3)) == 0:
        return _reraised(builder, indent, variable)
    return _try(builder, indent, variable)


def _raising(builder, indent: str, error: str, variable) -> list[str]:
    """A body (its own scope) with a raise of `error` on the data somewhere in it."""
    fn = builder.function
    fn.scopes.append({})
    try:
        room = builder.forms.room(builder)
        before = builder.block(indent, builder.draw(st.integers(1, 2))) if room and builder.chance(5) else []
        if error == "ValueError" and builder.chance(2):
            builder.note("raise-in-helper")
            name = builder.fresh("a")
            raising = [f"{indent}{name} = {_checker(builder)}({builder.expression(builder.max_depth - 1)})"]
            fn.scopes[-1][name] = variable(FLOAT)
        else:
            builder.note("raise")
            argument = builder.choose(["", '("drawn")', "(2.5)"])
            raising = [f"{indent}if {builder.condition(1)}:", f"{indent}    raise {error}{argument}"]
        after = builder.block(indent, builder.draw(st.integers(1, 2))) if room and builder.chance(4) else []
        return [*before, *raising, *after]
    finally:
        fn.scopes.pop()


def _checker(builder) -> str:
    """The module-level helper that raises ValueError past a threshold."""
    threshold = builder.choose(["0.5", "1.25", "-0.25"])
    name = f"check{threshold.replace('.', '').replace('-', 'm')}"
    return builder.forms.define(
        name,
        [
            f"def {name}(u):",
            f"    if u > {threshold}:",
            '        raise ValueError("past the threshold")',
            "    return u",
        ],
    )


def _handler_body(builder, indent: str, name: str | None, variable) -> list[str]:
    """What a handler does: falls through (a block), returns, or jumps in a loop."""
    fn = builder.function
    form = builder.draw(st.integers(0, 4))
    if form == 1:
        builder.note("handler-return")
        value = (
            builder.vector_expression(builder.max_depth)
            if fn.returns == VECTOR
            else builder.expression(builder.max_depth)
        )
        return [f"{indent}return {value}"]
    if form == 2 and fn.loops:
        word = builder.choose(["continue", "break"])
        builder.note(f"handler-{word}")
        return [f"{indent}{word}"]
    builder.note("handler-falls-through")
    fn.scopes.append({})
    try:
        lines = []
        if name is not None:  # the exception's value, read inside its handler only
            builder.note("except-as")
            local = builder.fresh("a")
            lines.append(f"{indent}{local} = {builder.expression(1)} * (1.0 + len({name}.args))")
            fn.scopes[-1][local] = variable(FLOAT)
        return lines + builder.block(indent, builder.draw(st.integers(1, 2)))
    finally:
        fn.scopes.pop()


def _try(builder, indent: str, variable) -> list[str]:
    fn = builder.function
    builder.note("try")
    error = builder.choose(sorted(_CATCHING))
    inner = indent + "    "
    lines = [f"{indent}try:", *_raising(builder, inner, error, variable)]
    caught = builder.choose(list(_CATCHING[error]))
    name = builder.fresh("err") if caught and builder.chance(2) else None
    clause = f"except {caught} as {name}:" if name else f"except {caught}:" if caught else "except:"
    lines += [f"{indent}{clause}", *_handler_body(builder, inner, name, variable)]
    if builder.forms.room(builder) and builder.chance(3):
        builder.note("try-else")
        lines += [f"{indent}else:", *builder.nested(inner)]
    if builder.chance(3):
        builder.note("try-finally")
        assigned = builder.fresh("q")
        lines += [f"{indent}finally:", f"{inner}{assigned} = {builder.expression(builder.max_depth - 1)}"]
        fn.scopes[-1][assigned] = variable(FLOAT)  # bound on every path that goes on after the try
    return lines


def _reraised(builder, indent: str, variable) -> list[str]:
    """A handler that re-raises (`raise`) to an outer `try` that catches it."""
    builder.note("try", "reraise")
    inner, deeper = indent + "    ", indent + "        "
    lines = [f"{indent}try:", f"{inner}try:", *_raising(builder, deeper, "ValueError", variable)]
    lines += [f"{inner}except ValueError:", *builder.nested(deeper), f"{deeper}raise"]
    return lines + [f"{indent}except {builder.choose(['ValueError', 'Exception'])}:", *builder.nested(inner)]


def _with(builder, indent: str, variable) -> list[str]:
    fn = builder.function
    inner = indent + "    "
    form = builder.draw(st.integers(0, 2))
    if form == 0:
        builder.note("with", "with-suppress")
        builder.forms.need("contextlib")
        return [f"{indent}with contextlib.suppress(ValueError):", *_raising(builder, inner, "ValueError", variable)]
    if form == 1 and builder.numpy:
        builder.note("with", "with-errstate")
        options = builder.choose(['all="ignore"', 'divide="ignore", invalid="ignore"', 'over="ignore"'])
        return [f"{indent}with np.errstate({options}):", *builder.nested(inner)]
    builder.note("with", "with-manager")
    manager = builder.forms.define(
        "Guard0",
        [
            "class Guard0:",
            "    def __init__(self, swallow=False):",
            "        self.swallow = swallow",
            "",
            "    def __enter__(self):",
            "        return 2.0",
            "",
            "    def __exit__(self, kind, error, traceback):",
            "        return self.swallow and kind is ValueError",
        ],
    )
    bound = builder.fresh("s")
    fn.scopes[-1][bound] = variable(FLOAT)  # __enter__'s 2.0, bound before the body runs
    if builder.chance(3):
        builder.note("with-manager-swallows")
        return [f"{indent}with {manager}(swallow=True) as {bound}:", *_raising(builder, inner, "ValueError", variable)]
    return [f"{indent}with {manager}() as {bound}:", *builder.nested(inner)]
