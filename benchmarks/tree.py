"""Tree-LSTM benchmark: the gradient of a binary Tree-LSTM's loss over one 25-leaf tree.

Ordinary recursive numpy over a nested tuple (`node`, called by `tree_loss`): the binary
(N-ary) Tree-LSTM of Tai et al. 2015 with DESIGN.md section 7's TreeLSTM sizes (hidden 150,
embeddings 300, 5 classes, batch 1), a softmax classifier and its cross-entropy at every node,
differentiated with respect to its seven parameter arrays with
`cpsgrad.grad(tree_loss, argnums=(0, 1, 2, 3, 4, 5, 6))`. cpsgrad is timed against the
hand-written numpy forward+backward (recursive as well; also tuned, its weight gradients one
matrix product each), PyTorch eager (one thread), HIPS autograd and `jax.grad` on the same source,
and `jax.jit(jax.grad)` with the tree static (jit traces the recursion of that one tree into one
program).

The hand-written adjoint is checked against central finite differences and is the reference:
every peer's seven gradients must agree with it to a relative error (in norm, per parameter) of
1e-9, float64 throughout, before anything is timed. The timing is scalar.py's: the minimum over
several `timeit` rounds, each round timing every peer in turn.

    python benchmarks/tree.py [--quick] [--peers none|all|NAME,NAME,...]

Exit status 1 when cpsgrad is missing or fails, or any selected peer errs or disagrees.
"""

import math
import sys
from dataclasses import dataclass

# scalar.py's timing and table helpers, so that the suites measure alike (benchmarks/ is on the
# path when a suite runs as a script, as run.py runs it)
import _gradients as gradients
import numpy as np
from scalar import import_peer, rebind

HIDDEN = 150
EMBEDDING = 300
CLASSES = 5
LEAVES = 25
VOCABULARY = 100  # rows of the embedding table; the leaves' words are drawn from it
SEED = 0
FINITE_DIFFERENCE_STEP = 1e-5
FINITE_DIFFERENCE_TOLERANCE = 1e-6
FINITE_DIFFERENCE_ABSOLUTE = 1e-8  # the rounding of a central difference of losses near 80
FINITE_DIFFERENCE_ENTRIES = 3  # random entries checked per parameter


# ---- the workload, as a user writes it ----------------------------------------------------------
# A tree is a nested tuple: a leaf is (label, word index), an inner node (label, left, right).
# Leaf gates: input i, output o, update u from the word's embedding; inner-node gates: i, a forget
# gate for each child, o, u from the children's hidden states (no word), as in Tai et al.'s binary
# constituency Tree-LSTM.


def node(tree, E, W, b_leaf, U, b, W_out, b_out):
    """(h, c, loss) of a subtree: its root's hidden and memory states, and the summed
    cross-entropy of the classifier at each of its nodes."""
    if len(tree) == 2:  # a leaf: (label, word index)
        label, word = tree
        gates = W @ E[word] + b_leaf
        sigmoids = 1.0 / (1.0 + np.exp(-gates[:2 * HIDDEN]))
        i = sigmoids[:HIDDEN]
        o = sigmoids[HIDDEN:]
        u = np.tanh(gates[2 * HIDDEN:])
        c = i * u
        below = 0.0
    else:  # an inner node: (label, left subtree, right subtree)
        label, left, right = tree
        left_h, left_c, left_loss = node(left, E, W, b_leaf, U, b, W_out, b_out)
        right_h, right_c, right_loss = node(right, E, W, b_leaf, U, b, W_out, b_out)
        gates = U @ np.concatenate((left_h, right_h)) + b
        sigmoids = 1.0 / (1.0 + np.exp(-gates[:4 * HIDDEN]))
        i = sigmoids[:HIDDEN]
        f_left = sigmoids[HIDDEN:2 * HIDDEN]
        f_right = sigmoids[2 * HIDDEN:3 * HIDDEN]
        o = sigmoids[3 * HIDDEN:]
        u = np.tanh(gates[4 * HIDDEN:])
        c = i * u + f_left * left_c + f_right * right_c
        below = left_loss + right_loss
    h = o * np.tanh(c)
    y = W_out @ h + b_out
    m = np.max(y)
    loss = below + m + np.log(np.sum(np.exp(y - m))) - y[label]  # -log softmax(y)[label]
    return h, c, loss


