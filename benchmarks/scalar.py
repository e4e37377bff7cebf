"""Scalar-program benchmark: gradients of float loops where per-operation overhead dominates.

Three workloads (DESIGN.md section 7), each an ordinary Python function differentiated with
respect to its first argument: the 100-step loop `a = 0.99*a + 0.01*a*a` (the headline), an
explicit-Euler pendulum with a data-dependent `if`, and a Taylor series summed in a `while` loop
until a term is small. cpsgrad is timed against HIPS autograd, PyTorch eager (one thread), JAX
with and without `jit`, tangent-ad and a hand-written numba adjoint (the practical limit).

Every gradient is first checked against the hand-written adjoint run as plain Python (rtol
1e-9), and that adjoint against central finite differences; only then is anything timed. The
time reported per gradient call is the minimum over several `timeit` rounds, each round timing
every peer in turn so that the machine's changing load reaches all of them alike.

    python benchmarks/scalar.py [--quick] [--peers none|all|NAME,NAME,...]

Exit status 1 when cpsgrad is missing or any selected peer errs or disagrees.
"""

import argparse
import functools
import importlib
import importlib.metadata
import math
import os
import platform
import sys
import timeit
import types
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np

RELATIVE_TOLERANCE = 1e-9
FINITE_DIFFERENCE_STEP = 1e-6
FINITE_DIFFERENCE_TOLERANCE = 1e-6
MAX_TAYLOR_PASSES = 40


# ---- workloads, as a user writes them ---------------------------------------------------------


def loop(a, steps):
    """The headline: `steps` iterations of a = 0.99*a + 0.01*a*a."""
    for _ in range(steps):
        a = 0.99 * a + 0.01 * a * a
    return a


def pendulum(drag, steps):
    """Angle of a pendulum with quadratic air drag after `steps` explicit-Euler steps."""
    gravity = 9.81
    time_step = 0.05
    angle = 1.0
    velocity = 0.0
    for _ in range(steps):
        if velocity > 0.0:
            friction = drag * velocity * velocity
        else:
            friction = -drag * velocity * velocity
        acceleration = -gravity * math.sin(angle) - friction
        angle = angle + time_step * velocity
        velocity = velocity + time_step * acceleration
    return angle


def taylor_sin(x, tolerance):
    """sin(x) by its Taylor series, adding terms while they are larger than `tolerance`."""
    total = 0.0
    term = x
    k = 1.0
    while abs(term) > tolerance:
        total = total + term
        term = -term * x * x / ((k + 1.0) * (k + 2.0))
        k = k + 2.0
    return total


# ---- hand-written adjoints: plain Python for the reference, compiled by numba as a peer -------


def loop_adjoint(a, steps):
    """d loop / d a: forward pass saving each a, then the chain rule backwards."""
    saved = np.empty(steps)
    for i in range(steps):
        saved[i] = a
        a = 0.99 * a + 0.01 * a * a
    a_d = 1.0
    for i in range(steps - 1, -1, -1):
        a_d = a_d * (0.99 + 0.02 * saved[i])
    return a_d


def pendulum_adjoint(drag, steps):
    """d pendulum / d drag: forward pass saving the state, then the chain rule backwards."""
    gravity = 9.81
    time_step = 0.05
    angles = np.empty(steps)
    velocities = np.empty(steps)
    angle = 1.0
    velocity = 0.0
    for i in range(steps):
        angles[i] = angle
        velocities[i] = velocity
        sign = 1.0 if velocity > 0.0 else -1.0
        acceleration = -gravity * math.sin(angle) - sign * drag * velocity * velocity
        angle = angle + time_step * velocity
        velocity = velocity + time_step * acceleration
    angle_d = 1.0
    velocity_d = 0.0
    drag_d = 0.0
    for i in range(steps - 1, -1, -1):
        angle = angles[i]
        velocity = velocities[i]
        sign = 1.0 if velocity > 0.0 else -1.0
        friction_d = -time_step * velocity_d
        drag_d += friction_d * sign * velocity * velocity
        next_velocity_d = velocity_d + time_step * angle_d
        next_velocity_d += friction_d * sign * 2.0 * drag * velocity
        angle_d = angle_d - time_step * velocity_d * gravity * math.cos(angle)
        velocity_d = next_velocity_d
    return drag_d


