"""A binary Tree-LSTM sentiment classifier over parse trees, differentiated by cpsgrad.

The N-ary Tree-LSTM of Tai et al. 2015 on binarized constituency trees written in the Stanford
Sentiment Treebank's bracket format, "(3 (2 It) (4 (2 's) (4 great)))": every node has a
sentiment label 0-4 (very negative to very positive), every leaf a word. The network is ordinary
recursive numpy: `node(tree, params)` returns a subtree's (h, c, loss), `tree_loss(params, tree)`
the cross-entropy summed over the tree's nodes, and

    grads = cpsgrad.grad(tree_loss)(params, tree)

is a dict with the keys of `params`. The gradient is checked against central finite differences
and against torch.autograd (when torch is installed), then a few epochs of Adagrad train the
network on a handful of hand-written trees.

    python docs/examples/tree_lstm.py [--hidden 16] [--embedding 16] [--epochs 10] [--no-torch]
"""

import argparse
import sys
import time

import numpy as np

import cpsgrad

# ---- data: trees in SST bracket format -----------------------------------------------------------

TREES = [
    "(3 (2 It) (4 (2 's) (4 great)))",
    "(4 (2 A) (4 (4 wonderful) (3 (2 little) (2 film))))",
    "(0 (2 The) (0 (2 plot) (0 (2 is) (0 (1 painfully) (0 dull)))))",
    "(1 (2 Not) (3 (2 very) (3 good)))",
    "(2 (2 It) (2 (2 is) (2 (2 a) (2 film))))",
    "(3 (3 (3 funny) (2 and)) (3 warm))",
    "(1 (2 (2 The) (2 plot)) (1 (2 is) (1 (2 too) (1 long))))",
    "(4 (2 The) (4 (2 film) (4 (2 is) (4 (3 very) (4 wonderful)))))",
]


def tokenize(text):
    """'(3 (2 It) (4 great))' -> ['(', '3', '(', '2', 'It', ')', ...]: parentheses are tokens of
    their own, anything else between spaces is a word or a label."""
    tokens = []
    word = ""
    for char in text:
        if char in "() \t\n":
            if word:
                tokens.append(word)
                word = ""
            if char in "()":
                tokens.append(char)
        else:
            word += char
    if word:
        tokens.append(word)
    return tokens


def parse(text):
    """A bracketed binary tree as nested tuples: a leaf is (label, word), an inner node
    (label, left, right). Raises ValueError on anything malformed."""
    tokens = tokenize(text)
    tree, end = _parse_node(tokens, 0)
    if end != len(tokens):
        raise ValueError(f"unexpected {tokens[end]!r} after the tree in {text!r}")
    return tree


def _parse_node(tokens, at):
    """The node starting at tokens[at] (an opening parenthesis), and where it ends."""
    if at + 2 >= len(tokens) or tokens[at] != "(":
        raise ValueError(f"expected '(' at token {at} of {' '.join(tokens)!r}")
    if not tokens[at + 1].isdigit():
        raise ValueError(f"expected a label 0-4 at token {at + 1} of {' '.join(tokens)!r}")
    label = int(tokens[at + 1])
    if tokens[at + 2] not in "()":  # a leaf: (label word)
        if at + 3 >= len(tokens) or tokens[at + 3] != ")":
            raise ValueError(f"a leaf holds one word, at token {at} of {' '.join(tokens)!r}")
        return (label, tokens[at + 2]), at + 4
    children = []
    at = at + 2
    while at < len(tokens) and tokens[at] == "(":
        child, at = _parse_node(tokens, at)
        children.append(child)
    if at >= len(tokens) or tokens[at] != ")" or len(children) != 2:
        raise ValueError(f"an inner node has two children, in {' '.join(tokens)!r}")
    return (label, children[0], children[1]), at + 1


def words_of(tree):
    if len(tree) == 2:
        return [tree[1]]
    return words_of(tree[1]) + words_of(tree[2])


def with_indices(tree, vocabulary):
    """The same tree with each word replaced by its row in the embedding table."""
    if len(tree) == 2:
        return (tree[0], vocabulary[tree[1]])
    return (tree[0], with_indices(tree[1], vocabulary), with_indices(tree[2], vocabulary))


# ---- the model: what cpsgrad differentiates -------------------------------------------------------