def tree_loss(E, W, b_leaf, U, b, W_out, b_out, tree):
    """The Tree-LSTM's loss on one labelled tree: the cross-entropy summed over its nodes."""
    _, _, loss = node(tree, E, W, b_leaf, U, b, W_out, b_out)
    return loss


# ---- hand-written adjoint: a recursive forward pass keeping what the backward pass needs ---------


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def node_forward(tree, E, W, b_leaf, U, b, W_out, b_out):
    """(h, c, loss, saved): node's forward pass, with what node_backward needs (and the
    children's saved values)."""
    if len(tree) == 2:
        label, word = tree
        x = E[word]
        gates = W @ x + b_leaf
        sigmoids = sigmoid(gates[:2 * HIDDEN])
        u = np.tanh(gates[2 * HIDDEN:])
        i, o = sigmoids[:HIDDEN], sigmoids[HIDDEN:]
        c = i * u
        below = 0.0
        saved_gates = (word, x, sigmoids, u)
    else:
        label, left, right = tree
        left_h, left_c, left_loss, left_saved = node_forward(left, E, W, b_leaf, U, b, W_out, b_out)
        right_h, right_c, right_loss, right_saved = node_forward(right, E, W, b_leaf, U, b,
                                                                 W_out, b_out)
        children = np.concatenate((left_h, right_h))
        gates = U @ children + b
        sigmoids = sigmoid(gates[:4 * HIDDEN])
        u = np.tanh(gates[4 * HIDDEN:])
        i, f_left, f_right, o = (sigmoids[:HIDDEN], sigmoids[HIDDEN:2 * HIDDEN],
                                 sigmoids[2 * HIDDEN:3 * HIDDEN], sigmoids[3 * HIDDEN:])
        c = i * u + f_left * left_c + f_right * right_c
        below = left_loss + right_loss
        saved_gates = (children, left_c, right_c, sigmoids, u, left_saved, right_saved)
    tanh_c = np.tanh(c)
    h = o * tanh_c
    y = W_out @ h + b_out
    m = np.max(y)
    exps = np.exp(y - m)
    total = np.sum(exps)
    loss = below + m + np.log(total) - y[label]
    return h, c, loss, (label, h, tanh_c, exps / total, saved_gates)


def node_backward(saved, dh, dc, parameters, gradients):
    """Add the subtree's gradients (given d loss/dh and d loss/dc of its root from the parent;
    each node's loss has weight 1) into `gradients`, in place."""
    E, W, b_leaf, U, b, W_out, b_out = parameters
    dE, dW, db_leaf, dU, db, dW_out, db_out = gradients
    label, h, tanh_c, probabilities, saved_gates = saved
    dy = probabilities.copy()
    dy[label] -= 1.0
    dW_out += np.outer(dy, h)
    db_out += dy
    dh = dh + W_out.T @ dy
    if len(saved_gates) == 4:  # a leaf
        word, x, sigmoids, u = saved_gates
        i, o = sigmoids[:HIDDEN], sigmoids[HIDDEN:]
        dc = dc + dh * o * (1.0 - tanh_c * tanh_c)
        dsigmoids = np.concatenate((dc * u, dh * tanh_c))
        dgates = np.concatenate((dsigmoids * sigmoids * (1.0 - sigmoids), dc * i * (1.0 - u * u)))
        dW += np.outer(dgates, x)
        db_leaf += dgates
        dE[word] += W.T @ dgates
        return
    children, left_c, right_c, sigmoids, u, left_saved, right_saved = saved_gates
    i, f_left, f_right, o = (sigmoids[:HIDDEN], sigmoids[HIDDEN:2 * HIDDEN],
                             sigmoids[2 * HIDDEN:3 * HIDDEN], sigmoids[3 * HIDDEN:])
    dc = dc + dh * o * (1.0 - tanh_c * tanh_c)
    dsigmoids = np.concatenate((dc * u, dc * left_c, dc * right_c, dh * tanh_c))
    dgates = np.concatenate((dsigmoids * sigmoids * (1.0 - sigmoids), dc * i * (1.0 - u * u)))
    dU += np.outer(dgates, children)
    db += dgates
    dchildren = U.T @ dgates
    node_backward(left_saved, dchildren[:HIDDEN], dc * f_left, parameters, gradients)
    node_backward(right_saved, dchildren[HIDDEN:], dc * f_right, parameters, gradients)


