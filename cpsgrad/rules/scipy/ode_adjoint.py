"""What the ODE rules (cpsgrad/rules/scipy/integrate.py) need to integrate adjoints: the
vector-Jacobian products of the user's right-hand side, and flat layouts of the values whose
adjoints ride in the augmented state.

`UserVJP` gets a VJP of the user's `func` from cpsgrad itself, without a gradient wrapper and
without transforming anything per step: it calls `func` through a `CallSite` of the dispatcher
(runtime/dispatch.py), exactly as a derivative program calls a user function, with a
continuation that records `func`'s value and hands back the cotangent as that value's adjoint.
The site returns the adjoints of the arguments it was told are differentiable (the state and
the differentiable elements of `args`). The site's plan and the function's program are made on
the first call and kept (per function and argument kinds), so each later step is one dispatch
and one run of the derivative program. Each call runs with loan and write books of its own
(`open_loans`, `open_writes`), as a run inside a run must: it happens inside the backward pass
of the program that called the solver.

`Layout` lays a value (an array, a float, a list, tuple, dict, NamedTuple or dataclass of them,
ints, strings and None among them as constants) out as a flat float64 vector and back into the
adjoint the transform expects for it (`SequenceAdjoint`, `DictAdjoint`, arrays of the value's
dtype and shape, Python floats for floats); anything else that could carry a gradient is
refused, never passed as a constant.
"""

from __future__ import annotations

import dataclasses
import functools
import types

import numpy as np

from cpsgrad.errors import UnsupportedError
from cpsgrad.runtime import books, writes
from cpsgrad.runtime.adjoints import DictAdjoint, SequenceAdjoint, entry, is_zero, item
from cpsgrad.runtime.closures import DEFINITIONS
from cpsgrad.runtime.dispatch import CallSite

_CONSTANTS = (bool, int, str, bytes, type(None), np.integer, np.bool_, range, type, types.ModuleType)
_SITES: dict[tuple, CallSite] = {}


def _kind(value, construct: str, path: str) -> str:
    """'leaf' (a float, a numpy floating scalar, a float array), 'constant' (carries no
    gradient), 'sequence', 'dict', 'record' (a dataclass); refused for anything else."""
    if type(value) is float or isinstance(value, np.floating):
        return "leaf"
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            return "leaf"
        if value.dtype.kind in "biu":
            return "constant"
    elif isinstance(value, (tuple, list)):
        return "sequence"
    elif isinstance(value, dict):
        return "dict"
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        return "record"
    elif isinstance(value, _CONSTANTS):
        return "constant"
    elif isinstance(value, (types.FunctionType, functools.partial)) and not _captures(value):
        return "constant"
    elif isinstance(value, (types.BuiltinFunctionType, np.ufunc)):
        return "constant"
    kind = f"an array of dtype {value.dtype}" if isinstance(value, np.ndarray) else f"a {type(value).__name__}"
    raise UnsupportedError(
        None,
        construct,
        f"{path} is {kind}; cpsgrad differentiates through floats, float arrays and tuples, lists, dicts, "
        "NamedTuples and dataclasses of them (ints, strings and None pass as constants); a function that "
        "captures values or a plain object could carry a gradient that would be lost: pass its values in "
        "args instead",
    )


def holds_nothing(function) -> bool:
    """Whether a callable can carry no gradient: a plain function without cells or defaults, a
    builtin, a ufunc."""
    if isinstance(function, types.FunctionType):
        return not _captures(function)
    return isinstance(function, (types.BuiltinFunctionType, np.ufunc))


def _captures(function) -> bool:
    """Whether a function or partial holds values of its own (cells, defaults, bound arguments)."""
    if isinstance(function, functools.partial):
        return True
    return bool(function.__closure__ or function.__defaults__ or function.__kwdefaults__)


