"""The collective calls over trees of arrays: `broadcast` from one rank and `all_reduce_mean`,
both in place, packed (one message per dtype per bucket), non-blocking and waited on with a
deadline.

Every rank computes the same result bit for bit: each rank packs, the MPI library sums the
packed buffers (Open MPI's allreduce algorithms combine the same operands in the same order
for every rank of a job, since floating-point `a + b == b + a`; tests/test_distributed.py checks
the parameters are bitwise equal on all ranks), and every rank divides the same sum by the same
number.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cpsgrad.distributed import buffers
from cpsgrad.distributed.comm import default_timeout, wait, world


@dataclass
class Traffic:
    """What this process handed to MPI: collective calls started and their payload in bytes."""

    messages: int = 0
    nbytes: int = 0

    def reset(self) -> None:
        self.messages = self.nbytes = 0


traffic = Traffic()
_plans = buffers.Plans()


def broadcast(tree, root: int = 0, *, comm=None, timeout: float | None = None):
    """Overwrite every leaf of `tree` (a tree of arrays, as `cpsgrad.optim` takes) on every rank
    with rank `root`'s, in place; returns `tree`. One message per dtype."""
    comm = comm or world()
    arrays = buffers.array_leaves(tree, "params")
    plan = _plans.get(arrays, None)
    requests = []
    for bucket in plan.buckets:
        if comm.rank == root:
            buffers.pack(bucket, arrays)
        for buffer in bucket.buffers:
            requests.append(comm.start_bcast(buffer.array, root))
            traffic.messages += 1
            traffic.nbytes += buffer.array.nbytes
    wait(comm, requests, f"broadcast from rank {root} ({_describe(plan)})", timeout)
    if comm.rank != root:
        for bucket in plan.buckets:
            buffers.unpack(bucket, arrays)
    return tree


def all_reduce_mean(grads, *, count: float | None = None, comm=None, bucket_bytes: int | None = None,
                    on_ready: Callable[[list[int]], None] | None = None, timeout: float | None = None):
    """Replace every leaf of `grads` by its mean over the ranks, in place; returns `grads`.

    `count`: the number of samples this rank's `grads` are the mean over. Given, the result is
    the mean over every rank's samples (each rank weighted by its count: uneven shards, a rank
    with none), the counts summed in the same message; otherwise every rank weighs the same.
    `bucket_bytes`: split the leaves, in reverse order, into buckets of about that many bytes,
    each reduced by its own non-blocking call, all started before any is waited on; `on_ready`
    is called with the leaf indices (in `cpsgrad.pytree.leaves` order) of each bucket as soon
    as its reduction has completed, while the later buckets are still in flight (the trainer
    updates those parameters there). `timeout`: seconds before a rank that waits ends the job.
    """
    reduce_arrays(buffers.array_leaves(grads, "grads"), count=count, comm=comm, bucket_bytes=bucket_bytes,
                  on_ready=on_ready, timeout=timeout)
    return grads


def reduce_arrays(arrays: list[np.ndarray], *, count: float | None = None, scalars: tuple = (), comm=None,
                  bucket_bytes: int | None = None, on_ready=None, timeout: float | None = None,
                  what: str = "all_reduce_mean") -> tuple[float, list[float]]:
    """`all_reduce_mean` over a list of arrays, carrying `scalars` (means over this rank's
    samples, as the arrays are: the loss) in the first bucket's message; returns the total count
    (the number of ranks when `count` is None) and the scalars' means."""
    comm = comm or world()
    if count is not None and not count >= 0:
        raise ValueError(f"count must be a nonnegative number of samples, not {count!r}")
    weighted = count is not None
    if comm.size == 1:  # the mean over one rank: the arrays as they are, bit for bit
        if on_ready is not None:
            on_ready(list(reversed(range(len(arrays)))))
        return (float(count) if weighted else 1.0), [float(s) for s in scalars]
    extra = len(scalars) + (1 if weighted else 0)
    plan = _plans.get(arrays, bucket_bytes, extra)
    limit = default_timeout() if timeout is None else timeout
    start = time.monotonic()
    scale = float(count) if weighted else None
    requests = []
    for bucket in plan.buckets:
        buffers.pack(bucket, arrays, scale)
        if bucket.number == 0 and extra:
            slots = buffers.extras(plan)
            values = [float(s) * count for s in scalars] if weighted else [float(s) for s in scalars]
            slots[:] = [*values, count] if weighted else values
        requests.append([comm.start_allreduce(buffer.array) for buffer in bucket.buffers])
        traffic.messages += len(bucket.buffers)
        traffic.nbytes += sum(buffer.array.nbytes for buffer in bucket.buffers)
    total = float(comm.size)
    means: list[float] = []
    for bucket, pending in zip(plan.buckets, requests, strict=True):
        wait(comm, pending, f"{what} (bucket {bucket.number + 1} of {len(plan.buckets)}: "
             f"{_describe_bucket(bucket)})", limit, since=start)
        if bucket.number == 0:
            slots = buffers.extras(plan)
            if weighted:
                total = float(slots[-1].real)
            means = [float(value.real) / total if total else 0.0 for value in slots[:len(scalars)]]
        buffers.unpack(bucket, arrays, total if total else 1.0)
        if on_ready is not None:
            on_ready(bucket.leaves)
    return total, means


def _describe_bucket(bucket: buffers.Bucket) -> str:
    return ", ".join(f"{buffer.array.size} {buffer.dtype}" for buffer in bucket.buffers)


def _describe(plan: buffers.Plan) -> str:
    return "; ".join(_describe_bucket(bucket) for bucket in plan.buckets)