def taylor_sin_adjoint(x, tolerance):
    """d taylor_sin / d x: forward pass saving the terms, then the chain rule backwards."""
    terms = [x]
    k = 1.0
    while abs(terms[-1]) > tolerance:
        terms.append(-terms[-1] * x * x / ((k + 1.0) * (k + 2.0)))
        k = k + 2.0
    term_d = 0.0
    x_d = 0.0
    for j in range(len(terms) - 2, -1, -1):
        k = 1.0 + 2.0 * j
        denominator = (k + 1.0) * (k + 2.0)
        x_d -= term_d * terms[j] * 2.0 * x / denominator
        term_d = 1.0 - term_d * x * x / denominator
    return x_d + term_d


# ---- branch-free variants for jax.jit, written against numpy (jax rebinds np and math) --------


def pendulum_branch_free(drag, steps):
    """pendulum with its `if` as a `where`, so that jit can trace it."""
    gravity = 9.81
    time_step = 0.05
    angle = 1.0
    velocity = 0.0
    for _ in range(steps):
        drag_force = drag * velocity * velocity
        friction = np.where(velocity > 0.0, drag_force, -drag_force)
        acceleration = -gravity * math.sin(angle) - friction
        angle = angle + time_step * velocity
        velocity = velocity + time_step * acceleration
    return angle


def taylor_sin_branch_free(x, tolerance):
    """taylor_sin as MAX_TAYLOR_PASSES masked passes: reverse mode cannot go through a
    `lax.while_loop`, so a JAX user bounds the loop and freezes it once a term is small."""
    total = 0.0
    term = x
    k = 1.0
    for _ in range(MAX_TAYLOR_PASSES):
        active = np.abs(term) > tolerance
        total = np.where(active, total + term, total)
        term = np.where(active, -term * x * x / ((k + 1.0) * (k + 2.0)), term)
        k = k + 2.0
    return total


@dataclass(frozen=True)
class Workload:
    """One program to differentiate with respect to the first of `args`."""

    name: str
    function: Callable
    adjoint: Callable
    branch_free: Callable
    args: tuple


WORKLOADS = (
    Workload("loop, 100 steps", loop, loop_adjoint, loop, (0.5, 100)),
    Workload("pendulum, 100 Euler steps", pendulum, pendulum_adjoint, pendulum_branch_free,
             (0.3, 100)),
    Workload("Taylor sin(5), while loop", taylor_sin, taylor_sin_adjoint, taylor_sin_branch_free,
             (5.0, 1e-16)),
)


# ---- peers: each turns a workload into the no-argument call that is timed --------------------
# The call returns the gradient in the peer's own type, computed and ready (JAX: blocked on);
# converting it to a Python float is left out of the time (it costs JAX ~25 us, more than jit).


class Unavailable(Exception):
    """The peer cannot run this workload; the message says why and goes into the table."""


def import_peer(module_name):
    """Import a peer's module, or raise Unavailable saying why not."""
    try:
        return importlib.import_module(module_name)
    except Exception as error:  # a broken install must not stop the other peers
        if isinstance(error, ModuleNotFoundError) and error.name == module_name.split(".")[0]:
            raise Unavailable("not installed") from None
        raise Unavailable(f"import failed: {type(error).__name__}: {error}") from None


def rebind(function, **names):
    """The same function with some of its global names bound to other objects, so that one
    source serves every peer (for example `math` as `torch`, making `math.sin` `torch.sin`)."""
    global_names = {**function.__globals__, **names}
    return types.FunctionType(function.__code__, global_names, function.__name__,
                              function.__defaults__, function.__closure__)


class TorchMath:
    """`math` for the torch peer: torch's functions, also taking Python floats as `math` does."""

    def __init__(self, torch):
        self._torch = torch

    def __getattr__(self, name):
        function = getattr(self._torch, name)
        return lambda value: function(self._torch.as_tensor(value, dtype=self._torch.float64))


def cpsgrad_peer(workload):
    cpsgrad = import_peer("cpsgrad")
    return functools.partial(cpsgrad.grad(workload.function), *workload.args)


def numba_peer(workload):
    numba = import_peer("numba")
    return functools.partial(numba.njit(workload.adjoint), *workload.args)