class Layout:
    """The differentiable leaves of `value`, flat: `size` float64 numbers."""

    def __init__(self, value, construct: str, path: str):
        self.value = value
        self.construct = construct
        self.size = self._size(value, path)

    def _size(self, value, path: str) -> int:
        kind = _kind(value, self.construct, path)
        if kind == "leaf":
            return int(np.size(value))
        if kind == "sequence":
            return sum(self._size(part, f"{path}[{i}]") for i, part in enumerate(value))
        if kind == "dict":
            return sum(self._size(part, f"{path}[{key!r}]") for key, part in value.items())
        if kind == "record":
            return sum(self._size(getattr(value, f.name), f"{path}.{f.name}") for f in dataclasses.fields(value))
        return 0

    def flat(self, adjoint) -> np.ndarray:
        """`adjoint` (the transform's form for `value`, or the symbolic zero) as a flat vector."""
        parts: list = []
        _flatten(self.value, adjoint, parts)
        return np.concatenate(parts) if parts else np.zeros(0)

    def values(self) -> np.ndarray:
        """The leaves' own values, flat (the layout of a state vector)."""
        parts: list = []
        _flatten(self.value, None, parts)
        return np.concatenate(parts) if parts else np.zeros(0)

    def adjoint(self, flat: np.ndarray):
        """The adjoint of `value` whose leaves hold `flat`, in the transform's form and the
        leaves' own types, shapes and dtypes."""
        found, used = _unflatten(self.value, np.asarray(flat, dtype=np.float64), 0)
        assert used == flat.size, (used, flat.size)
        return found


def _leaf(value) -> bool:
    return (
        type(value) is float
        or isinstance(value, np.floating)
        or (isinstance(value, np.ndarray) and value.dtype.kind == "f")
    )


def _flatten(value, adjoint, parts: list) -> None:
    """Append `value`'s leaves' adjoints (their values where `adjoint` is None) to `parts`."""
    if _leaf(value):
        if adjoint is None:
            parts.append(np.ravel(np.asarray(value, dtype=np.float64)))
        elif is_zero(adjoint):
            parts.append(np.zeros(np.size(value)))
        else:
            parts.append(_flat_as(adjoint, np.shape(value)))
    elif isinstance(value, (tuple, list)):
        for i, part in enumerate(value):
            _flatten(part, None if adjoint is None else item(adjoint, i), parts)
    elif isinstance(value, dict):
        for key, part in value.items():
            _flatten(part, None if adjoint is None else entry(adjoint, key), parts)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            _flatten(getattr(value, field.name), None if adjoint is None else entry(adjoint, field.name), parts)


def _flat_as(adjoint, shape) -> np.ndarray:
    """A nonzero adjoint of a value of `shape`, flat float64 (broadcast where it is smaller)."""
    found = np.asarray(adjoint, dtype=np.float64)
    if found.shape != shape:
        found = np.broadcast_to(found, shape)
    return found.ravel()


