"""SqueezeNet (fire modules, width reduced) trained on the colour crops with gradients from cpsgrad.

    python docs/examples/squeezenet.py [--width 16] [--epochs N] [--batch 32] [--lr LR] [--quick] [--out DIR]

The network, in plain numpy and ``cpsgrad.nn`` (Iandola et al. 2016, SqueezeNet 1.1's order,
sized for 32x32 images): a 3x3 stride-2 convolution and relu, then fire modules with a 2x2
max pool after the second and the fourth. A fire module squeezes its input with a 1x1
convolution (``s`` channels, relu) and expands it with a 1x1 and a 3x3 convolution side by side
(``e`` channels each, relu), concatenated along the channels (``np.concatenate(..., axis=1)``).
The classifier is SqueezeNet's less its last relu (scores that can be negative train from the
first step): dropout 0.5, a 1x1 convolution to the classes, global average pooling. With
``width`` w the fire modules are (s, e) = (w/2, w), (w/2, w), (w, 2w), (w, 2w), (3w/2, 3w),
(3w/2, 3w).

``cpsgrad.value_and_grad`` differentiates ``loss`` with respect to the parameter dict (each
step's dropout mask drawn from that step's seed); ``cpsgrad.optim.SGD`` (momentum 0.9) updates
it. Data: docs/examples/datasets/colour_crops.py; the training loop, progress bar and curves are
docs/examples/vision_training.py's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # docs/examples/: datasets, vision_training

import vision_training  # noqa: E402

import cpsgrad  # noqa: E402
from cpsgrad import nn  # noqa: E402

# (squeeze, expand) of each fire module as multiples of width / 2; a max pool after those in POOL_AFTER
FIRES = ((1, 2), (1, 2), (2, 4), (2, 4), (3, 6), (3, 6))
POOL_AFTER = (2, 4)


def layers(width: int, classes: int, in_channels: int = 3) -> dict[str, tuple[int, ...]]:
    """Every parameter's shape, by name: ``conv1_w``, ``fire1_squeeze_w``, ``fire1_expand3_b``, ...."""
    half = width // 2
    shapes = {"conv1_w": (width, in_channels, 3, 3), "conv1_b": (width,)}
    channels = width
    for index, (squeeze, expand) in enumerate(FIRES, 1):
        squeeze, expand = squeeze * half, expand * half
        shapes[f"fire{index}_squeeze_w"], shapes[f"fire{index}_squeeze_b"] = (squeeze, channels, 1, 1), (squeeze,)
        shapes[f"fire{index}_expand1_w"], shapes[f"fire{index}_expand1_b"] = (expand, squeeze, 1, 1), (expand,)
        shapes[f"fire{index}_expand3_w"], shapes[f"fire{index}_expand3_b"] = (expand, squeeze, 3, 3), (expand,)
        channels = 2 * expand
    shapes["classifier_w"], shapes["classifier_b"] = (classes, channels, 1, 1), (classes,)
    return shapes


def init(rng: np.random.Generator, width: int = 16, classes: int = 8, dtype=np.float32):
    """``(params, state)``: convolutions He-uniform (bound sqrt(6 / fan in), as torchvision's
    SqueezeNet), biases zero. There is no state (no batch norm): ``state`` is an empty dict."""
    params = {}
    for name, shape in layers(width, classes).items():
        if name.endswith("_b"):
            params[name] = np.zeros(shape, dtype)
        else:
            bound = np.sqrt(6 / (shape[1] * shape[2] * shape[3]))
            params[name] = rng.uniform(-bound, bound, shape).astype(dtype)
    return params, {}


def conv_relu(x, params, name: str, padding: int = 0, stride: int = 1):
    return nn.relu(nn.conv2d(x, params[name + "_w"], params[name + "_b"], stride=stride, padding=padding))


def fire(x, params, name: str):
    """Squeeze with a 1x1 convolution, expand with a 1x1 and a 3x3 side by side, concatenated."""
    s = conv_relu(x, params, name + "_squeeze")
    return np.concatenate([conv_relu(s, params, name + "_expand1"),
                           conv_relu(s, params, name + "_expand3", padding=1)], axis=1)


def logits(params, state, images, training: bool, seed: int = 0):
    """The class scores ``(N, classes)`` of ``images`` ``(N, 3, H, W)`` (``state`` is unused:
    SqueezeNet has no batch norm)."""
    x = conv_relu(images, params, "conv1", padding=1, stride=2)
    for index in range(1, len(FIRES) + 1):
        x = fire(x, params, f"fire{index}")
        if index in POOL_AFTER:
            x = nn.max_pool2d(x, 2)
    x = nn.dropout(x, 0.5, seed=seed, training=training)
    x = nn.conv2d(x, params["classifier_w"], params["classifier_b"])
    return nn.global_avg_pool2d(x)


def loss(params, state, images, labels, seed=0):
    """The mean cross-entropy of a training batch (dropout on, its mask drawn from ``seed``)."""
    return nn.softmax_cross_entropy(logits(params, state, images, True, seed), labels)


loss_and_gradients = cpsgrad.value_and_grad(loss)

MODEL = vision_training.Model(
    name="squeezenet", title="SqueezeNet", init=init, logits=logits, step=loss_and_gradients,
    width=16, lr=0.02, weight_decay=5e-4, seeded=True)

if __name__ == "__main__":
    sys.exit(vision_training.main(MODEL))
