"""The communicator: MPI's world through mpi4py when the program was started by an MPI launcher,
else one process on its own; collective calls waited on with a deadline, and a job ended with a
message (not a hang) when a rank fails.

Only a few operations are needed, so both kinds of communicator offer the same small surface:
`rank`, `size`, `start_allreduce(buffer)` and `start_bcast(buffer, root)` (non-blocking, in
place, returning a request with `Test()`), `abort(message)`. `wait(requests, what)` polls the
requests until they complete or the deadline passes; then it writes which rank timed out in
which call to stderr and calls `MPI_Abort`, which ends every rank of the job.

mpi4py is imported only when a launcher's environment says the program runs under one (or when
`world(mpi=True)` asks for it), so `import cpsgrad.distributed` never needs it.
"""

from __future__ import annotations

import os
import sys
import time
import traceback

import numpy as np

# What MPI launchers set in every rank: Open MPI's mpirun, MPICH/Hydra and Intel MPI (PMI),
# Slurm's srun (PMI_SIZE with --mpi=pmi2, PMIX_RANK with --mpi=pmix). Not SLURM_NTASKS: a plain
# process in a Slurm job has it too.
_LAUNCHER_SIZES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS")
_LAUNCHER_MARKS = ("PMIX_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK")
TIMEOUT_ENV = "CPSGRAD_DISTRIBUTED_TIMEOUT"
_YIELD = hasattr(os, "sched_yield")
DEFAULT_TIMEOUT = 300.0  # seconds a collective may wait for the other ranks


class DistributedError(RuntimeError):
    """A collective call that cannot be made (a bad buffer, mpi4py missing under a launcher)."""


def default_timeout() -> float:
    """$CPSGRAD_DISTRIBUTED_TIMEOUT seconds, else 300."""
    value = os.environ.get(TIMEOUT_ENV)
    if not value:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        raise DistributedError(f"${TIMEOUT_ENV}={value!r} is not a number of seconds") from None
    if not seconds > 0:
        raise DistributedError(f"${TIMEOUT_ENV}={value!r}: the timeout must be positive")
    return seconds


def launched_size() -> int | None:
    """The number of ranks an MPI launcher says this job has (0 when it started this process
    without saying how many), or None when no launcher started it."""
    for name in _LAUNCHER_SIZES:
        value = os.environ.get(name)
        if value and value.isdigit():
            return int(value)
    return 0 if any(os.environ.get(name) for name in _LAUNCHER_MARKS) else None


class _Done:
    """The request of a collective over one process: complete when made."""

    def Test(self) -> bool:  # noqa: N802  (mpi4py's name)
        return True


class SingleProcess:
    """One process on its own: rank 0 of 1. A reduction over one rank is the identity and a
    broadcast from rank 0 to itself moves nothing, so requests are complete when made."""

    rank = 0
    size = 1
    name = "one process"

    def start_allreduce(self, buffer: np.ndarray) -> _Done:
        return _Done()

    def start_bcast(self, buffer: np.ndarray, root: int) -> _Done:
        if root != 0:
            raise DistributedError(f"broadcast from rank {root}: this job has one rank (rank 0)")
        return _Done()

    def barrier(self, timeout: float | None = None) -> None:
        return None

    def abort(self, message: str, code: int = 1) -> None:
        _report(message)
        raise SystemExit(code)


class MPIWorld:
    """An mpi4py communicator (MPI.COMM_WORLD by default) behind the same surface."""

    def __init__(self, comm=None):
        from mpi4py import MPI

        self._MPI = MPI
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self.name = f"MPI ({MPI.Get_library_version().split(',')[0].strip(chr(0)).strip()})"

    def start_allreduce(self, buffer: np.ndarray):
        return self.comm.Iallreduce(self._MPI.IN_PLACE, buffer, op=self._MPI.SUM)

    def start_bcast(self, buffer: np.ndarray, root: int):
        return self.comm.Ibcast(buffer, root=root)

    def barrier(self, timeout: float | None = None) -> None:
        wait(self, [self.comm.Ibarrier()], "barrier", timeout)

    def abort(self, message: str, code: int = 1) -> None:
        _report(message)
        self.comm.Abort(code)


def _report(message: str) -> None:
    sys.stdout.flush()
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def wait(comm, requests: list, what: str, timeout: float | None = None, since: float | None = None) -> None:
    """Wait until every request completes; past `timeout` seconds (default: `default_timeout()`)
    from `since` (a `time.monotonic()`; default now) end the job with a message naming this rank
    and `what` was waited on."""
    if all(request.Test() for request in requests):
        return
    limit = default_timeout() if timeout is None else timeout
    start = time.monotonic() if since is None else since
    pending = [request for request in requests if not request.Test()]
    polls = 0
    while pending:
        polls += 1
        if polls % 64 == 0:
            waited = time.monotonic() - start
            if waited > limit:
                comm.abort(f"cpsgrad.distributed: rank {comm.rank} of {comm.size}: {what} did not complete "
                           f"within {limit:g} s (another rank failed, is stuck, or never made the same call; "
                           f"the timeout is the timeout= argument or ${TIMEOUT_ENV}); aborting the job")
                return
            # A non-blocking collective moves on only while it is tested (Open MPI has no progress
            # thread): poll without pause for the first 50 ms, then give the core away a little.
            if waited > 0.05:
                time.sleep(min(1e-3, waited / 100))
        if _YIELD:  # let a rank that shares this core run (more ranks than free cores)
            os.sched_yield()
        pending = [request for request in pending if not request.Test()]


_WORLD = None


def world(mpi: bool | None = None):
    """This job's communicator, made once: `MPIWorld()` when an MPI launcher started the program
    (or `mpi=True`), else `SingleProcess()` (or `mpi=False`). Under a launcher of several ranks
    without mpi4py, a DistributedError saying how to install it."""
    global _WORLD
    if _WORLD is not None and mpi is None:
        return _WORLD
    size = launched_size()
    use_mpi = (size is not None) if mpi is None else mpi
    if use_mpi:
        try:
            import mpi4py  # noqa: F401
        except ImportError:
            if not mpi and size == 1:
                use_mpi = False
            else:
                ranks = f"{size} ranks" if size else "ranks"
                raise DistributedError(
                    f"this program runs under an MPI launcher ({ranks}) but mpi4py is not installed: "
                    "pip install 'cpsgrad[mpi]' (Open MPI's libraries first: apt-get install "
                    "openmpi-bin libopenmpi-dev); see docs/distributed.md") from None
    found = MPIWorld() if use_mpi else SingleProcess()
    if mpi is None:
        _WORLD = found
        if found.size > 1:
            abort_on_exception(found)
    return found


def abort_on_exception(comm) -> None:
    """Make an exception that nothing catches in this rank end the whole job at once (MPI_Abort
    with the traceback and the rank), instead of leaving the other ranks waiting in a collective."""
    def hook(kind, value, trace):
        text = "".join(traceback.format_exception(kind, value, trace))
        comm.abort(f"cpsgrad.distributed: rank {comm.rank} of {comm.size} raised an exception; "
                   f"aborting the job:\n{text}")

    sys.excepthook = hook
