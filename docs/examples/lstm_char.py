"""The LSTM twin of min_char_rnn.py: a character-level LSTM language model on Shakespeare's
plays, gradients from cpsgrad, the same configuration (hidden 50, sequence 20, Adagrad 0.1,
gradients clipped to [-5, 5], 5001 iterations), sampling text as it trains.

    python docs/examples/lstm_char.py [--quick] [--iterations N] [--out DIR] [--text FILE]

The cell is the standard one (forget, input and output gates, candidate; no peepholes), each
gate from the input's column of its W*x and W*h @ h; `lstm_loss` writes the last hidden and
cell states into `last` (a 2 x hidden array) for the next chunk.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import char_training  # noqa: E402

import cpsgrad  # noqa: E402

GATES = ("f", "i", "o", "c")


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def lstm_loss(params, inputs, targets, state, last):
    """The summed cross-entropy of each next character over the chunk; `state` is the hidden
    and cell states (2 x hidden) the chunk starts from, `last` receives those it ends with."""
    h = state[0]
    c = state[1]
    loss = 0.0
    for t in range(len(inputs)):
        x = inputs[t]
        f = sigmoid(params["Wxf"][:, x] + params["Whf"] @ h + params["bf"])
        i = sigmoid(params["Wxi"][:, x] + params["Whi"] @ h + params["bi"])
        o = sigmoid(params["Wxo"][:, x] + params["Who"] @ h + params["bo"])
        g = np.tanh(params["Wxc"][:, x] + params["Whc"] @ h + params["bc"])
        c = f * c + i * g
        h = o * np.tanh(c)
        y = params["Why"] @ h + params["by"]
        p = np.exp(y - np.max(y))
        p = p / np.sum(p)
        loss = loss - np.log(p[targets[t]])
    last[0] = h
    last[1] = c
    return loss


def init(vocabulary, hidden, rng):
    """Weights randn * 0.01 as min-char-rnn's, biases zero except the forget gate's (1.0, so
    the cell starts by keeping its state)."""
    params = {}
    for gate in GATES:
        params[f"Wx{gate}"] = rng.standard_normal((hidden, vocabulary)) * 0.01
        params[f"Wh{gate}"] = rng.standard_normal((hidden, hidden)) * 0.01
        params[f"b{gate}"] = np.ones(hidden) if gate == "f" else np.zeros(hidden)
    params["Why"] = rng.standard_normal((vocabulary, hidden)) * 0.01
    params["by"] = np.zeros(vocabulary)
    return params


def zero_state(hidden):
    return np.zeros((2, hidden))


loss_and_gradients = cpsgrad.value_and_grad(lstm_loss)


def step(params, inputs, targets, state):
    last = np.empty_like(state)
    loss, grads = loss_and_gradients(params, inputs, targets, state, last)
    return loss, grads, last


def sample(params, state, seed_id, count, rng):
    def probabilities(state, x):
        h, c = state
        f = sigmoid(params["Wxf"][:, x] + params["Whf"] @ h + params["bf"])
        i = sigmoid(params["Wxi"][:, x] + params["Whi"] @ h + params["bi"])
        o = sigmoid(params["Wxo"][:, x] + params["Who"] @ h + params["bo"])
        g = np.tanh(params["Wxc"][:, x] + params["Whc"] @ h + params["bc"])
        c = f * c + i * g
        h = o * np.tanh(c)
        y = params["Why"] @ h + params["by"]
        p = np.exp(y - np.max(y))
        return p / np.sum(p), (h, c)

    return char_training.sample_ids(probabilities, state, seed_id, count, rng)


MODEL = char_training.CharModel("lstm_char", init, zero_state, step, sample)

if __name__ == "__main__":
    sys.exit(char_training.main(MODEL, None, __doc__.split("\n\n")[0]))
