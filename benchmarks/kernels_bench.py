"""Benchmark the CPU kernels against the numpy composition and PyTorch CPU (1 and 2 threads).

Run ``python benchmarks/kernels_bench.py``. Every figure is the best of several timed repeats
in this one run; ratios are ``other / kernel`` (above 1 means the kernel is faster). PyTorch
columns are skipped when torch is not installed.
"""

import os
import timeit

import numpy as np

from cpsgrad.kernels import dispatch

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


def dispatch_overhead(size):
    a, b = RNG.standard_normal((size, size)), RNG.standard_normal((size, size))
    direct = best_time(lambda: np.matmul(a, b), budget=0.5)
    through = best_time(lambda: dispatch("matmul", a, b).forward(a, b), budget=0.5)
    print(f"matmul {size}x{size}: numpy {direct * 1e6:.2f} us, through the table "
          f"{through * 1e6:.2f} us, overhead {100 * (through / direct - 1):+.1f}%")


def main():
    print(f"numpy {np.__version__}; torch {torch.__version__ if torch else 'not installed: columns skipped'}; "
          f"{os.cpu_count()} CPUs")
    print(f"{'workload (float64 unless noted)':<44} {'kernel':>13} {'numpy':>9} {'torch 1t':>9} {'torch 2t':>9}")
    elementwise([50, 3200, 9600, 10**6])
    for batch, classes in [(1, 10), (64, 10)]:
        cross_entropy(batch, classes)
    for batch in (1, 64):
        conv(batch, 1, 10, 28)
        conv(batch, 10, 20, 12)
    for batch in (1, 64):
        for hidden in (50, 150):
            lstm(batch, hidden)
    dispatch_overhead(50)


if __name__ == "__main__":
    main()
