"""Fitting an ODE's parameters through closures and higher-order functions.

A damped oscillator x'' = -k x - c x', written as a vector field that a factory makes as a
closure over the parameter dict, integrated by a user-written higher-order function (explicit
Euler over tuples, comprehensions and zip), and a mean squared error against observations
written with a generator expression:

    field = make_field(theta)                 # a closure capturing theta["k"], theta["c"]
    path = euler(field, (1.0, 0.0), dt, n)    # calls field at every step
    loss = sum((p[0] - o) ** 2 for p, o in zip(path, observed, strict=True)) / len(observed)

`cpsgrad.value_and_grad(loss_fn)(theta, observed, dt)` returns the loss and a dict of the keys of
`theta`: the gradient reaches k and c through the closure, the calls inside `euler`, the
comprehensions and the generator. Gradient descent then recovers the k and c that made the
observations (they come from the same integrator at the true parameters plus a little noise).

    python docs/examples/ode_fit.py [--steps 400] [--points 60] [--lr 0.5]
"""

import argparse
import sys
import time

import numpy as np

import cpsgrad
from cpsgrad.testing import check_grad


def make_field(theta):
    """The oscillator's vector field, closing over the parameters."""
    k, c = theta["k"], theta["c"]

    def field(state):
        position, velocity = state
        return (velocity, -k * position - c * velocity)

    return field


def euler(field, state, dt, steps):
    """Explicit Euler: the states visited, the first included."""
    path = [state]
    for _ in range(steps):
        slope = field(state)
        state = tuple(s + dt * d for s, d in zip(state, slope, strict=True))
        path.append(state)
    return path


def loss_fn(theta, observed, dt):
    path = euler(make_field(theta), (1.0, 0.0), dt, len(observed) - 1)
    return sum((p[0] - o) ** 2 for p, o in zip(path, observed, strict=True)) / len(observed)


def loss_of(k, c, observed, dt):
    """The loss as a function of the two parameters, for the gradient check."""
    return loss_fn({"k": k, "c": c}, observed, dt)


def observations(theta, points, dt, noise=0.002, seed=0):
    positions = [p[0] for p in euler(make_field(theta), (1.0, 0.0), dt, points - 1)]
    rng = np.random.default_rng(seed)
    return [float(x + noise * rng.normal()) for x in positions]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400, help="gradient descent steps")
    parser.add_argument("--points", type=int, default=60, help="observed time points")
    parser.add_argument("--lr", type=float, default=0.5, help="learning rate")
    arguments = parser.parse_args(argv)

    dt = 0.1
    truth = {"k": 2.0, "c": 0.3}
    observed = observations(truth, arguments.points, dt)
    theta = {"k": 1.0, "c": 0.8}

    try:
        result = check_grad(loss_of, theta["k"], theta["c"], observed, dt, argnums=(0, 1))
    except AssertionError as error:
        print(f"gradient check against finite differences FAILED: {error}")
        return 1
    analytic = ", ".join(f"{v:.6f}" for v in result.analytic)
    numeric = ", ".join(f"{v:.6f}" for v in result.numeric)
    print(f"gradient check: cpsgrad ({analytic}), central differences ({numeric})")

    gradient = cpsgrad.value_and_grad(loss_fn)
    start = time.perf_counter()
    first, _ = gradient(theta, observed, dt)
    for _ in range(arguments.steps):
        loss, grads = gradient(theta, observed, dt)
        theta = {name: theta[name] - arguments.lr * grads[name] for name in theta}
    elapsed = time.perf_counter() - start
    final, _ = gradient(theta, observed, dt)
    print(
        f"loss {first:.5f} -> {final:.5f} in {arguments.steps} steps ({1e3 * elapsed / arguments.steps:.2f} ms a step)"
    )
    print(f"k = {theta['k']:.3f} (true {truth['k']}), c = {theta['c']:.3f} (true {truth['c']})")
    return 0 if final < first else 1


if __name__ == "__main__":
    sys.exit(main())
