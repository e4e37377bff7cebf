"""`try` and `with` in generated code (transforms/exceptions.py, transforms/regions.py).

A handler's `except E` is `matches(error, E)`; a `with` statement is `exit_of(manager)` and
`enter(manager)` before its body, `exit_with(exit, error)` when the body raises and
`exit(None, None, None)` when it ends otherwise, as the language reference spells it out.
cpsgrad's own errors (a refusal, a missing rule) and RecursionError are never caught by the
user's handlers, and never swallowed by a manager: a program that catches one would go on
computing something else.
"""

from __future__ import annotations

from cpsgrad.errors import CpsgradError

# never caught by a user's handler nor swallowed by a manager: cpsgrad's own errors, and running
# out of stack (the derivative program is deeper than the original: a RecursionError the original
# would not have raised must not send it down another path)
_UNCATCHABLE = (CpsgradError, RecursionError)


def matches(error: BaseException, kinds) -> bool:
    """`except kinds:` for `error`, as Python matches it (a class or a tuple of classes derived
    from BaseException, else TypeError)."""
    for kind in kinds if isinstance(kinds, tuple) else (kinds,):
        if not (isinstance(kind, type) and issubclass(kind, BaseException)):
            raise TypeError("catching classes that do not inherit from BaseException is not allowed")
    if isinstance(error, _UNCATCHABLE):
        return False
    return isinstance(error, kinds)


def _special(manager, name: str):
    kind = type(manager)
    try:
        method = getattr(kind, name)
    except AttributeError:
        raise TypeError(f"'{kind.__name__}' object does not support the context manager protocol") from None
    getter = getattr(type(method), "__get__", None)
    return method if getter is None else getter(method, manager, kind)


def exit_of(manager):
    """The bound `__exit__` of a manager, looked up on its type after `__enter__` as `with` does
    (TypeError when either is missing)."""
    _special(manager, "__enter__")
    return _special(manager, "__exit__")


def enter(manager):
    """`type(manager).__enter__(manager)`: the value `with ... as v` binds."""
    return _special(manager, "__enter__")()


def exit_with(exit, error: BaseException) -> bool:
    """`exit(type, error, traceback)` for a body that raised `error`: whether the exception is
    swallowed (the result's truth). cpsgrad's own errors are never swallowed."""
    swallowed = bool(exit(type(error), error, error.__traceback__))
    return swallowed and not isinstance(error, _UNCATCHABLE)


def entering(k):
    """`k` (a continuation handed to a callee in a try region), noting whether it was entered."""
    state = [False]

    def entered(value):
        state[0] = True
        return k(value)

    entered.state = state
    return entered


def caught(error: BaseException, entered) -> BaseException:
    """An exception out of a guarded call: the callee's own (returned, for the handler) only if
    it never entered its continuation; else it came from the rest of the program or from the
    callee's backward, and is raised on. cpsgrad's own errors are never caught."""
    if entered.state[0] or isinstance(error, _UNCATCHABLE):
        raise error
    return error
