"""A binary Tree-LSTM trained end to end on sentiment trees, its gradient by cpsgrad.

The binary Tree-LSTM of Tai et al. 2015 (hidden 150, embeddings 300, 5 classes, Adagrad lr 0.05,
batch 1: one update per tree) over the offline sentiment trees of
docs/examples/datasets/sentiment_trees.py (Penn Treebank sentences, binarized, labelled by
VADER's rules into SST's five classes; build them once with
`python docs/examples/datasets/sentiment_trees.py --install`). The model is ordinary recursive
numpy: `node(tree, params, embedded)` returns a subtree's (h, c, loss) by calling itself on the
children, `tree_loss(params, tree, words)` is the cross-entropy summed over the tree's nodes, and

    loss, grads = cpsgrad.value_and_grad(tree_loss)(params, tree, words)

differentiates the recursion as written. The sentence's words are embedded once per tree
(`params["E"][words]`, one lookup, as Tai et al.'s code does) and a leaf reads its row. The
embeddings start random (normal, scale 0.1): nothing is downloaded, no GloVe.

Prints a tqdm progress bar (loss, trees/s), the held-out root and all-node accuracy after each
epoch next to the majority-class baseline, writes tree_lstm_sentiment.png (loss and accuracy
curves) into --out, and a summary.

    python docs/examples/tree_lstm_sentiment.py [--quick] [--epochs 1] [--out DIR] [--data-dir D]
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # docs/examples/: the datasets package

from datasets import sentiment_trees  # noqa: E402

import cpsgrad  # noqa: E402
from cpsgrad import optim  # noqa: E402

CLASSES = 5
HIDDEN, EMBEDDING, LR = 150, 300, 0.05
UNKNOWN = "<unk>"


# ---- the model: what cpsgrad differentiates -------------------------------------------------------


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def node(tree, params, embedded):
    """(h, c, loss) of a subtree: its root's hidden and memory states and the cross-entropy of the
    sentiment classifier summed over its nodes. A leaf is (label, position of its word in the
    sentence), an inner node (label, left, right).

    Gates are stacked as [input, output, update, forget left, forget right]: a leaf reads its
    word's embedding through W (three gates: no children to forget), an inner node its children's
    hidden states through U.
    """
    H = params["U"].shape[1] // 2
    if len(tree) == 2:
        label, position = tree
        gates = params["W"] @ embedded[position] + params["b"][: 3 * H]
        i = sigmoid(gates[:H])
        o = sigmoid(gates[H : 2 * H])
        u = np.tanh(gates[2 * H :])
        c = i * u
        below = 0.0
    else:
        label, left, right = tree
        left_h, left_c, left_loss = node(left, params, embedded)
        right_h, right_c, right_loss = node(right, params, embedded)
        gates = params["U"] @ np.concatenate([left_h, right_h]) + params["b"]
        i = sigmoid(gates[:H])
        o = sigmoid(gates[H : 2 * H])
        u = np.tanh(gates[2 * H : 3 * H])
        forget_left = sigmoid(gates[3 * H : 4 * H])
        forget_right = sigmoid(gates[4 * H :])
        c = i * u + forget_left * left_c + forget_right * right_c
        below = left_loss + right_loss
    h = o * np.tanh(c)
    scores = params["W_out"] @ h + params["b_out"]
    top = np.max(scores)
    log_probabilities = scores - top - np.log(np.sum(np.exp(scores - top)))
    return h, c, below - log_probabilities[label]


def tree_loss(params, tree, words):
    """The summed cross-entropy of a tree whose sentence is the vocabulary ids `words`."""
    embedded = params["E"][words]
    _, _, loss = node(tree, params, embedded)
    return loss


def init_params(vocabulary_size, embedding=EMBEDDING, hidden=HIDDEN, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "E": rng.normal(scale=0.1, size=(vocabulary_size, embedding)),
        "W": rng.normal(scale=1 / np.sqrt(embedding), size=(3 * hidden, embedding)),
        "U": rng.normal(scale=1 / np.sqrt(2 * hidden), size=(5 * hidden, 2 * hidden)),
        "b": np.zeros(5 * hidden),
        "W_out": rng.normal(scale=1 / np.sqrt(hidden), size=(CLASSES, hidden)),
        "b_out": np.zeros(CLASSES),
    }


# ---- prediction (plain numpy, not differentiated) -----------------------------------------------


def predictions(params, tree, embedded, into):
    """(h, c) of a subtree, appending (label, predicted label) of each of its nodes to `into`
    (post-order: the root last)."""
    H = params["U"].shape[1] // 2
    if len(tree) == 2:
        gates = params["W"] @ embedded[tree[1]] + params["b"][: 3 * H]
        c = sigmoid(gates[:H]) * np.tanh(gates[2 * H :])
    else:
        left_h, left_c = predictions(params, tree[1], embedded, into)
        right_h, right_c = predictions(params, tree[2], embedded, into)
        gates = params["U"] @ np.concatenate([left_h, right_h]) + params["b"]
        forget = sigmoid(gates[3 * H :])
        c = (sigmoid(gates[:H]) * np.tanh(gates[2 * H : 3 * H]) + forget[:H] * left_c
             + forget[H:] * right_c)
    h = sigmoid(gates[H : 2 * H]) * np.tanh(c)
    into.append((tree[0], int(np.argmax(params["W_out"] @ h + params["b_out"]))))
    return h, c


def accuracy(params, examples):
    """(root accuracy, all-node accuracy) over (tree, words) examples."""
    roots = nodes = correct_roots = correct_nodes = 0
    for tree, words in examples:
        pairs = []
        predictions(params, tree, params["E"][words], pairs)
        roots += 1
        correct_roots += pairs[-1][0] == pairs[-1][1]
        nodes += len(pairs)
        correct_nodes += sum(label == predicted for label, predicted in pairs)
    return correct_roots / roots, correct_nodes / nodes


def labels(tree, into):
    """The labels of a tree's nodes, appended to `into` (pre-order)."""
    into.append(tree[0])
    if len(tree) == 3:
        labels(tree[1], into)
        labels(tree[2], into)
    return into


