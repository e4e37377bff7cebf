"""Array helpers that generated programs and numpy rules call (through `cpsgrad_runtime`).

Conventions every helper keeps:
- an adjoint has its primal's shape and dtype (a Python float for a Python float); `0.0` is
  the symbolic zero and may stand for any shape;
- helpers never write into their arguments, and generated code updates an adjoint in place
  only through `accumulate`, when no other reference to it exists, so adjoints may alias each
  other freely.
"""

from __future__ import annotations

import functools
import math
import sys
import threading
import types
from collections.abc import Callable

import numpy as np

from cpsgrad import runtime_device as _device
from cpsgrad.kernels.device_array import DeviceArray

__all__ = [
    "accumulate",
    "accumulate_index",
    "accumulate_matmul_left",
    "borrow",
    "clear_loans",
    "close_loans",
    "lend",
    "merge",
    "open_loans",
    "pass_on",
    "quotient",
    "array_adjoint",
    "array_divide",
    "array_log_for_power",
    "array_power_slope",
    "array_product_adjoint",
    "array_sign",
    "chain",
    "clip_adjoint",
    "concatenate_adjoint",
    "cumsum_adjoint",
    "dot_left",
    "dot_right",
    "elementwise_adjoint",
    "exponent_slope",
    "extremum_adjoint",
    "hstack_adjoint",
    "hypot_slope",
    "index_adjoint",
    "index_concatenate",
    "index_concatenate_adjoint",
    "indexed",
    "subscript_of",
    "inner_left",
    "inner_right",
    "is_zero",
    "item_adjoint",
    "linspace_adjoint",
    "logaddexp_share",
    "logsumexp_adjoint",
    "matmul_left",
    "matmul_right",
    "mean_adjoint",
    "moveaxis_adjoint",
    "norm_adjoint",
    "outer_left",
    "outer_right",
    "picked_log_softmax_adjoint",
    "reduced_product",
    "reshape_adjoint",
    "select",
    "softmax_adjoint",
    "split_adjoint",
    "stack_adjoint",
    "std_adjoint",
    "sum_adjoint",
    "swapaxes_adjoint",
    "tie_share",
    "trace_adjoint",
    "transpose_adjoint",
    "unbroadcast",
    "var_adjoint",
    "vstack_adjoint",
]

_ndarray = np.ndarray


_getrefcount = sys.getrefcount


def accumulate(total, contribution):
    """`total + contribution`, added into `total` in place when nothing else can see that array:
    its only references are the generated code's variable and this call's (CPython's reference
    count says so exactly, as numpy's own temporary elision uses it), it owns its memory, and
    nothing broadcasts. A sum of many array contributions (a parameter's adjoint over a loop or
    a recursion) then allocates once. Shared adjoints are never changed: they get a new array.
    A lent adjoint (`lend`) is its borrower's to add into; one handed back is added into."""
    # the reference count is read here, first: the caller's variable, this parameter, getrefcount's argument
    exclusive = _getrefcount(total) == 3
    return _accumulate(total, contribution, exclusive)


def _accumulate(total, contribution, exclusive: bool):
    if type(contribution) is _ndarray:
        if (exclusive or _lent(total)) and _owns(total, contribution):
            total += contribution
            return total
        if _lent(contribution) and contribution is not total and _owns(contribution, contribution):
            if type(total) is float and total == 0.0:
                return contribution
            if type(total) is _ndarray and total.shape == contribution.shape:
                contribution += total  # the borrower's total: everything lent and added comes back in it
                return contribution
    if type(contribution) is float and contribution == 0.0:  # the symbolic zero adds nothing
        return total
    if type(total) is float and total == 0.0:
        return contribution
    if type(total) is DeviceArray or type(contribution) is DeviceArray:
        return _device.add(total, contribution)
    return total + contribution


# ---- lending adjoints to callees ---------------------------------------------------------------
# A caller about to hand a callee its continuation lends the adjoint it has accumulated for an
# argument (`lend`, in the call's adapter continuation); the callee's program, at its first
# contribution to the adjoint of the parameter that received that argument (never reassigned),
# borrows it (`borrow`) and adds into it in place; the buffer comes back as the callee's adjoint
# of the parameter, and the call site takes it back (`merge`: the same object, nothing to add).
# A recursion then keeps one buffer per parameter, as a hand-written backward does, instead of
# one per call level added up level by level.
#
# The rule that keeps this sound: a lent buffer already holds the caller's total for the
# argument, so it must come back to the caller in exactly one place, the result slot of the
# parameter that borrowed it, which the call site merges. Hence:
# - an offer is addressed to one program invocation, the callee whose continuation made it: the
#   dispatcher runs every program that can receive arrays through an entry (`entry`) whose
#   continuation, when it returns (the callee's backward starts), moves the offers for the
#   callee's own parameters into a frame of its own and voids every other offer (`claim`). A
#   program called deeper, which may receive the same array by another route (an element of a
#   list, a tail call), never sees them;
# - an argument is lent only when it occurs once among the call's arguments, and claimed only
#   when it occurs once among the callee's parameters: the same array in two parameters would
#   let either take it, and the call site could merge the other;
# - `borrow` reads only the frame of the program running its backward (frames nest as the
#   backward passes of calls do: a callee's backward runs inside its caller's).
# Loans are per thread and per run (`open_loans`/`close_loans`), counted (a borrower may lend
# the buffer on, to its own callee).

_LOANS = threading.local()


def _loans() -> tuple[dict, dict, list]:
    """The books of this thread's run: (offered: id(argument) -> (argument, buffer), lent:
    id(buffer) -> [buffer, count], frames: the claimed offers of the programs whose backward is
    running, innermost last)."""
    books = _LOANS.__dict__.get("books")
    if books is None:
        books = _LOANS.__dict__["books"] = ({}, {}, [])
    return books


def _lent(value) -> bool:
    lent = _loans()[1]
    if not lent:
        return False
    record = lent.get(id(value))
    return record is not None and record[0] is value


def _once(value, values: tuple) -> bool:
    count = 0
    for other in values:
        if other is value:
            count += 1
    return count == 1


def lend(adjoint, argument, arguments: tuple):
    """`adjoint`, offered to the callee that receives `argument` (see above); lent only when
    nothing else can see it (or it is itself a loan this program borrowed), and when `argument`
    occurs once among the call's arguments (`arguments`: every one, in every position)."""
    if type(adjoint) is _ndarray and type(argument) is _ndarray and adjoint.shape == argument.shape:
        if len(arguments) > 1 and not _once(argument, arguments):
            return adjoint
        offered, lent, _ = _loans()
        record = lent.get(id(adjoint))
        if record is not None and record[0] is adjoint:
            record[1] += 1
        elif _getrefcount(adjoint) == 3 and _owns(adjoint, adjoint):
            lent[id(adjoint)] = [adjoint, 1]
        else:
            return adjoint
        offered[id(argument)] = (argument, adjoint)
    return adjoint


