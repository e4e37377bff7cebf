"""The examples in docs/examples/ run, check their own gradients, and train; docs/examples.md's
excerpts of `cpsgrad show` are what cpsgrad prints for them."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cpsgrad
from cpsgrad import cli
from cpsgrad.testing import check_grad

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"


def load(name):
    """docs/examples/NAME.py as a module (the directory is not a package)."""
    module_name = f"cpsgrad_example_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return sys.modules[module_name]


def has_torch():
    return importlib.util.find_spec("torch") is not None


# ---- the Tree-LSTM -----------------------------------------------------------------------------


def test_tree_lstm_checks_its_gradient_and_trains():
    tree_lstm = load("tree_lstm")
    lines = []
    result = tree_lstm.main(hidden=6, embedding=5, epochs=4, use_torch=has_torch(), report=lines.append)
    assert result["ok"], "\n".join(lines)
    assert result["fd_error"] < 1e-5
    if has_torch():
        assert result["torch_error"] < 1e-10
        assert any("against torch.autograd" in line for line in lines)
    losses = result["losses"]
    assert all(later < earlier for earlier, later in zip(losses, losses[1:], strict=False)), losses


def test_tree_lstm_gradient_is_a_dict_with_the_parameters_keys():
    import cpsgrad

    tree_lstm = load("tree_lstm")
    tree = tree_lstm.with_indices(tree_lstm.parse("(3 (2 It) (4 (2 's) (4 great)))"), {"It": 0, "'s": 1, "great": 2})
    params = tree_lstm.init_params(3, embedding=4, hidden=3)
    assert list(params) == ["E", "W", "U", "b", "W_out", "b_out"]
    value, grads = cpsgrad.value_and_grad(tree_lstm.tree_loss)(params, tree)
    assert value == tree_lstm.tree_loss(params, tree)
    assert list(grads) == list(params)
    for key in params:
        assert grads[key].shape == params[key].shape and grads[key].dtype == params[key].dtype
        assert np.all(np.isfinite(grads[key])) and np.any(grads[key])
    assert tree_lstm.finite_difference_check(params, tree, grads, entries=10) < 1e-5


def test_tree_lstm_parser():
    tree_lstm = load("tree_lstm")
    assert tree_lstm.parse("(3 (2 It) (4 (2 's) (4 great)))") == (3, (2, "It"), (4, (2, "'s"), (4, "great")))
    assert tree_lstm.parse(" (1\n  (2 -LRB-)\t(0 :-RRB-) ) ") == (1, (2, "-LRB-"), (0, ":-RRB-"))
    deep = "(2 w0)"
    for i in range(1, 60):
        deep = f"(2 (1 w{i}) {deep})"
    assert len(tree_lstm.words_of(tree_lstm.parse(deep))) == 60
    for bad in ("", "2 a", "(2 a", "(2 a b)", "(2 (2 a))", "(2 (2 a) (2 b) (2 c))", "(x a)", "(2 (2 a) (2 b)) (2 c)"):
        with pytest.raises(ValueError):
            tree_lstm.parse(bad)


# ---- the MLP -----------------------------------------------------------------------------------


def test_mlp_checks_its_gradient_and_its_loss_decreases():
    mlp_training = load("mlp_training")
    lines = []
    result = mlp_training.main(steps=150, hidden=16, synthetic=True, every=50, report=lines.append)
    assert result["ok"], "\n".join(lines)
    assert result["fd_error"] < 1e-5
    assert result["data"].startswith("synthetic spirals")
    losses = result["losses"]
    assert len(losses) == 4 and losses[-1] < 0.5 * losses[0], losses
    assert result["test_accuracy"] > 0.7


def test_ode_fit_recovers_the_parameters_through_closures():
    ode_fit = load("ode_fit")
    dt = 0.1
    observed = ode_fit.observations({"k": 2.0, "c": 0.3}, 40, dt, noise=0.0)
    theta = {"k": 1.2, "c": 0.6}
    loss, grads = cpsgrad.value_and_grad(ode_fit.loss_fn)(theta, observed, dt)
    assert loss == ode_fit.loss_fn(theta, observed, dt)
    assert set(grads) == {"k", "c"}
    check_grad(ode_fit.loss_of, 1.2, 0.6, observed, dt, argnums=(0, 1))
    assert ode_fit.main(["--steps", "150", "--points", "40"]) == 0


# ---- the scripts, as a user runs them ----------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "arguments", "expected"),
    [
        ("tree_lstm.py", ["--hidden", "4", "--embedding", "3", "--epochs", "2", "--no-torch"],
         "torch.autograd check: skipped (--no-torch)"),
        ("mlp_training.py", ["--steps", "100", "--hidden", "8", "--synthetic"],
         "data: synthetic spirals (--synthetic)"),
    ],
)
def test_scripts_run(script, arguments, expected):
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *arguments], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert expected in completed.stdout
    assert "passed, loss decreased" in completed.stdout


# ---- docs/examples.md --------------------------------------------------------------------------


def test_examples_doc_shows_what_cpsgrad_show_prints(capsys, monkeypatch):
    """Each block after `<!-- cpsgrad show TARGET -->` is an excerpt of what that command prints
    (run from the repository's root): its lines, `...` lines aside, appear in the output in order."""
    monkeypatch.chdir(ROOT)
    text = (ROOT / "docs" / "examples.md").read_text()
    blocks = re.findall(r"<!-- cpsgrad show (\S+) -->\n```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 2
    for target, excerpt in blocks:
        assert cli.main(["show", target]) == 0
        printed = [line.strip() for line in capsys.readouterr().out.splitlines()]
        at = 0
        for line in excerpt.splitlines():
            if line.strip() in ("", "..."):
                continue
            assert line.strip() in printed[at:], (
                f"{target}: {line.strip()!r} is not in what cpsgrad show prints (in order)"
            )
            at = printed.index(line.strip(), at) + 1


def test_examples_doc_code_is_the_examples_code():
    """Each block after `<!-- from docs/examples/FILE.py -->` appears verbatim in that file."""
    text = (ROOT / "docs" / "examples.md").read_text()
    blocks = re.findall(r"<!-- from (\S+) -->\n```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 4
    for path, block in blocks:
        assert block in (ROOT / path).read_text(), f"docs/examples.md's code from {path} is not in it"