CLASSES = 5


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def node(tree, params):
    """(h, c, loss) of a subtree: its root's hidden and memory states, and the cross-entropy of
    the sentiment classifier summed over its nodes.

    Gates are stacked in `b` as [input, output, update, forget left, forget right]. A leaf reads
    its word's embedding through W (input, output and update gates: a leaf has no children to
    forget); an inner node reads its children's hidden states through U.
    """
    H = params["U"].shape[1] // 2
    if len(tree) == 2:  # a leaf: (label, word index)
        label, word = tree
        gates = params["W"] @ params["E"][word] + params["b"][: 3 * H]
        input_output = sigmoid(gates[: 2 * H])
        i, o = input_output[:H], input_output[H:]
        u = np.tanh(gates[2 * H :])
        c = i * u
        below = 0.0
    else:  # an inner node: (label, left subtree, right subtree)
        label, left, right = tree
        left_h, left_c, left_loss = node(left, params)
        right_h, right_c, right_loss = node(right, params)
        gates = params["U"] @ np.concatenate([left_h, right_h]) + params["b"]
        input_output = sigmoid(gates[: 2 * H])
        i, o = input_output[:H], input_output[H:]
        u = np.tanh(gates[2 * H : 3 * H])
        forget = sigmoid(gates[3 * H :])
        c = i * u + forget[:H] * left_c + forget[H:] * right_c
        below = left_loss + right_loss
    h = o * np.tanh(c)
    scores = params["W_out"] @ h + params["b_out"]
    top = np.max(scores)
    log_probabilities = scores - top - np.log(np.sum(np.exp(scores - top)))
    return h, c, below - log_probabilities[label]


def tree_loss(params, tree):
    _, _, loss = node(tree, params)
    return loss


def predict(params, tree):
    """The predicted label of the root (not differentiated)."""
    h, _, _ = node(tree, params)
    return int(np.argmax(params["W_out"] @ h + params["b_out"]))


def init_params(vocabulary_size, embedding, hidden, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "E": rng.normal(scale=0.1, size=(vocabulary_size, embedding)),
        "W": rng.normal(scale=1 / np.sqrt(embedding), size=(3 * hidden, embedding)),
        "U": rng.normal(scale=1 / np.sqrt(2 * hidden), size=(5 * hidden, 2 * hidden)),
        "b": rng.normal(scale=0.1, size=5 * hidden),
        "W_out": rng.normal(scale=1 / np.sqrt(hidden), size=(CLASSES, hidden)),
        "b_out": np.zeros(CLASSES),
    }


# ---- checking the gradient ---------------------------------------------------------------------


def finite_difference_check(params, tree, grads, entries=5, step=1e-4, seed=1):
    """Max over the parameters of the relative error (in norm) of `grads` against central
    differences of tree_loss, on `entries` random entries of each parameter (rows of E: among
    the tree's words, the rows it reads)."""
    rng = np.random.default_rng(seed)
    used_rows = sorted(set(words_of(tree)))
    worst = 0.0
    for key, value in params.items():
        exact, numeric = [], []
        for _ in range(entries):
            index = tuple(int(rng.integers(n)) for n in value.shape)
            if key == "E":
                index = (int(rng.choice(used_rows)), index[1])
            plus = {k: v.copy() for k, v in params.items()}
            minus = {k: v.copy() for k, v in params.items()}
            plus[key][index] += step
            minus[key][index] -= step
            numeric.append((tree_loss(plus, tree) - tree_loss(minus, tree)) / (2 * step))
            exact.append(grads[key][index])
        error = np.linalg.norm(np.subtract(exact, numeric)) / np.linalg.norm(numeric)
        worst = max(worst, error)
    return worst