def majority_baseline(train, held_out):
    """(root, all-node) accuracy of always answering the train split's most common label."""
    root_label = collections.Counter(tree[0] for tree, _ in train).most_common(1)[0][0]
    node_label = collections.Counter(
        label for tree, _ in train for label in labels(tree, [])).most_common(1)[0][0]
    roots = [tree[0] for tree, _ in held_out]
    nodes = [label for tree, _ in held_out for label in labels(tree, [])]
    return roots.count(root_label) / len(roots), nodes.count(node_label) / len(nodes)


# ---- data ---------------------------------------------------------------------------------------


def positions(tree, words):
    """The tree with each leaf's word replaced by its position in the sentence, the sentence's
    words appended to `words`."""
    if len(tree) == 2:
        words.append(tree[1])
        return (tree[0], len(words) - 1)
    return (tree[0], positions(tree[1], words), positions(tree[2], words))


def examples_of(trees, vocabulary):
    """(tree over sentence positions, the sentence's vocabulary ids) for each nltk tree."""
    unknown = vocabulary[UNKNOWN]
    examples = []
    for tree in trees:
        sentence = []
        shaped = positions(sentiment_trees.as_tuples(tree), sentence)
        examples.append((shaped, np.array([vocabulary.get(w, unknown) for w in sentence])))
    return examples


def vocabulary_of(trees, min_count=2):
    """The train split's words seen at least `min_count` times, and <unk> (the rest map to it)."""
    counts = collections.Counter(word for tree in trees for word in tree.leaves())
    kept = sorted({word for word, n in counts.items() if n >= min_count} | {UNKNOWN})
    return {word: i for i, word in enumerate(kept)}


