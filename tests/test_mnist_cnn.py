"""docs/examples/mnist_cnn.py and its data (docs/examples/datasets/mnist.py): the loaders on the
real installed files (skipped, naming the install command, when a package is missing), the
CNN's first-step gradient against finite differences (float64) and against PyTorch, and a short
training run (the loss goes down, the PNG is written)."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"
sys.path.insert(0, str(EXAMPLES))

import mnist_cnn  # noqa: E402
from datasets import mnist  # noqa: E402

missing = mnist.available()
needs_digits = pytest.mark.skipif(missing["mnist_5k"] is not None, reason=str(missing["mnist_5k"]))
needs_fashion = pytest.mark.skipif(missing["fashion_mnist"] is not None, reason=str(missing["fashion_mnist"]))


@needs_digits
def test_mnist_5k_reads_the_real_digits():
    digits = mnist.mnist_5k()
    assert digits.images.shape == (5000, 28, 28) and digits.images.dtype == np.uint8
    assert np.bincount(digits.labels).tolist() == [500] * 10
    assert digits.images.max() == 255 and 80 < digits.images.mean() / 255 * 1000 < 200  # ink on black
    train, held = mnist.held_out(digits, 100, seed=3)
    assert len(train) == 4000 and len(held) == 1000
    assert np.bincount(held.labels).tolist() == [100] * 10
    rows = {image.tobytes() for image in held.images}
    assert not any(image.tobytes() in rows for image in train.images[:500])


@needs_fashion
def test_fashion_mnist_reads_debians_idx_files():
    test = mnist.fashion_mnist("test")
    assert test.images.shape == (10000, 28, 28) and np.bincount(test.labels).tolist() == [1000] * 10
    assert len(mnist.fashion_mnist("train")) == 60000
    with pytest.raises(ValueError, match="split"):
        mnist.fashion_mnist("validation")


def test_missing_data_names_the_install_command(tmp_path):
    with pytest.raises(FileNotFoundError, match="apt-get install -y dataset-fashion-mnist"):
        mnist.fashion_mnist("test", directory=tmp_path)


def small_problem(dtype=np.float64, batch=3):
    rng = np.random.default_rng(7)
    params = mnist_cnn.init(rng, dtype)
    images = rng.standard_normal((batch, 1, 28, 28)).astype(dtype)
    labels = rng.integers(0, 10, batch)
    return params, images, labels


def test_first_step_gradient_matches_finite_differences():
    params, images, labels = small_problem()
    loss, grads = mnist_cnn.loss_and_gradients(params, images, labels, 5)
    assert loss == mnist_cnn.cnn_loss(params, images, labels, 5)  # the primal
    rng = np.random.default_rng(1)
    step = 1e-6
    for key, value in params.items():
        for flat in rng.choice(value.size, size=3, replace=False):
            where = np.unravel_index(flat, value.shape)
            saved = value[where]
            value[where] = saved + step
            above = mnist_cnn.cnn_loss(params, images, labels, 5)
            value[where] = saved - step
            below = mnist_cnn.cnn_loss(params, images, labels, 5)
            value[where] = saved
            assert grads[key][where] == pytest.approx((above - below) / (2 * step), rel=1e-5, abs=1e-9), key


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
def test_first_step_gradient_is_pytorchs():
    import torch
    import torch.nn.functional as F

    params, images, labels = small_problem(batch=4)
    seed = 9
    _, grads = mnist_cnn.loss_and_gradients(params, images, labels, seed)
    mask = (np.random.default_rng(seed).random((4, 50)) >= 0.5) * 2.0  # nn.dropout's mask of that seed
    t = {key: torch.tensor(value, requires_grad=True) for key, value in params.items()}
    x = F.relu(F.max_pool2d(F.conv2d(torch.tensor(images), t["conv1_w"], t["conv1_b"]), 2))
    x = F.relu(F.max_pool2d(F.conv2d(x, t["conv2_w"], t["conv2_b"]), 2)).reshape(4, 320)
    x = F.relu(F.linear(x, t["fc1_w"], t["fc1_b"])) * torch.tensor(mask)
    F.cross_entropy(F.linear(x, t["fc2_w"], t["fc2_b"]), torch.tensor(labels)).backward()
    for key, value in t.items():
        np.testing.assert_allclose(grads[key], value.grad.numpy(), rtol=1e-10, atol=1e-13, err_msg=key)


@needs_digits
def test_quick_training_lowers_the_loss_and_writes_its_curve(tmp_path, capsys):
    status = mnist_cnn.main(["--train", "640", "--epochs", "1", "--batch", "32", "--no-progress",
                             "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    assert status == 0, printed
    assert "20 steps" in printed and "test accuracy" in printed
    assert (tmp_path / "mnist_cnn_mnist_batch32.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_shift_augmentation_moves_each_image_within_the_bound():
    images = np.random.default_rng(3).random((6, 1, 28, 28)).astype(np.float32)
    moved = mnist_cnn.shifted(images, 2, np.random.default_rng(4))
    assert moved.shape == images.shape and moved.dtype == images.dtype
    assert mnist_cnn.shifted(images, 0, None) is images
    background = -mnist_cnn.MEAN / mnist_cnn.STD
    offsets = set()
    for image, result in zip(images[:, 0], moved[:, 0], strict=True):
        padded = np.pad(image, 2, constant_values=background)
        found = [(dy, dx) for dy in range(5) for dx in range(5)
                 if np.array_equal(padded[dy : dy + 28, dx : dx + 28], result)]
        assert len(found) == 1
        offsets.add(found[0])
    assert len(offsets) > 1  # the moves are drawn, not one fixed offset
