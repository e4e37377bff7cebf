"""What squeezenet.py and resnet.py share: the colour crops, minibatch SGD on a model's
``value_and_grad`` step, the test accuracy after each epoch, a tqdm progress bar, a PNG of the
curves (matplotlib, headless) and the command line.

A model is a ``Model``: ``init(rng, width, classes) -> (params, state)`` (``state``: batch norm's
running statistics, a dict the training loss writes into), ``logits(params, state, images,
training)`` and ``step(params, state, images, labels[, seed]) -> (loss, grads)``
(``cpsgrad.value_and_grad`` of the loss).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # docs/examples/: datasets

from datasets import colour_crops  # noqa: E402

from cpsgrad import optim  # noqa: E402


@dataclass(frozen=True)
class Model:
    name: str
    title: str
    init: Callable
    logits: Callable
    step: Callable
    width: int
    lr: float
    weight_decay: float = 0.0
    seeded: bool = False  # the step takes a dropout seed after the labels


@dataclass
class Options:
    width: int
    lr: float
    batch: int = 32
    epochs: int = 1
    momentum: float = 0.9
    weight_decay: float = 0.0
    seed: int = 0
    train: int | None = None  # the first N training crops of a fixed shuffle (None: all)
    progress: bool = True


@dataclass
class Result:
    losses: list[float] = field(default_factory=list)
    accuracies: list[float] = field(default_factory=list)  # after each epoch, on the test crops
    epoch_seconds: list[float] = field(default_factory=list)  # training only
    params: dict = None
    state: dict = None


def accuracy(model: Model, params, state, images, labels, batch: int = 256) -> float:
    """The fraction of ``images`` classified right, in evaluation mode (running statistics, no
    dropout; no gradient)."""
    right = 0
    for start in range(0, len(labels), batch):
        scores = model.logits(params, state, images[start : start + batch], False)
        right += int(np.sum(np.argmax(scores, axis=1) == labels[start : start + batch]))
    return right / len(labels)


def data(options: Options, stride: int = 12):
    """``(train, test)`` colour crops; ``options.train`` keeps the first N of a fixed shuffle of
    the training crops (every class stays: the crops are shuffled first)."""
    train, test = colour_crops.load(stride)
    order = np.random.default_rng(options.seed).permutation(len(train))
    if options.train is not None:
        order = order[: options.train]
    return train.subset(order), test


def progress(total: int, enabled: bool, unit: str):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, dynamic_ncols=True)


def say(bar, message: str) -> None:
    print(message) if bar is None else bar.write(message)


def train(model: Model, train_set, test_set, options: Options) -> Result:
    """``options.epochs`` epochs of minibatch SGD (momentum, weight decay) from ``model.init``'s
    parameters for ``options.seed``, the test accuracy after each epoch."""
    params, state = model.init(np.random.default_rng(options.seed), options.width, len(train_set.classes))
    optimizer = optim.SGD(params, lr=options.lr, momentum=options.momentum, weight_decay=options.weight_decay)
    result = Result(params=params, state=state)
    count = len(train_set)
    per_epoch = -(-count // options.batch)
    bar = progress(per_epoch * options.epochs, options.progress, "batch")
    done = 0
    for epoch in range(options.epochs):
        start = time.perf_counter()
        order = np.random.default_rng((options.seed, epoch)).permutation(count)
        for first in range(0, count, options.batch):
            rows = order[first : first + options.batch]
            arguments = (params, state, train_set.images[rows], train_set.labels[rows])
            if model.seeded:
                arguments += (options.seed * 1_000_003 + done,)
            loss, grads = model.step(*arguments)
            optimizer.step(grads)
            result.losses.append(float(loss))
            done += 1
            if bar is not None:
                bar.update(1)
                if done % 10 == 0:
                    bar.set_postfix(loss=f"{np.mean(result.losses[-50:]):.3f}")
        result.epoch_seconds.append(time.perf_counter() - start)
        result.accuracies.append(accuracy(model, params, state, test_set.images, test_set.labels))
        say(bar, f"epoch {epoch + 1}: {result.epoch_seconds[-1]:.1f} s, test accuracy "
                 f"{100 * result.accuracies[-1]:.2f}%")
    if bar is not None:
        bar.close()
    return result


def plot(result: Result, path: Path, title: str) -> Path:
    """A PNG: the training loss a step (and its moving mean) and the test accuracy an epoch."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, (left, right) = pyplot.subplots(1, 2, figsize=(11.5, 4))
    window = max(1, min(50, len(result.losses) // 10))
    left.plot(result.losses, linewidth=0.6, alpha=0.35, label="loss")
    left.plot(np.arange(window - 1, len(result.losses)),
              np.convolve(result.losses, np.ones(window) / window, mode="valid"), label=f"moving mean of {window}")
    left.set(xlabel="step", ylabel="cross-entropy", title=title)
    left.legend()
    right.plot(range(1, len(result.accuracies) + 1), result.accuracies, marker="o", label="test accuracy")
    right.set(xlabel="epoch", title="test accuracy", ylim=(0, 1))
    right.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
    return path


def main(model: Model, argv: list[str] | None = None) -> int:
    """Train ``model`` and report; exit status 0 when the loss went down and the test accuracy
    beat chance."""
    parser = argparse.ArgumentParser(description=f"{model.title} on the colour crops (cpsgrad)")
    parser.add_argument("--width", type=int, default=model.width)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=None, help="default 10 (1 with --quick)")
    parser.add_argument("--lr", type=float, default=model.lr)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--weight-decay", type=float, default=model.weight_decay)
    parser.add_argument("--train", type=int, default=None, help="train on N of the training crops")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="640 training crops, width halved, one epoch")
    parser.add_argument("--out", default=".", help="where the PNG goes (default: the working directory)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    arguments = parser.parse_args(argv)
    quick = arguments.quick
    options = Options(width=arguments.width // 2 if quick and arguments.width == model.width else arguments.width,
                      lr=arguments.lr, batch=arguments.batch, epochs=arguments.epochs or (1 if quick else 10),
                      momentum=arguments.momentum, weight_decay=arguments.weight_decay, seed=arguments.seed,
                      train=arguments.train or (640 if quick else None), progress=not arguments.no_progress)
    train_set, test_set = data(options)
    chance = 1 / len(train_set.classes)
    print(f"{model.name}: {len(train_set)} training crops, {len(test_set)} test, {len(train_set.classes)} classes "
          f"({train_set.source}); width {options.width}, batch {options.batch}, SGD lr {options.lr} momentum "
          f"{options.momentum}, {options.epochs} epoch{'s' if options.epochs > 1 else ''}")
    result = train(model, train_set, test_set, options)
    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    png = plot(result, out / f"{model.name}_colour_crops.png", f"{model.title} on the colour crops")
    window = max(1, min(20, len(result.losses) // 5))
    first, last = float(np.mean(result.losses[:window])), float(np.mean(result.losses[-window:]))
    seconds = sum(result.epoch_seconds)
    print(f"{model.name}: {len(result.losses)} steps in {seconds:.1f} s ({1e3 * seconds / len(result.losses):.1f} "
          f"ms a step); loss {first:.3f} -> {last:.3f} (means of the first and last {window}); test accuracy "
          f"{100 * result.accuracies[-1]:.2f}% (chance {100 * chance:.1f}%); curves in {png}")
    return 0 if last < first and result.accuracies[-1] > chance else 1