def load(quick=False, data_dir=None, trees=None):
    sizes = {"train": 40, "dev": 40} if quick else {}
    if trees is not None:
        sizes["train"] = trees
    train = sentiment_trees.load("train", data_dir, limit=sizes.get("train"))
    dev = sentiment_trees.load("dev", data_dir, limit=sizes.get("dev"))
    test = sentiment_trees.load("test", data_dir, limit=sizes.get("dev"))
    vocabulary = vocabulary_of(train, min_count=1 if quick else 2)
    return vocabulary, examples_of(train, vocabulary), examples_of(dev, vocabulary), \
        examples_of(test, vocabulary)


# ---- checking the first step's gradient ----------------------------------------------------------


def finite_difference_error(params, example, grads, entries=4, step=1e-5, seed=1):
    """Max over the parameters of the relative error (in norm) of `grads` against central
    differences of tree_loss on `entries` random coordinates of each (E: rows the sentence uses)."""
    tree, words = example
    rng = np.random.default_rng(seed)
    worst = 0.0
    for key, value in params.items():
        exact, numeric = [], []
        for _ in range(entries):
            index = tuple(int(rng.integers(n)) for n in value.shape)
            if key == "E":
                index = (int(rng.choice(words)), index[1])
            saved = value[index]
            value[index] = saved + step
            plus = tree_loss(params, tree, words)
            value[index] = saved - step
            minus = tree_loss(params, tree, words)
            value[index] = saved
            numeric.append((plus - minus) / (2 * step))
            exact.append(grads[key][index])
        scale = max(np.linalg.norm(numeric), 1e-12)
        worst = max(worst, np.linalg.norm(np.subtract(exact, numeric)) / scale)
    return worst


# ---- training -----------------------------------------------------------------------------------


