"""The training loop shared by the character-level examples (min_char_rnn.py, lstm_char.py):
the text as character ids, Karpathy's min-char-rnn loop (chunks of `sequence` characters, the
hidden state carried from chunk to chunk, gradients clipped to [-5, 5], Adagrad), text sampled
as it trains, a tqdm progress bar, a PNG loss curve and a summary (the bar and the plot:
training_tools.py, shared with mnist_cnn.py).

A model is a `CharModel`: how to make its parameters and its zero state, one step's loss and
gradients (from `cpsgrad.value_and_grad` of the model's numpy loss), and sampling.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # docs/examples/: the datasets package

import training_tools  # noqa: E402
from datasets import shakespeare  # noqa: E402

from cpsgrad import optim  # noqa: E402


@dataclass
class CharData:
    """A text as ids into its sorted set of characters."""

    ids: list[int]
    characters: list[str]
    source: str

    @classmethod
    def from_text(cls, text: str, source: str) -> CharData:
        characters = sorted(set(text))
        index = {character: i for i, character in enumerate(characters)}
        return cls([index[character] for character in text], characters, source)

    def decode(self, ids) -> str:
        return "".join(self.characters[i] for i in ids)


def load_data(text_file: str | None = None, quick: bool = False) -> CharData:
    """A text file's characters, or Shakespeare's plays (docs/examples/datasets/shakespeare.py;
    `--quick` reads one play)."""
    if text_file is not None:
        return CharData.from_text(Path(text_file).read_text(encoding="utf-8"), text_file)
    names = ["coriolanus"] if quick else None
    text = shakespeare.text(names)
    what = "Coriolanus" if quick else "the 37 plays"
    return CharData.from_text(text, f"{what} from the {shakespeare.SOURCE}")


@dataclass
class CharModel:
    """A character model: `init(vocabulary, hidden, rng) -> params`, `zero_state(hidden)`,
    `step(params, inputs, targets, state) -> (loss, grads, state)` and
    `sample(params, state, seed_id, count, rng) -> ids`."""

    name: str
    init: Callable
    zero_state: Callable
    step: Callable
    sample: Callable


@dataclass
class Options:
    hidden: int = 50
    sequence: int = 20
    lr: float = 0.1
    clip: float = 5.0
    iterations: int = 5001
    sample_every: int = 1000
    sample_length: int = 200
    seed: int = 0
    progress: bool = True


@dataclass
class Result:
    losses: list[float] = field(default_factory=list)
    smooth: list[float] = field(default_factory=list)
    samples: list[tuple[int, str]] = field(default_factory=list)
    seconds: float = 0.0
    params: object = None


def train(model: CharModel, data: CharData, options: Options, params=None) -> Result:
    """min-char-rnn's loop: chunk `p` of the text, its loss and gradients, clipping, Adagrad;
    back to the start of the text (and a zero state) when it runs out. `params` defaults to
    the model's seeded initialisation."""
    rng = np.random.default_rng(options.seed)
    vocabulary = len(data.characters)
    if params is None:
        params = model.init(vocabulary, options.hidden, rng)
    optimizer = optim.Adagrad(params, lr=options.lr)
    result = Result()
    smooth = -math.log(1.0 / vocabulary) * options.sequence  # the loss at iteration 0
    position, state = 0, model.zero_state(options.hidden)
    bar = _progress(options)
    start = time.perf_counter()
    for iteration in range(options.iterations):
        if position + options.sequence + 1 >= len(data.ids):
            position, state = 0, model.zero_state(options.hidden)
        inputs = data.ids[position : position + options.sequence]
        targets = data.ids[position + 1 : position + options.sequence + 1]
        if options.sample_every and iteration % options.sample_every == 0:
            ids = model.sample(params, state, inputs[0], options.sample_length, rng)
            _write(bar, f"---- iteration {iteration}, sampled:\n{data.decode(ids)}\n----")
        loss, grads, state = model.step(params, inputs, targets, state)
        optim.clip_by_value(grads, options.clip)
        optimizer.step(grads)
        smooth = smooth * 0.999 + loss * 0.001
        result.losses.append(float(loss))
        result.smooth.append(smooth)
        position += options.sequence
        if bar is not None:
            bar.update(1)
            if iteration % 50 == 0:
                bar.set_postfix(loss=f"{smooth:.3f}")
    result.seconds = time.perf_counter() - start
    if bar is not None:
        bar.close()
    result.params = params
    return result


def _progress(options: Options):
    return training_tools.progress(options.iterations, options.progress)


_write = training_tools.write


def plot(curves: dict[str, list[float]], path: Path, title: str, smooth: dict | None = None) -> Path:
    """A PNG of loss curves (training_tools.plot)."""
    return training_tools.plot(curves, path, title, smooth, ylabel="loss (summed over the chunk)")


def sample_ids(probabilities: Callable, state, seed_id: int, count: int, rng) -> list[int]:
    """`count` ids drawn one after another: `probabilities(state, id) -> (p, state)`."""
    ids, current = [], seed_id
    for _ in range(count):
        p, state = probabilities(state, current)
        current = int(rng.choice(len(p), p=p / p.sum()))
        ids.append(current)
    return ids


def main(model: CharModel, argv: list[str] | None, description: str) -> int:
    """The examples' command line: exit status 0 when the loss went down."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="a few seconds: 300 iterations on one play")
    parser.add_argument("--iterations", type=int, default=None, help="default 5001 (Lantern's), 300 with --quick")
    parser.add_argument("--hidden", type=int, default=50)
    parser.add_argument("--sequence", type=int, default=20)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--text", default=None, help="train on this text file instead of Shakespeare's plays")
    parser.add_argument("--out", default=".", help="where the PNG goes (default: the working directory)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    arguments = parser.parse_args(argv)
    iterations = arguments.iterations or (300 if arguments.quick else 5001)
    options = Options(hidden=arguments.hidden, sequence=arguments.sequence, lr=arguments.lr,
                      iterations=iterations, seed=arguments.seed,
                      sample_every=100 if arguments.quick else 1000,
                      progress=not arguments.no_progress)
    data = load_data(arguments.text, arguments.quick)
    print(f"{model.name}: {len(data.ids)} characters, {len(data.characters)} distinct, of {data.source}")
    result = train(model, data, options)
    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    png = plot({"loss": result.losses}, out / f"{model.name}_loss.png",
               f"{model.name}: hidden {options.hidden}, sequence {options.sequence}, Adagrad {options.lr}",
               smooth={"smoothed loss": result.smooth})
    first, last = float(np.mean(result.losses[:50])), float(np.mean(result.losses[-50:]))
    print(f"{model.name}: {iterations} iterations in {result.seconds:.2f} s "
          f"({iterations / result.seconds:.0f} it/s); loss {first:.3f} -> {last:.3f} "
          f"(mean of the first and last 50), smoothed {result.smooth[-1]:.3f}; curve in {png}")
    return 0 if last < first else 1
