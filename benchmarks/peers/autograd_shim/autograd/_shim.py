"""HIPS autograd's API on cpsgrad, for running autograd's own tests and examples as an external check.

`autograd.grad`, `value_and_grad` and `elementwise_grad` are cpsgrad's reverse mode; the
numpy and scipy modules are the real ones (`autograd/__init__.py` aliases them); `check_grads`
(`autograd/test_util.py`) is autograd's reverse-mode check (a vector-Jacobian product against a
central difference along a random direction) run on cpsgrad, one *unit* per call. Every unit's
outcome goes to `RECORDS`, which the runner's pytest plugin (`benchmarks/peers/_plugin.py`)
drains after each test:

- ``passed``: cpsgrad's VJP agrees with finite differences;
- ``refused``: cpsgrad raised one of `cpsgrad.errors` (a located refusal, which is sound);
- ``refused-order``: the check asks only for forward mode (nothing of it runs here), or the
  function differentiates through a gradient (cpsgrad's `HigherOrderError`: second order); the
  forward-mode and second-order parts of every check are counted in ``sub_refused``;
- ``wrong``: a gradient that disagrees with finite differences (also after a more careful
  Richardson-extrapolated difference), or of the wrong structure, shape or dtype, or an
  argument changed in place;
- ``kink``: they disagree, but so do the one-sided differences: x is at a kink, where the
  gradient is a convention (cpsgrad's `abs'(0) = 1` is JAX's; autograd's is 0);
- ``crash``: any other exception from cpsgrad while the function itself runs fine.

Nothing here changes the numbers: the function is called as the test wrote it.
"""

from __future__ import annotations

import copy
import functools
import itertools
import linecache
import traceback
import types

import numpy as np

import cpsgrad
from cpsgrad.errors import CpsgradError, HigherOrderError

RECORDS: list[dict] = []
SUB_REFUSED: dict[str, int] = {}

TOL = 1e-6
RTOL = 1e-6
EPS = 1e-6


class ShimUnsupported(Exception):
    """An autograd API with no cpsgrad counterpart (primitive, defvjp, jacobian, hessian, ...)."""


class NeedsForwardOrHigherOrder(Exception):
    """Forward mode or a derivative of a derivative, which cpsgrad does not compute."""


class InternalCrash(Exception):
    """cpsgrad raised something other than a `cpsgrad.errors` error while the function runs fine."""


class WrongGradient(AssertionError):
    """cpsgrad's gradient disagrees with finite differences (raised by the gradient helpers only
    when a test asked for the comparison; check_grads records instead)."""


def unsupported(name: str):
    """A stand-in for an autograd API the shim cannot express: importing it works; calling it or
    subclassing it (autograd.tracer.Node) raises ShimUnsupported."""

    def refuse(*args, **kwargs):
        raise ShimUnsupported(f"autograd API {name} has no cpsgrad counterpart")

    return type(name.rsplit(".", 1)[-1], (), {"__new__": refuse, "__init_subclass__": classmethod(refuse),
                                             "__peer_unsupported__": name})


def unsupported_module(name: str, **present) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(present)
    module.__getattr__ = lambda attribute: (
        _raise_attribute(attribute) if attribute.startswith("__") else unsupported(f"{name}.{attribute}")
    )
    return module


def _raise_attribute(attribute):
    raise AttributeError(attribute)


# ---- generated objectives: a scalar function cpsgrad differentiates, calling the user's function

_objectives: dict = {}
_serial = itertools.count()


def _structure(value):
    """A hashable description of a value's container structure (leaves are 'leaf' or 'none')."""
    if isinstance(value, tuple) and not hasattr(type(value), "_fields"):
        return ("tuple", tuple(_structure(v) for v in value))
    if isinstance(value, list):
        return ("list", tuple(_structure(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _structure(v)) for k, v in value.items()))
    if value is None:
        return "none"
    if np.iscomplexobj(value):
        return "complex"
    return "leaf"


def _inner_lines(structure, y: str, v: str, out: list[str], terms: list[str], counter) -> None:
    """Statements adding the real inner product of `y` and `v` (same structure) to `terms`."""
    if structure == "none":
        return
    if structure == "leaf":
        terms.append(f"np.sum({y} * {v})")
        return
    if structure == "complex":
        terms.append(f"np.sum(np.real({y}) * np.real({v}))")
        terms.append(f"np.sum(np.imag({y}) * np.imag({v}))")
        return
    kind, parts = structure
    items = parts if kind == "dict" else enumerate(parts)
    for key, part in items:
        n = next(counter)
        out.append(f"    y{n} = {y}[{key!r}]")
        out.append(f"    v{n} = {v}[{key!r}]")
        _inner_lines(part, f"y{n}", f"v{n}", out, terms, counter)


