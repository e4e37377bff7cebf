"""numpy's other calls that write into an array, as writes of a known key (runtime/writes.py).

Normalize turns `np.add.at(x, idx, v)` into `x = cpsgrad_runtime.written(x, cpsgrad_runtime.
ufunc_at(np.add, idx), v)`, and `np.put`, `np.putmask`, `np.place`, `np.fill_diagonal` the same
way with their own keys (transforms/ufunc_writes.py). A key here is a `KeyedWrite`: `written`,
`overwritten`, `restore`, `written_adjoint` and `overwritten_adjoint` hand it the work, so the
write has the `Write` record's backward like `x[key] = v` (what it overwrites saved, restored
when the continuation returns, the written value's adjoint read from the target's).

The forward pass calls numpy's own function with the user's arguments: the values written are
exactly the original's. The keys know which elements the call touches:

- `ufunc_at(ufunc, indices)`: `ufunc.at(x, indices, v)` for add, subtract and multiply; the
  elements `x[indices]` (a repeated index is applied as often as it occurs). add and subtract
  are linear: x's adjoint passes through, v's is the gathered x adjoint (repeats summed by the
  gather, unbroadcast to v's shape), negated for subtract. multiply scales both.
- `put_key(ind, mode)`, `putmask_key(mask)`, `place_key(mask)`, `diagonal_key(wrap)`: a write of
  `x.flat[positions] = ravelled_v[sources]`, where `sources` says which element of v lands at
  each position (v repeated cyclically as numpy repeats it); where `put` repeats a position the
  value written last is kept and alone gets the adjoint.
"""

from __future__ import annotations

import sys

import numpy as np

from cpsgrad.errors import UnsupportedError
from cpsgrad.runtime.broadcasting import shaped_like

_ndarray = np.ndarray
_getrefcount = sys.getrefcount


class KeyedWrite:
    """A write `runtime/writes.py` hands over: the key knows what the call writes and touches."""

    __slots__ = ()
    label = ""

    def write(self, target, value) -> None:
        _require_array(target, self.label)
        for what, operand in self._operands(value):
            if type(operand) is _ndarray and np.may_share_memory(operand, target):
                # numpy reads such an operand as it writes (np.place does): the values would not be
                # the ones the derivative assumes, read before the call
                raise UnsupportedError(
                    None,
                    f"{self.label} whose {what} shares memory with the array it writes into",
                    f"pass a copy: {self.label.split('(')[0]}(x, ..., {what}.copy())",
                )
        self._call(target, value)

    def _operands(self, value):
        return (("value", value),)

    def _call(self, target, value) -> None:
        raise NotImplementedError

    def save(self, target):
        raise NotImplementedError

    def restore(self, target, saved) -> None:
        raise NotImplementedError

    def value_adjoint(self, adjoint, target, value):
        raise NotImplementedError

    def target_adjoint(self, adjoint, target):
        raise NotImplementedError


def _require_array(target, label: str) -> None:
    if type(target) is not _ndarray:
        kind = type(target).__name__
        convert = "x = cpsgrad.to_host(x)" if kind == "DeviceArray" else "x = np.array(x)"  # never written in place
        raise UnsupportedError(
            None,
            f"{label} into a {kind}",
            "cpsgrad differentiates it into a numpy array (np.ndarray itself, not a subclass); "
            f"convert first: {convert}",
        )


def _exclusive_copy(adjoint, target, references: int):
    """`adjoint` to change in place: itself when nothing else holds it (`references`, counted in
    `target_adjoint`: the generated code's variable, `overwritten_adjoint`'s parameter, the
    method's and getrefcount's argument), else a copy of the target's dtype."""
    if not (
        references == 4
        and adjoint.base is None
        and adjoint.flags.writeable
        and adjoint.dtype is target.dtype
        and adjoint.shape == target.shape
    ):
        adjoint = np.array(adjoint, dtype=target.dtype)
    return adjoint


# -- ufunc.at ------------------------------------------------------------------------------------