def claim(parameters: tuple) -> None:
    """At the start of a callee's backward: its frame of the offers made for its parameters (each
    occurring once among them); every other offer is void."""
    offered, _, frames = _loans()
    frame = {}
    if offered:
        distinct = len({id(parameter) for parameter in parameters}) == len(parameters)  # the usual case
        for parameter in parameters:
            entry = offered.get(id(parameter))
            if entry is not None and entry[0] is parameter and (distinct or _once(parameter, parameters)):
                frame[id(parameter)] = entry
        offered.clear()
    frames.append(frame)


def pass_on(parameter, arguments: tuple) -> None:
    """In a call's adapter, for a parameter of the running program passed to the callee as it is,
    whose adjoint nothing after the call adds to: what this program's caller lent for it and this
    program has not borrowed is offered to the callee instead (the callee's adjoint of it becomes
    this program's, received into it, never added: the buffer still comes back in one place)."""
    offered, _, frames = _loans()
    if frames and _once(parameter, arguments):
        frame = frames[-1]
        entry = frame.get(id(parameter))
        if entry is not None and entry[0] is parameter:
            del frame[id(parameter)]
            offered[id(parameter)] = entry


def release() -> None:
    """At the end of a callee's backward: its frame goes."""
    _loans()[2].pop()


def void_offers() -> None:
    """At the start of the backward of a callee that borrows nothing: no offer outlives it."""
    offered = _loans()[0]
    if offered:
        offered.clear()


def withdrawing(k, arguments: tuple):
    """`k`, but withdrawing the offers its call makes for `arguments` before the callee's backward
    runs: for a callee whose parameters are not exactly the call's arguments (a partial's, a
    method's bound or a closure's captured values, defaults), a loan could be taken by the wrong
    parameter."""

    def withdrawn(value):
        result = k(value)
        offered = _loans()[0]
        if offered:
            for argument in arguments:
                entry = offered.get(id(argument))
                if entry is not None and entry[0] is argument:
                    del offered[id(argument)]
        return result

    return withdrawn


def borrow(argument):
    """The adjoint the caller lent for `argument`, claimed by this program, or the symbolic zero."""
    frames = _loans()[2]
    if not frames:
        return 0.0
    frame = frames[-1]
    if not frame:
        return 0.0
    entry = frame.pop(id(argument), None)
    return entry[1] if entry is not None and entry[0] is argument else 0.0


def merge(total, contribution, argument):
    """`accumulate(total, contribution)` at the call site that lent `total` for `argument`: the
    loan ends (offered and not taken, or handed back as `contribution` itself)."""
    exclusive = _getrefcount(total) == 3
    offered, lent, _ = _loans()
    entry = offered.get(id(argument))
    if entry is not None and entry[1] is total:
        del offered[id(argument)]
    record = lent.get(id(total))
    if record is not None and record[0] is total:
        record[1] -= 1
        if record[1] == 0:
            del lent[id(total)]
        if contribution is total:
            return total
        exclusive = exclusive or _lent(total)
    return _accumulate(total, contribution, exclusive)


_ENTRIES: dict[tuple[int, bool], Callable] = {}


def entry(program, count: int, borrows: bool):
    """`program(p0, ..., k)` run as a callee that may be lent adjoints: its continuation, when
    it returns, claims the offers for its parameters (`borrows`) or voids them (see above).
    Fixed arity (no *args): CPython then runs the calls without C frames."""
    make = _ENTRIES.get((count, borrows))
    if make is None:
        names = "".join(f"p{i}, " for i in range(count))
        if borrows:
            text = (
                "def make(program):\n"
                f"    def entry({names}k):\n"
                "        def returned(value):\n"
                "            result = k(value)\n"
                f"            claim(({names}))\n"
                "            return result\n"
                f"        result = program({names}returned)\n"
                "        release()\n"
                "        return result\n"
                "    return entry\n"
            )
        else:
            text = (
                "def make(program):\n"
                f"    def entry({names}k):\n"
                "        def returned(value):\n"
                "            result = k(value)\n"
                "            void_offers()\n"
                "            return result\n"
                f"        return program({names}returned)\n"
                "    return entry\n"
            )
        namespace = {"claim": claim, "release": release, "void_offers": void_offers}
        exec(compile(text, f"<cpsgrad entry of {count} parameters>", "exec"), namespace)  # noqa: S102
        make = _ENTRIES[count, borrows] = namespace["make"]
    wrapped = make(program)
    wrapped.__wrapped__ = program
    return wrapped


def clear_loans() -> None:
    """Forget every loan."""
    offered, lent, frames = _loans()
    offered.clear()
    lent.clear()
    frames.clear()


def open_loans() -> tuple | None:
    """Fresh loan books for one run (a run inside another, from a key function say, keeps its own
    apart); returns the books it replaces, for `close_loans` after the run, finished or not."""
    state = _LOANS.__dict__
    saved = state.get("books")
    state["books"] = ({}, {}, [])
    return saved


def close_loans(saved: tuple | None) -> None:
    _LOANS.__dict__["books"] = ({}, {}, []) if saved is None else saved


def _owns(total, like) -> bool:
    """Whether `total` is an array of `like`'s shape and dtype owning writeable memory: with a
    reference count of 3 in the caller (its variable, the parameter, getrefcount's argument),
    nothing else can see a change made to it in place."""
    return (
        type(total) is _ndarray
        and total.base is None
        and total.shape == like.shape
        and total.dtype is like.dtype
        and total.flags.writeable
    )


def accumulate_index(total, container, index, contribution):
    """`accumulate(total, index_adjoint(container, index, contribution))` without the full-size
    zeros: where `total` is an array nothing else holds (as `accumulate` decides), the
    contribution is added into the indexed elements in place; a column or a row read in a loop
    (an embedding, one-hot inputs) then costs its own size, not the whole array's."""
    if type(container) is _ndarray and (_getrefcount(total) == 3 or _lent(total)) and _owns(total, container):
        if type(contribution) is float and contribution == 0.0:
            return total
        if _is_basic(index):
            total[index] += contribution
        else:
            np.add.at(total, index, contribution)
        return total
    return accumulate(total, index_adjoint(container, index, contribution))


