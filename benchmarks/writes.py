"""Writes in place: a loop filling an n-element array by `x[i] = ...`, differentiated.

The workload is a recurrence written as numerical code writes it (issue 15's target: "a loop that
fills a 10^4-element array by `x[i] = ...` differentiates in O(n): at most 4x the time of the same
loop's forward pass in plain Python"):

    x = np.zeros(n); x[0] = w
    for i in range(1, n): x[i] = DECAY * x[i - 1] + w * math.sin(i)
    return np.sum(x * x)

cpsgrad's gradient is timed against the plain forward pass (the ratio the target is about), a
hand-written adjoint loop (also the reference: gradients must agree to 1e-9), and, where
installed, HIPS autograd (which cannot differentiate `x[i] = v`: reported as refused) and
jax.grad of the `.at[i].set(...)` transcription. Sizes 10^3 and 10^4 show the scaling: the
time per element must stay flat (O(n)), not grow with n (O(n^2) would be 10x per element).

    python benchmarks/writes.py [--quick] [--peers none|all]
"""

from __future__ import annotations

import argparse
import math
import sys
import timeit

import numpy as np

import cpsgrad

DECAY = 0.999


def fill(w, n):
    x = np.zeros(n)
    x[0] = w
    for i in range(1, n):
        x[i] = DECAY * x[i - 1] + w * math.sin(i)
    return np.sum(x * x)


def hand_written(w, n):
    """The forward loop, then its adjoint loop: d/dw of sum(x^2)."""
    x = np.zeros(n)
    x[0] = w
    for i in range(1, n):
        x[i] = DECAY * x[i - 1] + w * math.sin(i)
    x_d = 2.0 * x
    w_d = 0.0
    for i in range(n - 1, 0, -1):
        w_d += x_d[i] * math.sin(i)
        x_d[i - 1] += DECAY * x_d[i]
    return w_d + x_d[0]


def _best(call, rounds: int, number: int) -> float:
    return min(timeit.repeat(call, number=number, repeat=rounds)) / number


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one round (a smoke test)")
    parser.add_argument("--peers", default="all", help="none: cpsgrad, the forward and the hand-written adjoint only")
    options = parser.parse_args(argv)
    sizes = (100, 1000) if options.quick else (1000, 10000)
    rounds = 1 if options.quick else 5
    gradient = cpsgrad.grad(fill)
    w = 0.37
    print("| n | plain forward | cpsgrad grad | hand-written adjoint | cpsgrad / forward | cpsgrad per element |")
    print("| --- | --- | --- | --- | --- | --- |")
    failed = False
    for n in sizes:
        reference = hand_written(w, n)
        got = gradient(w, n)
        if abs(got - reference) > 1e-9 * max(1.0, abs(reference)):
            print(f"WRONG at n={n}: cpsgrad {got!r}, hand-written {reference!r}")
            failed = True
            continue
        number = max(1, 20000 // n)
        forward = _best(lambda n=n: fill(w, n), rounds, number)
        cps = _best(lambda n=n: gradient(w, n), rounds, number)
        hand = _best(lambda n=n: hand_written(w, n), rounds, number)
        print(
            f"| {n} | {forward * 1e3:.2f} ms | {cps * 1e3:.2f} ms | {hand * 1e3:.2f} ms | {cps / forward:.2f}x "
            f"| {cps / n * 1e6:.2f} us |"
        )
    if options.peers == "none":
        return 1 if failed else 0
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return 1 if failed else 0
    jax.config.update("jax_enable_x64", True)

    def jax_fill(w, n):
        x = jnp.zeros(n).at[0].set(w)
        for i in range(1, n):
            x = x.at[i].set(DECAY * x[i - 1] + w * math.sin(i))
        return jnp.sum(x * x)

    n = 200  # each .at[i].set copies the array and dispatches: seconds already at n = 1000
    jax_gradient = jax.grad(jax_fill)
    jax_time = _best(lambda: jax_gradient(w, n), 1, 1)
    print(f"\njax.grad of the .at[i].set transcription, n={n} (unjitted, as written): {jax_time * 1e3:.1f} ms")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