class UfuncAt(KeyedWrite):
    __slots__ = ("ufunc", "indices", "index", "factors")

    def __init__(self, ufunc, indices, factors=None):
        self.ufunc = ufunc
        self.indices = indices
        self.factors = factors  # multiply's v: the target's adjoint is scaled by it
        self.index = indices if type(indices) is tuple else (indices,)  # how ufunc.at reads them

    @property
    def label(self) -> str:
        return f"np.{self.ufunc.__name__}.at"

    def _operands(self, value):
        return (("value", value), ("indices", self.indices))

    def _call(self, target, value) -> None:
        self.ufunc.at(target, self.indices, value)

    def save(self, target):
        _require_array(target, self.label)
        return np.array(target[self.index])  # the touched elements (a repeat saved twice, restored alike)

    def restore(self, target, saved) -> None:
        target[self.index] = saved

    def value_adjoint(self, adjoint, target, value):
        if target.dtype.kind not in "fc" or type(adjoint) is not _ndarray:
            return 0.0
        gathered = np.array(adjoint[self.index])  # a copy: the target's adjoint lives on
        if self.ufunc is np.subtract:
            gathered = np.negative(gathered)
        elif self.ufunc is np.multiply:  # after the restore: target holds the values before the call
            gathered = gathered * target[self.index] * self._others(target, value, gathered.shape)
        return shaped_like(gathered, value)

    def target_adjoint(self, adjoint, target):
        if self.ufunc is not np.multiply or type(adjoint) is not _ndarray:
            return adjoint  # x + v at the touched elements: the adjoint passes through
        scale = np.ones(target.shape, dtype=np.result_type(target.dtype, adjoint.dtype))
        np.multiply.at(scale, self.indices, self.factors)  # each element's product of the factors applied to it
        return adjoint * scale

    def _others(self, target, value, shape):
        """For each factor applied (value broadcast to `shape`), the product of the other factors
        applied to the same element: exact where factors are 0 (counted, never divided by)."""
        positions = np.arange(target.size, dtype=np.intp).reshape(target.shape)[self.index]
        factors = np.broadcast_to(np.asarray(value), shape)
        zero = factors == 0
        zeros = np.zeros(target.size, dtype=np.intp)
        np.add.at(zeros, positions, zero.astype(np.intp))
        product = np.ones(target.size, dtype=np.result_type(factors.dtype, np.float64))
        np.multiply.at(product, positions, np.where(zero, 1, factors))
        around, counted = product[positions], zeros[positions]
        safe = np.where(zero, 1, factors)
        return np.where(zero, np.where(counted == 1, around, 0), np.where(counted == 0, around / safe, 0))


def ufunc_at(ufunc, indices, factors=None) -> UfuncAt:
    """The key of `ufunc.at(x, indices, v)`; `factors` is v for multiply (its backward needs it)."""
    return UfuncAt(ufunc, indices, factors)


# -- writes into x.flat: put, putmask, place, fill_diagonal --------------------------------------


class FlatWrite(KeyedWrite):
    """`x.flat[positions] = ravel(v)[sources]`: `_resolve` finds the positions from the target's
    shape, `_sources` which element of v lands at each; numpy's own call (`_call`) writes."""

    __slots__ = ("positions", "kept")

    def __init__(self):
        self.positions = None

    def _place(self, target):
        if self.positions is None:
            self.positions = np.asarray(self._resolve(target), dtype=np.intp)
            self.kept = _last_occurrences(self.positions)
        return self.positions

    def _sources(self, size: int):
        return np.arange(len(self.positions), dtype=np.intp) % size  # v repeated cyclically, in order

    def save(self, target):
        _require_array(target, self.label)
        return target.flat[self._place(target)]  # a copy

    def restore(self, target, saved) -> None:
        target.flat[self._place(target)] = saved

    def value_adjoint(self, adjoint, target, value):
        size = np.size(value)
        if target.dtype.kind not in "fc" or type(adjoint) is not _ndarray or size == 0:
            return 0.0
        positions = self._place(target)
        if len(positions) == 1:  # one position: its adjoint is the first element's
            flat = np.zeros(size, dtype=adjoint.dtype)
            flat[int(self._sources(size)[0])] = adjoint.flat[positions[0]]
            return shaped_like(flat.reshape(np.shape(value)), value)
        sources, parts = self._sources(size), adjoint.flat[positions]
        if self.kept is not None:  # a position written twice keeps the last value: only it gets the adjoint
            sources, parts = sources[self.kept], parts[self.kept]
        flat = np.zeros(size, dtype=adjoint.dtype)
        np.add.at(flat, sources, parts)
        return shaped_like(flat.reshape(np.shape(value)), value)

    def target_adjoint(self, adjoint, target):
        if type(adjoint) is not _ndarray:
            return adjoint
        references = _getrefcount(adjoint)
        adjoint = _exclusive_copy(adjoint, target, references)
        adjoint.flat[self._place(target)] = 0
        return adjoint


