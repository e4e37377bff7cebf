"""TreeLSTM training benchmark: one epoch of docs/examples/tree_lstm_sentiment.py's model.

The binary Tree-LSTM (hidden 150, embeddings 300, 5 classes, Adagrad lr 0.05 eps 1e-8, batch
1) over the first --trees train trees of the offline sentiment trees
(docs/examples/datasets/sentiment_trees.py; `--install` them first), trained three ways from the
same float64 initial weights, in the same tree order, with the same update (torch.optim.Adagrad's
equations, which cpsgrad.optim.Adagrad implements):
- cpsgrad: `cpsgrad.value_and_grad(tree_loss)` of the example's recursive numpy model, then
  `cpsgrad.optim.Adagrad.step`;
- PyTorch eager (torch.set_num_threads(1)): the same model written with torch tensors, autograd,
  torch.optim.Adagrad;
- numpy by hand (the limit): the forward keeping what its backward needs, the backward written
  out by hand (each weight's gradient one matrix product over the tree's nodes, not an outer
  product a node), the Adagrad update in place.
Before the times, the three per-tree loss curves must agree to --tolerance (relative, default
1e-8): a curve that drifts means a wrong gradient somewhere. One thread each (BLAS pinned to one
thread before numpy loads). Ratios from one run: the machine is noisy.

    python benchmarks/training_tree.py [--trees 300] [--quick] [--data-dir D] [--profile]

`register()` returns this row for benchmarks/training.py's registry (a name and a callable
taking `quick` and the peers to run, of PEERS' names).
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"
sys.path.insert(0, str(EXAMPLES))

import tree_lstm_sentiment as example  # noqa: E402

import cpsgrad  # noqa: E402
from cpsgrad import optim  # noqa: E402

EPS = 1e-8


def copy(params):
    return {key: value.copy() for key, value in params.items()}


# ---- cpsgrad ------------------------------------------------------------------------------------


def train_cpsgrad(params, examples):
    gradient = cpsgrad.value_and_grad(example.tree_loss)
    optimizer = optim.Adagrad(params, lr=example.LR, eps=EPS)
    losses = []
    for tree, words in examples:
        loss, grads = gradient(params, tree, words)
        optimizer.step(grads)
        losses.append(float(loss))
    return losses


# ---- PyTorch eager ------------------------------------------------------------------------------


def train_torch(params, examples):
    import torch

    torch.set_num_threads(1)
    t = {key: torch.tensor(value, requires_grad=True) for key, value in params.items()}
    optimizer = torch.optim.Adagrad(list(t.values()), lr=example.LR, eps=EPS)
    H = params["U"].shape[1] // 2

    def node(tree, embedded):
        if len(tree) == 2:
            label, position = tree
            gates = t["W"] @ embedded[position] + t["b"][: 3 * H]
            i, o = torch.sigmoid(gates[:H]), torch.sigmoid(gates[H : 2 * H])
            c = i * torch.tanh(gates[2 * H :])
            below = 0.0
        else:
            label, left, right = tree
            left_h, left_c, left_loss = node(left, embedded)
            right_h, right_c, right_loss = node(right, embedded)
            gates = t["U"] @ torch.cat([left_h, right_h]) + t["b"]
            i, o = torch.sigmoid(gates[:H]), torch.sigmoid(gates[H : 2 * H])
            u = torch.tanh(gates[2 * H : 3 * H])
            forget_left = torch.sigmoid(gates[3 * H : 4 * H])
            forget_right = torch.sigmoid(gates[4 * H :])
            c = i * u + forget_left * left_c + forget_right * right_c
            below = left_loss + right_loss
        h = o * torch.tanh(c)
        scores = t["W_out"] @ h + t["b_out"]
        return h, c, below - torch.log_softmax(scores, 0)[label]

    losses = []
    for tree, words in examples:
        optimizer.zero_grad(set_to_none=True)
        _, _, loss = node(tree, t["E"][torch.from_numpy(words)])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


# ---- numpy by hand ------------------------------------------------------------------------------


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def forward(p, tree, embedded, H):
    """(h, c, loss, record): record holds what the backward reads."""
    if len(tree) == 2:
        label, position = tree
        x = embedded[position]
        gates = p["W"] @ x + p["b"][: 3 * H]
        i, o, u = sigmoid(gates[:H]), sigmoid(gates[H : 2 * H]), np.tanh(gates[2 * H :])
        c = i * u
        below, children, inputs, forget = 0.0, None, position, None
    else:
        label, left, right = tree
        left_h, left_c, left_loss, left_record = forward(p, left, embedded, H)
        right_h, right_c, right_loss, right_record = forward(p, right, embedded, H)
        inputs = np.concatenate([left_h, right_h])
        gates = p["U"] @ inputs + p["b"]
        i, o = sigmoid(gates[:H]), sigmoid(gates[H : 2 * H])
        u, forget = np.tanh(gates[2 * H : 3 * H]), sigmoid(gates[3 * H :])
        c = i * u + forget[:H] * left_c + forget[H:] * right_c
        below = left_loss + right_loss
        children = (left_record, right_record, left_c, right_c)
    tanh_c = np.tanh(c)
    h = o * tanh_c
    scores = p["W_out"] @ h + p["b_out"]
    shifted = scores - scores.max()
    log_probabilities = shifted - np.log(np.exp(shifted).sum())
    record = (label, inputs, i, o, u, forget, tanh_c, h, np.exp(log_probabilities), children)
    return h, c, below - log_probabilities[label], record


def backward(p, record, dh, dc, rows, H, into):
    """Walks the tree back from the root, appending each node's (dscores, h) to into["out"], a
    leaf's (dgates, position) to into["leaf"] and an inner node's (dgates, inputs) to
    into["inner"]; the weight gradients are then one matrix product each (train_numpy)."""
    label, inputs, i, o, u, forget, tanh_c, h, probabilities, children = record
    dscores = probabilities.copy()
    dscores[label] -= 1.0
    into["out"].append((dscores, h))
    dh = dh + p["W_out"].T @ dscores
    do = dh * tanh_c
    dc = dc + dh * o * (1.0 - tanh_c * tanh_c)
    di, du = dc * u, dc * i
    if children is None:
        dgates = np.concatenate([di * i * (1 - i), do * o * (1 - o), du * (1 - u * u)])
        into["leaf"].append((dgates, inputs))
        rows[inputs] += p["W"].T @ dgates
        return
    left_record, right_record, left_c, right_c = children
    dforget = np.concatenate([dc * left_c, dc * right_c])
    dgates = np.concatenate([di * i * (1 - i), do * o * (1 - o), du * (1 - u * u),
                             dforget * forget * (1 - forget)])
    into["inner"].append((dgates, inputs))
    dinputs = p["U"].T @ dgates
    backward(p, left_record, dinputs[:H], dc * forget[:H], rows, H, into)
    backward(p, right_record, dinputs[H:], dc * forget[H:], rows, H, into)


def train_numpy(params, examples):
    H = params["U"].shape[1] // 2
    squares = {key: np.zeros_like(value) for key, value in params.items()}
    losses = []
    for tree, words in examples:
        embedded = params["E"][words]
        h, c, loss, record = forward(params, tree, embedded, H)
        rows = np.zeros_like(embedded)
        into = {"out": [], "leaf": [], "inner": []}
        backward(params, record, np.zeros(H), np.zeros(H), rows, H, into)
        dscores, hs = (np.array(column) for column in zip(*into["out"], strict=True))
        leaf_gates, leaf_positions = zip(*into["leaf"], strict=True)
        leaf_gates = np.array(leaf_gates)
        g = {"W_out": dscores.T @ hs, "b_out": dscores.sum(0),
             "W": leaf_gates.T @ embedded[list(leaf_positions)], "E": np.zeros_like(params["E"])}
        g["b"] = np.zeros_like(params["b"])
        g["b"][: 3 * H] = leaf_gates.sum(0)
        if into["inner"]:
            inner_gates, inputs = (np.array(column) for column in zip(*into["inner"], strict=True))
            g["U"] = inner_gates.T @ inputs
            g["b"] += inner_gates.sum(0)
        else:
            g["U"] = np.zeros_like(params["U"])
        np.add.at(g["E"], words, rows)
        for key, value in params.items():
            squares[key] += g[key] * g[key]
            value -= example.LR * g[key] / (np.sqrt(squares[key]) + EPS)
        losses.append(float(loss))
    return losses


# ---- the run ------------------------------------------------------------------------------------

PEERS = {"cpsgrad": train_cpsgrad, "torch eager": train_torch, "numpy by hand": train_numpy}


def run(trees=300, data_dir=None, tolerance=1e-8, report=print, peers=None):
    """Trains each peer over the same trees; returns {peer: (seconds, losses)} and the worst
    relative disagreement of the loss curves with cpsgrad's. Raises AssertionError on a curve
    that disagrees beyond `tolerance`."""
    vocabulary, train_set, _, _ = example.load(data_dir=data_dir, trees=trees)
    initial = example.init_params(len(vocabulary))
    nodes = sum(2 * len(words) - 1 for _, words in train_set)
    report(f"TreeLSTM, one epoch of {len(train_set)} trees ({nodes} nodes), vocabulary "
           f"{len(vocabulary)}, hidden {example.HIDDEN}, embeddings {example.EMBEDDING}, float64, "
           "one thread")
    # warm-up outside the times: cpsgrad's transform (first call), torch's first dispatch
    for name in peers or PEERS:
        PEERS[name](copy(initial), train_set[:1])
    results = {}
    for name in peers or PEERS:
        params = copy(initial)
        start = time.perf_counter()
        losses = PEERS[name](params, train_set)
        results[name] = (time.perf_counter() - start, np.array(losses))
    reference = results["cpsgrad"][1] if "cpsgrad" in results else None
    worst = 0.0
    for name, (_, losses) in results.items():
        if reference is not None and name != "cpsgrad":
            worst = max(worst, float(np.max(np.abs(losses - reference) / np.abs(reference))))
    for name, (seconds, losses) in results.items():
        base = results.get("torch eager", (seconds,))[0]
        report(f"  {name:14s} {seconds:8.2f} s  {len(train_set) / seconds:7.1f} trees/s  "
               f"torch eager / this {base / seconds:5.2f}x  loss {losses[0]:.4f} -> "
               f"{losses[-1]:.4f}")
    report(f"  loss curves: max relative difference from cpsgrad's {worst:.2e} "
           f"(tolerance {tolerance:.0e})")
    assert worst <= tolerance, f"the loss curves disagree: {worst:.2e} > {tolerance:.0e}"
    return results, worst


def register():
    """(name, callable(quick)) for benchmarks/training.py's registry."""
    return "tree_lstm", lambda quick=False, peers=None: run(trees=20 if quick else 300, peers=peers)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", type=int, default=300, help="3000 is the whole train split")
    parser.add_argument("--quick", action="store_true", help="20 trees")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--tolerance", type=float, default=1e-8)
    parser.add_argument("--profile", action="store_true", help="cProfile cpsgrad's epoch")
    arguments = parser.parse_args(argv)
    trees = 20 if arguments.quick else arguments.trees
    if arguments.profile:
        import cProfile
        import pstats

        vocabulary, train_set, _, _ = example.load(data_dir=arguments.data_dir, trees=trees)
        initial = example.init_params(len(vocabulary))
        train_cpsgrad(copy(initial), train_set[:1])
        profiler = cProfile.Profile()
        profiler.runcall(train_cpsgrad, copy(initial), train_set)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
        return 0
    try:
        run(trees, arguments.data_dir, arguments.tolerance)
    except AssertionError as error:
        print(f"FAILED: {error}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