def _compile(name: str, lines: list[str]) -> types.FunctionType:
    text = "\n".join(lines) + "\n"
    filename = f"<peer objective {next(_serial)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"np": np}
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - the objective generated above
    return namespace[name]


def objective(nargs: int, keywords: tuple[str, ...], structure) -> types.FunctionType:
    """`peer_objective(fun, v, <keyword values>, a0, ..., a{nargs-1})` = <fun(a0, ..., k=kw), v>.

    One function per (number of arguments, keyword names, output structure), so that cpsgrad
    transforms it once and the call of `fun` inside runs through cpsgrad's own dispatch."""
    key = (nargs, keywords, structure)
    if key not in _objectives:
        names = [f"a{i}" for i in range(nargs)]
        kwnames = [f"kw_{i}" for i in range(len(keywords))]
        call = ", ".join(names + [f"{k}={w}" for k, w in zip(keywords, kwnames, strict=True)])
        lines = [f"def peer_objective({', '.join(['fun', 'v', *kwnames, *names])}):", f"    y = fun({call})"]
        terms: list[str] = []
        _inner_lines(structure, "y", "v", lines, terms, itertools.count())
        lines.append(f"    return {' + '.join(terms) if terms else '0.0'}")
        _objectives[key] = _compile("peer_objective", lines)
    return _objectives[key]


# ---- structures of values


def leaves(value) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in leaves(v)]
    if value is None:
        return []
    return [value]


def tree_map(function, *values):
    first = values[0]
    if isinstance(first, tuple) and hasattr(type(first), "_fields"):
        return type(first)(*(tree_map(function, *parts) for parts in zip(*values, strict=True)))
    if isinstance(first, (tuple, list)):
        return type(first)(tree_map(function, *parts) for parts in zip(*values, strict=True))
    if isinstance(first, dict):
        return {k: tree_map(function, *(v[k] for v in values)) for k in first}
    if first is None:
        return None
    return function(*values)


def _random_like(value, rng):
    if np.iscomplexobj(value):
        return rng.standard_normal(np.shape(value)) + 1j * rng.standard_normal(np.shape(value))
    if isinstance(value, np.ndarray):
        return rng.standard_normal(value.shape)
    return float(rng.standard_normal())


def _same_structure(x, g) -> str | None:
    """Why gradient `g` does not have the structure, shapes and dtypes of argument `x` (None if it does)."""
    if isinstance(x, (tuple, list, dict)):
        if type(g) is not type(x) and not (isinstance(x, tuple) and isinstance(g, tuple)):
            return f"gradient is a {type(g).__name__} for a {type(x).__name__} argument"
        if len(g) != len(x):
            return f"gradient has {len(g)} parts for an argument of {len(x)}"
        pairs = [(x[k], g[k]) for k in x] if isinstance(x, dict) else zip(x, g, strict=True)
        for a, b in pairs:
            reason = _same_structure(a, b)
            if reason:
                return reason
        return None
    if x is None:
        return None
    if isinstance(x, np.ndarray):
        if not isinstance(g, np.ndarray):
            return f"gradient is {type(g).__name__} for an array of shape {x.shape}"
        if g.shape != x.shape or g.dtype != x.dtype:
            return f"gradient has shape {g.shape}, dtype {g.dtype}; the argument {x.shape}, {x.dtype}"
        return None
    if np.shape(g) != ():
        return f"gradient has shape {np.shape(g)} for a scalar argument"
    return None


def _inner(a, b) -> float:
    return float(sum(np.sum(np.real(np.conj(p) * q)) for p, q in zip(leaves(a), leaves(b), strict=True)))


def _scalar_close(a, b, tol=TOL, rtol=RTOL) -> bool:
    return abs(a - b) < tol or abs(a - b) / abs(a + b) < rtol


def _along(function, x, direction, h) -> float:
    plus = function(tree_map(lambda p, d: p + h / 2 * d, x, direction))
    minus = function(tree_map(lambda p, d: p - h / 2 * d, x, direction))
    return float((plus - minus) / h)


def _careful_difference(function, x, direction) -> list[float]:
    """Richardson-extrapolated central differences at several step sizes (each O(h^4))."""
    estimates = []
    for h in (1e-2, 1e-3, 1e-4, 1e-5):
        estimates.append((4 * _along(function, x, direction, h / 2) - _along(function, x, direction, h)) / 3)
    return estimates


def _kinked(function, x, direction) -> bool:
    """Whether the forward and backward differences along `direction` disagree (a kink at x)."""
    base = function(x)
    for h in (1e-4, 1e-6):
        forward = (function(tree_map(lambda p, d, h=h: p + h * d, x, direction)) - base) / h
        backward = (base - function(tree_map(lambda p, d, h=h: p - h * d, x, direction))) / h
        if abs(forward - backward) > 1e-3 * max(1.0, abs(forward) + abs(backward)):
            return True
    return False