def _last_occurrences(positions: np.ndarray):
    """Which entries of `positions` are the last write to their element (None: all of them)."""
    if len(positions) < 2:
        return None
    _, first_reversed = np.unique(positions[::-1], return_index=True)
    if len(first_reversed) == len(positions):
        return None
    return np.sort(len(positions) - 1 - first_reversed)


class Put(FlatWrite):
    __slots__ = ("ind", "mode")
    label = "np.put"

    def _operands(self, value):
        return (("value", value), ("indices", self.ind))

    def __init__(self, ind, mode):
        super().__init__()
        self.ind, self.mode = ind, mode

    def _call(self, target, value):
        np.put(target, self.ind, value, mode=self.mode)

    def _resolve(self, target):
        size, mode = target.size, _clip_mode(self.mode)
        if type(self.ind) is int and size:  # one position (a loop's np.put(y, i, v)): no array work
            return (_flat_position(self.ind, size, mode),)
        ind = np.asarray(self.ind).ravel()
        if mode == "wrap":
            return np.mod(ind, size) if size else ind
        if mode == "clip":
            return np.clip(ind, 0, max(size - 1, 0))
        ind = ind.astype(np.intp, casting="safe")
        bad = (ind >= size) | (ind < -size)
        if bad.any():  # numpy's own error, before anything is written
            raise IndexError(f"index {ind[bad][0]} is out of bounds for axis 0 with size {size}")
        return np.where(ind < 0, ind + size, ind)


_MODES = {"raise": "raise", "wrap": "wrap", "clip": "clip", None: "raise", 0: "clip", 1: "wrap", 2: "raise"}


def _clip_mode(mode) -> str:
    """numpy's reading of `mode=` (its enum's ints and None too), or numpy's own error."""
    try:
        return _MODES[mode]
    except (KeyError, TypeError):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})") from None


def _flat_position(index: int, size: int, mode) -> int:
    if mode == "wrap":
        return index % size
    if mode == "clip":
        return min(max(index, 0), size - 1)
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for axis 0 with size {size}")
    return index + size if index < 0 else index


class _Masked(FlatWrite):
    """The elements where `mask` holds (np.putmask, np.place: the mask has the target's size)."""

    __slots__ = ("mask",)

    def __init__(self, mask):
        super().__init__()
        self.mask = mask

    def _operands(self, value):
        return (("value", value), ("mask", self.mask))

    def _resolve(self, target):
        mask = np.asarray(self.mask)
        if mask.size != target.size:  # numpy's own error, before anything is saved or written
            raise ValueError(f"{self.label[3:]}: mask and data must be the same size")
        return np.flatnonzero(mask)


class Putmask(_Masked):
    __slots__ = ()
    label = "np.putmask"

    def _call(self, target, value):
        np.putmask(target, self.mask, value)

    def _sources(self, size: int):
        return self.positions % size  # putmask repeats v by position: x.flat[n] = v[n % len(v)]


class Place(_Masked):
    __slots__ = ()
    label = "np.place"  # v taken in order, repeated

    def _call(self, target, value):
        np.place(target, self.mask, value)


class Diagonal(FlatWrite):
    __slots__ = ("wrap",)
    label = "np.fill_diagonal"

    def __init__(self, wrap):
        super().__init__()
        self.wrap = wrap

    def _call(self, target, value):
        np.fill_diagonal(target, value, wrap=self.wrap)

    def _resolve(self, target):
        shape = target.shape
        if target.ndim < 2:
            raise ValueError("array must be at least 2-d")
        stop = target.size
        if target.ndim == 2:
            step = shape[1] + 1
            if not self.wrap:
                stop = min(stop, shape[1] * shape[1])
        else:
            if any(n != shape[0] for n in shape):
                raise ValueError("All dimensions of input must be of equal length")
            step = 1 + int(np.cumprod(shape[:-1]).sum())
        return np.arange(0, stop, step, dtype=np.intp)


def put_key(ind, mode="raise") -> Put:
    return Put(ind, mode)


def putmask_key(mask) -> Putmask:
    return Putmask(mask)


def place_key(mask) -> Place:
    return Place(mask)


def diagonal_key(wrap=False) -> Diagonal:
    return Diagonal(wrap)