def accumulate_matmul_left(total, z_d, x, y):
    """`accumulate(total, matmul_left(z_d, x, y))` with the product added into `total` by BLAS
    in place (a rank-1 update `ger` for matrix @ vector, `gemm` with beta = 1 for matrix @
    matrix) where `total` is an array nothing else holds: a weight matrix's adjoint summed over a
    loop or a recursion then costs one pass a step, not an allocation and two."""
    if (
        type(x) is _ndarray
        and type(y) is _ndarray
        and type(z_d) is _ndarray
        and (_getrefcount(total) == 3 or _lent(total))
        and _owns(total, x)
        and x.ndim == 2
        and total.flags.c_contiguous
        and x.dtype is y.dtype is z_d.dtype
    ):
        routines = _blas(total.dtype)
        if routines is not None:
            ger, gemm = routines
            transposed = total.T  # Fortran-ordered, as BLAS wants it: total.T += y (x) z_d
            if y.ndim == 1 and z_d.ndim == 1:
                result = ger(1.0, y, z_d, a=transposed, overwrite_a=1)
            elif y.ndim == 2 and z_d.ndim == 2:
                result = gemm(1.0, y, z_d, beta=1.0, c=transposed, trans_b=1, overwrite_c=1)
            else:
                result = None
            if result is not None:
                if result is not transposed:  # BLAS worked on a copy (f2py returns `a` itself when it did not)
                    np.copyto(total, result.T)
                return total
    return accumulate(total, matmul_left(z_d, x, y))


_BLAS_ROUTINES: dict = {}


def _blas(dtype):
    """(ger, gemm) of scipy's BLAS for float32 or float64, or None."""
    if dtype not in _BLAS_ROUTINES:
        try:
            from scipy.linalg import blas
        except ImportError:  # pragma: no cover - scipy is a dependency
            _BLAS_ROUTINES[dtype] = None
        else:
            _BLAS_ROUTINES[dtype] = {np.dtype(np.float64): (blas.dger, blas.dgemm), np.dtype(np.float32): (blas.sger, blas.sgemm)}.get(np.dtype(dtype))
    return _BLAS_ROUTINES[dtype]


def unbroadcast(adjoint, like):
    """`adjoint` summed over the axes broadcasting added to `like`, in `like`'s shape and dtype.

    The one helper that undoes broadcasting for every rule: `x_d += unbroadcast(z_d, x)`. A
    Python float `like` gets a Python float; a numpy scalar or array keeps its dtype.
    """
    kind = type(like)
    if kind is _ndarray and type(adjoint) is _ndarray and adjoint.shape == like.shape and adjoint.dtype is like.dtype:
        return adjoint  # the common case: nothing was broadcast
    if type(adjoint) is float and adjoint == 0.0:  # the symbolic zero
        return adjoint
    if kind is _ndarray:
        if type(adjoint) is _ndarray and adjoint.shape == like.shape:
            return adjoint if adjoint.dtype == like.dtype else adjoint.astype(like.dtype)
        return _reduce_to(adjoint, like.shape, like.dtype)
    if kind is DeviceArray:
        return _device.unbroadcast(adjoint, like)
    if kind is float or kind is int or kind is bool:
        if type(adjoint) is float:
            return adjoint
        # a DeviceArray's sum is copied to the host: the gradient of a Python number is one
        return float(adjoint.sum()) if type(adjoint) is _ndarray or type(adjoint) is DeviceArray else float(adjoint)
    if isinstance(like, np.generic):
        if type(adjoint) is DeviceArray:
            return like.dtype.type(float(adjoint.sum()))
        return like.dtype.type(adjoint.sum() if type(adjoint) is _ndarray else adjoint)
    if isinstance(like, (list, tuple)):
        from cpsgrad.runtime import SequenceAdjoint

        if isinstance(adjoint, SequenceAdjoint) and len(adjoint) != len(like):
            raise TypeError(
                "an operator combined a differentiable tuple or list with another sequence "
                "(concatenation or repetition); that is not differentiable yet: build the "
                "sequence element by element"
            )
        if isinstance(adjoint, (_ndarray, np.generic)):  # numpy read the sequence as an array
            return _as_sequence_adjoint(adjoint, like)
        return adjoint
    return adjoint


def reduced_product(a, b, like):
    """`unbroadcast(a * b, like)`; when `like` is a scalar and `a`, `b` arrays of one shape, a
    dot product instead of the product array and its sum (`x * W` with a scalar `x`)."""
    if type(a) is _ndarray and type(b) is _ndarray and type(like) is not _ndarray and a.shape == b.shape and a.dtype is b.dtype:
        return unbroadcast(np.vdot(a, b), like)
    return unbroadcast(a * b, like)


def _reduce_to(adjoint, shape: tuple, dtype):
    """Sum `adjoint` down to `shape` (numpy's broadcasting rules, run backwards)."""
    adjoint = np.asarray(adjoint)
    extra = adjoint.ndim - len(shape)
    if extra < 0:  # a scalar (symbolic) adjoint standing for a broadcast value
        return np.broadcast_to(adjoint, shape).astype(dtype)
    axes = tuple(range(extra)) + tuple(
        extra + axis for axis, size in enumerate(shape) if size == 1 and adjoint.shape[extra + axis] != 1
    )
    if axes:
        adjoint = adjoint.sum(axis=axes, keepdims=True)
    if extra:
        adjoint = adjoint.reshape(shape)
    if adjoint.shape != shape:
        adjoint = np.broadcast_to(adjoint, shape).copy()
    return adjoint.astype(dtype, copy=False)


def index_adjoint(container, index, adjoint):
    """The adjoint of `container` when only `container[index]` was read.

    Arrays take any numpy index (ints, slices, tuples, integer arrays, boolean masks); integer
    arrays that repeat a position add up, as the chain rule says. Tuples and lists take an int
    or a slice; dicts a key (a `DictAdjoint` holding the one entry).
    """
    if type(container) is _ndarray:
        result = np.zeros(container.shape, container.dtype)
        if _is_basic(index):
            result[index] = adjoint
        else:
            np.add.at(result, index, adjoint)
        return result
    if type(container) is DeviceArray:
        return _device.index_adjoint(container, index, adjoint)
    from cpsgrad.runtime import DictAdjoint, one_hot

    if type(getattr(type(container), "__getitem__", None)) is types.FunctionType:
        from cpsgrad.errors import UnsupportedError

        # its own __getitem__ ran as an opaque call: an adjoint for it as for a list or a dict
        # would be wrong (located by the caller: api finds the generated line that raised)
        raise UnsupportedError(
            None, f"subscript of a differentiable {type(container).__name__} (a class with its own __getitem__)",
            "cpsgrad differentiates a user class's __getitem__ only on an object that carries no gradient "
            "itself; call a method of your own (obj.get(k)), or index a tuple, list, dict or array",
        )
    if isinstance(container, dict):
        return DictAdjoint({index: adjoint})
    return one_hot(container, index, adjoint)