def train(params, examples, held_out, epochs, report=print, progress=True):
    """Adagrad (cpsgrad.optim, lr 0.05), one update per tree, in a fixed shuffled order per epoch;
    returns a history: per-tree losses, per epoch the held-out accuracies, and the held-out
    accuracies at ten checkpoints through the run ((update, root, all-node), for the plot; the
    seconds they take are in history["evaluation_seconds"])."""
    from tqdm import tqdm

    gradient = cpsgrad.value_and_grad(tree_loss)
    optimizer = optim.Adagrad(params, lr=LR)
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    history = {"loss": [], "nodes": [], "epoch_loss": [], "root": [], "all": [],
               "checkpoints": [(0, *accuracy(params, held_out))]}
    history["evaluation_seconds"] = time.perf_counter() - start
    checkpoint = max(1, epochs * len(examples) // 10)
    for epoch in range(epochs):
        order = rng.permutation(len(examples))
        bar = tqdm(order, desc=f"epoch {epoch + 1}/{epochs}", unit="tree", disable=not progress,
                   mininterval=0.5, file=sys.stderr)
        total = 0.0
        for step, index in enumerate(bar, 1):
            tree, words = examples[index]
            loss, grads = gradient(params, tree, words)
            optimizer.step(grads)
            history["loss"].append(float(loss))
            history["nodes"].append(len(words) * 2 - 1)
            total += loss
            if step % 20 == 0:
                bar.set_postfix(loss=f"{total / step:.3f}")
            if len(history["loss"]) % checkpoint == 0:
                start = time.perf_counter()
                history["checkpoints"].append((len(history["loss"]), *accuracy(params, held_out)))
                history["evaluation_seconds"] += time.perf_counter() - start
        bar.close()
        start = time.perf_counter()
        root, every = accuracy(params, held_out)
        history["evaluation_seconds"] += time.perf_counter() - start
        history["epoch_loss"].append(total / len(examples))
        history["root"].append(root)
        history["all"].append(every)
        report(f"epoch {epoch + 1}: mean tree loss {total / len(examples):.4f}, held-out root "
               f"accuracy {root:.3f}, all-node accuracy {every:.3f}")
    return history


def loss_fell(history):
    """Whether the loss per node over the last tenth of the updates is below the first tenth's."""
    per_node = np.array(history["loss"]) / np.array(history["nodes"])
    tenth = max(1, len(per_node) // 10)
    return per_node[-tenth:].mean() < per_node[:tenth].mean()


def plot(history, baseline, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    per_node = np.array(history["loss"]) / np.array(history["nodes"])
    window = max(1, min(100, len(per_node) // 10))
    smoothed = np.convolve(per_node, np.ones(window) / window, mode="valid")
    left.plot(np.arange(len(smoothed)) + window, smoothed)
    left.set_xlabel("tree (update)")
    left.set_ylabel(f"cross-entropy per node (mean of {window})")
    left.set_title("training loss")
    updates, roots, every = zip(*history["checkpoints"], strict=True)
    right.plot(updates, roots, "o-", label="root")
    right.plot(updates, every, "s-", label="all nodes")
    right.axhline(baseline[0], color="C0", linestyle=":", label="majority, root")
    right.axhline(baseline[1], color="C1", linestyle=":", label="majority, all nodes")
    right.set_xlabel("tree (update)")
    right.set_ylabel("held-out accuracy")
    right.set_ylim(0, 1)
    right.legend()
    right.set_title("accuracy")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main(argv=None, report=print):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="40 trees, 3 epochs, the dev trees held out: seconds")
    parser.add_argument("--epochs", type=int, default=None, help="1 (3 with --quick)")
    parser.add_argument("--trees", type=int, default=None, help="train on the first N trees")
    parser.add_argument("--out", default=".", help="where the PNG goes")
    parser.add_argument("--data-dir", default=None, help="instead of $CPSGRAD_DATA_DIR")
    parser.add_argument("--no-progress", action="store_true")
    arguments = parser.parse_args(argv)
    epochs = arguments.epochs or (3 if arguments.quick else 1)

    vocabulary, train_set, dev, test = load(arguments.quick, arguments.data_dir, arguments.trees)
    held_out = dev if arguments.quick else test
    report(f"{sentiment_trees.SOURCE}")
    report(f"{len(train_set)} train trees, {len(held_out)} held-out "
           f"({'dev' if arguments.quick else 'test'}), vocabulary {len(vocabulary)}; "
           f"hidden {HIDDEN}, embeddings {EMBEDDING} (random init), Adagrad lr {LR}, batch 1")
    params = init_params(len(vocabulary))

    loss, grads = cpsgrad.value_and_grad(tree_loss)(params, *train_set[0])
    fd_error = finite_difference_error(params, train_set[0], grads)
    report(f"first step: loss {loss:.4f}, gradient against central differences: max relative "
           f"error {fd_error:.2e}")
    baseline = majority_baseline(train_set, held_out)
    report(f"majority-class baseline: root {baseline[0]:.3f}, all nodes {baseline[1]:.3f}")

    start = time.perf_counter()
    history = train(params, train_set, held_out, epochs, report, not arguments.no_progress)
    seconds = time.perf_counter() - start - history["evaluation_seconds"]
    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    png = out / "tree_lstm_sentiment.png"
    plot(history, baseline, png)
    root, every = history["root"][-1], history["all"][-1]
    report(f"summary: {epochs} epoch(s) of {len(train_set)} trees in {seconds:.1f} s of training "
           f"({epochs * len(train_set) / seconds:.1f} trees/s); mean tree loss "
           f"{history['epoch_loss'][0]:.4f} -> {history['epoch_loss'][-1]:.4f}; held-out root "
           f"accuracy {root:.3f} (majority {baseline[0]:.3f}), all-node {every:.3f} "
           f"(majority {baseline[1]:.3f}); curves in {png}")
    return {"fd_error": fd_error, "history": history, "baseline": baseline, "png": png,
            "seconds": seconds, "first_loss": float(loss)}


if __name__ == "__main__":
    try:
        result = main()
    except FileNotFoundError as error:  # the trees are not built yet: the loader names the command
        sys.exit(f"tree_lstm_sentiment.py: {error}")
    ok = result["fd_error"] < 1e-5 and loss_fell(result["history"])
    sys.exit(0 if ok else 1)