def tree_adjoint(E, W, b_leaf, U, b, W_out, b_out, tree):
    """The seven gradients of tree_loss: node_forward over the tree, then node_backward from the
    root (d loss/d its h and c are zero: only its classifier reads them)."""
    parameters = (E, W, b_leaf, U, b, W_out, b_out)
    _, _, _, saved = node_forward(tree, *parameters)
    gradients = tuple(np.zeros_like(parameter) for parameter in parameters)
    zeros = np.zeros(HIDDEN)
    node_backward(saved, zeros, zeros, parameters, gradients)
    return gradients


def node_backward_batched(saved, dh, dc, parameters, rows):
    """node_backward without the weight gradients: each node appends its gate gradient and the
    vector it multiplied (and its classifier's dy and h) to `rows`, for tree_adjoint_batched to
    turn into matrix products."""
    E, W, b_leaf, U, b, W_out, b_out = parameters
    leaf_rows, inner_rows, classifier_rows = rows
    label, h, tanh_c, probabilities, saved_gates = saved
    dy = probabilities.copy()
    dy[label] -= 1.0
    classifier_rows.append((dy, h))
    dh = dh + W_out.T @ dy
    if len(saved_gates) == 4:  # a leaf
        word, x, sigmoids, u = saved_gates
        i, o = sigmoids[:HIDDEN], sigmoids[HIDDEN:]
        dc = dc + dh * o * (1.0 - tanh_c * tanh_c)
        dsigmoids = np.concatenate((dc * u, dh * tanh_c))
        dgates = np.concatenate((dsigmoids * sigmoids * (1.0 - sigmoids), dc * i * (1.0 - u * u)))
        leaf_rows.append((dgates, x, word))
        return
    children, left_c, right_c, sigmoids, u, left_saved, right_saved = saved_gates
    i, f_left, f_right, o = (sigmoids[:HIDDEN], sigmoids[HIDDEN:2 * HIDDEN],
                             sigmoids[2 * HIDDEN:3 * HIDDEN], sigmoids[3 * HIDDEN:])
    dc = dc + dh * o * (1.0 - tanh_c * tanh_c)
    dsigmoids = np.concatenate((dc * u, dc * left_c, dc * right_c, dh * tanh_c))
    dgates = np.concatenate((dsigmoids * sigmoids * (1.0 - sigmoids), dc * i * (1.0 - u * u)))
    inner_rows.append((dgates, children))
    dchildren = U.T @ dgates
    node_backward_batched(left_saved, dchildren[:HIDDEN], dc * f_left, parameters, rows)
    node_backward_batched(right_saved, dchildren[HIDDEN:], dc * f_right, parameters, rows)


def tree_adjoint_batched(E, W, b_leaf, U, b, W_out, b_out, tree):
    """tree_adjoint as a hand-writer tuning it writes it: the same recursive forward and backward
    passes, but each weight gradient one matrix product over the nodes (the sum of the per-node
    outer products), the embedding rows' gradients one product and one `np.add.at`."""
    parameters = (E, W, b_leaf, U, b, W_out, b_out)
    _, _, _, saved = node_forward(tree, *parameters)
    rows = ([], [], [])
    zeros = np.zeros(HIDDEN)
    node_backward_batched(saved, zeros, zeros, parameters, rows)
    leaf_rows, inner_rows, classifier_rows = rows
    leaf_dgates = np.array([dgates for dgates, _, _ in leaf_rows])
    dE = np.zeros_like(E)
    np.add.at(dE, [word for _, _, word in leaf_rows], leaf_dgates @ W)
    dW = leaf_dgates.T @ np.array([x for _, x, _ in leaf_rows])
    inner_dgates = np.array([dgates for dgates, _ in inner_rows])
    dU = inner_dgates.T @ np.array([children for _, children in inner_rows])
    dys = np.array([dy for dy, _ in classifier_rows])
    dW_out = dys.T @ np.array([h for _, h in classifier_rows])
    return (dE, dW, leaf_dgates.sum(axis=0), dU, inner_dgates.sum(axis=0), dW_out,
            dys.sum(axis=0))


# ---- data and parameters -------------------------------------------------------------------------