def _is_basic(index) -> bool:
    """Whether `index` is a basic index (views, no repeated positions)."""
    kind = type(index)
    if kind is int or kind is slice:
        return True
    if kind is tuple:
        for part in index:
            kind = type(part)
            if not (kind is int or kind is slice or _is_basic(part)):
                return False
        return True
    return index is None or index is Ellipsis or isinstance(index, (int, np.integer, slice))


def is_zero(adjoint) -> bool:
    """Whether `adjoint` is the symbolic zero (a Python `0.0` standing for any shape)."""
    return type(adjoint) is float and adjoint == 0.0


def matmul_left(z_d, x, y):
    """The adjoint of `x` in `z = x @ y` (vectors, matrices and stacks of them, broadcast)."""
    if type(x) is _ndarray and type(y) is _ndarray and type(z_d) is _ndarray and x.dtype is y.dtype is z_d.dtype:
        if x.ndim == 2 and y.ndim == 1:  # matrix @ vector: an outer product (BLAS beats broadcasting)
            return np.dot(z_d[:, None], y[None, :])
        if x.ndim == 2 and y.ndim == 2:
            return z_d @ y.T
    if is_zero(z_d):
        return 0.0
    if type(x) is DeviceArray or type(y) is DeviceArray:
        return unbroadcast(_device.matmul_left(z_d, x, y), x)
    x_ndim, y_ndim = np.ndim(x), np.ndim(y)
    if x_ndim == 1 and y_ndim == 1:
        return unbroadcast(z_d * y, x)
    if x_ndim == 1:  # (n,) @ (..., n, m) -> (..., m)
        return unbroadcast(np.matmul(y, z_d[..., None])[..., 0], x)
    if y_ndim == 1:  # (..., n, k) @ (k,) -> (..., n)
        return unbroadcast(z_d[..., None] * y, x)
    return unbroadcast(np.matmul(z_d, np.swapaxes(y, -1, -2)), x)


def matmul_right(z_d, x, y):
    """The adjoint of `y` in `z = x @ y`."""
    if type(x) is _ndarray and type(y) is _ndarray and type(z_d) is _ndarray and x.dtype is y.dtype is z_d.dtype:
        if x.ndim == 2 and y.ndim == 1:  # matrix @ vector
            return z_d @ x
        if x.ndim == 2 and y.ndim == 2:
            return x.T @ z_d
    if is_zero(z_d):
        return 0.0
    if type(x) is DeviceArray or type(y) is DeviceArray:
        return unbroadcast(_device.matmul_right(z_d, x, y), y)
    x_ndim, y_ndim = np.ndim(x), np.ndim(y)
    if x_ndim == 1 and y_ndim == 1:
        return unbroadcast(z_d * x, y)
    if x_ndim == 1:  # (n,) @ (..., n, m) -> (..., m)
        return unbroadcast(x[:, None] * z_d[..., None, :], y)
    if y_ndim == 1:  # (..., n, k) @ (k,) -> (..., n)
        return unbroadcast(np.matmul(np.swapaxes(x, -1, -2), z_d[..., None])[..., 0], y)
    return unbroadcast(np.matmul(np.swapaxes(x, -1, -2), z_d), y)


def quotient(numerator, denominator):
    """`numerator / denominator` in a derivative, where the forward divided with numpy's meaning
    (`np.float64(1.0) / 0.0` is inf): a Python zero denominator gives inf or nan as numpy does,
    not ZeroDivisionError. Between Python numbers only, the transform writes a plain `/`."""
    if (type(denominator) is float or type(denominator) is int) and denominator == 0 and isinstance(numerator, (float, int, complex)):
        return (np.complex128 if type(numerator) is complex else np.float64)(numerator) / denominator
    return numerator / denominator  # numpy values (and a DeviceArray) divide by zero as numpy does


def array_divide(numerator, denominator):
    """`numerator / denominator` elementwise with IEEE results (inf, nan) and no warnings."""
    if type(denominator) is np.float64 and denominator != 0.0 and type(numerator) is float:
        return numerator / denominator  # no warning to silence: skip the error-state switch
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.divide(numerator, denominator)


def array_power_slope(base, exponent):
    """d(b**e)/db elementwise: e * b**(e-1), 0 where e == 0, +-inf at b == 0 for 0 < e < 1."""
    if type(base) is DeviceArray or type(exponent) is DeviceArray:
        return _device.array_power_slope(base, exponent)
    base = np.asarray(base)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        slope = exponent * np.power(base, np.asarray(exponent, dtype=np.result_type(base, exponent, 1.0)) - 1)
        slope = np.where(np.asarray(exponent) == 0, 0.0, slope)
    return slope.astype(np.result_type(base, exponent, 1.0), copy=False)


def array_log_for_power(base):
    """d(b**e)/de / b**e elementwise: log(b), 0 at b == 0, NaN for b < 0."""
    if type(base) is DeviceArray:
        return _device.array_log_for_power(base)
    base = np.asarray(base)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(base == 0, 0.0, np.log(np.where(base == 0, 1.0, base))).astype(np.result_type(base, 1.0), copy=False)


def array_sign(x):
    """abs' elementwise: 1 at x >= 0 (abs'(0) = 1, as JAX), -1 below, NaN at NaN."""
    if type(x) is DeviceArray:
        return _device.array_sign(x)
    x = np.asarray(x)
    return np.where(x >= 0, 1.0, np.where(x < 0, -1.0, np.nan)).astype(np.result_type(x, 1.0), copy=False)


# ---- numpy rules (cpsgrad/rules/arrays.py) ----------------------------------------------------


def chain(adjoint, slope, x):
    """The adjoint of `x` in an elementwise `y = f(x, ...)` whose derivative in `x` is `slope`.

    `adjoint * slope`, summed back to `x`'s shape and dtype; the symbolic zero stays zero even
    where `slope` is infinite.
    """
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(adjoint * slope, x)


# The numpy slope of each op whose backward has a fused kernel, from what the kernel saves (the
# output for tanh and sqrt, the input otherwise).
_SLOPES = {
    "tanh": lambda y: 1.0 - y * y,
    "sqrt": lambda y: array_divide(0.5, y),
    "sin": np.cos,
    "cos": lambda x: -np.sin(x),
    "square": lambda x: 2.0 * x,
    "log1p": lambda x: array_divide(1.0, x + 1.0),
}
_KERNEL_MIN_SIZE: dict[str, int | None] = {}


