"""Benchmark the CPU kernels against the numpy composition and PyTorch CPU (1 and 2 threads).

Run ``python benchmarks/kernels_bench.py [--quick] [--peers none|all|torch] [--only SECTION,...]``
(sections: kernels, dispatch, thresholds). Every figure is the best of several timed repeats in
this one run; ratios are ``other / kernel`` (above 1 means the kernel is faster). PyTorch columns
are skipped when torch is not installed or ``--peers none``.

The dispatch and threshold sections time their candidates interleaved: each round times every
candidate in turn and the figure is the minimum over the rounds, so that a change in the
machine's load reaches all candidates alike (as ``benchmarks/scalar.py`` does).
"""

import argparse
import math
import os
import timeit

import numpy as np

from cpsgrad.kernels import dispatch, lookup, thresholds

try:
    import torch
except ImportError:
    torch = None

RNG = np.random.default_rng(0)


def best_time(function, budget=0.2):
    """Seconds per call: best of 5 repeats, each sized to about ``budget / 5`` seconds."""
    function()
    once = max(timeit.timeit(function, number=1), 1e-7)
    number = max(1, int(budget / 5 / once))
    return min(timeit.repeat(function, number=number, repeat=5)) / number


def interleaved(calls, rounds, seconds):
    """Seconds per call of each ``calls[name]``: the minimum over ``rounds`` rounds, each round
    timing every call in turn for at least ``seconds`` (calls a repeat found by doubling). Each
    call runs once first, so a first-call import or numba cache load is not timed."""
    for call in calls.values():
        call()
    timers = {name: timeit.Timer(call) for name, call in calls.items()}
    numbers = {}
    for name, timer in timers.items():
        number = 1
        while timer.timeit(number) < seconds:
            number *= 2
        numbers[name] = number
    best = dict.fromkeys(timers, math.inf)
    for _ in range(rounds):
        for name, timer in timers.items():
            best[name] = min(best[name], timer.timeit(numbers[name]) / numbers[name])
    return best


def torch_times(function):
    """``function`` timed under PyTorch with one and with two threads, or Nones."""
    if torch is None:
        return None, None
    previous = torch.get_num_threads()
    times = []
    for threads in (1, 2):
        torch.set_num_threads(threads)
        times.append(best_time(function))
    torch.set_num_threads(previous)
    return tuple(times)


def row(name, kernel, numpy_time=None, torch_pair=(None, None)):
    def ratio(other):
        return f"{other / kernel:8.2f}x" if other else "       -"

    print(f"{name:<44} {kernel * 1e6:10.1f} us {ratio(numpy_time)} {ratio(torch_pair[0])} {ratio(torch_pair[1])}")


def fwd_bwd(op, args, params=None, grad=None):
    kernel = dispatch(op, *args)

    def run():
        y, saved = kernel.forward(*args, **(params or {}))
        return kernel.backward(np.ones_like(y) if grad is None else grad, saved)

    return run


def elementwise(sizes):
    numpy_backward = {
        "tanh": lambda g, x, y: g * (1 - y * y),
        "sigmoid": lambda g, x, y: g * y * (1 - y),
        "relu": lambda g, x, y: g * (x > 0),
    }
    torch_backward = {
        "tanh": lambda g, x, y: torch.ops.aten.tanh_backward(g, y),
        "sigmoid": lambda g, x, y: torch.ops.aten.sigmoid_backward(g, y),
        "relu": lambda g, x, y: torch.ops.aten.threshold_backward(g, x, 0),
    }
    for size in sizes:
        for op, composition in numpy_backward.items():
            x = RNG.standard_normal(size)
            g = RNG.standard_normal(size)
            kernel = dispatch(op, x)
            y, saved = kernel.forward(x)
            ours = best_time(lambda kernel=kernel, g=g, saved=saved: kernel.backward(g, saved))
            reference = best_time(lambda c=composition, g=g, x=x, y=y: c(g, x, y))
            pair = (None, None)
            if torch is not None:
                tg, tx, ty = (torch.from_numpy(a) for a in (g, x, y))
                pair = torch_times(lambda f=torch_backward[op], tg=tg, tx=tx, ty=ty: f(tg, tx, ty))
            row(f"{op} backward, {size} elements", ours, reference, pair)


def cross_entropy(batch, classes):
    logits = RNG.standard_normal((batch, classes))
    labels = RNG.integers(0, classes, batch)
    ours = best_time(fwd_bwd("softmax_cross_entropy", [logits, labels], grad=np.float64(1.0)))

    def composition():
        shifted = logits - logits.max(axis=1, keepdims=True)
        exp = np.exp(shifted)
        total = exp.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(total[:, 0]) - shifted[np.arange(batch), labels])
        grad = exp / total
        grad[np.arange(batch), labels] -= 1
        return loss, grad / batch

    pair = (None, None)
    if torch is not None:
        tlogits = torch.from_numpy(logits).requires_grad_()
        tlabels = torch.from_numpy(labels)

        def torch_run():
            torch.nn.functional.cross_entropy(tlogits, tlabels).backward()
            tlogits.grad = None

        pair = torch_times(torch_run)
    row(f"softmax xent fwd+bwd, {batch}x{classes}", ours, best_time(composition), pair)


