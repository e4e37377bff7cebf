"""The data-parallel training loop shared by the distributed examples (distributed_char_rnn.py):
a model is a `Workload` (its parameters, its loss, the step's global batch), and this runs it
unchanged as one process or under `mpirun -n N`, with `cpsgrad.distributed.DataParallel`.

Every rank draws the same global batch from the same seed and keeps its shard (each array cut
along its batch axis by `cpsgrad.distributed.shard_range`: uneven shards allowed). At the first
step rank 0 also differentiates the loss over the whole global batch in one process and prints
the largest difference from the reduced gradients. The options:

    --steps N --batch B (the global batch) --bucket-bytes K --seed S --save DIR --json FILE

`--sgd LR` trains with plain SGD instead of the workload's optimizer: Adagrad (min-char-rnn's)
divides each gradient by its own magnitude, so a gradient whose exact value is tiny moves its
parameter by about `lr` whatever its size, and the last-bit differences between one process's
sum and the ranks' grow step by step (1e-16 at step 0, 1e-5 by step 14 here); with SGD the
parameters after k steps stay within rounding of one process's.

`--save DIR` writes each rank's parameters after the last step (rank{r}.npz) and the first
step's reduced gradients (grads{r}.npz), as tests/test_distributed.py compares them; `--json`
writes rank 0's throughput and traffic (benchmarks/distributed.py reads it).

Each rank uses one thread (NUMBA_NUM_THREADS, OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and
MKL_NUM_THREADS default to 1 under an MPI launcher, set here before numpy is imported): N ranks
on N cores, not N ranks each fighting for every core.
"""

from __future__ import annotations

import os