def elementwise_adjoint(op: str, adjoint, saved, x):
    """The adjoint of `x` in `y = np.<op>(x)`, from `saved` (`y` for tanh and sqrt, `x` for sin,
    cos, square, log1p): numpy below the size from which the fused kernel was measured faster
    (`cpsgrad.kernels.thresholds`), the kernel from there on; Python numbers never reach it."""
    if type(adjoint) is float and adjoint == 0.0:
        return 0.0
    if type(saved) is _ndarray and type(adjoint) is _ndarray and adjoint.shape == saved.shape and adjoint.dtype is saved.dtype:
        threshold = _KERNEL_MIN_SIZE.get(op, -1)
        if threshold == -1:
            from cpsgrad.kernels import thresholds

            threshold = _KERNEL_MIN_SIZE[op] = thresholds.min_size(op, "backward")
        if threshold is not None and saved.size >= threshold and saved.dtype in _KERNEL_DTYPES:
            from cpsgrad.kernels import dispatch

            return unbroadcast(dispatch(op, adjoint, saved).backward(adjoint, (saved,))[0], x)
        if type(x) is _ndarray and x.shape == saved.shape and x.dtype is saved.dtype:
            return adjoint * _SLOPES[op](saved)  # nothing to unbroadcast
    if type(saved) is DeviceArray:  # the fused CUDA backward at every size
        return _device.elementwise_adjoint(op, adjoint, saved, x)
    return unbroadcast(adjoint * _SLOPES[op](saved), x)


_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def select(adjoint, condition, x):
    """The adjoint of `x` where `condition` holds and exactly zero elsewhere (`np.where`)."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(np.where(condition, adjoint, 0.0), x)


def tie_share(x, other, result):
    """`np.maximum`/`np.minimum` backward: 1 where `x` was chosen, 0.5 on a tie (as JAX)."""
    if type(result) is DeviceArray:
        return _device.tie_share(x, other, result)
    return np.equal(x, result) * np.where(np.equal(other, result), 0.5, 1.0)


def clip_adjoint(adjoint, x, low, high, part: str):
    """`np.clip` backward for `part` ("x", "low" or "high"), as JAX's `minimum(maximum(x, low), high)`:
    a value at a bound shares the adjoint equally with that bound."""
    if is_zero(adjoint):
        return 0.0
    lower = x if low is None else np.maximum(x, low)
    result = lower if high is None else np.minimum(lower, high)
    if part == "high":
        return unbroadcast(adjoint * tie_share(high, lower, result), high)
    through = adjoint if high is None else adjoint * tie_share(lower, high, result)
    if part == "low":
        return unbroadcast(through * tie_share(low, x, lower), low)
    return unbroadcast(through if low is None else through * tie_share(x, low, lower), x)


def exponent_slope(base, result):
    """d(b**e)/de elementwise from the result b**e: log(b) * b**e, 0 at b == 0 with e > 0, NaN
    for b < 0 (as JAX), without warnings."""
    if type(result) is DeviceArray:
        return _device.array_log_for_power(base) * result
    with np.errstate(invalid="ignore", over="ignore"):
        return array_log_for_power(base) * result


def hypot_slope(x, z):
    """d hypot(x, y) / dx = x / z; 0.5 at the origin and 0 at infinity (as JAX)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(z == 0, 0.5, np.where(np.isinf(z), 0.0, np.divide(x, z)))


def logaddexp_share(x, result, base=math.e):
    """d logaddexp(x, y) / dx = exp(x - result) (`base` 2 for logaddexp2); NaN where both
    inputs are -inf (as JAX), without warnings."""
    with np.errstate(invalid="ignore"):
        return np.exp2(x - result) if base == 2 else np.exp(x - result)


def _axes(axis, ndim: int) -> tuple[int, ...]:
    """A reduction's `axis` (None, an int or a tuple, negative allowed) as sorted axes >= 0."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else axis
    return tuple(sorted(int(a) % ndim for a in axes)) if ndim else ()


def _kept(value, ndim: int, axis, keepdims: bool):
    """A reduction's output (or its adjoint) with the reduced axes put back as size 1."""
    value = np.asarray(value)
    if keepdims or axis is None:
        return value.reshape((1,) * ndim) if axis is None and not keepdims else value
    return np.expand_dims(value, _axes(axis, ndim))


def _spread(adjoint, x):
    """`adjoint` broadcast to `x`'s shape, as a fresh array of `x`'s dtype (or `x`'s type)."""
    return unbroadcast(np.broadcast_to(adjoint, np.shape(x)).copy(), x)


def _everywhere(adjoint, x):
    """The adjoint of a reduction over all of `x` (a scalar) spread to `x`, or None when `x` is
    not a plain array or the adjoint is not a scalar."""
    if type(x) is _ndarray and (type(adjoint) is float or (isinstance(adjoint, np.generic) and adjoint.dtype.kind == "f")):
        return np.full(x.shape, adjoint, x.dtype)
    return None


def sum_adjoint(adjoint, x, axis, keepdims: bool):
    """`np.sum(x, axis, keepdims=keepdims)` backward: the adjoint repeated over the reduced axes."""
    if is_zero(adjoint):
        return 0.0
    if axis is None and not keepdims:
        spread = _everywhere(adjoint, x)
        if spread is not None:
            return spread
    if type(x) is DeviceArray:
        return _device.sum_adjoint(adjoint, x, axis, keepdims)
    return _spread(_kept(adjoint, np.ndim(x), axis, keepdims), x)


def softmax_adjoint(adjoint, probabilities, axis):
    """The adjoint of `y` in a softmax written out in numpy, `p = exp(y - max(y)) / sum(...)`
    over `axis` (None: every axis), from `p`'s adjoint (one backward for the group of
    statements: transforms/fusion.py): `p * (p_d - sum(p_d * p))`. The shift has none."""
    if type(adjoint) is float and adjoint == 0.0:
        return 0.0
    if axis is None:
        if type(adjoint) is _ndarray and type(probabilities) is _ndarray and adjoint.shape == probabilities.shape:
            return probabilities * (adjoint - np.vdot(adjoint, probabilities))
        return probabilities * (adjoint - np.sum(adjoint * probabilities))
    return probabilities * (adjoint - np.sum(adjoint * probabilities, axis=axis, keepdims=True))


def logsumexp_adjoint(adjoint, exponentials, total):
    """The adjoint of `z` in `log(sum(exp(z)))` written out in numpy (transforms/fusion.py), from
    the exponentials `e` and their sum `s` the forward kept: `e * (l_d / s)`, which broadcasts
    back along the summed axes (no axis, `keepdims=True` or axis 0: fusion checks)."""
    if type(adjoint) is float and adjoint == 0.0:
        return 0.0
    return exponentials * (adjoint / total)


