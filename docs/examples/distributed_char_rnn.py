"""min-char-rnn, data-parallel: Karpathy's character-level vanilla RNN over a batch of sequences
(each a window of Shakespeare's plays drawn at random), the global batch split over the ranks.

    python docs/examples/distributed_char_rnn.py [--steps N] [--batch B] [--quick]
    mpirun -n 2 python docs/examples/distributed_char_rnn.py [...]   # the same, on 2 ranks

The loss is min_char_rnn.py's over a batch: the hidden state is a (hidden, batch) matrix, the
inputs and targets one-hot (characters, batch) columns per time step, the loss the mean over
the batch of each sequence's summed cross-entropy. Each window starts from a zero state (the
windows are independent, unlike min-char-rnn's one stream carrying its state). Adagrad 0.1,
gradients clipped to [-5, 5], as min_char_rnn.py. The data: docs/examples/datasets/shakespeare.py
(`python docs/examples/datasets/shakespeare.py --install` once).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import char_training  # noqa: E402
import distributed_training  # noqa: E402  (first: one thread per rank, before numpy)
import numpy as np  # noqa: E402

from cpsgrad import optim  # noqa: E402

HIDDEN, SEQUENCE = 50, 20


def batch_loss(params, inputs, targets, h0):
    """The mean over the batch of each sequence's summed cross-entropy: `inputs` and `targets`
    (sequence, characters, batch) one-hot, `h0` (hidden, batch)."""
    Wxh, Whh, Why, bh, by = params["Wxh"], params["Whh"], params["Why"], params["bh"], params["by"]
    h = h0
    loss = 0.0
    for t in range(inputs.shape[0]):
        h = np.tanh(Wxh @ inputs[t] + Whh @ h + bh[:, None])
        y = Why @ h + by[:, None]
        y = y - np.max(y, axis=0)
        log_p = y - np.log(np.sum(np.exp(y), axis=0))
        loss = loss - np.sum(log_p * targets[t])
    return loss / inputs.shape[2]


def workload(quick: bool = True, hidden: int = HIDDEN, sequence: int = SEQUENCE) -> distributed_training.Workload:
    data = char_training.load_data(quick=quick)
    ids = np.asarray(data.ids)
    vocabulary = len(data.characters)
    eye = np.eye(vocabulary)

    def init(rng):
        return {
            "Wxh": rng.standard_normal((hidden, vocabulary)) * 0.01,
            "Whh": rng.standard_normal((hidden, hidden)) * 0.01,
            "Why": rng.standard_normal((vocabulary, hidden)) * 0.01,
            "bh": np.zeros(hidden),
            "by": np.zeros(vocabulary),
        }

    def batch(rng, size):
        starts = rng.integers(0, len(ids) - sequence - 1, size)
        windows = ids[starts[None, :] + np.arange(sequence + 1)[:, None]]  # (sequence + 1, batch)
        one_hot = eye[windows].transpose(0, 2, 1)  # (sequence + 1, characters, batch)
        return (np.ascontiguousarray(one_hot[:-1]), np.ascontiguousarray(one_hot[1:]),
                np.zeros((hidden, size)))

    return distributed_training.Workload(
        name="min-char-rnn", init=init, loss=batch_loss, batch=batch, axes=(2, 2, 1),
        optimizer=lambda params: optim.Adagrad(params, lr=0.1), clip_value=5.0)


if __name__ == "__main__":
    full = "--full" in sys.argv
    argv = [argument for argument in sys.argv[1:] if argument not in ("--full", "--quick")]
    sys.exit(distributed_training.run(workload(quick=not full), argv))
