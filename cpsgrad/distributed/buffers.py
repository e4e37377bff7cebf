"""Packing a tree of arrays into contiguous buffers: one buffer per dtype per bucket, so a
reduction sends one message per dtype per bucket, never one per leaf.

Buckets are made from the leaves in reverse order (the order in which a backward pass finishes
them: the last parameters used are the first whose adjoints are final), each holding leaves
until the next would take it past `bucket_bytes`; `bucket_bytes=None` makes one bucket of every
leaf. A plan is made once per structure (shapes, dtypes, bucket size) and its buffers reused.

>>> import numpy as np
>>> plan = Plan.of([np.zeros(3), np.zeros(2, np.float32), np.zeros(4)], bucket_bytes=None)
>>> [(str(b.dtype), b.array.size) for b in plan.buckets[0].buffers]
[('float64', 7), ('float32', 2)]
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cpsgrad.pytree import leaves_with_paths, path_string

# The dtypes MPI's predefined datatypes reduce with MPI_SUM (mpi4py maps numpy's to them).
REDUCIBLE = tuple(np.dtype(name) for name in ("float64", "float32", "complex128", "complex64"))


def array_leaves(tree, name: str) -> list[np.ndarray]:
    """`tree`'s leaves, each a writeable numpy array of a reducible dtype, or a TypeError naming
    the first that is not (the reduction and the broadcast write their results into them)."""
    found = []
    for path, leaf in leaves_with_paths(tree):
        where = f"{name}{path_string(path)}"
        if not isinstance(leaf, np.ndarray):
            hint = (": hold it as a 0-d array, np.array(value), and read it with float(...)"
                    if isinstance(leaf, (int, float, complex, np.number)) else "")
            raise TypeError(f"{where} is a {type(leaf).__name__}, not a numpy array: cpsgrad.distributed "
                            f"writes its results into the arrays in place{hint}")
        if leaf.dtype not in REDUCIBLE:
            raise TypeError(f"{where} has dtype {leaf.dtype}: cpsgrad.distributed reduces and broadcasts "
                            "float32, float64, complex64 and complex128 arrays")
        if not leaf.flags.writeable:
            raise TypeError(f"{where} is a read-only array: the result cannot be written into it")
        found.append(leaf)
    return found


@dataclass
class Buffer:
    """One dtype's contiguous buffer in a bucket: (leaf index, offset, size) per leaf, then
    `extra` trailing slots for scalars carried in the same message."""

    dtype: np.dtype
    segments: list[tuple[int, int, int]] = field(default_factory=list)
    extra: int = 0
    array: np.ndarray | None = None

    @property
    def used(self) -> int:
        return self.segments[-1][1] + self.segments[-1][2] if self.segments else 0

    def allocate(self) -> None:
        self.array = np.empty(self.used + self.extra, self.dtype)


@dataclass
class Bucket:
    number: int
    leaves: list[int] = field(default_factory=list)  # leaf indices, in the order they were added
    buffers: list[Buffer] = field(default_factory=list)  # one per dtype, in first appearance
    nbytes: int = 0

    def buffer(self, dtype: np.dtype) -> Buffer:
        for found in self.buffers:
            if found.dtype == dtype:
                return found
        made = Buffer(dtype)
        self.buffers.append(made)
        return made


@dataclass
class Plan:
    buckets: list[Bucket]
    extra: int

    @classmethod
    def of(cls, arrays: list[np.ndarray], bucket_bytes: int | None, extra: int = 0) -> Plan:
        """The buckets of `arrays` (reverse order); `extra` scalar slots at the end of the first
        bucket's first buffer (a float64 buffer of its own when there are no arrays)."""
        if bucket_bytes is not None and not bucket_bytes > 0:
            raise ValueError(f"bucket_bytes must be a positive number of bytes or None, not {bucket_bytes!r}")
        buckets = [Bucket(0)]
        for index in reversed(range(len(arrays))):
            array = arrays[index]
            current = buckets[-1]
            if bucket_bytes is not None and current.leaves and current.nbytes + array.nbytes > bucket_bytes:
                current = Bucket(len(buckets))
                buckets.append(current)
            buffer = current.buffer(array.dtype)
            buffer.segments.append((index, buffer.used, array.size))
            current.leaves.append(index)
            current.nbytes += array.nbytes
        if extra:  # in the float64 buffer when the first bucket has one
            first = buckets[0]
            first.buffer(np.dtype(np.float64) if first.leaves == [] else _widest(first)).extra = extra
        for bucket in buckets:
            for buffer in bucket.buffers:
                buffer.allocate()
        return cls([bucket for bucket in buckets if bucket.buffers], extra)

    @property
    def messages(self) -> int:
        return sum(len(bucket.buffers) for bucket in self.buckets)

    @property
    def nbytes(self) -> int:
        return sum(buffer.array.nbytes for bucket in self.buckets for buffer in bucket.buffers)


def pack(bucket: Bucket, arrays: list[np.ndarray], scale: float | None = None) -> None:
    """Copy the bucket's leaves into its buffers, each multiplied by `scale` when given."""
    for buffer in bucket.buffers:
        for index, offset, size in buffer.segments:
            target = buffer.array[offset:offset + size]
            source = arrays[index].reshape(-1)
            if scale is None:
                np.copyto(target, source)
            else:
                np.multiply(source, scale, out=target)


def unpack(bucket: Bucket, arrays: list[np.ndarray], divisor: float | None = None) -> None:
    """Write the buffers back into the bucket's leaves, each divided by `divisor` when given."""
    for buffer in bucket.buffers:
        for index, offset, size in buffer.segments:
            array = arrays[index]
            source = buffer.array[offset:offset + size].reshape(array.shape)
            if divisor is None:
                np.copyto(array, source)
            else:
                np.divide(source, divisor, out=array)


def _widest(bucket: Bucket) -> np.dtype:
    dtypes = [buffer.dtype for buffer in bucket.buffers]
    return np.dtype(np.float64) if np.dtype(np.float64) in dtypes else dtypes[0]


def extras(plan: Plan) -> np.ndarray:
    """The scalar slots carried in the first bucket (a view of its buffer)."""
    for buffer in plan.buckets[0].buffers:
        if buffer.extra:
            return buffer.array[buffer.used:]
    return np.empty(0)


class Plans:
    """Plans cached by structure, so a training loop packs into the same buffers every step."""

    def __init__(self) -> None:
        self._plans: dict[tuple, Plan] = {}

    def get(self, arrays: list[np.ndarray], bucket_bytes: int | None, extra: int = 0) -> Plan:
        key = (tuple((a.shape, a.dtype.str) for a in arrays), bucket_bytes, extra)
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) > 32:
                self._plans.clear()
            plan = self._plans[key] = Plan.of(arrays, bucket_bytes, extra)
        return plan
