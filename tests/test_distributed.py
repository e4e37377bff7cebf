"""cpsgrad.distributed: packing, sharding and the trainer in this process (a one-rank
communicator, and a fake two-rank one whose "other rank" holds the same values), then real MPI
jobs of 2 and 3 ranks under `mpirun` (skipped, saying why, when mpirun or mpi4py is missing):
gradients and parameters after k steps equal one process's over the same global batch (float64,
1e-12 relative) with uneven shards and an empty one, bitwise the same on every rank; one message
per dtype per bucket; a rank that raises, or hangs, ends the job with a message naming it.
"""

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import cpsgrad
import cpsgrad.distributed as dist
from cpsgrad import optim
from cpsgrad.distributed import buffers, collectives
from cpsgrad.distributed import comm as comm_module
from cpsgrad.pytree import leaves

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"
EXAMPLE = EXAMPLES / "distributed_char_rnn.py"
# Open MPI on one machine: TCP over the loopback interface (shared memory, vader, works too, but
# not in every container), as root where CI runs as root, more ranks than cores allowed.
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,tcp",
          "--mca", "btl_tcp_if_include", "lo"]
JOB_TIMEOUT = 240  # seconds for one mpirun job: a hang fails the test instead of the suite


# ---------------------------------------------------------------- sharding

@pytest.mark.parametrize("total", [0, 1, 2, 7, 10, 64])
@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_shards_cover_the_whole_in_order_with_sizes_within_one(total, size):
    parts = [dist.shard_range(total, rank, size) for rank in range(size)]
    assert [i for part in parts for i in part] == list(range(total))
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
    assert all(len(a) >= len(b) for a, b in zip(parts, parts[1:], strict=False))  # the larger first


def test_shard_of_an_array_along_an_axis_and_of_a_list():
    data = np.arange(2 * 7).reshape(2, 7)
    pieces = [dist.shard(data, axis=1, rank=r, size=3) for r in range(3)]
    assert [p.shape for p in pieces] == [(2, 3), (2, 2), (2, 2)]
    np.testing.assert_array_equal(np.concatenate(pieces, axis=1), data)
    assert dist.shard(list("abcde"), rank=1, size=2) == ["d", "e"]
    assert dist.shard(list("ab"), rank=2, size=3) == []


def test_shard_errors_name_the_problem():
    with pytest.raises(ValueError, match="rank 3 is not one of the 2 ranks"):
        dist.shard_range(5, 3, 2)
    with pytest.raises(ValueError, match="nonnegative number of items"):
        dist.shard_range(-1, 0, 2)
    with pytest.raises(ValueError, match="split along its only axis"):
        dist.shard([1, 2], axis=1, rank=0, size=1)


def test_a_plain_process_is_rank_0_of_1():
    assert (dist.rank(), dist.size()) == (0, 1) or comm_module.launched_size() is not None
    assert isinstance(dist.world(mpi=False), dist.SingleProcess)


# ---------------------------------------------------------------- packing

def _tree():
    rng = np.random.default_rng(0)
    return {"a": rng.normal(size=(3, 4)), "b": rng.normal(size=5).astype(np.float32),
            "c": [rng.normal(size=2), rng.normal(size=(2, 2)).astype(np.float32)], "d": np.array(1.5)}


def test_one_bucket_packs_one_buffer_per_dtype_in_reverse_leaf_order():
    arrays = leaves(_tree())
    plan = buffers.Plan.of(arrays, bucket_bytes=None)
    assert len(plan.buckets) == 1 and plan.messages == 2
    bucket = plan.buckets[0]
    assert bucket.leaves == [4, 3, 2, 1, 0]
    assert [(str(b.dtype), b.array.size) for b in bucket.buffers] == [("float64", 1 + 2 + 12), ("float32", 4 + 5)]
    buffers.pack(bucket, arrays)
    f64 = bucket.buffers[0].array
    np.testing.assert_array_equal(f64, np.concatenate([arrays[4].ravel(), arrays[2].ravel(), arrays[0].ravel()]))