def conv(batch, channels, filters, size):
    x = RNG.standard_normal((batch, channels, size, size)).astype(np.float32)
    w = RNG.standard_normal((filters, channels, 5, 5)).astype(np.float32)
    b = RNG.standard_normal(filters).astype(np.float32)
    ours = best_time(fwd_bwd("conv2d", [x, w, b]), budget=0.5)
    pair = (None, None)
    if torch is not None:
        tx, tw, tb = (torch.from_numpy(a).requires_grad_() for a in (x, w, b))

        def torch_run():
            y = torch.nn.functional.conv2d(tx, tw, tb)
            y.backward(torch.ones_like(y))
            tx.grad = tw.grad = tb.grad = None

        pair = torch_times(torch_run)
    row(f"conv2d fwd+bwd {channels}->{filters} 5x5, {batch}x{size}x{size}", ours, None, pair)


def lstm(batch, hidden):
    inputs = hidden
    x, h, c = (RNG.standard_normal((batch, n)) for n in (inputs, hidden, hidden))
    w_ih, w_hh = RNG.standard_normal((4 * hidden, inputs)), RNG.standard_normal((4 * hidden, hidden))
    b = RNG.standard_normal(4 * hidden)
    ones = np.ones((batch, hidden))
    ours = best_time(fwd_bwd("lstm_cell", [x, h, c, w_ih, w_hh, b], grad=(ones, ones)))

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))

    def composition():
        i, f, g, o = np.split(x @ w_ih.T + h @ w_hh.T + b, 4, axis=1)
        i, f, g, o = sigmoid(i), sigmoid(f), np.tanh(g), sigmoid(o)
        c_new = f * c + i * g
        t = np.tanh(c_new)
        total = ones + ones * o * (1 - t * t)
        gates = np.concatenate(
            [total * g * i * (1 - i), total * c * f * (1 - f), total * i * (1 - g * g), ones * t * o * (1 - o)],
            axis=1,
        )
        return gates @ w_ih, gates @ w_hh, total * f, gates.T @ x, gates.T @ h, gates.sum(0)

    pair = (None, None)
    if torch is not None:
        cell = torch.nn.LSTMCell(inputs, hidden).double()
        tx, th, tc = (torch.from_numpy(a).requires_grad_() for a in (x, h, c))

        def torch_run():
            h_new, c_new = cell(tx, (th, tc))
            (h_new.sum() + c_new.sum()).backward()
            cell.zero_grad(set_to_none=True)
            tx.grad = th.grad = tc.grad = None

        pair = torch_times(torch_run)
    row(f"lstm_cell fwd+bwd, batch {batch}, hidden {hidden}", ours, best_time(composition), pair)


def dispatch_overhead(size, rounds, seconds):
    """The table's cost per call, alone and around a ``size`` x ``size`` matmul, against numpy."""
    a, b = RNG.standard_normal((size, size)), RNG.standard_normal((size, size))
    labels = RNG.integers(0, size, size)
    kept = lookup("matmul")
    dispatch("matmul", a, b)
    dispatch("softmax_cross_entropy", a, labels)
    calls = {
        "empty call": lambda: None,
        "dispatch matmul (2 arrays)": lambda: dispatch("matmul", a, b),
        "dispatch tanh (1 array)": lambda: dispatch("tanh", a),
        "dispatch xent (index argument)": lambda: dispatch("softmax_cross_entropy", a, labels),
        "numpy matmul": lambda: np.matmul(a, b),
        "kept kernel (lookup once)": lambda: kept.forward(a, b),
        "through the table": lambda: dispatch("matmul", a, b).forward(a, b),
    }
    best = interleaved(calls, rounds, seconds)
    empty = best["empty call"]
    print(f"dispatch cost, minimum over {rounds} interleaved rounds "
          f"(net of an empty lambda call, {empty * 1e9:.0f} ns):")
    for name in list(calls)[1:4]:
        print(f"  {name:<34} {(best[name] - empty) * 1e9:7.0f} ns")
    direct = best["numpy matmul"]
    print(f"matmul {size}x{size}: numpy {direct * 1e6:.2f} us")
    for name in list(calls)[5:]:
        print(f"  {name:<34} {best[name] * 1e6:7.2f} us  {100 * (best[name] / direct - 1):+6.1f}%")
    ratio = (best["dispatch matmul (2 arrays)"] - empty) / direct
    print(f"  dispatch / numpy matmul            {100 * ratio:6.1f}%  (target <= 10%)")


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


# numpy compositions a rule would write without the kernels: forward, and backward(g, x, y).
ELEMENTWISE_NUMPY = {
    "exp": (np.exp, lambda g, x, y: g * y),
    "sin": (np.sin, lambda g, x, y: g * np.cos(x)),
    "tanh": (np.tanh, lambda g, x, y: g * (1 - y * y)),
    "sigmoid": (_sigmoid, lambda g, x, y: g * y * (1 - y)),
    "relu": (lambda x: np.maximum(x, 0), lambda g, x, y: g * (x > 0)),
    "softplus": (
        lambda x: np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0),
        lambda g, x, y: g * _sigmoid(x),
    ),
}


