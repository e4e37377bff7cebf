"""The tangent of a primitive whose rule is of no kind forward mode reads (cpsgrad/rules/tangents.py):
from its reverse rule. The Jacobian-vector product `J t` is, element by element of the output,
`<J^T e_i, t>`: one pullback of the basis cotangent `e_i` per element (cpsgrad.vjp). Exact, and
as slow as the output is large: a reduction to a number (np.linalg.norm, np.prod, np.std)
costs one backward, an (n, n) matrix n * n of them. Declaring the primitive's kind, or an
explicit tangent, makes it one expression.
"""

from __future__ import annotations

import keyword
import linecache

import numpy as np

from cpsgrad.errors import NoRuleError

_CALLERS: dict = {}
_VJP: list = []  # cpsgrad.vjp.vjp, which imports the API, which imports the transforms: it registers itself


def use(vjp) -> None:
    """The reverse mode's `vjp` these tangents call (cpsgrad/vjp.py hands it over on import)."""
    _VJP[:] = [vjp]


def tangent_by_pullbacks(primitive, output, arguments: tuple, keywords: dict, tangents: tuple, keyword_tangents: dict):
    """The tangent of `output = primitive(*arguments, **keywords)` given the tangents of the
    arguments (None where an argument has none) and of the keyword arguments."""
    vjp = _VJP[0]
    if not (type(output) is float or isinstance(output, (np.ndarray, np.floating))):
        raise NoRuleError(
            None, f"forward mode of {getattr(primitive, '__qualname__', primitive)}",
            f"its output is a {type(output).__name__}; declare its tangent (cpsgrad/rules/tangents.py)",
        )
    names = tuple(keywords)
    caller = _caller(primitive, len(arguments), names)
    values = (*arguments, *keywords.values())
    given = (*tangents, *(keyword_tangents.get(n) for n in names))
    positions = tuple(i for i, t in enumerate(given) if t is not None)
    _, pullback = vjp(caller, *values, argnums=positions)
    shape = np.shape(output)
    dtype = output.dtype if isinstance(output, (np.ndarray, np.floating)) else np.float64
    result = np.zeros(shape, dtype)
    flat = result.reshape(-1)
    for element in range(flat.size):
        seed = np.zeros(shape, dtype)
        seed.reshape(-1)[element] = 1
        seed = float(seed) if type(output) is float else (dtype.type(seed) if shape == () else seed)
        gradients = pullback(seed)
        flat[element] = sum(np.vdot(g, given[p]).real for g, p in zip(gradients, positions, strict=True))
    return float(result) if type(output) is float else (dtype.type(result) if shape == () and not isinstance(
        output, np.ndarray) else result)


def _caller(primitive, positional: int, names: tuple[str, ...]):
    """`def call_f(x0, x1, axis): return f(x0, x1, axis=axis)`: every argument positional, so that
    `vjp` can pick any of them."""
    key = (id(primitive), positional, names)
    found = _CALLERS.get(key)
    if found is not None and found[0] is primitive:
        return found[1]
    name = getattr(primitive, "__name__", "")
    name = name if name.isidentifier() and not keyword.iskeyword(name) else "primitive"
    parameters = [f"x{i}" for i in range(positional)] + [f"k_{n}" for n in names]
    arguments = [f"x{i}" for i in range(positional)] + [f"{n}=k_{n}" for n in names]
    text = f"def call_{name}({', '.join(parameters)}):\n    return {name}({', '.join(arguments)})\n"
    filename = f"<cpsgrad tangent by pullbacks {name} #{len(_CALLERS) + 1}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace = {name: primitive}
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - a one-line call of the primitive
    function = namespace[f"call_{name}"]
    _CALLERS[key] = (primitive, function)
    return function
