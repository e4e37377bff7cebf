"""One device function that runs the formula of the catalog entry a code names.

The elementwise kernels take an op's catalog ``code`` as a launch argument (uniform across the
grid, so no divergence) instead of being compiled once an op; ``selector`` turns a catalog into
the device function that maps ``(code, *args)`` to ``formula(*args)``. It is a chain of small
device functions, one an entry, each comparing the code with its own entry's and passing the
call on otherwise, so no op number is written anywhere but in the catalog.
"""

from collections.abc import Callable, Iterable

from cpsgrad.kernels.cuda.jit import device


def selector(entries: Iterable, formula_of: Callable, fallback: Callable):
    """A device function ``select(code, *args)``: ``formula_of(entry)(*args)`` for the entry
    whose ``code`` it is, ``fallback(*args)`` for no entry (a device function too)."""
    chain = device(lambda code, *args: fallback(*args))
    for entry in entries:
        chain = _link(entry.code, formula_of(entry), chain)
    return chain


def _link(own_code: int, formula, rest):
    def select(code, *args):
        if code == own_code:
            return formula(*args)
        return rest(code, *args)

    return device(select)
