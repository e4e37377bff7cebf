"""The CNN of PyTorch's MNIST example (DESIGN.md section 7, Lantern's CNN benchmark), trained on
real digits (MNIST 5k) or on Fashion-MNIST with gradients from cpsgrad.

    python docs/examples/mnist_cnn.py [--data mnist|fashion] [--batch 64] [--epochs N]
                                      [--optimizer sgd|adam] [--lr LR] [--quick] [--out DIR]

The network, in plain numpy and ``cpsgrad.nn``: conv 1->10 5x5, max-pool 2, relu, conv 10->20
5x5, max-pool 2, relu, fully connected 320->50, relu, dropout 0.5, fully connected 50->10, and
the mean cross-entropy of the log-softmax (``nn.softmax_cross_entropy``: log-softmax and NLL in
one kernel), float32 as PyTorch trains it. ``cpsgrad.value_and_grad`` differentiates
``cnn_loss`` with respect to the parameter dict; ``cpsgrad.optim`` updates it (SGD with
momentum, or Adam). Each step's dropout mask is drawn from that step's seed, so the backward
draws the same one.

Data (docs/examples/datasets/mnist.py): MNIST 5k holds 1,000 digits out (100 of each class)
and trains on the other 4,000; Fashion-MNIST trains on its 60,000 training images (``--train N``
takes the first N of them, shuffled) and tests on its 10,000 test images. Each epoch ends with
the test accuracy; a PNG of the loss and accuracy curves goes into the working directory (or
``--out``). ``--quick`` trains on 2,000 images for two epochs.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # docs/examples/: datasets, training_tools

import training_tools  # noqa: E402
from datasets import mnist  # noqa: E402

import cpsgrad  # noqa: E402
from cpsgrad import nn, optim  # noqa: E402

MEAN, STD = 0.1307, 0.3081  # PyTorch's MNIST example normalises with MNIST's mean and deviation
SHAPES = {"conv1_w": (10, 1, 5, 5), "conv1_b": (10,), "conv2_w": (20, 10, 5, 5), "conv2_b": (20,),
          "fc1_w": (50, 320), "fc1_b": (50,), "fc2_w": (10, 50), "fc2_b": (10,)}
FAN_IN = {"conv1": 25, "conv2": 250, "fc1": 320, "fc2": 50}


def logits(params, images, seed, training, keep=None):
    """The network's class scores ``(N, 10)`` for ``images`` ``(N, 1, 28, 28)``. ``keep``, when
    given, is the dropout as a per-sample mask ``(N, 50)`` (0 or 2: dropped or kept and scaled)
    drawn by the caller, in place of ``nn.dropout``'s mask of the whole batch drawn from ``seed``
    (distributed_mnist_cnn.py: a batch split over ranks must drop what the whole batch drops)."""
    x = nn.conv2d(images, params["conv1_w"], params["conv1_b"])
    x = nn.relu(nn.max_pool2d(x, 2))
    x = nn.conv2d(x, params["conv2_w"], params["conv2_b"])
    x = nn.relu(nn.max_pool2d(x, 2))
    x = x.reshape(x.shape[0], 320)
    x = nn.relu(x @ params["fc1_w"].T + params["fc1_b"])
    if keep is None:
        x = nn.dropout(x, 0.5, seed=seed, training=training)
    else:
        x = x * keep
    return x @ params["fc2_w"].T + params["fc2_b"]


def cnn_loss(params, images, labels, seed):
    """The mean cross-entropy of a training batch (dropout on, its mask drawn from ``seed``)."""
    return nn.softmax_cross_entropy(logits(params, images, seed, True), labels)


loss_and_gradients = cpsgrad.value_and_grad(cnn_loss)


def init(rng, dtype=np.float32):
    """PyTorch's default initialisation of Conv2d and Linear: weights and biases uniform in
    +-1/sqrt(fan_in)."""
    params = {}
    for name, shape in SHAPES.items():
        bound = 1.0 / np.sqrt(FAN_IN[name.split("_")[0]])
        params[name] = rng.uniform(-bound, bound, shape).astype(dtype)
    return params


def prepare(data: mnist.Images, dtype=np.float32) -> tuple[np.ndarray, np.ndarray]:
    """Images as normalised ``(N, 1, 28, 28)`` floats, and the labels."""
    images = (data.images.astype(dtype) / dtype(255) - dtype(MEAN)) / dtype(STD)
    return images[:, None], data.labels


def accuracy(params, images, labels, batch=1000) -> float:
    """The fraction of ``images`` classified right (dropout off; no gradient)."""
    right = 0
    for start in range(0, len(labels), batch):
        scores = logits(params, images[start : start + batch], 0, False)
        right += int(np.sum(np.argmax(scores, axis=1) == labels[start : start + batch]))
    return right / len(labels)


@dataclass
class Options:
    batch: int = 64
    epochs: int = 1
    optimizer: str = "sgd"
    lr: float | None = None  # the optimizer's default below
    momentum: float = 0.9
    seed: int = 0
    progress: bool = True
    shift: int = 0  # augmentation: each training image moved by up to this many pixels


def shifted(images: np.ndarray, shift: int, rng: np.random.Generator) -> np.ndarray:
    """``images`` ``(N, 1, 28, 28)`` each moved by a random whole number of pixels in
    ``[-shift, shift]`` down and across, the uncovered border filled with the background (the
    normalised value of a black pixel): the augmentation of ``--shift``."""
    if shift == 0:
        return images
    size = images.shape[-1]
    padded = np.pad(images, ((0, 0), (0, 0), (shift, shift), (shift, shift)), constant_values=-MEAN / STD)
    moves = rng.integers(0, 2 * shift + 1, (len(images), 2))
    return np.stack([padded[i, :, dy : dy + size, dx : dx + size] for i, (dy, dx) in enumerate(moves)])


LR = {"sgd": 0.01, "adam": 0.001}


def make_optimizer(params, options: Options):
    lr = options.lr if options.lr is not None else LR[options.optimizer]
    if options.optimizer == "sgd":
        return optim.SGD(params, lr=lr, momentum=options.momentum)
    if options.optimizer == "adam":
        return optim.Adam(params, lr=lr)
    raise ValueError(f"optimizer must be sgd or adam, not {options.optimizer!r}")


def batches(count: int, options: Options, epoch: int):
    """The training order of one epoch: rows in batches of ``options.batch`` (the last may be
    short), shuffled with the seed and the epoch."""
    order = np.random.default_rng((options.seed, epoch)).permutation(count)
    return [order[start : start + options.batch] for start in range(0, count, options.batch)]


def step_seed(options: Options, step: int) -> int:
    """The dropout seed of training step ``step`` (0, 1, ...)."""
    return options.seed * 1_000_003 + step


@dataclass
class Result:
    losses: list[float] = field(default_factory=list)
    accuracies: list[float] = field(default_factory=list)  # after each epoch
    epoch_seconds: list[float] = field(default_factory=list)  # training only, evaluation left out
    params: object = None


def train(params, train_set, test_set, options: Options, step=None) -> Result:
    """``options.epochs`` epochs of minibatch training of ``params`` (updated in place), the test
    accuracy after each. ``step(params, images, labels, seed) -> (loss, grads)`` defaults to
    cpsgrad's ``loss_and_gradients``."""
    step = step or loss_and_gradients
    images, labels = train_set
    optimizer = make_optimizer(params, options)
    result, done = Result(params=params), 0
    per_epoch = -(-len(labels) // options.batch)
    bar = training_tools.progress(per_epoch * options.epochs, options.progress, unit="batch")
    moves = np.random.default_rng((options.seed, 1 << 20)) if options.shift else None
    for epoch in range(options.epochs):
        start = time.perf_counter()
        for rows in batches(len(labels), options, epoch):
            batch = shifted(images[rows], options.shift, moves)
            loss, grads = step(params, batch, labels[rows], step_seed(options, done))
            optimizer.step(grads)
            result.losses.append(float(loss))
            done += 1
            if bar is not None:
                bar.update(1)
                if done % 20 == 0:
                    bar.set_postfix(loss=f"{np.mean(result.losses[-100:]):.3f}")
        result.epoch_seconds.append(time.perf_counter() - start)
        result.accuracies.append(accuracy(params, *test_set))
        training_tools.write(bar, f"epoch {epoch + 1}: {result.epoch_seconds[-1]:.1f} s, "
                                  f"test accuracy {100 * result.accuracies[-1]:.2f}%")
    if bar is not None:
        bar.close()
    return result


def load(which: str, quick: bool, train_count: int | None, seed: int = 0):
    """``(training images, labels), (test images, labels), description`` of MNIST 5k or Fashion-MNIST."""
    if which == "mnist":
        training, held_out = mnist.held_out(mnist.mnist_5k(), 100, seed)
    elif which == "fashion":
        training, held_out = mnist.fashion_mnist("train"), mnist.fashion_mnist("test")
        training = training.subset(np.random.default_rng(seed).permutation(len(training)))
    else:
        raise ValueError(f"--data must be mnist or fashion, not {which!r}")
    count = 2000 if quick else train_count
    if count is not None:
        training = training.subset(slice(0, count))
    description = f"{len(training)} training images, {len(held_out)} test, of {held_out.source}"
    return prepare(training), prepare(held_out), description


def main(argv: list[str] | None = None) -> int:
    """Train and report; exit status 0 when the loss went down and the accuracy beat chance."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="mnist", choices=["mnist", "fashion"])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=None, help="default 20 (2 with --quick)")
    parser.add_argument("--optimizer", default="sgd", choices=sorted(LR))
    parser.add_argument("--lr", type=float, default=None, help=f"default {LR}")
    parser.add_argument("--momentum", type=float, default=0.9, help="SGD's")
    parser.add_argument("--train", type=int, default=None, help="train on the first N training images")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shift", type=int, default=0, help="augment: move each training image by up to N pixels")
    parser.add_argument("--quick", action="store_true", help="2,000 training images, two epochs")
    parser.add_argument("--out", default=".", help="where the PNG goes (default: the working directory)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    arguments = parser.parse_args(argv)
    epochs = arguments.epochs or (2 if arguments.quick else 20)
    options = Options(batch=arguments.batch, epochs=epochs, optimizer=arguments.optimizer, lr=arguments.lr,
                      momentum=arguments.momentum, seed=arguments.seed, progress=not arguments.no_progress,
                      shift=arguments.shift)
    train_set, test_set, description = load(arguments.data, arguments.quick, arguments.train, arguments.seed)
    plural = "s" if epochs > 1 else ""
    print(f"mnist_cnn: {description}; batch {options.batch}, {options.optimizer}, {epochs} epoch{plural}")
    params = init(np.random.default_rng(arguments.seed))
    result = train(params, train_set, test_set, options)
    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    name = f"mnist_cnn_{arguments.data}_batch{options.batch}"
    window = max(1, min(50, len(result.losses) // 10))
    smoothed = np.convolve(result.losses, np.ones(window) / window, mode="valid")
    epochs_axis = list(range(1, epochs + 1))
    png = training_tools.plot(
        {"loss": result.losses}, out / f"{name}.png", f"CNN on {arguments.data}, batch {options.batch}",
        smooth={f"moving mean of {window}": smoothed}, xlabel="step", ylabel="cross-entropy",
        panels={"test accuracy": {"accuracy": (epochs_axis, result.accuracies)}})
    first, last = float(np.mean(result.losses[:window])), float(np.mean(result.losses[-window:]))
    seconds = sum(result.epoch_seconds)
    print(f"mnist_cnn: {len(result.losses)} steps in {seconds:.1f} s ({seconds / epochs:.1f} s an epoch, "
          f"{1e3 * seconds / len(result.losses):.2f} ms a step); loss {first:.3f} -> {last:.3f} (means of "
          f"the first and last {window}); test accuracy {100 * result.accuracies[-1]:.2f}% "
          f"(best {100 * max(result.accuracies):.2f}%); curves in {png}")
    return 0 if last < first and result.accuracies[-1] > 0.1 else 1


if __name__ == "__main__":
    sys.exit(main())