if any(os.environ.get(name) for name in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")):
    for _name in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import cpsgrad  # noqa: E402
import cpsgrad.distributed as dist  # noqa: E402
from cpsgrad import optim  # noqa: E402
from cpsgrad.pytree import leaves, leaves_with_paths, path_string  # noqa: E402


@dataclass
class Workload:
    """A model to train data-parallel.

    `init(rng) -> params`; `loss(params, *batch) -> the mean loss over the batch's samples`;
    `batch(rng, size) -> tuple of arrays` (one step's global batch, drawn from `rng`, which is
    seeded alike on every rank); `axes`: each batch array's batch axis; `optimizer(params)`;
    `clip_value`: clip each averaged gradient to [-clip_value, clip_value] (or None).
    """

    name: str
    init: Callable
    loss: Callable
    batch: Callable
    axes: tuple[int, ...]
    optimizer: Callable
    clip_value: float | None = None


def local_part(arrays: tuple, axes: tuple[int, ...], comm) -> tuple[tuple, int]:
    """This rank's shard of each array (along its axis) and its number of samples."""
    sizes = {array.shape[axis] for array, axis in zip(arrays, axes, strict=True)}
    if len(sizes) != 1:
        raise ValueError(f"the batch's arrays disagree on the batch size along their axes: {sorted(sizes)}")
    part = dist.shard_range(sizes.pop(), comm.rank, comm.size)
    cut = tuple(np.ascontiguousarray(dist.shard(array, axis, comm.rank, comm.size))
                for array, axis in zip(arrays, axes, strict=True))
    return cut, len(part)


def largest_difference(reduced, reference) -> tuple[float, float, str]:
    """The largest absolute difference over every leaf, the largest relative to the leaf's
    largest magnitude, and the leaf where it is."""
    worst, worst_relative, where = 0.0, 0.0, ""
    for (path, a), b in zip(leaves_with_paths(reduced), leaves(reference), strict=True):
        difference = float(np.max(np.abs(np.asarray(a) - np.asarray(b)), initial=0.0))
        scale = float(np.max(np.abs(b), initial=0.0)) or 1.0
        worst = max(worst, difference)
        if difference / scale >= worst_relative:
            worst_relative, where = difference / scale, path_string(path)
    return worst, worst_relative, where


def run(workload: Workload, argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=f"{workload.name}, data-parallel over MPI")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch", type=int, default=64, help="the global batch, split over the ranks")
    parser.add_argument("--bucket-bytes", type=int, default=None, help="default: one bucket")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", default=None, help="write rank{r}.npz (parameters) and grads{r}.npz here")
    parser.add_argument("--json", default=None, help="write rank 0's throughput and traffic here")
    parser.add_argument("--sgd", type=float, default=None, metavar="LR",
                        help="plain SGD at this rate instead of the workload's optimizer")
    parser.add_argument("--warmup", type=int, default=2, help="steps left out of the throughput")
    options = parser.parse_args(argv)
    if options.steps < 1 or options.batch < 1:
        parser.error("--steps and --batch must be at least 1")
    warmup = min(options.warmup, options.steps - 1)  # at least one step timed
    comm = dist.world()
    lead = comm.rank == 0
    params = workload.init(np.random.default_rng(options.seed + 1000 * comm.rank))  # broadcast from rank 0
    optimizer = workload.optimizer(params) if options.sgd is None else optim.SGD(params, lr=options.sgd)
    trainer = dist.DataParallel(workload.loss, params, optimizer, comm=comm,
                                bucket_bytes=options.bucket_bytes, clip_value=workload.clip_value)
    data_rng = np.random.default_rng(options.seed)
    if lead:
        print(f"{workload.name}: {comm.size} rank(s) ({comm.name}), global batch {options.batch}, "
              f"{sum(leaf.size for leaf in leaves(params))} parameters")

    # Step 0's gradients against one process over the same global batch.
    batch = workload.batch(data_rng, options.batch)
    reference = cpsgrad.value_and_grad(workload.loss)(params, *batch) if lead else None
    local, count = local_part(batch, workload.axes, comm)
    loss, grads = trainer.gradients(*local, count=count)
    if lead:
        worst, relative, where = largest_difference(grads, reference[1])
        print(f"step 0: loss {loss:.6f} (one process: {float(reference[0]):.6f}); largest gradient difference "
              f"from one process over the same global batch: {worst:.3g} ({relative:.3g} relative, at {where})")
    if options.save:
        Path(options.save).mkdir(parents=True, exist_ok=True)
        np.savez(Path(options.save) / f"grads{comm.rank}.npz", *[np.asarray(g) for g in leaves(grads)])

    dist.traffic.reset()
    timed = 0.0
    totals = {"gradients": 0.0, "reduce_and_update": 0.0}
    first = last = None
    for step in range(options.steps):
        batch = workload.batch(data_rng, options.batch) if step else batch
        local, count = local_part(batch, workload.axes, comm)
        start = time.perf_counter()
        loss = trainer.step(*local, count=count)
        if step >= warmup:
            timed += time.perf_counter() - start
            for key in totals:
                totals[key] += trainer.timing[key]
        first = loss if first is None else first
        last = loss
        if lead and (step % max(1, options.steps // 10) == 0 or step == options.steps - 1):
            print(f"step {step}: loss {loss:.4f}")
    measured = options.steps - warmup
    summary = {
        "workload": workload.name, "ranks": comm.size, "batch": options.batch, "steps": options.steps,
        "samples_per_second": options.batch * measured / timed,
        "seconds_per_step": timed / measured,
        "gradients_seconds": totals["gradients"] / measured,
        "reduce_and_update_seconds": totals["reduce_and_update"] / measured,
        "messages_per_step": dist.traffic.messages / max(1, options.steps),
        "bytes_per_step": dist.traffic.nbytes / max(1, options.steps),
        "parameter_bytes": sum(leaf.nbytes for leaf in leaves(params)),
        "first_loss": first, "last_loss": last,
    }
    if lead:
        print(f"{options.steps} steps: {summary['samples_per_second']:.0f} samples/s "
              f"({summary['seconds_per_step'] * 1e3:.2f} ms a step, of which gradients "
              f"{summary['gradients_seconds'] * 1e3:.2f} ms, reduction and update "
              f"{summary['reduce_and_update_seconds'] * 1e3:.2f} ms); {summary['messages_per_step']:.0f} "
              f"message(s), {summary['bytes_per_step']:.0f} bytes a step for {summary['parameter_bytes']} "
              f"bytes of parameters; loss {first:.4f} -> {last:.4f}")
        if options.json:
            Path(options.json).write_text(json.dumps(summary, indent=2))
    if options.save:
        np.savez(Path(options.save) / f"rank{comm.rank}.npz", *[np.asarray(p) for p in leaves(params)])
    return 0 if options.steps < 10 or last < first else 1