def test_buckets_hold_about_bucket_bytes_and_send_one_message_per_dtype_each():
    arrays = leaves(_tree())
    plan = buffers.Plan.of(arrays, bucket_bytes=40)
    assert [bucket.leaves for bucket in plan.buckets] == [[4, 3, 2], [1], [0]]
    assert plan.messages == sum(len({arrays[i].dtype for i in b.leaves}) for b in plan.buckets) == 4
    assert sorted(i for b in plan.buckets for i in b.leaves) == list(range(len(arrays)))
    with pytest.raises(ValueError, match="bucket_bytes"):
        buffers.Plan.of(arrays, bucket_bytes=0)


def test_pack_and_unpack_scale_and_divide_back():
    arrays = leaves(_tree())
    originals = [a.copy() for a in arrays]
    plan = buffers.Plan.of(arrays, bucket_bytes=48, extra=2)
    assert buffers.extras(plan).size == 2 and buffers.extras(plan).dtype == np.float64
    for bucket in plan.buckets:
        buffers.pack(bucket, arrays, scale=4.0)
    for a in arrays:
        a[...] = 0
    for bucket in plan.buckets:
        buffers.unpack(bucket, arrays, divisor=4.0)
    for got, want in zip(arrays, originals, strict=True):
        np.testing.assert_array_equal(got, want)


def test_leaves_that_cannot_be_reduced_in_place_are_refused_by_path():
    with pytest.raises(TypeError, match=r"grads\['w'\] is a float, not a numpy array.*np.array"):
        dist.all_reduce_mean({"w": 1.0})
    with pytest.raises(TypeError, match=r"grads\[0\] has dtype int64"):
        dist.all_reduce_mean([np.arange(3)])
    frozen = np.zeros(2)
    frozen.flags.writeable = False
    with pytest.raises(TypeError, match=r"params\['p'\] is a read-only array"):
        dist.broadcast({"p": frozen})


def test_one_process_reduces_and_broadcasts_to_the_same_arrays():
    tree = _tree()
    before = [a.copy() for a in leaves(tree)]
    assert dist.all_reduce_mean(tree, count=3) is tree
    assert dist.broadcast(tree) is tree
    for got, want in zip(leaves(tree), before, strict=True):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(dist.DistributedError, match="broadcast from rank 1"):
        dist.broadcast(tree, root=1, comm=dist.SingleProcess())


class _TwinRanks(dist.SingleProcess):
    """Two ranks holding the same values: the sum of a buffer is twice it (exact in floating
    point), so the mean is the buffer itself. Exercises packing, buckets and the counts."""

    size = 2

    def __init__(self):
        self.started = []

    def start_allreduce(self, buffer):
        buffer *= 2
        self.started.append((buffer.dtype, buffer.size))
        return comm_module._Done()


def test_the_packed_path_gives_the_mean_and_calls_on_ready_per_bucket_in_reverse_order():
    tree = _tree()
    before = [a.copy() for a in leaves(tree)]
    twins, ready = _TwinRanks(), []
    collectives.traffic.reset()
    total, (loss,) = collectives.reduce_arrays(leaves(tree), count=3, scalars=(0.25,), comm=twins,
                                               bucket_bytes=40, on_ready=ready.append)
    assert (total, loss) == (6.0, 0.25)
    assert ready == [[4, 3, 2], [1], [0]]
    assert collectives.traffic.messages == len(twins.started) == 4
    for got, want in zip(leaves(tree), before, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6 if got.dtype == np.float32 else 1e-15)


def test_a_collective_that_never_completes_ends_the_job_naming_the_rank_and_the_call(capsys):
    class Never:
        def Test(self):  # noqa: N802
            return False

    start = time.monotonic()
    with pytest.raises(SystemExit):
        comm_module.wait(dist.SingleProcess(), [Never()], "all_reduce_mean (bucket 1 of 1: 3 float64)", 0.2)
    assert time.monotonic() - start < 5
    message = capsys.readouterr().err
    assert "rank 0 of 1: all_reduce_mean (bucket 1 of 1: 3 float64) did not complete within 0.2 s" in message