def random_tree(rng, words):
    """A labelled binary tree over `words` (left to right): split at a random point, recursively;
    every node gets a random class label."""
    label = int(rng.integers(CLASSES))
    if len(words) == 1:
        return (label, words[0])
    split = int(rng.integers(1, len(words)))
    return (label, random_tree(rng, words[:split]), random_tree(rng, words[split:]))


def depth(tree):
    return 1 if len(tree) == 2 else 1 + max(depth(tree[1]), depth(tree[2]))


@dataclass(frozen=True)
class Workload:
    """The arguments of tree_loss: parameters first (differentiated), then the tree."""

    name: str
    source: str
    args: tuple

    @property
    def parameters(self):
        return self.args[:7]

    @property
    def tree(self):
        return self.args[7]


def make_workload():
    """One labelled binary tree of LEAVES leaves (words drawn from a VOCABULARY-row embedding
    table, split points and labels random), parameters drawn at random (seeded): weights with
    scale 1/sqrt(fan-in), biases and embeddings small and non-zero, so that every term of the
    gradient is exercised."""
    rng = np.random.default_rng(SEED)
    words = [int(word) for word in rng.integers(VOCABULARY, size=LEAVES)]
    tree = random_tree(rng, words)
    E = rng.standard_normal((VOCABULARY, EMBEDDING)) * 0.5
    W = rng.standard_normal((3 * HIDDEN, EMBEDDING)) / math.sqrt(EMBEDDING)
    b_leaf = rng.standard_normal(3 * HIDDEN) * 0.1
    U = rng.standard_normal((5 * HIDDEN, 2 * HIDDEN)) / math.sqrt(2 * HIDDEN)
    b = rng.standard_normal(5 * HIDDEN) * 0.1
    W_out = rng.standard_normal((CLASSES, HIDDEN)) / math.sqrt(HIDDEN)
    b_out = rng.standard_normal(CLASSES) * 0.1
    name = (f"binary Tree-LSTM, {LEAVES} leaves, hidden {HIDDEN}, embeddings {EMBEDDING}, "
            f"{CLASSES} classes")
    source = (f"one random binary tree (seed {SEED}): {2 * LEAVES - 1} nodes, depth "
              f"{depth(tree)}, {len(set(words))} distinct words of a {VOCABULARY}-row table")
    return Workload(name, source, (E, W, b_leaf, U, b, W_out, b_out, tree))


# ---- peers: each turns the workload into the no-argument call that is timed ----------------------
# Each takes its inputs in its own form, converted once outside the timing (a PyTorch or JAX user
# keeps parameters as tensors); the call returns the seven gradients in the peer's own type,
# computed and ready (JAX: blocked on).

ARGNUMS = (0, 1, 2, 3, 4, 5, 6)


def cpsgrad_peer(workload):
    cpsgrad = import_peer("cpsgrad")
    gradient = cpsgrad.grad(tree_loss, argnums=ARGNUMS)
    return lambda: gradient(*workload.args)


def numpy_peer(workload):
    return lambda: tree_adjoint(*workload.args)


def numpy_batched_peer(workload):
    return lambda: tree_adjoint_batched(*workload.args)


def import_jax():
    jax = import_peer("jax")
    jax.config.update("jax_enable_x64", True)  # float64 like the others; this process only
    return jax, import_peer("jax.numpy")


def rebind_recursion(np_module):
    """tree_loss and node with `np` bound to another module; node's recursive calls reach the
    rebound node (its name is looked up in the rebound globals)."""
    rebound_node = rebind(node, np=np_module)
    rebound_node.__globals__["node"] = rebound_node
    return rebind(tree_loss, np=np_module, node=rebound_node)


def jax_jit_peer(workload):
    jax, jnp = import_jax()
    gradient = jax.jit(jax.grad(rebind_recursion(jnp), argnums=ARGNUMS), static_argnums=(7,))
    parameters = [jnp.asarray(parameter) for parameter in workload.parameters]
    return lambda: jax.block_until_ready(gradient(*parameters, workload.tree))


def torch_peer(workload):
    torch = import_peer("torch")
    torch.set_num_threads(1)
    loss = rebind_recursion(torch)
    parameters = tuple(torch.from_numpy(parameter).requires_grad_()
                       for parameter in workload.parameters)
    return lambda: torch.autograd.grad(loss(*parameters, workload.tree), parameters)


