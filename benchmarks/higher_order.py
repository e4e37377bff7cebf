"""Forward mode and second derivatives: what they cost beside a gradient, and beside JAX.

Ratios from one run (the machines are noisy), each the minimum over rounds that time every
entry in turn:

- `jvp` of a function / the function itself (target: at most 3x);
- a Hessian-vector product / one gradient (target: at most 4x);
- `cpsgrad.hessian` of a 100-parameter MLP loss / `jax.hessian` without jit (target: at most 1x).

Every value is first checked against JAX (rtol 1e-9) before anything is timed.

    python benchmarks/higher_order.py [--quick] [--peers none|all|jax]
"""

import argparse
import math
import sys
import timeit

import numpy as np

import cpsgrad


def pendulum(drag, steps):
    angle, velocity = 1.0, 0.0
    for _ in range(steps):
        friction = drag * velocity * abs(velocity)
        velocity = velocity - 0.05 * (9.81 * math.sin(angle) + friction)
        angle = angle + 0.05 * velocity
    return angle


def pendulum_numpy(drag, steps):
    """The same with np.sin: numpy scalars, not Python floats, from the first step on."""
    angle, velocity = 1.0, 0.0
    for _ in range(steps):
        friction = drag * velocity * abs(velocity)
        velocity = velocity - 0.05 * (9.81 * np.sin(angle) + friction)
        angle = angle + 0.05 * velocity
    return angle


def mlp_loss(w, x, y):
    """A 100-parameter MLP loss, 4 -> 10 -> 6 (summed) with tanh, the weights packed in one vector."""
    w1 = w[:40].reshape(4, 10)
    w2 = w[40:100].reshape(10, 6)
    h = np.tanh(x @ w1)
    out = np.tanh(h @ w2)
    return np.mean((np.sum(out, axis=1) - y) ** 2)


def _best(function, rounds: int, number: int) -> float:
    function()  # the transforms are made on the first call: not what is timed
    return min(timeit.repeat(function, number=number, repeat=rounds)) / number


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: one short timing round")
    parser.add_argument("--peers", default="all", help="none, all or jax")
    arguments = parser.parse_args(argv)
    rounds, number = (1, 3) if arguments.quick else (7, 20)
    rng = np.random.default_rng(0)
    w = rng.normal(size=100) * 0.5
    x = rng.normal(size=(16, 4))
    y = rng.normal(size=16)
    v = rng.normal(size=100)
    gradient = cpsgrad.grad(mlp_loss)
    rows = []

    if arguments.peers != "none":
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)

        def mlp_loss_jax(w, x, y):
            h = jnp.tanh(x @ w[:40].reshape(4, 10))
            return jnp.mean((jnp.sum(jnp.tanh(h @ w[40:100].reshape(10, 6)), axis=1) - y) ** 2)

        expected_hvp = jax.jvp(lambda w: jax.grad(mlp_loss_jax)(w, x, y), (w,), (v,))[1]
        directions = (v, np.zeros_like(x), np.zeros_like(y))
        if not np.allclose(cpsgrad.hvp(mlp_loss, (w, x, y), directions)[0], expected_hvp, rtol=1e-9):
            print("cpsgrad.hvp disagrees with JAX", file=sys.stderr)
            return 1
        expected_hessian = jax.hessian(mlp_loss_jax)(w, x, y)
        if not np.allclose(cpsgrad.hessian(mlp_loss)(w, x, y), expected_hessian, rtol=1e-9, atol=1e-12):
            print("cpsgrad.hessian disagrees with JAX", file=sys.stderr)
            return 1
        hessian_rounds = 1 if arguments.quick else 3
        ours = _best(lambda: cpsgrad.hessian(mlp_loss)(w, x, y), hessian_rounds, 1)
        theirs = _best(lambda: jax.hessian(mlp_loss_jax)(w, x, y).block_until_ready(), hessian_rounds, 1)
        rows.append(("hessian, 100-parameter MLP: cpsgrad / jax.hessian (no jit)", ours / theirs, "<= 1"))

    plain = _best(lambda: pendulum(0.3, 100), rounds, number)
    forward = _best(lambda: cpsgrad.jvp(pendulum, (0.3, 100), (1.0, 0)), rounds, number)
    rows.append(("jvp / the function, pendulum 100 steps (math.sin)", forward / plain, "<= 3"))
    plain = _best(lambda: pendulum_numpy(0.3, 100), rounds, number)
    forward = _best(lambda: cpsgrad.jvp(pendulum_numpy, (0.3, 100), (1.0, 0)), rounds, number)
    rows.append(("jvp / the function, pendulum 100 steps (np.sin)", forward / plain, "<= 3"))
    plain = _best(lambda: mlp_loss(w, x, y), rounds, number)
    forward = _best(lambda: cpsgrad.jvp(mlp_loss, (w, x, y), (v, np.zeros_like(x), np.zeros_like(y))), rounds, number)
    rows.append(("jvp / the function, MLP loss", forward / plain, "<= 3"))
    one_gradient = _best(lambda: gradient(w, x, y), rounds, number)
    product = _best(lambda: cpsgrad.hvp(mlp_loss, (w, x, y), (v, np.zeros_like(x), np.zeros_like(y))), rounds, number)
    rows.append(("hvp / one gradient, MLP loss", product / one_gradient, "<= 4"))

    print("ratio (lower is better)" + (" (--quick: a smoke run, not a measurement)" if arguments.quick else ""))
    for label, ratio, target in rows:
        print(f"  {label:64s} {ratio:7.2f}x   target {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
