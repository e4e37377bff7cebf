"""Time to train the CNN of docs/examples/mnist_cnn.py (DESIGN.md section 7, Lantern's CNN
benchmark): cpsgrad against PyTorch eager on the same network, data, initial weights, dropout
masks and update rule, at batch 1 and batch 64 (issue 20, item 5), beside benchmarks/training.py.

Both peers run a fixed number of SGD steps (momentum 0.9, lr 0.01, as the example trains) over
the same MNIST 5k digits in the same order, float32, one thread (`torch.set_num_threads(1)`;
NUMBA/OMP/MKL/OpenBLAS threads 1). PyTorch's network is written with `torch.nn.functional`
(`conv2d`, `max_pool2d`, `relu`, `linear`, `cross_entropy`), its dropout the mask cpsgrad's
`nn.dropout` draws from the step's seed, so both compute the same losses up to float32
rounding: their curves must agree to CURVE_TOLERANCE (relative, each of the first CURVE_STEPS
steps) and their mean losses to MEAN_TOLERANCE, or the run fails.
Each peer first runs WARMUP steps untimed (numba's compilation, PyTorch's first-call set-up).

    python benchmarks/training_cnn.py [--quick] [--batches 1,64] [--steps N] [--peers torch|none]

The table's "PyTorch time / cpsgrad time" is the issue's ratio (targets: >= 3.5 at batch 1,
>= 1 at batch 64). Exit status 1 when cpsgrad fails, PyTorch errs or the curves disagree.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(variable, "1")

import numpy as np  # noqa: E402
from scalar import Unavailable, cpu_model, import_peer  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "examples"))

import mnist_cnn  # noqa: E402

from cpsgrad import optim  # noqa: E402

STEPS = {1: 2000, 64: 100}  # timed steps per batch size
QUICK_STEPS = {1: 100, 64: 10}
WARMUP = 3
TARGETS = {1: 3.5, 64: 1.0}  # least PyTorch time / cpsgrad time (issue 20)
CURVE_TOLERANCE = 1e-3  # relative, per step over the first CURVE_STEPS: float32, two summation orders
# Training in float32 is chaotic: the two peers' rounding differs by ~1e-7 a step and the curves
# part after a few hundred steps (2000 batch-1 steps: 14x at a step with a loss near 0, the means
# of all steps still within 1e-3), so only the first CURVE_STEPS are held to CURVE_TOLERANCE and
# the whole run's mean loss to MEAN_TOLERANCE.
CURVE_STEPS = 20
MEAN_TOLERANCE = 0.01


def dropout_mask(seed: int, batch: int) -> np.ndarray:
    """The mask (0 or 2) `cpsgrad.nn.dropout(x, 0.5, seed=seed)` multiplies a (batch, 50) `x` by
    (cpsgrad/nn.py: uniform draws of `np.random.default_rng(seed)`, kept where >= p)."""
    return ((np.random.default_rng(seed).random((batch, 50)) >= 0.5) * 2.0).astype(np.float32)


def workload(batch: int, steps: int):
    """The digits of each step, `[(images, labels, seed)]`, and the initial weights."""
    (images, labels), _, _ = mnist_cnn.load("mnist", False, None)
    options = mnist_cnn.Options(batch=batch)
    plan, epoch = [], 0
    while len(plan) < WARMUP + steps:
        for rows in mnist_cnn.batches(len(labels), options, epoch):
            if len(rows) == batch and len(plan) < WARMUP + steps:
                plan.append((images[rows], labels[rows], mnist_cnn.step_seed(options, len(plan))))
        epoch += 1
    return plan, mnist_cnn.init(np.random.default_rng(0))


def run_cpsgrad(plan, initial):
    params = {key: value.copy() for key, value in initial.items()}
    optimizer = optim.SGD(params, lr=0.01, momentum=0.9)
    losses = []
    for images, labels, seed in plan[:WARMUP]:
        optimizer.step(mnist_cnn.loss_and_gradients(params, images, labels, seed)[1])
    start = time.perf_counter()
    for images, labels, seed in plan[WARMUP:]:
        loss, grads = mnist_cnn.loss_and_gradients(params, images, labels, seed)
        optimizer.step(grads)
        losses.append(float(loss))
    return losses, time.perf_counter() - start


def run_torch(plan, initial):
    torch = import_peer("torch")
    functional = torch.nn.functional
    torch.set_num_threads(1)
    params = {key: torch.tensor(value, requires_grad=True) for key, value in initial.items()}
    optimizer = torch.optim.SGD(list(params.values()), lr=0.01, momentum=0.9)
    tensors = [(torch.from_numpy(images), torch.from_numpy(labels.astype(np.int64)),
                torch.from_numpy(dropout_mask(seed, len(labels)))) for images, labels, seed in plan]

    def step(images, labels, mask):
        p = params
        x = functional.relu(functional.max_pool2d(functional.conv2d(images, p["conv1_w"], p["conv1_b"]), 2))
        x = functional.relu(functional.max_pool2d(functional.conv2d(x, p["conv2_w"], p["conv2_b"]), 2))
        x = functional.relu(functional.linear(x.reshape(x.shape[0], 320), p["fc1_w"], p["fc1_b"])) * mask
        loss = functional.cross_entropy(functional.linear(x, p["fc2_w"], p["fc2_b"]), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss

    for arguments in tensors[:WARMUP]:
        step(*arguments)
    losses = []
    start = time.perf_counter()
    for arguments in tensors[WARMUP:]:
        losses.append(step(*arguments).item())
    return losses, time.perf_counter() - start


def curve_error(losses, reference, steps=None) -> float:
    a, b = np.asarray(losses)[:steps], np.asarray(reference)[:steps]
    return float(np.max(np.abs(a - b) / np.abs(b))) if a.shape == b.shape else float("inf")


def report(batch, steps, results) -> tuple[list[str], bool]:
    lines = [f"### CNN on MNIST 5k, batch {batch}, {steps} SGD steps", "",
             "| peer | seconds | ms / step | images / s | PyTorch time / cpsgrad time | mean loss "
             f"| curve vs cpsgrad, first {CURVE_STEPS} steps | ... all {steps} | mean loss vs cpsgrad |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    ours, our_seconds = results["cpsgrad"][1:3]
    failed = ours is None
    for peer, (label, losses, seconds, reason) in results.items():
        if losses is None:
            lines.append(f"| {label} | {reason} | | | | | | | |")
            continue
        error = whole = mean = ""
        if peer != "cpsgrad" and ours is not None:
            value = curve_error(losses, ours, CURVE_STEPS)
            mean_value = abs(np.mean(losses) - np.mean(ours)) / abs(np.mean(ours))
            bad = not (value <= CURVE_TOLERANCE and mean_value <= MEAN_TOLERANCE)
            failed = failed or bad
            error, whole = f"{value:.1e}", f"{curve_error(losses, ours):.1e}"
            mean = f"{mean_value:.1e}" + (" (FAILED)" if bad else "")
        torch_seconds = results["torch"][2] if "torch" in results else None
        ratio = f"{torch_seconds / seconds:.2f}x" if peer == "cpsgrad" and torch_seconds else ""
        lines.append(f"| {label} | {seconds:.2f} | {1e3 * seconds / steps:.2f} | {steps * batch / seconds:.0f} | "
                     f"{ratio} | {np.mean(losses):.4f} | {error} | {whole} | {mean} |")
    if "torch" in results and results["torch"][2] and our_seconds:
        ratio = results["torch"][2] / our_seconds
        target = TARGETS[batch]
        verdict = "met" if ratio >= target else f"missed by {target / ratio:.2f}x"
        lines += ["", f"Target: PyTorch time / cpsgrad time >= {target:g}; measured {ratio:.2f} ({verdict})."]
    return lines, failed


def run_batch(batch, steps, peers):
    plan, initial = workload(batch, steps)
    runners = {"cpsgrad": ("cpsgrad (Python tier)", run_cpsgrad), "torch": ("PyTorch eager, 1 thread", run_torch)}
    results, failed = {}, False
    for peer, (label, runner) in runners.items():
        if peer != "cpsgrad" and peer not in peers:
            continue
        try:
            losses, seconds = runner(plan, initial)
            results[peer] = (label, losses, seconds, None)
        except Unavailable as reason:
            results[peer] = (label, None, None, f"n/a ({reason})")
        except Exception as error:  # reported in the table; the run fails
            results[peer] = (label, None, None, f"ERROR {type(error).__name__}: {error}")
            failed = True
    return results, failed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"steps per batch size {QUICK_STEPS}, not {STEPS}")
    parser.add_argument("--batches", default="1,64")
    parser.add_argument("--steps", type=int, default=None, help="timed steps for every batch size")
    parser.add_argument("--peers", default="torch", help="torch or none")
    arguments = parser.parse_args(argv)
    peers = set() if arguments.peers == "none" else set(arguments.peers.split(","))
    print(f"## CNN training steps ({platform.python_version()}, numpy {np.__version__}, {cpu_model()}, "
          f"one thread; float32; the first {CURVE_STEPS} losses must agree to {CURVE_TOLERANCE:.0e})\n")
    failed = False
    for batch in (int(value) for value in arguments.batches.split(",")):
        steps = arguments.steps or (QUICK_STEPS if arguments.quick else STEPS).get(batch, 100)
        results, run_failed = run_batch(batch, steps, peers)
        lines, curve_failed = report(batch, steps, results)
        print("\n".join(lines) + "\n", flush=True)
        failed = failed or run_failed or curve_failed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
