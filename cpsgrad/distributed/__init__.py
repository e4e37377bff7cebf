"""Data-parallel training over MPI (mpi4py over Open MPI, MPICH, ...): the rank and size, a
broadcast of the parameters, a packed all-reduce of the gradients, sharding, and a trainer.

    import cpsgrad.distributed as dist
    dist.rank(), dist.size()                 # 0, 1 in a plain process; under mpirun -n N, 0..N-1, N
    dist.broadcast(params)                   # rank 0's parameters on every rank, in place
    dist.all_reduce_mean(grads)              # the mean over the ranks, in place
    dist.all_reduce_mean(grads, count=n)     # weighted by each rank's number of samples
    part = dist.shard_range(len(data))       # this rank's contiguous part of the data
    trainer = dist.DataParallel(loss, params, optimizer)
    trainer.step(*batch, count=n)            # this rank's n samples; the same update on every rank

A program written with it runs unchanged as one process (no MPI, no mpi4py needed) or under
`mpirun -n N python program.py`; mpi4py is imported only when an MPI launcher started the
program (`pip install 'cpsgrad[mpi]'`). docs/distributed.md has the cluster commands, what
scaling to expect and the measured figures.
"""

from cpsgrad.distributed.collectives import Traffic, all_reduce_mean, broadcast, traffic
from cpsgrad.distributed.comm import DistributedError, MPIWorld, SingleProcess, world
from cpsgrad.distributed.sharding import shard, shard_range
from cpsgrad.distributed.trainer import DataParallel


def rank() -> int:
    """This process's rank in the job (0 in a plain process)."""
    return world().rank


def size() -> int:
    """The number of ranks in the job (1 in a plain process)."""
    return world().size


def barrier(timeout: float | None = None) -> None:
    """Wait until every rank has called `barrier` (ending the job past `timeout` seconds)."""
    world().barrier(timeout)


__all__ = [
    "DataParallel",
    "DistributedError",
    "MPIWorld",
    "SingleProcess",
    "Traffic",
    "all_reduce_mean",
    "barrier",
    "broadcast",
    "rank",
    "shard",
    "shard_range",
    "size",
    "traffic",
    "world",
]