def jax_peer(workload):
    jax, jnp = import_jax()
    gradient = jax.grad(rebind_recursion(jnp), argnums=ARGNUMS)
    parameters = [jnp.asarray(parameter) for parameter in workload.parameters]
    return lambda: jax.block_until_ready(gradient(*parameters, workload.tree))


def autograd_peer(workload):
    autograd = import_peer("autograd")
    gradient = autograd.grad(rebind_recursion(import_peer("autograd.numpy")), argnum=ARGNUMS)
    return lambda: gradient(*workload.args)


PEERS = {
    "numpy": ("hand-written numpy forward+backward", numpy_peer),
    "numpy-batched": ("hand-written numpy, weight gradients batched", numpy_batched_peer),
    "jax-jit": ("jax.jit(jax.grad), tree static", jax_jit_peer),
    "torch": ("PyTorch eager, 1 thread", torch_peer),
    "jax": ("jax.grad, no jit", jax_peer),
    "autograd": ("HIPS autograd", autograd_peer),
}
DISTRIBUTIONS = {"cpsgrad": "cpsgrad", "numpy": "numpy", "jax": "jax", "torch": "torch",
                 "autograd": "autograd"}
# (peer, least peer time / cpsgrad time, what it means)
TARGETS = (("numpy", 1 / 1.3, "cpsgrad within 1.3x of the hand-written numpy forward+backward"),
           ("torch", 1.0, "cpsgrad no slower than PyTorch eager, 1 thread"),
           ("numpy-batched", 1 / 1.3, "cpsgrad within 1.3x of the hand-written numpy with its "
                                      "weight gradients batched (the stricter reading)"))
PARAMETER_NAMES = ("E", "W", "b_leaf", "U", "b", "W_out", "b_out")


# ---- checking and timing -----------------------------------------------------------------------






def words_of(tree):
    return [tree[1]] if len(tree) == 2 else words_of(tree[1]) + words_of(tree[2])


def finite_difference_directions(name, gradient, rng, used_rows):
    """(label, direction) pairs along which d/d`name` is checked: a few random entries (for E,
    in rows the tree uses: the others' gradient is zero), then, as rnn.py does, the gradient
    plus a random direction, which covers every entry at once."""
    for _ in range(FINITE_DIFFERENCE_ENTRIES):
        if name == "E":
            entry = (used_rows[rng.integers(len(used_rows))], int(rng.integers(EMBEDDING)))
        else:
            entry = tuple(int(rng.integers(size)) for size in gradient.shape)
        direction = np.zeros_like(gradient)
        direction[entry] = 1.0
        yield f"{name}{list(entry)}", direction
    direction = rng.standard_normal(gradient.shape)
    yield (f"{name} along a direction",
           gradient / np.linalg.norm(gradient) + direction / np.linalg.norm(direction))


def reference_gradient(workload):
    """The hand-written adjoint as plain numpy, after checking it against central finite
    differences of tree_loss (step 1e-5; rtol 1e-6, or 1e-8 absolute: a difference of two losses
    near 80 cannot resolve less) along a few directions for each parameter."""
    expected = [np.asarray(gradient) for gradient in tree_adjoint(*workload.args)]
    rng = np.random.default_rng(SEED + 1)
    used_rows = sorted(set(words_of(workload.tree)))
    for position, (name, gradient) in enumerate(zip(PARAMETER_NAMES, expected, strict=True)):
        for label, direction in finite_difference_directions(name, gradient, rng, used_rows):

            def loss_along(step, position=position, direction=direction):
                args = list(workload.args)
                args[position] = args[position] + step * direction
                return tree_loss(*args)

            step = FINITE_DIFFERENCE_STEP
            estimate = float(loss_along(step) - loss_along(-step)) / (2.0 * step)
            exact = float(np.sum(gradient * direction))
            if not math.isclose(exact, estimate, rel_tol=FINITE_DIFFERENCE_TOLERANCE,
                                abs_tol=FINITE_DIFFERENCE_ABSOLUTE):
                raise AssertionError(f"hand-written d/d{label}: {exact!r} disagrees with finite "
                                     f"differences {estimate!r}")
    return expected



SUITE = gradients.Suite(
    title="Tree-LSTM",
    describe=lambda workload: f"Tree: {workload.source}. Gradient w.r.t. {', '.join(PARAMETER_NAMES)}; float64.",
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
