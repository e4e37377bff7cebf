"""The colour-crop vision examples (docs/examples/squeezenet.py, resnet.py) and their data: the
crops themselves, each example's --quick run (the loss goes down, the PNG is written), and the
first step's gradients against finite differences and against PyTorch in float64
(benchmarks/vision_torch.py, the same networks in torch.nn.functional), batch norm's running
statistics included."""

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT / "docs" / "examples", ROOT / "benchmarks"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

pytest.importorskip("skimage", reason="the colour crops need scikit-image (the examples extra)")

import resnet  # noqa: E402
import squeezenet  # noqa: E402
import vision_training  # noqa: E402
from datasets import colour_crops  # noqa: E402

import cpsgrad  # noqa: E402

MODELS = {"squeezenet": squeezenet, "resnet": resnet}
TINY = {"squeezenet": 4, "resnet": 2}  # widths small enough for finite differences of every parameter


def batch(count=6, dtype=np.float64):
    train, _ = colour_crops.load()
    rows = np.arange(count) * (len(train) // count)  # every class's crops lie in order: several classes
    return train.images[rows].astype(dtype), train.labels[rows]


# ---- the data ----------------------------------------------------------------------------------


def test_the_crops_are_a_deterministic_labelled_split():
    train, test = colour_crops.load()
    again, _ = colour_crops.load()
    assert train.images.shape[1:] == (3, 32, 32) and train.images.dtype == np.float32
    assert train.labels.dtype == np.int64 and len(train) > 3000 and len(test) > 500
    assert set(np.unique(train.labels)) == set(np.unique(test.labels)) == set(range(len(colour_crops.PHOTOS)))
    np.testing.assert_array_equal(train.images, again.images)
    means, stds = train.images.mean(axis=(0, 2, 3)), train.images.std(axis=(0, 2, 3))
    np.testing.assert_allclose(means, 0, atol=1e-4)
    np.testing.assert_allclose(stds, 1, atol=1e-4)
    # no test crop is a training crop: the split is by position in each photo
    seen = {image.tobytes() for image in train.images}
    assert not any(image.tobytes() in seen for image in test.images)


def test_a_wider_stride_gives_fewer_crops():
    train, test = colour_crops.load(stride=24)
    assert len(train) < len(colour_crops.load()[0]) and len(test) > 0
    with pytest.raises(ValueError, match="stride"):
        colour_crops.load(stride=0)


# ---- the first step's gradients ----------------------------------------------------------------


def arguments(name, params, state, images, labels):
    return (params, state, images, labels) + ((7,) if name == "squeezenet" else ())


@pytest.mark.parametrize("name", MODELS)
def test_first_step_gradients_match_pytorch_in_float64(name):
    torch = pytest.importorskip("torch")
    import vision_torch

    torch.set_num_threads(1)
    module = MODELS[name]
    params, state = module.init(np.random.default_rng(3), module.MODEL.width // 2, 8, np.float64)
    images, labels = batch(8)
    ours_state = {k: v.copy() for k, v in state.items()}
    loss, grads = module.loss_and_gradients(*arguments(name, params, ours_state, images, labels))
    torch_state = {k: v.copy() for k, v in state.items()}
    torch_loss, torch_grads = vision_torch.loss_and_gradients(name, params, torch_state, images, labels, 7)
    assert abs(float(loss) - torch_loss) <= 1e-12 * abs(torch_loss)
    assert set(grads) == set(params)
    for key in params:
        np.testing.assert_allclose(grads[key], torch_grads[key], rtol=1e-9, atol=1e-12, err_msg=key)
    for key in state:  # the running statistics moved as PyTorch moves them, once
        np.testing.assert_allclose(ours_state[key], torch_state[key], rtol=1e-12, atol=1e-14, err_msg=key)
        assert not np.array_equal(ours_state[key], state[key])


@pytest.mark.parametrize("name", MODELS)
def test_first_step_gradients_match_finite_differences(name):
    module = MODELS[name]
    params, state = module.init(np.random.default_rng(5), TINY[name], 8, np.float64)
    rng = np.random.default_rng(11)
    # zero biases put many relu inputs exactly at the kink (an all-zero patch plus a zero bias):
    # moved off it, the loss is smooth near the point
    params = {k: v + rng.uniform(-0.1, 0.1, v.shape) if k.endswith("_b") else v for k, v in params.items()}
    images, labels = batch(4)
    _, grads = module.loss_and_gradients(*arguments(name, params, dict(state), images, labels))

    def loss_along(key, direction, t):
        moved = dict(params)
        moved[key] = params[key] + t * direction
        return float(module.loss(*arguments(name, moved, dict(state), images, labels)))

    for key in params:  # a random unit direction in each parameter: every entry contributes
        direction = rng.normal(size=params[key].shape)
        direction /= np.linalg.norm(direction)
        exact = float(np.sum(grads[key] * direction))
        # the best of three steps: a kink (relu, a max-pool tie) within one step of the point
        # spoils that step's difference, not all three; a wrong gradient spoils every one
        errors = [abs((loss_along(key, direction, h) - loss_along(key, direction, -h)) / (2 * h) - exact)
                  for h in (1e-5, 1e-6, 1e-7)]
        assert min(errors) <= 1e-7 + 1e-6 * abs(exact), (key, exact, errors)


def test_resnet_evaluation_uses_the_running_statistics_differentiably():
    torch = pytest.importorskip("torch")
    import vision_torch

    params, state = resnet.init(np.random.default_rng(2), 2, 8, np.float64)
    rng = np.random.default_rng(4)
    state = {k: (v + rng.uniform(0.1, 0.5, v.shape)) for k, v in state.items()}  # moved, positive variances
    images, labels = batch(4)

    def evaluation_loss(params, state, images, labels):
        return cpsgrad.nn.softmax_cross_entropy(resnet.logits(params, state, images, False), labels)

    grads = cpsgrad.grad(evaluation_loss)(params, state, images, labels)
    p, s = vision_torch.tensors(params, True), vision_torch.tensors(state)
    scores = vision_torch.resnet_logits(p, s, torch.tensor(images), training=False)
    torch.nn.functional.cross_entropy(scores, torch.tensor(labels)).backward()
    for key in params:
        np.testing.assert_allclose(grads[key], p[key].grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=key)


# ---- the --quick runs --------------------------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
def test_quick_run_trains_and_writes_its_curves(name, tmp_path, capsys):
    status = vision_training.main(MODELS[name].MODEL, ["--quick", "--no-progress", "--out", str(tmp_path)])
    summary = capsys.readouterr().out.strip().splitlines()[-1]
    assert status == 0, summary
    assert (tmp_path / f"{name}_colour_crops.png").stat().st_size > 10_000
    assert "test accuracy" in summary


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_three_epochs_reach_well_above_chance(name, tmp_path):
    module = MODELS[name]
    options = vision_training.Options(width=module.MODEL.width, lr=module.MODEL.lr, epochs=3,
                                      weight_decay=module.MODEL.weight_decay, train=2000, progress=False)
    train_set, test_set = vision_training.data(options)
    result = vision_training.train(module.MODEL, train_set, test_set, options)
    assert np.mean(result.losses[-20:]) < np.mean(result.losses[:20])
    # chance is 0.125; the test crops come from the right fifth of each photo, a shifted
    # distribution: 3 epochs on 2,000 crops measured 0.37-0.43 (SqueezeNet), more for the ResNet
    assert result.accuracies[-1] > 0.3


def test_the_benchmark_quick_run_agrees_with_pytorch():
    pytest.importorskip("torch")
    import training_vision

    assert training_vision.main(["--quick", "--steps", "4", "--warmup", "1", "--width", "4"]) == 0