def _location() -> str:
    """The test's frame that called the shim: file:line."""
    for frame in reversed(traceback.extract_stack()[:-1]):
        if "autograd_shim" not in frame.filename:
            return f"{frame.filename}:{frame.lineno}"
    return "?"


def _error_class(error: BaseException) -> dict:
    text = str(error)
    if hasattr(error, "location") and getattr(error, "location", None) is not None:
        text = text.split(": ", 1)[-1] if text.count(": ") else text
    return {"kind": type(error).__name__, "message": text}


def _record(outcome: str, **details) -> None:
    RECORDS.append({"outcome": outcome, "where": _location(), **details})


def _count_sub(label: str) -> None:
    SUB_REFUSED[label] = SUB_REFUSED.get(label, 0) + 1


def _plain_python(function) -> bool:
    return isinstance(function, types.FunctionType) and not hasattr(function, "__peer_unsupported__")


def _positions(argnum) -> tuple[int, ...]:
    return (argnum,) if isinstance(argnum, int) else tuple(argnum)


def _argnums(argnum):
    """autograd's argnum as cpsgrad's argnums: an int stays one, a list or tuple is a tuple (autograd
    returns a tuple of gradients for either)."""
    return argnum if isinstance(argnum, int) else tuple(argnum)


def vjp_check(fun, argnum, args, kwargs) -> None:
    """Autograd's check_vjp for cpsgrad: <v, J u> from cpsgrad against a central difference."""
    y = fun(*args, **kwargs)  # the function as the test wrote it: its own errors are the test's
    rng = np.random.default_rng(len(RECORDS) + 1)
    v = tree_map(lambda p: _random_like(p, rng), y)
    keywords = tuple(kwargs)
    obj = objective(len(args), keywords, _structure(y))
    lead = (fun, v, *kwargs.values())
    positions = _positions(argnum)
    shifted = tuple(len(lead) + p for p in positions)
    snapshot = copy.deepcopy(args)
    try:
        gradients = cpsgrad.grad(obj, argnums=shifted)(*lead, *args)
    except HigherOrderError as error:  # the function calls a gradient: a second-order check
        _record("refused-order", kind=type(error).__name__, message=str(error))
        return
    except CpsgradError as error:
        _record("refused", **_error_class(error))
        return
    except (ShimUnsupported, NeedsForwardOrHigherOrder) as error:
        _record("n/a" if isinstance(error, ShimUnsupported) else "refused-order", kind=type(error).__name__,
                message=str(error))
        return
    except Exception as error:  # noqa: BLE001 - every other exception is a crash of cpsgrad's
        _record("crash", kind=type(error).__name__, message=str(error)[:300],
                traceback="".join(traceback.format_exception(error))[-3000:])
        return
    for position, before in zip(range(len(args)), snapshot, strict=True):
        if not _equal(before, args[position]):
            _record("wrong", reason=f"argument {position} changed in place by the gradient")
            return
    x = tuple(args[p] for p in positions)
    reason = _same_structure(x, tuple(gradients))
    if reason:
        _record("wrong", reason=reason)
        return

    def scalar(xs):
        full = list(args)
        for p, value in zip(positions, xs, strict=True):
            full[p] = value
        return obj(*lead, *full)

    direction = tree_map(lambda p: _random_like(p, rng), x)
    # autograd's check_vjp pairs the direction with the VJP's covector (its conjugate, for a
    # complex argument): grad is d/dx - i d/dy in autograd and JAX (and cpsgrad) alike, and the
    # derivative along a direction d is Re(d * grad), not Re(conj(d) * grad)
    analytic = _inner(direction, tree_map(np.conj, tuple(gradients)))
    numeric = _along(scalar, x, direction, EPS)
    if _scalar_close(numeric, analytic):
        _record("passed")
        return
    careful = _careful_difference(scalar, x, direction)
    if any(_scalar_close(c, analytic, tol=1e-5, rtol=1e-5) for c in careful):
        _record("passed", note="agrees with the Richardson difference only")
        return
    if _kinked(scalar, x, direction):
        _record("kink", note="one-sided differences disagree: a kink, where any subgradient is a convention",
                analytic=analytic, numeric=numeric)
        return
    _record("wrong", reason="disagrees with finite differences", analytic=analytic, numeric=numeric,
            careful=careful, fun=getattr(fun, "__qualname__", repr(fun)), argnum=list(positions),
            args=_describe(args), kwargs={k: _describe(w) for k, w in kwargs.items()})


