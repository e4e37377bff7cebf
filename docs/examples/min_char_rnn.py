"""min-char-rnn: Karpathy's character-level vanilla RNN, trained on Shakespeare's plays with
gradients from cpsgrad, in Lantern's configuration (hidden 50, sequence 20, Adagrad 0.1,
gradients clipped to [-5, 5], 5001 iterations), sampling text as it trains.

    python docs/examples/min_char_rnn.py [--quick] [--iterations N] [--out DIR] [--text FILE]

The model is ordinary numpy: `rnn_loss` loops over the chunk as min-char-rnn's lossFun does
(the one-hot input times Wxh written as the column Wxh[:, i]) and writes the last hidden state
into `hlast` for the next chunk; `cpsgrad.value_and_grad` differentiates it with respect to the
parameter dict. The data: docs/examples/datasets/shakespeare.py (install it once with
`python docs/examples/datasets/shakespeare.py --install`).
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import char_training  # noqa: E402

import cpsgrad  # noqa: E402


def rnn_loss(params, inputs, targets, hprev, hlast):
    """The summed cross-entropy of each next character over the chunk; the last hidden state
    is written into `hlast`."""
    Wxh, Whh, Why, bh, by = params["Wxh"], params["Whh"], params["Why"], params["bh"], params["by"]
    h = hprev
    loss = 0.0
    for t in range(len(inputs)):
        h = np.tanh(Wxh[:, inputs[t]] + Whh @ h + bh)
        y = Why @ h + by
        p = np.exp(y - np.max(y))
        p = p / np.sum(p)
        loss = loss - np.log(p[targets[t]])
    hlast[:] = h
    return loss


def init(vocabulary, hidden, rng):
    """min-char-rnn's initialisation: weights randn * 0.01, biases zero."""
    return {
        "Wxh": rng.standard_normal((hidden, vocabulary)) * 0.01,
        "Whh": rng.standard_normal((hidden, hidden)) * 0.01,
        "Why": rng.standard_normal((vocabulary, hidden)) * 0.01,
        "bh": np.zeros(hidden),
        "by": np.zeros(vocabulary),
    }


loss_and_gradients = cpsgrad.value_and_grad(rnn_loss)


def step(params, inputs, targets, hprev):
    hlast = np.empty_like(hprev)
    loss, grads = loss_and_gradients(params, inputs, targets, hprev, hlast)
    return loss, grads, hlast


def sample(params, h, seed_id, count, rng):
    def probabilities(h, i):
        h = np.tanh(params["Wxh"][:, i] + params["Whh"] @ h + params["bh"])
        y = params["Why"] @ h + params["by"]
        p = np.exp(y - np.max(y))
        return p / np.sum(p), h

    return char_training.sample_ids(probabilities, h, seed_id, count, rng)


MODEL = char_training.CharModel("min_char_rnn", init, np.zeros, step, sample)

if __name__ == "__main__":
    sys.exit(char_training.main(MODEL, None, __doc__.split("\n\n")[0]))
