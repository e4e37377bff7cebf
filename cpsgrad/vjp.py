"""Reverse mode for outputs of any structure: vjp (a pullback of covectors) and jacrev.

`grad`'s outermost continuation seeds a scalar output's adjoint with 1.0; here the seed is the
caller's cotangent, conformed to the adjoint the derivative program expects of each part of the
output: a float for a Python float, a numpy floating scalar or a 0-d float array, an array of
the output's shape and dtype for a float array, `SequenceAdjoint` (one seed per element) for a
tuple, a list or a NamedTuple, `DictAdjoint` (one per key, or per field) for a dict or a
dataclass instance, and the symbolic zero `0.0` for a part that has no gradient (ints, bools,
None, strings). There is no tape: each pullback call runs the derivative program again.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import numbers
from collections.abc import Callable

import numpy as np

from cpsgrad import api, runtime
from cpsgrad.errors import ArgumentError, HigherOrderError, UnsupportedError
from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.runtime.adjoints import DictAdjoint, SequenceAdjoint
from cpsgrad.transforms.forward_mode import pullbacks as forward_mode_pullbacks


def vjp(function: Callable, *primals, argnums: int | tuple[int, ...] | None = None):
    """`function(*primals)` and its pullback: `(out, pullback)`, as `jax.vjp`.

    `out` may be a float, a numpy array of any shape, or tuples, lists, dicts, NamedTuples and
    dataclass instances of them, nested. `pullback(cotangent)` takes a cotangent of exactly
    `out`'s structure (a real number for a float or 0-d part, an array of the part's shape and
    dtype for an array; `None` or zeros of its shape for a part that has no gradient: an int, a
    bool, an integer array, None, a string) and returns a tuple of gradients: one per primal, or
    with `argnums` (an int or a tuple) one per picked primal, each in its primal's structure,
    shape and dtype. A mismatched cotangent raises `ArgumentError` naming the part.

    Cost: there is no tape. `vjp` runs the derivative program once for `out` (its backward, of
    symbolic zeros, costs little), and every `pullback` call runs it again in full, forward and
    backward, as a call of `grad` does: k pullbacks cost k + 1 forward passes and k backward
    passes. `function` must therefore give the same output each run: one that writes into its
    arguments is refused (the next run would start from what the last one left), and what it
    writes into globals later runs would see.
    """
    _refuse_gradient(function, "vjp")
    if argnums is None:
        if not primals:
            raise ArgumentError("vjp needs at least one primal to differentiate with respect to")
        argnums = tuple(range(len(primals)))
    run = api._runner(function, api._argnums(argnums))
    # `out` is the derivative program's own result, not that of a separate call of `function`:
    # the arguments are checked and the program is made here, not at the first pullback (as in
    # JAX), `function` runs only as the program runs it (its side effects as every pullback's),
    # and each pullback's run makes its output afresh, so nothing later writes into `out`.
    out, _ = run(primals, {}, _first_reset)
    for transformed in getattr(run, "programs", {}).values():  # a `_Runner`: the program just run
        if transformed.written:
            name = run.parameters[transformed.written[0]]
            raise UnsupportedError(
                None, f"vjp of {_name(function)}",
                f"it writes into its parameter {name}, and each pullback would run it again on what the last run "
                f"left there (this call has written into it already); write into a copy ({name} = {name}.copy())",
            )
    _zeros(out)  # refuses an output it cannot seed now, not at the first pullback

    def pullback(cotangent) -> tuple:
        _seed(out, cotangent)  # a mismatch is the caller's: raise before running anything
        changed = []

        def reset(value):
            runtime.keep_final_writes()
            try:
                return value, _seed(value, cotangent)
            except ArgumentError:  # not raised inside the program, where the user's try could catch it
                changed.append(value)
                return value, 0.0

        _, gradients = run(primals, {}, reset)
        if changed:
            raise ArgumentError(
                f"{_name(function)} returned a value of another structure, shape or dtype in this pullback's "
                "run than when vjp ran it; vjp needs a function whose output does not change between runs"
            )
        return gradients

    pullback.__wrapped__ = function
    pullback.__cpsgrad_gradient__ = True  # differentiating it would be nested reverse mode
    return out, pullback


def jacrev(function: Callable, argnums: int | tuple[int, ...] = 0):
    """The Jacobian of `function` with respect to its positional arguments `argnums`, by reverse mode.

    Returns a function taking `function`'s positional arguments. For an array output of shape O
    and an array argument of shape I the Jacobian is an array of shape O + I (`J[o][i]` is
    d out[o] / d x[i]); floats are shape (). A tuple `argnums` gives a tuple of Jacobians; an
    output that is a tuple, list, dict, ... gives the same structure of them, and an argument
    that is a container gives Jacobians in its structure: output structure outside, argument
    structure inside, as `jax.jacrev`. Parts of the output that have no gradient (ints, bools,
    None, strings) get None.

    Cost: one pullback (a full run of the derivative program, `vjp`) per element of the float
    parts of the output, plus one run for the output itself: an output of m elements costs
    about m + 1 calls of `grad`, whatever the size of the arguments.
    """
    _refuse_gradient(function, "jacrev")
    picked = api._argnums(argnums)

    @functools.wraps(function)
    def jacobian(*args):
        out, pullback = vjp(function, *args, argnums=picked)

        def of_part(part, path):  # the Jacobians of one part of `out`, one per picked argument
            if _kind(part, path) == "constant":
                return None if isinstance(argnums, int) else (None,) * len(picked)
            shape = np.shape(part)
            rows = [pullback(_basis(out, path, position)) for position in range(int(np.prod(shape)))]
            found = tuple(
                _map(lambda leaf, where, *gradients: _stacked(leaf, where, gradients, shape), args[a], *parts)
                for a, parts in zip(picked, zip(*rows, strict=True) if rows else [()] * len(picked), strict=True)
            )
            return found[0] if isinstance(argnums, int) else found

        return _map(of_part, out)

    jacobian.__cpsgrad_gradient__ = True
    return jacobian


def _refuse_gradient(function, name: str) -> None:
    if getattr(function, "__cpsgrad_gradient__", False):
        raise HigherOrderError(
            f"{name} of a cpsgrad gradient, pullback or Jacobian (higher-order differentiation) is not supported "
            "yet: nested reverse mode would confuse perturbations and give wrong answers"
        )


def _name(function) -> str:
    return getattr(function, "__qualname__", None) or repr(function)


def _first_reset(value):
    """The outermost continuation of the run that makes `out`: no cotangent yet, a zero seed."""
    runtime.keep_final_writes()  # as `api._reset`: the backward restores what writes overwrote
    if isinstance(value, runtime.Unbound):
        value.check()
    return value, 0.0


def _kind(value, path: str) -> str:
    """How a part of the output is seeded: "number" (a real float scalar, a 0-d float array
    included: a float seed), "array" (a float array: an array seed of its shape and dtype) or
    "constant" (an int, a bool, an integer or boolean array, None, a string: no gradient)."""
    if type(value) is float or isinstance(value, np.floating):
        return "number"
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return "number" if value.shape == () else "array"
    if isinstance(value, np.ndarray) and value.dtype.kind in "biu":
        return "constant"
    if value is None or isinstance(value, (numbers.Integral, np.bool_, str)):
        return "constant"
    if isinstance(value, (complex, np.complexfloating)) or (isinstance(value, np.ndarray) and value.dtype.kind == "c"):
        advice = "complex outputs are not supported yet; return the real and imaginary parts"
    elif type(value) is DeviceArray:
        advice = "DeviceArray outputs are not supported yet; differentiate with numpy arrays"
    else:
        advice = "return its floats"
    kind = f"an array of dtype {value.dtype}" if isinstance(value, (np.ndarray, DeviceArray)) else None
    kind = kind or f"{'an' if type(value).__name__[0] in 'aeiou' else 'a'} {type(value).__name__}"
    raise ArgumentError(
        f"vjp differentiates functions returning floats, float arrays and tuples, lists, dicts, NamedTuples and "
        f"dataclass instances of them (ints, bools, None and strings in them get no gradient), but {path} is "
        f"{kind}; {advice}"
    )


def _map(function, tree, *others, path: str = "out"):
    """`tree` with each leaf replaced by `function(leaf, path, *the same leaf of each of others)`:
    dicts, lists, tuples, NamedTuples and dataclass instances rebuilt in their own types."""
    if isinstance(tree, dict):
        values = {
            key: _map(function, part, *(o[key] for o in others), path=f"{path}[{key!r}]") for key, part in tree.items()
        }
        if type(tree) is dict:
            return values
        rebuilt = copy.copy(tree)  # OrderedDict, defaultdict, ...: the same type
        rebuilt.clear()
        rebuilt.update(values)
        return rebuilt
    if isinstance(tree, (tuple, list)):
        fields = getattr(type(tree), "_fields", None) if isinstance(tree, tuple) else None
        values = [
            _map(function, part, *(o[i] for o in others), path=f"{path}.{fields[i]}" if fields else f"{path}[{i}]")
            for i, part in enumerate(tree)
        ]
        if fields is not None:
            return type(tree)._make(values)
        return tuple(values) if isinstance(tree, tuple) else values
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        rebuilt = copy.copy(tree)
        for field in dataclasses.fields(tree):
            parts = (getattr(o, field.name) for o in others)
            value = _map(function, getattr(tree, field.name), *parts, path=f"{path}.{field.name}")
            object.__setattr__(rebuilt, field.name, value)
        return rebuilt
    return function(tree, path, *others)


def _zero(part, path: str):
    """The zero cotangent of one part of the output (refusing a part that cannot be seeded)."""
    kind = _kind(part, path)
    return 0.0 if kind == "number" else np.zeros_like(part) if kind == "array" else None


def _zeros(out):
    """The zero cotangent of the output: `out`'s structure, zeros (and None where there is no gradient)."""
    return _map(_zero, out)