def test_the_timeout_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(comm_module.TIMEOUT_ENV, "12.5")
    assert comm_module.default_timeout() == 12.5
    monkeypatch.setenv(comm_module.TIMEOUT_ENV, "soon")
    with pytest.raises(dist.DistributedError, match="not a number of seconds"):
        comm_module.default_timeout()


def test_under_a_launcher_without_mpi4py_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    monkeypatch.setattr(comm_module, "_WORLD", None)
    with pytest.raises(dist.DistributedError, match=r"2 ranks.*pip install 'cpsgrad\[mpi\]'"):
        dist.world()


def test_importing_cpsgrad_and_cpsgrad_distributed_never_imports_mpi4py():
    code = ("import sys, cpsgrad; assert 'cpsgrad.distributed' not in sys.modules; "
            "assert cpsgrad.distributed.size() == 1; assert 'mpi4py' not in sys.modules")
    env = {k: v for k, v in os.environ.items() if k not in comm_module._LAUNCHER_SIZES + comm_module._LAUNCHER_MARKS}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)


# ---------------------------------------------------------------- the trainer, one process

def _quadratic(params, x, y):
    return np.mean((x @ params["w"] + params["b"] - y) ** 2)


def _problem():
    rng = np.random.default_rng(1)
    params = {"w": rng.normal(size=3), "b": np.array(0.1)}
    return params, rng.normal(size=(8, 3)), rng.normal(size=8)


@pytest.mark.parametrize("bucket_bytes", [None, 8])
def test_one_process_trainer_steps_as_the_plain_loop_does(bucket_bytes):
    params, x, y = _problem()
    plain = {k: v.copy() for k, v in params.items()}
    trainer = dist.DataParallel(_quadratic, params, optim.Adam(params, lr=0.1), bucket_bytes=bucket_bytes,
                                clip_value=0.5)
    reference = optim.Adam(plain, lr=0.1)
    for _ in range(4):
        loss = trainer.step(x, y, count=len(x))
        want, grads = cpsgrad.value_and_grad(_quadratic)(plain, x, y)
        optim.clip_by_value(grads, 0.5)
        reference.step(grads)
        assert loss == float(want)
    for key in params:
        np.testing.assert_array_equal(params[key], plain[key])
    assert trainer.optimizer.steps == 4


def test_an_empty_shard_contributes_nothing_and_the_optimizer_must_be_over_the_params():
    params, x, y = _problem()
    trainer = dist.DataParallel(_quadratic, params, optim.SGD(params, lr=0.1))
    before = {k: v.copy() for k, v in params.items()}
    assert trainer.step(x[:0], y[:0], count=0) == 0.0
    for key in params:
        np.testing.assert_array_equal(params[key], before[key])
    with pytest.raises(ValueError, match="the optimizer must update these params"):
        dist.DataParallel(_quadratic, params, optim.SGD({k: v.copy() for k, v in params.items()}, lr=0.1))


