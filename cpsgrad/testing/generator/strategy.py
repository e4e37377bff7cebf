"""`programs(...)`: the hypothesis strategy of drawn programs, with arguments to call them with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st

from cpsgrad.testing.generator.builder import Builder
from cpsgrad.testing.generator.grammar import FLOATS, MATRIX_SHAPE, MAX_TRIPS, VECTOR_LENGTH, apart
from cpsgrad.testing.generator.program import Program
from cpsgrad.testing.strategies import arrays


@st.composite
def _programs(draw: Callable[..., Any], switches: dict[str, Any]) -> Program:
    """One program: `switches` are `programs`' keyword arguments, as `Builder` takes them."""
    builder = Builder(draw, **switches)
    source, names = builder.module()
    # Ties in min/max between different values get an equal share each (as in JAX), which is
    # not the derivative where the tie is flat on one side (max(min(x0, x1), x1) at x0 == x1);
    # so no two arguments (or their negations) coincide, nor meet the round constants.
    taken: list[float] = []
    arguments: list[Any] = []
    for name in names:
        if name == "v":
            vector = draw(arrays(VECTOR_LENGTH, min_value=-2.0, max_value=2.0))
            arguments.append(np.array([apart(float(a), taken) for a in vector]))
        elif name == "m":
            matrix = draw(arrays(MATRIX_SHAPE, min_value=-2.0, max_value=2.0))
            arguments.append(np.array([apart(float(a), taken) for a in matrix.ravel()]).reshape(MATRIX_SHAPE))
        else:
            arguments.append(apart(draw(FLOATS), taken))
    arguments.append(draw(st.integers(0, MAX_TRIPS)))
    constructs = set(builder.constructs)
    if builder.helpers:
        constructs.add("helpers")
    return Program(
        source=source,
        arguments=tuple(arguments),
        argnums=tuple(range(len(names))),
        constructs=frozenset(constructs),
        rebinding=dict(builder.rebound),
    )


def programs(
    *,
    numpy: bool = True,
    containers: bool = True,
    recursion: bool = True,
    closures: bool = True,
    singleton_unpacking: bool = True,
    repeated_arguments: bool = True,
    views: bool = True,
    aliased_containers: bool = True,
    discarded_results: bool = True,
    captured_arguments: bool = True,
    rebinding: bool = True,
    mutation: bool = True,
    writes: bool = False,
    starred: bool = True,
    exceptions: bool = True,
    walrus: bool = True,
    sets: bool = True,
    effects: bool = True,
    classes: bool = True,
    rules: bool = True,
    subclasses: bool = True,
    generators: bool = True,
    max_helpers: int = 3,
    max_statements: int = 6,
    max_depth: int = 3,
) -> st.SearchStrategy[Program]:
    """Random programs from the supported grammar, with arguments to call them with.

    - `numpy`: the entry may take a vector of length 3 (elementwise ops, np.sum/np.dot/...).
    - `containers`: tuples, lists (display, append, index, sum, len, iteration), dicts.
    - `recursion`: the last helper may recurse on an int depth that decreases (<= 3 deep).
    - `closures`: lambdas and nested defs over local floats (some with a default bound to a
      float), called in expressions or handed to `map`; variables they capture are not
      assigned again (cpsgrad captures values where Python's closures read them late, and
      refuses the difference). Also generator expressions and list comprehensions summed
      (`sum(e for i in range(k) if c)`), their index sometimes shadowing an int of the function.
    - `singleton_unpacking`: `a, = t` from a one-element tuple (it once bound `a` to the tuple
      itself; found by this generator, fixed, on by default).
    - `repeated_arguments`: one variable (a float, a vector, a matrix) passed at two or more
      positions of a helper (`h(x, x)`, `h(x, v=x)`, `h(v, w=v[::-1], scale=...)`), helpers of
      one to three parameters, some of them arrays, some returning a vector; the recursive
      helper may take two floats and pass one twice.
    - `views`: a 3 x 3 matrix argument `m`, and views as operands and arguments: `v[:]`,
      `v[::-1]`, `v.T`, `v.reshape(3)`, `m.T`, `m[:, ::-1]`, ...; basic slices reduced at once
      (`np.sum(v[1:])`, `np.dot(v[:2], v[1:])`); rows, columns and products of matrices.
    - `aliased_containers`: lists, tuples and dicts holding one value twice (`[v, v]`,
      `(x, y, x)`, `{"a": v, "b": v}`), locals and arguments of helpers that read a container.
    - `discarded_results`: `unused = h(x, x)`, a bare call statement `h(x, x)` (which cpsgrad
      refuses, with its location, where an argument is differentiable: check_program accepts
      that refusal), a result used twice (`a = h(x, x); b = a * a`).
    - `captured_arguments`: closures called with a variable they captured (`g(x)` for
      `g = lambda p: p * x`), closures of vectors.
    - `rebinding`: module-level floats (`c0 = 0.5`) and function aliases (`act0 = math.sin`,
      `vact0 = np.tanh`) that check_program rebinds (`Program.rebinding`) between two gradient
      runs of the same program, checking the second against the rebound semantics.
    - `mutation`: writes in place into vectors the function made, aliases of them (mutations.py).
    - `writes`: a mutation soak: the entry always takes a vector and writes are drawn WRITE_WEIGHT
      times as often (off by default, which leaves the default draws as they were).
    - `starred`: `s0(u, *rest, **kw)`, `s0(*t)`, `h(e, *t[:1])`, `h(**{...})`, `max(*t)`, `a, *rest = t`
      (also in `for`), `(*t, e)`; `exceptions`: `try` raising on the data (also in a helper),
      handlers falling through, returning, jumping, re-raising; `finally`, `else`; `with` over
      `contextlib.suppress`, `np.errstate`, a manager class; `walrus`: `:=` in tests, conditions,
      arguments; `sets` of ints and strings; `effects`: print and logging; `classes`: objects of
      module-level plain classes, their methods and attributes; `rules`: calls of cpsgrad's numpy and
      scipy rules (ufuncs on their domains, reductions, sorting, arrangements, einsum, linalg on
      well-conditioned matrices, fft, scipy.special, scipy.stats.norm) in expressions and
      statements; `subclasses`: `x op= y` on list/dict subclasses and user methods named like a
      container's; `generators`: a generator defined in the function, reading its variables,
      consumed by `sum`, `next`, a generator expression, a list comprehension or a loop (forms.py
      and its modules).
    - `max_helpers`: generated module-level helpers (0 to this many; each may call earlier ones).
    - `max_statements`: statements in the entry function, counting nested ones.
    - `max_depth`: operators deep in one expression.
    """
    switches = dict(locals())  # the keyword arguments, as _Builder takes them
    return _programs(switches)