def crossover(ratios):
    """The smallest size from which the kernel is at least as fast at every larger size measured
    (``ratios``: size -> numpy / kernel, sizes ascending), or None when numpy wins at the top."""
    found = None
    for size, ratio in reversed(list(ratios.items())):
        if ratio < 1:
            break
        found = size
    return found


def measure_thresholds(quick):
    """Kernel against numpy composition per op and size: prints ratios and crossovers."""
    rounds, seconds = (2, 0.0005) if quick else (15, 0.003)
    sizes = [2**k for k in range(4, 19, 2 if quick else 1)]
    print(f"\nsize thresholds, float64 (numpy / kernel per size, minimum over {rounds} interleaved "
          "rounds; crossover = smallest size from which the kernel wins at every larger size)")
    for op, (numpy_forward, numpy_backward) in ELEMENTWISE_NUMPY.items():
        kernel = lookup(op)
        forward, backward = {}, {}
        for size in sizes:
            x, g = RNG.standard_normal(size), RNG.standard_normal(size)
            y, saved = kernel.forward(x)
            best = interleaved({
                "kernel forward": lambda k=kernel, x=x: k.forward(x),
                "numpy forward": lambda f=numpy_forward, x=x: f(x),
                "kernel backward": lambda k=kernel, g=g, s=saved: k.backward(g, s),
                "numpy backward": lambda f=numpy_backward, g=g, x=x, y=y: f(g, x, y),
            }, rounds, seconds)
            forward[size] = best["numpy forward"] / best["kernel forward"]
            backward[size] = best["numpy backward"] / best["kernel backward"]
        for phase, ratios in (("forward", forward), ("backward", backward)):
            cells = " ".join(f"{size}:{ratio:.2f}" for size, ratio in ratios.items())
            print(f"  {op:<9} {phase:<8} crossover {crossover(ratios)!s:>7}  {cells}")
    xent = lookup("softmax_cross_entropy")
    ratios = {}
    shapes = [(1, 2), (1, 10), (8, 10), (64, 10), (256, 100)] if not quick else [(1, 10), (64, 10)]
    for batch, classes in shapes:
        logits = RNG.standard_normal((batch, classes))
        labels = RNG.integers(0, classes, batch)
        rows = np.arange(batch)

        def ours(logits=logits, labels=labels):
            loss, saved = xent.forward(logits, labels)
            return loss, xent.backward(np.float64(1.0), saved)

        def composition(logits=logits, labels=labels, rows=rows, batch=batch):
            shifted = logits - logits.max(axis=1, keepdims=True)
            exp = np.exp(shifted)
            total = exp.sum(axis=1, keepdims=True)
            loss = np.mean(np.log(total[:, 0]) - shifted[rows, labels])
            grad = exp / total
            grad[rows, labels] -= 1
            return loss, grad / batch

        best = interleaved({"kernel": ours, "numpy": composition}, rounds, seconds)
        ratios[batch * classes] = best["numpy"] / best["kernel"]
    cells = " ".join(f"{b}x{c}:{r:.2f}" for (b, c), r in zip(shapes, ratios.values(), strict=True))
    print(f"  softmax_cross_entropy fwd+bwd crossover {crossover(ratios)!s:>7}  {cells}")
    print(f"recorded in cpsgrad.kernels.thresholds: {thresholds.summary()}")


def parse(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one short timing per measurement")
    parser.add_argument("--peers", default="all", help="none, all or torch")
    parser.add_argument("--only", default="kernels,dispatch,thresholds",
                        help="comma-separated sections: kernels, dispatch, thresholds")
    return parser.parse_args(argv)


def main(argv=None):
    global torch
    arguments = parse(argv)
    sections = set(arguments.only.split(","))
    if arguments.peers not in ("all",) and "torch" not in arguments.peers.split(","):
        torch = None
    print(f"numpy {np.__version__}; torch {torch.__version__ if torch else 'not used: columns skipped'}; "
          f"{os.cpu_count()} CPUs; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}, "
          f"OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE')}")
    if "kernels" in sections:
        print(f"{'workload (float64 unless noted)':<44} {'kernel':>13} {'numpy':>9} {'torch 1t':>9} {'torch 2t':>9}")
        elementwise([50, 3200] if arguments.quick else [50, 3200, 9600, 10**6])
        for batch, classes in [(1, 10), (64, 10)]:
            cross_entropy(batch, classes)
        for batch in (1,) if arguments.quick else (1, 64):
            conv(batch, 1, 10, 28)
            conv(batch, 10, 20, 12)
        for batch in (1,) if arguments.quick else (1, 64):
            for hidden in (50, 150):
                lstm(batch, hidden)
    if "dispatch" in sections:
        print()
        dispatch_overhead(50, *((3, 0.001) if arguments.quick else (40, 0.005)))
    if "thresholds" in sections:
        measure_thresholds(arguments.quick)


if __name__ == "__main__":
    main()