def picked_log_softmax_adjoint(adjoint, probabilities, index, axis):
    """The adjoint of `y` in `log(p[index])` with `p` a softmax of `y` over `axis` written out
    in numpy (transforms/fusion.py): the adjoint scattered to `index`, less `p` times its sum
    along `axis` (the log-likelihood's `onehot - p`, with no division by `p[index]`)."""
    if type(adjoint) is float and adjoint == 0.0:
        return 0.0
    if axis is None and type(probabilities) is _ndarray and probabilities.ndim == 1 and type(adjoint) is not _ndarray and (type(index) is int or isinstance(index, np.integer)):
        result = probabilities * -adjoint
        result[index] += adjoint
        return result
    scattered = index_adjoint(probabilities, index, adjoint)
    if axis is None:
        return scattered - probabilities * np.sum(scattered)
    return scattered - probabilities * np.sum(scattered, axis=axis, keepdims=True)


def mean_adjoint(adjoint, x, axis, keepdims: bool):
    """`np.mean` backward: the adjoint over the number of elements averaged."""
    if is_zero(adjoint):
        return 0.0
    shape = np.shape(x)
    count = math.prod(shape[a] for a in _axes(axis, len(shape)))
    if type(x) is DeviceArray:
        return _device.sum_adjoint(adjoint, x, axis, keepdims, count)
    return _spread(_kept(adjoint, len(shape), axis, keepdims) / count, x)