def test_the_examples_batched_min_char_rnn_is_the_mean_of_min_char_rnn_over_its_sequences():
    sys.path.insert(0, str(EXAMPLES))
    try:
        import distributed_char_rnn
        import min_char_rnn
    finally:
        sys.path.remove(str(EXAMPLES))
    rng = np.random.default_rng(3)
    vocabulary, hidden, sequence, batch = 7, 5, 4, 3
    params = min_char_rnn.init(vocabulary, hidden, rng)
    for leaf in params.values():
        leaf += rng.normal(size=leaf.shape) * 0.3
    ids = rng.integers(0, vocabulary, (sequence + 1, batch))
    one_hot = np.eye(vocabulary)[ids].transpose(0, 2, 1)
    loss, grads = cpsgrad.value_and_grad(distributed_char_rnn.batch_loss)(
        params, np.ascontiguousarray(one_hot[:-1]), np.ascontiguousarray(one_hot[1:]), np.zeros((hidden, batch)))
    sums = {k: np.zeros_like(v) for k, v in params.items()}
    total = 0.0
    for b in range(batch):
        value, g = cpsgrad.value_and_grad(min_char_rnn.rnn_loss)(
            params, list(ids[:-1, b]), list(ids[1:, b]), np.zeros(hidden), np.empty(hidden))
        total += value
        for k in sums:
            sums[k] += g[k]
    assert loss == pytest.approx(total / batch, rel=1e-13)
    for k in sums:
        np.testing.assert_allclose(grads[k], sums[k] / batch, rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------- real MPI jobs

def _mpi_missing() -> str | None:
    if shutil.which("mpirun") is None:
        return "mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)"
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed (pip install 'cpsgrad[mpi]')"
    return None


needs_mpi = pytest.mark.skipif(_mpi_missing() is not None, reason=str(_mpi_missing()))


def _clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in comm_module._LAUNCHER_SIZES + comm_module._LAUNCHER_MARKS
           and not k.startswith(("OMPI_", "PMIX_", "PMI_"))}
    env.update({"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}, **extra)
    return env


def _mpirun(ranks: int, args: list, timeout: float = JOB_TIMEOUT, **env) -> subprocess.CompletedProcess:
    return subprocess.run([*MPIRUN, "-n", str(ranks), sys.executable, *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=_clean_env(**env), cwd=ROOT)


def _example(tmp_path, name, ranks, *options, example=EXAMPLE, steps=5):
    out = tmp_path / name
    args = [example, "--steps", steps, "--sgd", "0.05", "--save", out, "--warmup", "0", *options]
    if ranks is None:  # one plain process, no MPI at all
        done = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                              timeout=JOB_TIMEOUT, env=_clean_env(), cwd=ROOT)
    else:
        done = _mpirun(ranks, args)
    assert done.returncode == 0, done.stdout + done.stderr
    count = ranks or 1
    return ([dict(np.load(out / f"grads{r}.npz")) for r in range(count)],
            [dict(np.load(out / f"rank{r}.npz")) for r in range(count)], done.stdout)


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@needs_mpi
@pytest.mark.parametrize("ranks, batch, bucket", [(2, 7, None), (2, 7, 4096), (3, 2, None)],
                         ids=["2-ranks-uneven", "2-ranks-bucketed", "3-ranks-one-empty"])
def test_ranks_agree_with_one_process_over_the_same_global_batch(tmp_path, ranks, batch, bucket):
    options = ["--batch", batch] + (["--bucket-bytes", bucket] if bucket else [])
    (grads,), (params,), _ = _example(tmp_path, "one", None, *options)
    rank_grads, rank_params, stdout = _example(tmp_path, "many", ranks, *options)
    assert f"{ranks} rank(s)" in stdout and "largest gradient difference" in stdout
    for key in params:
        for r in range(ranks):
            assert _relative(rank_grads[r][key], grads[key]) <= 1e-12, (key, r)
            assert _relative(rank_params[r][key], params[key]) <= 1e-12, (key, r)
            np.testing.assert_array_equal(rank_params[r][key], rank_params[0][key])  # bitwise, every rank
        assert not np.array_equal(params[key], np.load(tmp_path / "one" / "grads0.npz")[key])


CNN_EXAMPLE = EXAMPLES / "distributed_mnist_cnn.py"


def test_the_cnn_with_a_per_sample_mask_is_the_count_weighted_mean_of_its_shards():
    """What data parallelism relies on for the CNN: its loss and gradients over a batch are the
    count-weighted means of those over any cut of it, dropout included (a mask per sample, cut
    with the images): the ranks' average is one process's."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        import distributed_mnist_cnn
    finally:
        sys.path.remove(str(EXAMPLES))
    work = distributed_mnist_cnn.workload(np.float64)
    params = work.init(np.random.default_rng(1))
    images, labels, keep = work.batch(np.random.default_rng(2), 7)
    assert set(np.unique(keep)) <= {0.0, 2.0} and 0 < np.mean(keep == 0) < 1
    whole, grads = cpsgrad.value_and_grad(work.loss)(params, images, labels, keep)
    cut = [slice(0, 3), slice(3, 7)]
    parts = [cpsgrad.value_and_grad(work.loss)(params, images[c], labels[c], keep[c]) for c in cut]
    sizes = [3 / 7, 4 / 7]
    assert float(whole) == pytest.approx(sum(w * float(v) for w, (v, _) in zip(sizes, parts, strict=True)), rel=1e-13)
    for key in params:
        mean = sum(w * g[key] for w, (_, g) in zip(sizes, parts, strict=True))
        assert _relative(mean, grads[key]) <= 1e-12, key
    h, key, index = 1e-6, "fc1_w", (3, 17)  # one gradient entry against finite differences
    up, down = dict(params), dict(params)
    up[key] = params[key].copy()
    up[key][index] += h
    down[key] = params[key].copy()
    down[key][index] -= h
    slope = (work.loss(up, images, labels, keep) - work.loss(down, images, labels, keep)) / (2 * h)
    assert grads[key][index] == pytest.approx(slope, rel=1e-6, abs=1e-9)


@needs_mpi
def test_the_cnn_on_two_ranks_agrees_with_one_process(tmp_path):
    options = ["--batch", 7, "--float64"]
    (grads,), (params,), _ = _example(tmp_path, "one", None, *options, example=CNN_EXAMPLE, steps=3)
    rank_grads, rank_params, stdout = _example(tmp_path, "two", 2, *options, example=CNN_EXAMPLE, steps=3)
    assert "mnist-cnn: 2 rank(s)" in stdout and "largest gradient difference" in stdout
    for key in params:
        for r in range(2):
            assert _relative(rank_grads[r][key], grads[key]) <= 1e-12, (key, r)
            assert _relative(rank_params[r][key], params[key]) <= 1e-12, (key, r)
            np.testing.assert_array_equal(rank_params[r][key], rank_params[0][key])


_PROGRAM = textwrap.dedent("""
    import sys, time
    import numpy as np
    import cpsgrad.distributed as dist

    rank, size = dist.rank(), dist.size()
    what = sys.argv[1]
    tree = {"a": np.full(10, rank + 1.0), "b": np.full(5, rank + 1.0, np.float32), "c": np.full(3, 10.0 * rank)}
    if what == "raise" and rank == 1:
        raise RuntimeError("rank 1's data loader broke")
    if what == "hang" and rank == 1:
        time.sleep(600)
    dist.traffic.reset()
    dist.all_reduce_mean(tree, timeout=float(sys.argv[2]) if len(sys.argv) > 2 else None)
    assert dist.traffic.messages == 2, dist.traffic  # one per dtype
    assert dist.traffic.nbytes == 13 * 8 + 5 * 4
    mean = sum(range(1, size + 1)) / size
    assert np.all(tree["a"] == mean) and np.all(tree["b"] == np.float32(mean)), tree
    assert np.all(tree["c"] == 10.0 * sum(range(size)) / size), tree
    params = {"w": np.full(4, float(rank)), "v": np.full(2, float(rank), np.float32)}
    dist.broadcast(params)
    assert np.all(params["w"] == 0) and np.all(params["v"] == 0)
    dist.barrier()
    print(f"rank {rank}: ok")
""")


@needs_mpi
def test_the_collectives_over_two_real_ranks(tmp_path):
    program = tmp_path / "program.py"
    program.write_text(_PROGRAM)
    done = _mpirun(2, [program, "ok"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rank 0: ok" in done.stdout and "rank 1: ok" in done.stdout


@needs_mpi
def test_a_rank_that_raises_ends_the_job_with_its_traceback(tmp_path):
    program = tmp_path / "program.py"
    program.write_text(_PROGRAM)
    start = time.monotonic()
    done = _mpirun(2, [program, "raise"], timeout=120)
    assert time.monotonic() - start < 60
    assert done.returncode != 0
    assert "rank 1 of 2 raised an exception" in done.stderr and "rank 1's data loader broke" in done.stderr


@needs_mpi
def test_a_rank_that_hangs_ends_the_job_at_the_timeout_naming_the_rank_and_the_call(tmp_path):
    program = tmp_path / "program.py"
    program.write_text(_PROGRAM)
    start = time.monotonic()
    done = _mpirun(2, [program, "hang", "3"], timeout=120)
    assert time.monotonic() - start < 60
    assert done.returncode != 0
    assert "rank 0 of 2: all_reduce_mean (bucket 1 of 1: 13 float64, 5 float32) did not complete within 3 s" \
        in done.stderr