def _equal(a, b) -> bool:
    try:
        return all(np.array_equal(p, q, equal_nan=True) for p, q in zip(leaves(a), leaves(b), strict=True))
    except (TypeError, ValueError):
        return True


def _describe(value):
    return tree_map(lambda p: np.asarray(p).tolist() if np.size(p) <= 64 else f"array{np.shape(p)}", value)


def check_grads(fun, argnum=0, modes=("fwd", "rev"), order=2):
    """autograd.test_util.check_grads: its reverse-mode first-order check, run on cpsgrad."""

    @functools.wraps(fun) if callable(fun) else (lambda f: f)
    def checker(*args, **kwargs):
        for mode in modes:
            if mode == "fwd":
                _count_sub("forward mode")
            if order > 1:
                _count_sub(f"order {order} ({mode})")
        if "rev" not in modes:
            _record("refused-order", kind="forward mode only")
            return
        vjp_check(fun, argnum, args, kwargs)

    return checker


# ---- the differential operators


def _crash_or_reraise(error, fun, args, kwargs):
    try:
        fun(*args, **kwargs)
    except Exception:  # noqa: BLE001 - the function itself fails: the error is the test's
        error.__peer_function_fails__ = True
        raise error from None
    raise InternalCrash(f"{type(error).__name__}: {error}") from error


def _run(operator, fun, argnum, args, kwargs):
    if getattr(fun, "__peer_gradient__", False):
        raise NeedsForwardOrHigherOrder("a derivative of a derivative (autograd.grad of a gradient)")
    try:
        if _plain_python(fun) and not kwargs:
            return operator(fun, argnums=_argnums(argnum))(*args)
        # a builtin, or keywords: a generated wrapper calls it (cpsgrad differentiates positions)
        call = _keyword_call(len(args), tuple(kwargs))
        shifted = tuple(1 + len(kwargs) + p for p in _positions(argnum))
        return operator(call, argnums=shifted[0] if isinstance(argnum, int) else shifted)(fun, *kwargs.values(), *args)
    except (CpsgradError, ShimUnsupported, NeedsForwardOrHigherOrder):
        raise
    except Exception as error:  # noqa: BLE001 - sorted into the function's own errors and crashes
        _crash_or_reraise(error, fun, args, kwargs)


_keyword_calls: dict = {}


def _keyword_call(nargs: int, keywords: tuple[str, ...]) -> types.FunctionType:
    key = (nargs, keywords)
    if key not in _keyword_calls:
        names = [f"a{i}" for i in range(nargs)]
        kwnames = [f"kw_{i}" for i in range(len(keywords))]
        call = ", ".join(names + [f"{k}={w}" for k, w in zip(keywords, kwnames, strict=True)])
        _keyword_calls[key] = _compile("peer_call", [f"def peer_call({', '.join(['fun', *kwnames, *names])}):",
                                                    f"    return fun({call})"])
    return _keyword_calls[key]


def grad(fun, argnum=0):
    """autograd.grad: cpsgrad.grad (a builtin or a call with keywords goes through a wrapper)."""

    @functools.wraps(fun)
    def gradient(*args, **kwargs):
        return _run(cpsgrad.grad, fun, argnum, args, kwargs)

    gradient.__peer_gradient__ = True
    return gradient


def value_and_grad(fun, argnum=0):
    @functools.wraps(fun)
    def value_and_gradient(*args, **kwargs):
        return _run(cpsgrad.value_and_grad, fun, argnum, args, kwargs)

    value_and_gradient.__peer_gradient__ = True
    return value_and_gradient


def elementwise_grad(fun, argnum=0):
    """autograd.elementwise_grad: the VJP with a covector of ones (the gradient of the sum)."""

    @functools.wraps(fun)
    def gradient(*args, **kwargs):
        if getattr(fun, "__peer_gradient__", False):
            raise NeedsForwardOrHigherOrder("elementwise_grad of a gradient")
        y = fun(*args, **kwargs)
        ones = tree_map(lambda p: np.ones_like(p) if isinstance(p, np.ndarray) else 1.0, y)
        obj = objective(len(args), tuple(kwargs), _structure(y))
        lead = (fun, ones, *kwargs.values())
        shifted = tuple(len(lead) + p for p in _positions(argnum))
        try:
            result = cpsgrad.grad(obj, argnums=shifted)(*lead, *args)
        except (CpsgradError, ShimUnsupported, NeedsForwardOrHigherOrder):
            raise
        except Exception as error:  # noqa: BLE001 - the function ran fine above: a crash
            raise InternalCrash(f"{type(error).__name__}: {error}") from error
        return result[0] if isinstance(argnum, int) else result

    gradient.__peer_gradient__ = True
    return gradient