def extremum_adjoint(adjoint, x, result, axis, keepdims: bool):
    """`np.max`/`np.min` backward: the adjoint split equally among the elements equal to the
    result (as JAX); NaN throughout a reduction whose result is NaN."""
    if is_zero(adjoint):
        return 0.0
    if axis is None and not keepdims and type(x) is _ndarray and x.size and not isinstance(adjoint, _ndarray):
        chosen = x == result
        count = np.count_nonzero(chosen)
        if count:  # else the result is NaN: the general path below spreads NaN
            return chosen * x.dtype.type(adjoint / count)
    if type(x) is DeviceArray:
        return _device.extremum_adjoint(adjoint, x, result, axis)
    ndim = np.ndim(x)
    chosen = np.asarray(x) == _kept(result, ndim, axis, keepdims)
    count = chosen.sum(axis=_axes(axis, ndim), keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _spread(chosen * (_kept(adjoint, ndim, axis, keepdims) / count), x)


def array_product_adjoint(adjoint, x, axis, keepdims: bool):
    """`np.prod` backward: each element gets the product of the others (zeros allowed, no division)."""
    if is_zero(adjoint):
        return 0.0
    values = np.asarray(x)
    reduced = _axes(axis, values.ndim)
    kept = [a for a in range(values.ndim) if a not in reduced]
    moved = np.transpose(values, [*kept, *reduced])
    rows = moved.reshape(moved.shape[: len(kept)] + (-1,))
    count = rows.shape[-1]
    ones = np.ones(rows.shape[:-1] + (1,), rows.dtype)
    before = np.cumprod(np.concatenate([ones, rows[..., :-1]], axis=-1), axis=-1)[..., :count]
    after = np.cumprod(np.concatenate([ones, rows[..., :0:-1]], axis=-1), axis=-1)[..., count - 1 :: -1]
    others = np.transpose((before * after).reshape(moved.shape), np.argsort([*kept, *reduced]))
    return _spread(others * _kept(adjoint, values.ndim, axis, keepdims), x)


def var_adjoint(adjoint, x, axis, ddof, keepdims: bool):
    """`np.var` backward: 2 (x - mean) / (n - ddof), times the adjoint."""
    if is_zero(adjoint):
        return 0.0
    values = np.asarray(x)
    count = math.prod(values.shape[a] for a in _axes(axis, values.ndim))
    centered = values - values.mean(axis=axis, keepdims=True)
    return _spread(centered * (2.0 / (count - ddof)) * _kept(adjoint, values.ndim, axis, keepdims), x)


def std_adjoint(adjoint, x, result, axis, ddof, keepdims: bool):
    """`np.std` backward: (x - mean) / ((n - ddof) std), times the adjoint (NaN where std is 0,
    except the std of single values, constant 0, whose derivative is 0)."""
    if is_zero(adjoint):
        return 0.0
    values = np.asarray(x)
    count = math.prod(values.shape[a] for a in _axes(axis, values.ndim))
    if count == 1 and ddof == 0:  # the std of one value is 0 whatever it is: its derivative is 0, not 0 / 0
        return _spread(np.zeros_like(values, dtype=np.result_type(values, float)), x)
    centered = values - values.mean(axis=axis, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = _kept(adjoint, values.ndim, axis, keepdims) / ((count - ddof) * _kept(result, values.ndim, axis, keepdims))
        return _spread(centered * scale, x)


def cumsum_adjoint(adjoint, x, axis):
    """`np.cumsum` backward: the adjoint summed from the end (over the flattened `x` for axis None)."""
    if is_zero(adjoint):
        return 0.0
    along = 0 if axis is None else axis
    reversed_sums = np.flip(np.cumsum(np.flip(adjoint, along), along), along)
    return unbroadcast(np.reshape(reversed_sums, np.shape(x)), x)


def norm_adjoint(adjoint, x, result, ord, axis, keepdims: bool):
    """`np.linalg.norm` backward, every order numpy computes. Vectors: the 2-norm x / norm (NaN
    at the zero vector, as JAX), a p-norm sign(x) |x|^(p-1) / norm^(p-1), inf / -inf the sign at
    the largest / smallest |x| (ties share), ord 0 (a count) none. Matrices (two axes, in
    numpy's order): Frobenius as the 2-norm, 'nuc' U V^T, 2 / -2 the outer product of the
    singular vectors of the largest / smallest singular value, 1 / -1 and inf / -inf the sign in
    the column / row of largest or smallest absolute sum (ties share)."""
    if is_zero(adjoint):
        return 0.0
    values = np.asarray(x)
    if axis is None:
        pair = (0, 1) if ord is not None and values.ndim == 2 else None
    elif isinstance(axis, (int, np.integer)):
        pair = None
    else:
        pair = tuple(int(a) % values.ndim for a in axis) if len(axis) == 2 else None
    upstream = _kept(adjoint, values.ndim, axis, keepdims)
    with np.errstate(divide="ignore", invalid="ignore"):
        norm = _kept(result, values.ndim, axis, keepdims)
        if ord is None or ord == "fro" or (ord == 2 and pair is None):
            slope = values / norm
        elif pair is None:
            single = _axes(axis, values.ndim)
            slope = _vector_norm_slope(values, norm, ord, single[0] if single else None)
        else:
            slope = _matrix_norm_slope(values, ord, pair)
        return _spread(slope * upstream, x)


def _shares(hit, axis):
    """Where the extremum is, each of the tied places an equal share."""
    hit = hit.astype(float)
    return hit / np.sum(hit, axis=axis, keepdims=True)


def _vector_norm_slope(values, norm, ord, axis):
    magnitude = np.abs(values)
    if ord == np.inf or ord == -np.inf:
        extreme = np.max(magnitude, axis=axis, keepdims=True) if ord > 0 else np.min(magnitude, axis=axis, keepdims=True)
        return array_sign(values) * _shares(magnitude == extreme, axis)
    if ord == 0:
        return np.zeros_like(values, dtype=np.result_type(values, 1.0))
    p = float(ord)
    return array_sign(values) * magnitude ** (p - 1.0) / norm ** (p - 1.0)


def _matrix_norm_slope(values, ord, pair):
    rows, columns = pair
    matrices = np.moveaxis(values, (rows, columns), (-2, -1))
    if ord == "nuc" or ord == 2 or ord == -2:
        u, _, vt = np.linalg.svd(matrices, full_matrices=False)
        if ord == "nuc":
            slope = u @ vt
        else:
            pick = slice(0, 1) if ord == 2 else slice(-1, None)  # the largest or the smallest
            slope = u[..., :, pick] @ vt[..., pick, :]
    elif ord in (1, -1, np.inf, -np.inf):
        along = -2 if ord in (1, -1) else -1  # 1: sums down each column; inf: along each row
        sums = np.sum(np.abs(matrices), axis=along, keepdims=True)
        across = -1 if along == -2 else -2
        extreme = np.max(sums, axis=across, keepdims=True) if ord > 0 else np.min(sums, axis=across, keepdims=True)
        slope = array_sign(matrices) * _shares(sums == extreme, across)
    else:
        raise ValueError(f"invalid norm order {ord!r} for matrices")
    return np.moveaxis(slope, (-2, -1), (rows, columns))


def reshape_adjoint(adjoint, x, order="C"):
    """The adjoint of `x` from that of a reshaped `x` (reshape, ravel, squeeze, expand_dims)."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(np.reshape(adjoint, np.shape(x), order=order), x)


def transpose_adjoint(adjoint, x, axes):
    """`np.transpose(x, axes)` backward: the inverse permutation (axes None reverses them)."""
    if is_zero(adjoint):
        return 0.0
    inverse = None if axes is None else np.argsort([int(a) % np.ndim(x) for a in axes])
    return unbroadcast(np.transpose(adjoint, inverse), x)


def swapaxes_adjoint(adjoint, x, axis1, axis2):
    """`np.swapaxes` backward: the same swap."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(np.swapaxes(adjoint, axis1, axis2), x)


def moveaxis_adjoint(adjoint, x, source, destination):
    """`np.moveaxis` backward: the axes moved back."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(np.moveaxis(adjoint, destination, source), x)


def trace_adjoint(adjoint, x, offset, axis1, axis2):
    """`np.trace` backward: the adjoint on the summed diagonal, zero elsewhere."""
    if is_zero(adjoint):
        return 0.0
    shape = np.shape(x)
    diagonal = np.eye(shape[axis1], shape[axis2], k=offset)
    spread = np.asarray(adjoint)[..., None, None] * diagonal
    return unbroadcast(np.moveaxis(spread, (-2, -1), (axis1 % len(shape), axis2 % len(shape))), x)


def dot_left(adjoint, x, y):
    """The adjoint of `x` in `np.dot(x, y)`: x's last axis meets y's second to last (its only
    axis when 1-d); a scalar factor is an elementwise product."""
    if is_zero(adjoint):
        return 0.0
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(np.multiply(adjoint, y), x)
    if type(x) is DeviceArray or type(y) is DeviceArray:  # at most 2-D: the matmul's
        return matmul_left(adjoint, x, y)
    contracted = max(np.ndim(y) - 2, 0)
    y_free = [a for a in range(np.ndim(y)) if a != contracted]
    return unbroadcast(np.tensordot(adjoint, y, axes=(list(range(np.ndim(x) - 1, np.ndim(adjoint))), y_free)), x)


def dot_right(adjoint, x, y):
    """The adjoint of `y` in `np.dot(x, y)`."""
    if is_zero(adjoint):
        return 0.0
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(np.multiply(adjoint, x), y)
    if type(x) is DeviceArray or type(y) is DeviceArray:  # at most 2-D: the matmul's
        return matmul_right(adjoint, x, y)
    x_free = list(range(np.ndim(x) - 1))
    summed = np.tensordot(x, adjoint, axes=(x_free, x_free))
    return unbroadcast(np.moveaxis(summed, 0, max(np.ndim(y) - 2, 0)), y)


def inner_left(adjoint, x, y):
    """The adjoint of `x` in `np.inner(x, y)`: the last axes of x and y meet."""
    if is_zero(adjoint):
        return 0.0
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(np.multiply(adjoint, y), x)
    y_free = list(range(np.ndim(y) - 1))
    return unbroadcast(np.tensordot(adjoint, y, axes=(list(range(np.ndim(x) - 1, np.ndim(adjoint))), y_free)), x)


def inner_right(adjoint, x, y):
    """The adjoint of `y` in `np.inner(x, y)`."""
    if is_zero(adjoint):
        return 0.0
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(np.multiply(adjoint, x), y)
    x_free = list(range(np.ndim(x) - 1))
    return unbroadcast(np.tensordot(adjoint, x, axes=(x_free, x_free)), y)


def outer_left(adjoint, x, y):
    """The adjoint of `x` in `np.outer(x, y)` (both flattened)."""
    if is_zero(adjoint):
        return 0.0
    if type(x) is DeviceArray or type(y) is DeviceArray:
        return _device.outer_left(adjoint, x, y)
    return unbroadcast(np.reshape(np.asarray(adjoint) @ np.ravel(y), np.shape(x)), x)


def outer_right(adjoint, x, y):
    """The adjoint of `y` in `np.outer(x, y)`."""
    if is_zero(adjoint):
        return 0.0
    if type(x) is DeviceArray or type(y) is DeviceArray:
        return _device.outer_right(adjoint, x, y)
    return unbroadcast(np.reshape(np.ravel(x) @ np.asarray(adjoint), np.shape(y)), y)


def array_adjoint(adjoint, x, result):
    """The adjoint of `x` from that of `result`, an array made from it (`np.array`, `np.asarray`,
    `astype`, copies and casts): cast back to `x`'s dtype; for a nested tuple or list of floats and
    arrays, a `SequenceAdjoint` of their adjoints; zero when `result` is not a float array."""
    if is_zero(adjoint) or (result.dtype if type(result) is DeviceArray else np.asarray(result).dtype).kind not in "fc":
        return 0.0
    return unbroadcast(adjoint, x)


def _as_sequence_adjoint(adjoint, like):
    """An array adjoint of a nested tuple or list `like`, as nested `SequenceAdjoint`s."""
    from cpsgrad.runtime import SequenceAdjoint

    parts = _reduce_to(adjoint, np.shape(like), np.asarray(adjoint).dtype)
    return SequenceAdjoint(unbroadcast(part, element) for part, element in zip(parts, like, strict=True))


def _parts(adjoint, sizes: list[int], axis: int) -> list:
    """`adjoint` cut along `axis` into consecutive pieces of `sizes`."""
    if type(adjoint) is DeviceArray:
        return _device.pieces(adjoint, sizes, axis)
    return np.split(adjoint, np.cumsum(sizes)[:-1], axis=axis)


def concatenate_adjoint(adjoint, arrays, axis):
    """`np.concatenate(arrays, axis)` backward: each array's piece (axis None: of the flat result)."""
    if is_zero(adjoint):
        return 0.0
    from cpsgrad.runtime import SequenceAdjoint

    if axis is None:
        pieces = _parts(adjoint, [np.size(a) for a in arrays], 0)
    else:
        pieces = _parts(adjoint, [np.shape(a)[axis] for a in arrays], axis)
    return SequenceAdjoint(unbroadcast(np.reshape(p, np.shape(a)), a) for p, a in zip(pieces, arrays, strict=True))


def index_concatenate(indexer, parts: tuple):
    """`np.r_[a, b, ...]` or `np.c_[a, b, ...]` (`indexer[parts]`), as numpy computes it; a
    subscript whose elements are differentiable becomes this call (transforms/subscripts.py)."""
    return indexer[parts]


def index_concatenate_adjoint(adjoint, indexer, parts: tuple):
    """`index_concatenate` backward: each part's piece. `np.r_` joins the parts (at least 1-d)
    along their first axis; `np.c_` makes them at least 2-d, a 1-d part a column, and joins
    along the last axis."""
    if is_zero(adjoint):
        return 0.0
    from cpsgrad.runtime import SequenceAdjoint

    if indexer is np.c_:
        axis = -1
        sizes = [1 if type(part) is slice or np.ndim(part) < 2 else np.shape(part)[-1] for part in parts]
    else:
        axis = 0
        sizes = [len(np.r_[part]) if type(part) is slice else 1 if np.ndim(part) == 0 else np.shape(part)[0] for part in parts]
    pieces = _parts(adjoint, sizes, axis)
    return SequenceAdjoint(
        0.0 if type(part) is slice else unbroadcast(np.reshape(piece, np.shape(part)), part)  # a range: constants
        for piece, part in zip(pieces, parts, strict=True)
    )


_INDEXABLE = (np.ndarray, list, tuple, dict, str, range)


def indexed(value, index):
    """`value[index]` of a builtin container or an array: piecewise constant in the index."""
    return value[index]


def subscript_of(value):
    """What `value[...]` calls when its index is differentiable (transforms/subscripts.py): a
    user class's own `__getitem__`, bound (differentiated like any method); for the builtin
    containers and arrays, `indexed` (no derivative in the index); otherwise the bound builtin
    method, which the call refuses, naming it, unless a rule was declared for it."""
    method = getattr(type(value), "__getitem__", None)
    if type(method) is types.FunctionType:
        return value.__getitem__
    if isinstance(value, _INDEXABLE):
        return functools.partial(indexed, value)
    return getattr(value, "__getitem__", value)


def stack_adjoint(adjoint, arrays, axis):
    """`np.stack(arrays, axis)` backward: each array's slice along the new axis."""
    if is_zero(adjoint):
        return 0.0
    from cpsgrad.runtime import SequenceAdjoint

    slices = np.moveaxis(adjoint, axis, 0)
    return SequenceAdjoint(unbroadcast(s, a) for s, a in zip(slices, arrays, strict=True))


def hstack_adjoint(adjoint, arrays):
    """`np.hstack` backward: pieces along axis 0 for 1-d inputs, axis 1 otherwise."""
    if is_zero(adjoint):
        return 0.0
    from cpsgrad.runtime import SequenceAdjoint

    shapes = [np.shape(np.atleast_1d(a)) for a in arrays]
    axis = 0 if len(shapes[0]) == 1 else 1
    pieces = _parts(adjoint, [s[axis] for s in shapes], axis)
    return SequenceAdjoint(unbroadcast(np.reshape(p, np.shape(a)), a) for p, a in zip(pieces, arrays, strict=True))


def vstack_adjoint(adjoint, arrays):
    """`np.vstack` backward: pieces along axis 0 of the inputs made at least 2-d."""
    if is_zero(adjoint):
        return 0.0
    from cpsgrad.runtime import SequenceAdjoint

    pieces = _parts(adjoint, [np.shape(np.atleast_2d(a))[0] for a in arrays], 0)
    return SequenceAdjoint(unbroadcast(np.reshape(p, np.shape(a)), a) for p, a in zip(pieces, arrays, strict=True))


def split_adjoint(adjoint, pieces, x, axis):
    """`np.split(x, ..., axis)` backward: the pieces' adjoints (zeros where symbolic) joined again."""
    if is_zero(adjoint):
        return 0.0
    from cpsgrad.runtime import item

    parts = [np.zeros(np.shape(p), np.asarray(p).dtype) if is_zero(item(adjoint, i)) else item(adjoint, i) for i, p in enumerate(pieces)]
    return unbroadcast(np.concatenate(parts, axis=axis), x)


def linspace_adjoint(adjoint, start, stop, num, endpoint, axis, part: str):
    """`np.linspace` backward for `part` ("start" or "stop"): the adjoint weighted by each
    sample's distance from the other end."""
    if is_zero(adjoint):
        return 0.0
    fraction = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    weight = 1.0 - fraction if part == "start" else fraction
    weighted = np.sum(np.moveaxis(adjoint, axis, -1) * weight, axis=-1)
    return unbroadcast(weighted, start if part == "start" else stop)


def item_adjoint(adjoint, x, index):
    """`x.item(index)` backward: the adjoint at the element read (`index` None for a one-element
    array, a flat index, or a tuple with one index per axis)."""
    if is_zero(adjoint):
        return 0.0
    if type(x) is DeviceArray:
        position = 0 if index is None else index
        return _device.index_adjoint(x, position if isinstance(position, tuple) else np.unravel_index(position, x.shape), adjoint)
    result = np.zeros(np.shape(x), np.asarray(x).dtype)
    if isinstance(index, tuple):
        result[index] = adjoint
    else:
        result.flat[0 if index is None else index] = adjoint
    return result