def _unflatten(value, flat: np.ndarray, at: int):
    if _leaf(value):
        if type(value) is float:
            return float(flat[at]), at + 1
        if isinstance(value, np.floating):
            return value.dtype.type(flat[at]), at + 1
        size = value.size
        return flat[at : at + size].reshape(value.shape).astype(value.dtype, copy=True), at + size
    if isinstance(value, (tuple, list)):
        parts = []
        for part in value:
            found, at = _unflatten(part, flat, at)
            parts.append(found)
        return SequenceAdjoint(parts), at
    pairs = None
    if isinstance(value, dict):
        pairs = list(value.items())
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        pairs = [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
    if pairs is not None:
        found = DictAdjoint()
        for key, part in pairs:
            found[key], at = _unflatten(part, flat, at)
        return found, at
    return 0.0, at


def shaped(value, flat: np.ndarray, construct: str):
    """The cotangent `flat` as the adjoint of `value`, what the user's function returned (an
    array of any shape with as many elements, a list or tuple of numbers and arrays, a number)."""
    if isinstance(value, np.ndarray):
        if value.size != flat.size:
            raise UnsupportedError(None, construct, f"func returned {value.size} values for a state of {flat.size}")
        dtype = value.dtype if value.dtype.kind == "f" else np.float64
        return flat.reshape(value.shape).astype(dtype, copy=True)
    if isinstance(value, (list, tuple)):
        parts, at = [], 0
        for part in value:
            size = int(np.size(part))
            parts.append(shaped(part, flat[at : at + size], construct))
            at += size
        if at != flat.size:
            raise UnsupportedError(None, construct, f"func returned {at} values for a state of {flat.size}")
        return SequenceAdjoint(parts)
    if isinstance(value, (float, int, np.number)) and not isinstance(value, complex) and flat.size == 1:
        return value.dtype.type(flat[0]) if isinstance(value, np.floating) else float(flat[0])
    raise UnsupportedError(
        None,
        construct,
        f"func returned a {type(value).__name__}; cpsgrad differentiates a func returning an array, a list or "
        "tuple of numbers and arrays, or a number",
    )


class UserVJP:
    """`func`'s value and VJPs at a state, for a cotangent, by its derivative program.

    `args` are the extra arguments after the state and the time (`tfirst`: the time first);
    those in `differentiated` (indices into `args`) get their adjoints, flat, in that order."""

    def __init__(self, func, args: tuple, differentiated: tuple[int, ...], tfirst: bool, construct: str, captured=None):
        self.func = func
        self.args = args
        self.tfirst = bool(tfirst)
        self.construct = construct
        self.layouts = [Layout(args[j], construct, f"args[{j}]") for j in differentiated]
        # a made closure's environment (its captured values, then its defaults), differentiated too
        self.captured = None if captured is None else Layout(captured, construct, "func's captured values")
        state = 1 if self.tfirst else 0
        active = (state, *(2 + j for j in differentiated))
        key = (construct, 2 + len(args), active, captured is not None)
        site = _SITES.get(key)
        if site is None:
            site = _SITES[key] = CallSite(
                f"the func of {construct}", None, active, 2 + len(args), (), callee_active=captured is not None
            )
        self.site = site

    def __call__(self, y: np.ndarray, t: float, cotangent: np.ndarray):
        """(func(y, t) flat, cotangent . df/dy, cotangent . df/d(args differentiated), flat)."""
        seen = []
        construct = self.construct

        def k(value):
            writes.keep_final_writes()
            seen.append(value)
            return None, shaped(value, cotangent, construct)

        arguments = (t, y, *self.args) if self.tfirst else (y, t, *self.args)
        loans = books.open_loans()
        written = writes.open_writes()
        try:
            result = self.site.call(self.func, k, *arguments)
        finally:
            books.close_loans(loans)
            writes.close_writes(written)
        value = np.ravel(np.asarray(seen[0], dtype=np.float64))
        first = 1 if self.captured is None else 2  # a closure's adjoint comes first
        y_bar = result[first]
        y_bar = np.zeros(y.size) if is_zero(y_bar) else _flat_as(y_bar, y.shape)
        parts = [layout.flat(adjoint) for layout, adjoint in zip(self.layouts, result[first + 1 :], strict=True)]
        if self.captured is not None:
            parts.append(self.captured.flat(result[1]))
        return value, y_bar, (np.concatenate(parts) if parts else np.zeros(0))


def environment(func, construct: str) -> tuple:
    """The environment of a function that a derivative program made (a nested def or lambda of a
    transformed function: its captured values, then its defaults), aligned with its adjoint
    (runtime/closures.py); anything else holding values (a partial, a bound method, a closure
    Python made, a recursive nested def) is refused."""
    definition = DEFINITIONS.get(func.__code__) if type(func) is types.FunctionType else None
    cells = func.__closure__ or () if definition is not None else ()
    if definition is None or definition.own_index >= 0 or len(cells) != len(definition.captured):
        raise UnsupportedError(
            None,
            f"{construct} of {getattr(func, '__qualname__', type(func).__name__)}",
            "func holds values of its own that cpsgrad cannot differentiate through the solver (a partial, a "
            "bound method, a callable object, a recursive nested def, or a closure made outside the "
            "differentiated function); define func at module level and pass those values in args",
        )
    keywords = tuple((func.__kwdefaults__ or {})[name] for name in definition.keyword_defaults)
    return (*(cell.cell_contents for cell in cells), *(func.__defaults__ or ()), *keywords)


def conformed(value, flat: np.ndarray, construct: str, path: str):
    """The adjoint of `value` (y0 or t: an array, a number, a list or tuple of numbers) whose
    elements, as numpy reads them, have the adjoints `flat`; an int element gets none."""
    layout = Layout(value, construct, path)
    if layout.size == flat.size:
        return layout.adjoint(flat)
    if isinstance(value, (tuple, list)) and len(value) == flat.size:
        return SequenceAdjoint(
            conformed(part, flat[i : i + 1], construct, f"{path}[{i}]") for i, part in enumerate(value)
        )
    if layout.size == 0:
        return 0.0
    raise UnsupportedError(None, construct, f"{path} has {layout.size} differentiable values for {flat.size} elements")


class Sweep:
    """The adjoint sweep of the ODE rules: with the output states `y` (one row a time point of
    `times`, monotonic), their adjoints `g` (None: all zero), the start `start` where the state
    was `y0`, it integrates the augmented system (state, its adjoint a, the adjoints p of the
    differentiable elements of `args`) backward from each time point to the one before it and
    finally to the start, adding the outputs' adjoints on the way, with
    `integrate(dynamics, state, t_from, t_to, n)` (the solver's own, `dynamics(t, state)`).

    `run(differentiated, captured)` returns (a at the start: y0's gradient, the times' gradients
    g[i] . f(y[i], times[i]), the start's gradient -a . f(y0, start), p flat or None: the
    elements `differentiated` of args, then `captured`, func's environment, if given). With
    `differentiated` None the parameters' adjoints are not integrated."""

    def __init__(self, construct, func, extra, tfirst, y, g, times, start, y0, integrate):
        self.construct, self.func, self.extra, self.tfirst = construct, func, extra, tfirst
        self.y, self.g, self.times, self.start, self.y0 = y, g, times, start, y0
        self.integrate = integrate

    def value(self, y, t) -> np.ndarray:
        found = self.func(t, y.copy(), *self.extra) if self.tfirst else self.func(y.copy(), t, *self.extra)
        return np.ravel(np.asarray(found, dtype=np.float64))

    def run(self, differentiated: tuple[int, ...] | None, captured: tuple | None = None):
        y, g, times = self.y, self.g, self.times
        count, n = y.shape
        m = sum(Layout(self.extra[j], self.construct, f"args[{j}]").size for j in differentiated or ())
        if captured is not None:
            m += Layout(captured, self.construct, "func's captured values").size
        t_bar = np.zeros(count)
        if g is None or not g.any():
            return np.zeros(n), t_bar, 0.0, (np.zeros(m) if differentiated is not None else None)
        vjp = UserVJP(self.func, self.extra, differentiated or (), self.tfirst, self.construct, captured)

        def dynamics(s, state):
            value, y_bar, p_bar = vjp(state[:n].copy(), s, -state[n : 2 * n])
            return np.concatenate((value, y_bar, p_bar))

        a, p = g[-1].copy(), np.zeros(m)
        for i in range(count - 1, -1, -1):
            if g[i].any():
                t_bar[i] = g[i] @ self.value(y[i], times[i])
            target = times[i - 1] if i > 0 else self.start
            if times[i] != target and (a.any() or p.any()):
                end = self.integrate(dynamics, np.concatenate((y[i], a, p)), times[i], target, n)
                a, p = end[n : 2 * n], end[2 * n :]
            if i > 0:
                a = a + g[i - 1]
        start_bar = -float(a @ self.value(self.y0, self.start)) if a.any() else 0.0
        return a, t_bar, start_bar, (p if differentiated is not None else None)


def augmented_tolerances(options: dict, n: int, m: int) -> dict:
    """The solver options for the augmented system of 2 n + m components: array tolerances,
    given for the state's n, serve its adjoint's too, and their smallest the parameters'."""
    found = {key: value for key, value in options.items() if value is not None}
    for key in ("rtol", "atol"):
        value = found.get(key)
        if value is not None and np.ndim(value) > 0:
            value = np.ravel(np.asarray(value, dtype=np.float64))
            found[key] = np.concatenate((value, value, np.full(m, value.min())))
    return found