def import_jax():
    jax = import_peer("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, import_peer("jax.numpy")


def jax_jit_peer(workload):
    jax, jnp = import_jax()
    traceable = rebind(workload.branch_free, math=jnp, np=jnp)
    static = tuple(range(1, len(workload.args)))
    gradient = jax.jit(jax.grad(traceable), static_argnums=static)
    return lambda: gradient(*workload.args).block_until_ready()


def tangent_peer(workload):
    tangent = import_peer("tangent")
    gradient = tangent.grad(rebind(workload.function, math=np))  # it has no rules for math.*
    return functools.partial(gradient, *workload.args)


def torch_peer(workload):
    torch = import_peer("torch")
    torch.set_num_threads(1)
    function = rebind(workload.function, math=TorchMath(torch))
    first, rest = workload.args[0], workload.args[1:]

    def gradient():
        x = torch.tensor(first, dtype=torch.float64, requires_grad=True)
        (x_d,) = torch.autograd.grad(function(x, *rest), x)
        return x_d

    return gradient


def jax_peer(workload):
    jax, jnp = import_jax()
    gradient = jax.grad(rebind(workload.function, math=jnp))
    return lambda: gradient(*workload.args).block_until_ready()


def autograd_peer(workload):
    autograd = import_peer("autograd")
    autograd_numpy = import_peer("autograd.numpy")
    gradient = autograd.grad(rebind(workload.function, math=autograd_numpy))
    return functools.partial(gradient, *workload.args)


PEERS = {
    "numba": ("hand-written numba adjoint", numba_peer),
    "jax-jit": ("jax.jit(jax.grad)", jax_jit_peer),
    "tangent": ("tangent-ad", tangent_peer),
    "torch": ("PyTorch eager, 1 thread", torch_peer),
    "jax": ("jax.grad, no jit", jax_peer),
    "autograd": ("HIPS autograd", autograd_peer),
}
DISTRIBUTIONS = {"cpsgrad": "cpsgrad", "numba": "numba", "jax": "jax", "tangent": "tangent-ad",
                 "torch": "torch", "autograd": "autograd"}
TARGETS = (("tangent", 8.0), ("torch", 50.0))  # on the headline loop: peer time / cpsgrad time


# ---- checking and timing -----------------------------------------------------------------------


@dataclass
class Result:
    """One table cell: a time per gradient call in microseconds, or why there is none."""

    microseconds: float | None = None
    reason: str = ""
    failed: bool = False


def reference_gradient(workload):
    """The hand-written adjoint as plain Python, after checking it against finite differences."""
    expected = float(workload.adjoint(*workload.args))
    first, rest = workload.args[0], workload.args[1:]
    step = FINITE_DIFFERENCE_STEP * max(1.0, abs(first))
    estimate = (workload.function(first + step, *rest)
                - workload.function(first - step, *rest)) / (2.0 * step)
    if not math.isclose(expected, estimate, rel_tol=FINITE_DIFFERENCE_TOLERANCE):
        raise AssertionError(f"{workload.name}: hand-written adjoint {expected!r} disagrees "
                             f"with finite differences {estimate!r}")
    return expected


def checked_call(make_peer, workload, expected):
    """Build the peer's gradient call and run it once (also the warm-up), or explain why not."""
    try:
        call = make_peer(workload)
        got = float(call())
    except Unavailable as reason:
        return None, Result(reason=f"n/a ({reason})")
    except Exception as error:
        return None, Result(reason=f"ERROR {type(error).__name__}: {error}", failed=True)
    if not math.isclose(got, expected, rel_tol=RELATIVE_TOLERANCE):
        return None, Result(reason=f"WRONG {got!r}, expected {expected!r}", failed=True)
    return call, Result()


def check(workload, peer_names):
    """Build and check every peer's gradient call on one workload; nothing is timed yet."""
    expected = reference_gradient(workload)
    makers = {"cpsgrad": cpsgrad_peer} | {name: PEERS[name][1] for name in peer_names}
    checked = {name: checked_call(make_peer, workload, expected)
               for name, make_peer in makers.items()}
    calls = {name: call for name, (call, _) in checked.items() if call is not None}
    return calls, {name: result for name, (_, result) in checked.items()}


def calls_per_repeat(timer, seconds_per_repeat):
    """How many calls make one repeat last at least `seconds_per_repeat` (doubling, as timeit)."""
    number = 1
    while timer.timeit(number) < seconds_per_repeat:
        number *= 2
    return number


def time_all(calls, results, repeats, seconds_per_repeat):
    """Microseconds per call, the minimum over `repeats` rounds; each round times every peer in
    turn, so that a change in the machine's load reaches all peers alike."""
    timers = {name: timeit.Timer(call) for name, call in calls.items()}
    numbers = {name: calls_per_repeat(timer, seconds_per_repeat) for name, timer in timers.items()}
    best = dict.fromkeys(timers, math.inf)
    for _ in range(repeats):
        for name, timer in timers.items():
            best[name] = min(best[name], timer.timeit(numbers[name]) / numbers[name])
    for name, seconds in best.items():
        results[name].microseconds = seconds * 1e6


# ---- report --------------------------------------------------------------------------------------


def three_figures(value):
    """A positive number to three significant figures, without an exponent: 0.742, 8.40, 2,538."""
    decimals = max(0, 2 - math.floor(math.log10(value)))
    return f"{value:,.{decimals}f}"


def ratio(result, cpsgrad):
    if result.microseconds is None or cpsgrad.microseconds is None:
        return "n/a"
    return three_figures(result.microseconds / cpsgrad.microseconds)


def table_rows(workload, results):
    cpsgrad = results["cpsgrad"]
    for name, result in results.items():
        label = "cpsgrad" if name == "cpsgrad" else PEERS[name][0]
        time = three_figures(result.microseconds) if result.microseconds is not None else result.reason
        yield f"| {workload.name} | {label} | {time} | {ratio(result, cpsgrad)} |"


def target_lines(headline):
    cpsgrad = headline["cpsgrad"].microseconds
    for name, wanted in TARGETS:
        label = f"cpsgrad >= {wanted:g}x faster than {PEERS[name][0]}"
        peer = headline.get(name)
        if cpsgrad is None or peer is None or peer.microseconds is None:
            yield f"- {label}: not measured"
        else:
            speedup = peer.microseconds / cpsgrad
            verdict = "met" if speedup >= wanted else "NOT met"
            yield f"- {label}: {verdict} ({three_figures(speedup)}x)"


def cpu_model():
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def versions(peer_names):
    found = []
    for name in ["cpsgrad", *peer_names]:
        distribution = DISTRIBUTIONS[name.removesuffix("-jit")]
        try:
            found.append(f"{distribution} {importlib.metadata.version(distribution)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{distribution} not installed")
    return ", ".join(dict.fromkeys(found))


def report(all_results, peer_names, timing):
    print(f"Scalar programs, {date.today().isoformat()}; {cpu_model()}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}; Python {platform.python_version()}; "
          f"{versions(peer_names)}")
    print(f"Microseconds per gradient call, {timing}; ratio = peer time / cpsgrad time "
          "(> 1: cpsgrad is faster).\n")
    print("| workload | peer | us per gradient | peer / cpsgrad |")
    print("| --- | --- | ---: | ---: |")
    for workload, results in all_results:
        for row in table_rows(workload, results):
            print(row)
    print("\nTargets, on the headline loop:")
    for line in target_lines(all_results[0][1]):
        print(line)


# ---- command line ------------------------------------------------------------------------------


def peer_list(text):
    """--peers: none, all, or a comma-separated list of peer names."""
    if text == "none":
        return []
    if text == "all":
        return list(PEERS)
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in PEERS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown peer(s) {', '.join(unknown)}; "
                                         f"choose from {', '.join(PEERS)}")
    return [name for name in PEERS if name in names]


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: one short timing round")
    parser.add_argument("--peers", type=peer_list, default=list(PEERS),
                        help=f"none, all (default) or a comma list of: {', '.join(PEERS)}")
    return parser.parse_args(argv)


def main(argv=None):
    arguments = parse_arguments(argv)
    repeats, seconds = (1, 0.002) if arguments.quick else (15, 0.05)
    checked = [(workload, *check(workload, arguments.peers)) for workload in WORKLOADS]
    for _, calls, results in checked:
        time_all(calls, results, repeats, seconds)
    all_results = [(workload, results) for workload, _, results in checked]
    timing = f"minimum over {repeats} interleaved round(s) of at least {seconds:g} s a peer"
    if arguments.quick:
        timing += " (--quick: a smoke run, not a measurement)"
    report(all_results, arguments.peers, timing)
    failed = any(result.failed for _, results in all_results for result in results.values())
    missing = any(results["cpsgrad"].microseconds is None for _, results in all_results)
    return 1 if failed or missing else 0


if __name__ == "__main__":
    sys.exit(main())
