"""Forward mode: `jvp` (JAX's signature) and `jacfwd`.

`jvp(f, primals, tangents)` runs f's tangent program (transforms/forward_mode/): the normalized
function with each statement's tangent beside it, control flow, calls and recursion as they
are, no continuations. It returns `(f(*primals), the tangent of the result)` in one run, at
the cost of the function plus its tangents' arithmetic. `cpsgrad.show(f, mode="forward")`
prints the program.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np

from cpsgrad import runtime
from cpsgrad.errors import ArgumentError, HigherOrderError
from cpsgrad.runtime import kinds
from cpsgrad.runtime.targets import is_gradient
from cpsgrad.transforms import forward_mode, source


def _check_pair(position: int, primal, tangent) -> None:
    """A tangent has its primal's structure: a float's a real number, an array's an array of its
    shape (and a float dtype), a container's the same container of tangents."""
    where = f"tangent {position}"
    if _integral(primal):
        if not _is_zero(tangent):
            raise ArgumentError(f"primal {position} is an integer, which does not vary: its {where} must be 0, "
                                f"not {tangent!r}")
        return
    if isinstance(primal, np.ndarray):
        if not isinstance(tangent, np.ndarray) or tangent.shape != primal.shape:
            shape = getattr(tangent, "shape", None)
            raise ArgumentError(f"{where} must be an array of shape {primal.shape} like its primal, not "
                                f"{type(tangent).__name__}{'' if shape is None else f' of shape {shape}'}")
        if primal.dtype.kind not in "f" or tangent.dtype.kind not in "f":
            raise ArgumentError(f"{where}: forward mode differentiates real float arrays, not {primal.dtype} "
                                f"with a tangent of {tangent.dtype}")
        return
    if isinstance(primal, (tuple, list)):
        if type(tangent) is not type(primal) or len(tangent) != len(primal):
            raise ArgumentError(f"{where} must be a {type(primal).__name__} of {len(primal)} tangents like its primal")
        for p, t in zip(primal, tangent, strict=True):
            _check_pair(position, p, t)
        return
    if isinstance(primal, dict):
        if not isinstance(tangent, dict) or tangent.keys() != primal.keys():
            raise ArgumentError(f"{where} must be a dict with its primal's keys")
        for key in primal:
            _check_pair(position, primal[key], tangent[key])
        return
    if isinstance(primal, bool) or not isinstance(primal, numbers.Real) or isinstance(primal, complex):
        raise ArgumentError(f"primal {position} is a {type(primal).__name__}: forward mode differentiates "
                            "real numbers, float arrays and containers of them")
    if isinstance(tangent, bool) or not isinstance(tangent, numbers.Real):
        raise ArgumentError(f"{where} must be a real number like its primal, not {type(tangent).__name__}")


def jvp(function: Callable, primals, tangents):
    """`(function(*primals), J @ tangents)`: the function's value and its directional derivative
    along `tangents`, as `jax.jvp`.

    `primals` and `tangents` are tuples (or lists) of the same length; each tangent has its
    primal's structure (a real number for a float, an array of the same shape for a float array,
    the same tuple, list or dict of tangents for a container). The result's tangent has the
    result's structure. Every primal is differentiated: to hold one fixed, close over it
    (`jvp(lambda x: f(x, n), (x,), (t,))`).
    """
    if is_gradient(function):
        raise HigherOrderError("jvp of a cpsgrad gradient (forward over reverse) is not supported yet")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise ArgumentError("jvp takes the primals and the tangents as tuples: jvp(f, (x, y), (tx, ty))")
    if len(primals) != len(tangents):
        raise ArgumentError(f"jvp got {len(primals)} primals and {len(tangents)} tangents; give one tangent each")
    for position, (primal, tangent) in enumerate(zip(primals, tangents, strict=True)):
        _check_pair(position, primal, tangent)
    parameters = source.parameter_names(function)
    if len(primals) > len(parameters):
        raise ArgumentError(f"{function.__qualname__} takes {len(parameters)} arguments, jvp got {len(primals)}")
    positions = tuple(i for i, p in enumerate(primals) if not _integral(p))  # an int's tangent is 0
    tangents = tuple(_as_float(primals[i], tangents[i]) for i in positions)
    arguments = tuple(primals) + _default_values(function, primals)
    if not positions:
        result = function(*primals)
        return result, runtime.zero_tangent(result)
    program = forward_mode.transform(function, positions, tuple(map(kinds.of, arguments)))
    return program.run(*arguments, *tangents)