def _basis(out, path: str, position: int):
    """The cotangent that is 1 at element `position` (flat) of the part of `out` at `path`, 0 elsewhere."""

    def part_of(part, where):
        if where != path:
            return _zero(part, where)
        if _kind(part, where) == "number":
            return 1.0
        one = np.zeros_like(part)
        one.flat[position] = 1
        return one

    return _map(part_of, out)


def _stacked(argument, path: str, gradients: tuple, shape: tuple):
    """One Jacobian: the gradients of one part (leaf) of an argument, one per element of an
    output part of `shape`, as an array of shape `shape` + the argument part's shape."""
    if argument is None:
        return None
    strange = [g for g in gradients if not isinstance(g, (float, np.ndarray, np.number))]
    if strange:  # an object of the user's class: no array to stack
        raise ArgumentError(
            f"jacrev: the gradient of {path} is a {type(strange[0]).__name__}; pass floats, float arrays "
            "or dicts, tuples, lists, NamedTuples and dataclass instances of them"
        )
    if not gradients:  # an output part of no elements
        return np.zeros(shape + np.shape(argument), np.result_type(argument))
    return np.stack([np.asarray(g) for g in gradients]).reshape(shape + np.shape(argument))


def _seed(value, cotangent, path: str = "out"):
    """The seed adjoint of a part of the output, `value`, from the caller's `cotangent` for it;
    an ArgumentError naming the part where the two do not match."""
    if isinstance(value, dict):
        if not isinstance(cotangent, dict) or set(cotangent) != set(value):
            keys = lambda d: ", ".join(sorted(map(repr, d))) or "none"
            found = f"a dict with the keys {keys(cotangent)}" if isinstance(cotangent, dict) else None
            _mismatch(path, f"a dict with the keys {keys(value)}", cotangent, found)
        return DictAdjoint({key: _seed(part, cotangent[key], f"{path}[{key!r}]") for key, part in value.items()})
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # seeded by field name, as a dict
        if type(cotangent) is not type(value):
            _mismatch(path, f"a {type(value).__name__}", cotangent)
        names = [field.name for field in dataclasses.fields(value)]
        return DictAdjoint({n: _seed(getattr(value, n), getattr(cotangent, n), f"{path}.{n}") for n in names})
    if isinstance(value, (tuple, list)):
        kind = tuple if isinstance(value, tuple) else list
        if not isinstance(cotangent, kind) or len(cotangent) != len(value):
            sequence = isinstance(cotangent, (tuple, list))
            found = f"a {type(cotangent).__name__} of length {len(cotangent)}" if sequence else None
            _mismatch(path, f"a {kind.__name__} of length {len(value)}", cotangent, found)
        fields = getattr(type(value), "_fields", None) if kind is tuple else None
        steps = (f".{fields[i]}" if fields else f"[{i}]" for i in range(len(value)))
        return SequenceAdjoint(_seed(v, c, path + step) for v, c, step in zip(value, cotangent, steps, strict=True))
    kind = _kind(value, path)
    if kind == "constant":
        if cotangent is None or (
            isinstance(cotangent, (numbers.Number, np.ndarray, np.generic))
            and np.shape(cotangent) == np.shape(value) and not np.any(cotangent)
        ):
            return 0.0
        _mismatch(path, f"None or zeros of shape {np.shape(value)} (it has no gradient)", cotangent)
    if kind == "number":
        real = isinstance(cotangent, (numbers.Real, np.floating)) and not isinstance(cotangent, (bool, np.bool_))
        if real or (isinstance(cotangent, np.ndarray) and cotangent.shape == () and cotangent.dtype.kind == "f"):
            return float(cotangent)
        _mismatch(path, "a real number", cotangent)
    if not isinstance(cotangent, np.ndarray) or cotangent.shape != value.shape or cotangent.dtype != value.dtype:
        _mismatch(path, f"an array of shape {value.shape} and dtype {value.dtype}", cotangent)
    return cotangent.copy()  # the program's own: nothing it does reaches the caller's array


def _mismatch(path: str, expected: str, cotangent, found: str | None = None) -> None:
    if found is None and isinstance(cotangent, np.ndarray):
        found = f"an array of shape {cotangent.shape} and dtype {cotangent.dtype}"
    elif found is None:
        found = f"{type(cotangent).__name__} {cotangent!r}"[:120]
    raise ArgumentError(
        f"the cotangent must have the output's structure: for {path} it must be {expected}, not {found}"
    )


forward_mode_pullbacks.use(vjp)  # forward mode's tangents of rules of no kind (transforms/forward_mode/pullbacks.py)
