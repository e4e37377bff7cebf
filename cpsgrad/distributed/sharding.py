"""Splitting a data set, or one step's global batch, over the ranks: contiguous shards whose
sizes differ by at most one (the first `total % size` ranks take one more), so that rank 0's
shard, then rank 1's, ..., is the whole in its order.

>>> shard_range(10, rank=1, size=4)
range(3, 6)
>>> [len(shard_range(10, r, 4)) for r in range(4)]
[3, 3, 2, 2]
"""

from __future__ import annotations

import numpy as np

from cpsgrad.distributed.comm import world


def shard_range(total: int, rank: int | None = None, size: int | None = None) -> range:
    """The indices of `total` items that are rank `rank`'s of `size` (default: this process's
    rank and the job's size); empty when `total < size` leaves none for it."""
    if rank is None or size is None:
        comm = world()
        rank = comm.rank if rank is None else rank
        size = comm.size if size is None else size
    if not (isinstance(total, (int, np.integer)) and total >= 0):
        raise ValueError(f"total must be a nonnegative number of items, not {total!r}")
    if not 0 <= rank < size:
        raise ValueError(f"rank {rank} is not one of the {size} ranks 0..{size - 1}")
    base, more = divmod(int(total), size)
    start = rank * base + min(rank, more)
    return range(start, start + base + (1 if rank < more else 0))


def shard(data, axis: int = 0, rank: int | None = None, size: int | None = None):
    """This rank's part of `data` along `axis`: a numpy array's slice (a view), or a sequence's
    slice (a list stays a list)."""
    if isinstance(data, np.ndarray):
        part = shard_range(data.shape[axis], rank, size)
        index = [slice(None)] * data.ndim
        index[axis] = slice(part.start, part.stop)
        return data[tuple(index)]
    if axis != 0:
        raise ValueError(f"axis={axis}: a {type(data).__name__} is split along its only axis, 0")
    part = shard_range(len(data), rank, size)
    return data[part.start:part.stop]