def torch_check(params, tree, grads):
    """Max relative error (in norm, per parameter) of `grads` against torch.autograd on the same
    network written with torch tensors; None when torch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    t = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    H = params["U"].shape[1] // 2

    def torch_node(tree):
        if len(tree) == 2:
            label, word = tree
            gates = t["W"] @ t["E"][word] + t["b"][: 3 * H]
            i, o, u = torch.sigmoid(gates[:H]), torch.sigmoid(gates[H : 2 * H]), torch.tanh(gates[2 * H :])
            c = i * u
            below = 0.0
        else:
            label, left, right = tree
            left_h, left_c, left_loss = torch_node(left)
            right_h, right_c, right_loss = torch_node(right)
            gates = t["U"] @ torch.cat([left_h, right_h]) + t["b"]
            i, o = torch.sigmoid(gates[:H]), torch.sigmoid(gates[H : 2 * H])
            u = torch.tanh(gates[2 * H : 3 * H])
            f_left, f_right = torch.sigmoid(gates[3 * H : 4 * H]), torch.sigmoid(gates[4 * H :])
            c = i * u + f_left * left_c + f_right * right_c
            below = left_loss + right_loss
        h = o * torch.tanh(c)
        scores = t["W_out"] @ h + t["b_out"]
        return h, c, below - torch.log_softmax(scores, 0)[label]

    _, _, loss = torch_node(tree)
    loss.backward()
    worst = 0.0
    for key in params:
        expected = t[key].grad.numpy()
        worst = max(worst, np.linalg.norm(grads[key] - expected) / np.linalg.norm(expected))
    return worst


# ---- training ----------------------------------------------------------------------------------


def train(params, trees, epochs=10, lr=0.05, report=print):
    """Adagrad, one update per tree; returns the trained parameters, and the total loss over the
    trees before each epoch and after the last."""
    squares = {k: np.zeros_like(v) for k, v in params.items()}  # Adagrad's sums of squares
    losses = []
    for epoch in range(epochs):
        total = 0.0
        for tree in trees:
            loss, grads = cpsgrad.value_and_grad(tree_loss)(params, tree)
            total += loss
            squares = {k: squares[k] + grads[k] ** 2 for k in params}
            params = {k: params[k] - lr * grads[k] / (np.sqrt(squares[k]) + 1e-8) for k in params}
        losses.append(total)
        report(f"  epoch {epoch:2d}  loss {total:8.4f}")
    final = sum(tree_loss(params, tree) for tree in trees)
    losses.append(final)
    report(f"  final     loss {final:8.4f}")
    return params, losses


def main(hidden=16, embedding=16, epochs=10, use_torch=True, report=print):
    """Runs the example; returns what it measured (the tests read it)."""
    parsed = [parse(text) for text in TREES]
    vocabulary = {}
    for tree in parsed:
        for word in words_of(tree):
            vocabulary.setdefault(word, len(vocabulary))
    trees = [with_indices(tree, vocabulary) for tree in parsed]
    params = init_params(len(vocabulary), embedding, hidden)
    report(f"{len(trees)} trees, {len(vocabulary)} words, hidden {hidden}, embeddings {embedding}")
    report(f"tree 0: {TREES[0]}  ->  {trees[0]}")

    start = time.perf_counter()
    grads = cpsgrad.grad(tree_loss)(params, trees[0])
    report(f"cpsgrad.grad(tree_loss)(params, tree): {time.perf_counter() - start:.3f} s "
           "(the first call transforms node and tree_loss)")
    for key, value in grads.items():
        report(f"  d loss / d {key:5s} shape {value.shape}  norm {np.linalg.norm(value):.4f}")

    fd_error = max(finite_difference_check(params, tree, cpsgrad.grad(tree_loss)(params, tree))
                   for tree in trees[:3])
    report(f"max relative error against central differences: {fd_error:.2e}")
    torch_error = None
    if use_torch:
        errors = [torch_check(params, tree, cpsgrad.grad(tree_loss)(params, tree)) for tree in trees]
        torch_error = None if errors[0] is None else max(errors)
    if torch_error is None:
        report("torch.autograd check: skipped (torch is not installed)" if use_torch else
               "torch.autograd check: skipped (--no-torch)")
    else:
        report(f"max relative error against torch.autograd: {torch_error:.2e}")

    report(f"Adagrad, lr 0.05, {epochs} epochs over the {len(trees)} trees:")
    start = time.perf_counter()
    params, losses = train(params, trees, epochs=epochs, report=report)
    report(f"trained in {time.perf_counter() - start:.2f} s")
    correct = sum(predict(params, tree) == tree[0] for tree in trees)
    report(f"root labels right: {correct}/{len(trees)}")
    ok = fd_error < 1e-5 and (torch_error is None or torch_error < 1e-10) and losses[-1] < losses[0]
    report("gradient checks passed, loss decreased" if ok else "CHECK FAILED")
    return {"ok": ok, "fd_error": fd_error, "torch_error": torch_error, "losses": losses}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--embedding", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--no-torch", action="store_true", help="skip the torch.autograd check")
    arguments = parser.parse_args()
    result = main(arguments.hidden, arguments.embedding, arguments.epochs, not arguments.no_torch)
    sys.exit(0 if result["ok"] else 1)