def _is_zero(tangent) -> bool:
    try:
        return not isinstance(tangent, bool) and bool(np.all(np.asarray(tangent) == 0))
    except (TypeError, ValueError):
        return False


def _integral(value) -> bool:
    return isinstance(value, (int, np.integer)) or (isinstance(value, np.ndarray) and value.dtype.kind in "iub")


def jacfwd(function: Callable, argnums: int | tuple[int, ...] = 0):
    """The Jacobian of `function` in the arguments `argnums`, by forward mode: one `jvp` per
    element of the input (cheap for few inputs and many outputs; `jacrev` for the converse).
    For an output of shape O and an input of shape I the Jacobian has shape O + I (JAX's
    convention); a tuple `argnums` gives a tuple of them."""
    picked = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def jacobian(*args):
        found = []
        for position in picked:
            primal = args[position]
            if not (isinstance(primal, float) or isinstance(primal, np.ndarray)):
                raise ArgumentError(f"jacfwd differentiates floats and float arrays; argument {position} is a "
                                    f"{type(primal).__name__}")
            shape = np.shape(primal)
            columns = []
            for element in range(int(np.prod(shape, dtype=int))):
                tangent = np.zeros(shape, np.asarray(primal).dtype)
                tangent.reshape(-1)[element] = 1.0
                tangent = float(tangent) if isinstance(primal, float) else tangent

                tangents = tuple(_zero(a) for a in args)
                tangents = tangents[:position] + (tangent,) + tangents[position + 1:]
                _, column = jvp(function, args, tangents)
                columns.append(np.asarray(column))
            out_shape = columns[0].shape if columns else ()
            stacked = np.stack(columns, axis=-1) if columns else np.zeros(out_shape)
            found.append(stacked.reshape(out_shape + shape))
        return found[0] if isinstance(argnums, int) else tuple(found)

    return jacobian


def _zero(value):
    if isinstance(value, np.ndarray):
        return np.zeros_like(value, dtype=value.dtype if value.dtype.kind == "f" else np.float64)
    if isinstance(value, (tuple, list)):
        return type(value)(_zero(v) for v in value)
    if isinstance(value, dict):
        return {k: _zero(v) for k, v in value.items()}
    return 0.0


def _as_float(primal, tangent):
    if isinstance(primal, np.ndarray):
        return tangent.astype(primal.dtype, copy=False)
    if isinstance(primal, (tuple, list)):
        return type(primal)(_as_float(p, t) for p, t in zip(primal, tangent, strict=True))
    if isinstance(primal, dict):
        return {k: _as_float(primal[k], tangent[k]) for k in primal}
    return float(tangent)


def _default_values(function, primals) -> tuple:
    """The defaults of the parameters after the primals (jvp differentiates every primal given)."""
    code = source.unwrap(function)
    defaults = code.__defaults__ or ()
    missing = code.__code__.co_argcount - len(primals)
    if missing > len(defaults):
        raise ArgumentError(f"jvp gives {function.__qualname__} {len(primals)} arguments; it needs "
                            f"{code.__code__.co_argcount - len(defaults)}")
    positional = tuple(defaults[len(defaults) - missing:]) if missing > 0 else ()
    count, keyword_count = code.__code__.co_argcount, code.__code__.co_kwonlyargcount
    names = code.__code__.co_varnames[count:count + keyword_count]
    keywords = code.__kwdefaults__ or {}
    if any(n not in keywords for n in names):
        raise ArgumentError(f"jvp cannot give {function.__qualname__}'s keyword-only parameters without defaults")
    return positional + tuple(keywords[n] for n in names)
