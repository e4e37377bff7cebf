"""A ResNet (ResNet-18's layout, width reduced) trained on the colour crops with gradients from cpsgrad.

    python docs/examples/resnet.py [--width 8] [--epochs N] [--batch 32] [--lr LR] [--quick] [--out DIR]

The network, in plain numpy and ``cpsgrad.nn`` (He et al. 2016, the CIFAR form of ResNet-18):
a 3x3 stem convolution, then four stages of two basic blocks each, ``width``, 2, 4 and 8 times
``width`` channels wide; each block is conv 3x3 - batch norm - relu - conv 3x3 - batch norm, plus
its input (through a strided 1x1 convolution and batch norm where a stage halves the image and
doubles the channels), then relu; global average pooling and a fully connected layer to the
classes. Batch norm normalises with the batch's statistics while training and moves running
statistics (``nn.batch_norm_statistics``, PyTorch's momentum 0.1), which evaluation uses.

``cpsgrad.value_and_grad`` differentiates ``loss`` with respect to the parameter dict; the
running statistics live in a second dict, ``state`` (not differentiated): the helpers return
the statistics they move to and ``loss`` stores them into ``state``. ``cpsgrad.optim.SGD``
(momentum 0.9, weight decay 5e-4) updates the parameters. Data:
docs/examples/datasets/colour_crops.py (8 photos, 32x32 crops); the training loop, progress bar
and curves are docs/examples/vision_training.py's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # docs/examples/: datasets, vision_training

import vision_training  # noqa: E402

import cpsgrad  # noqa: E402
from cpsgrad import nn  # noqa: E402

STAGES = ((1, 1), (2, 2), (4, 2), (8, 2))  # (width multiple, stride of the stage's first block)
BLOCKS = 2  # basic blocks a stage (ResNet-18)


def layers(width: int, classes: int, in_channels: int = 3) -> dict[str, tuple[int, ...]]:
    """Every parameter's shape, by name: ``stem_w``, ``stage2_block1_conv1_w``, ``..._bn1_g``, ...."""
    shapes = {"stem_w": (width, in_channels, 3, 3), "stem_bn_g": (width,), "stem_bn_b": (width,)}
    channels = width
    for stage, (multiple, stride) in enumerate(STAGES, 1):
        out = width * multiple
        for block in range(1, BLOCKS + 1):
            name = f"stage{stage}_block{block}"
            shapes[f"{name}_conv1_w"] = (out, channels, 3, 3)
            shapes[f"{name}_conv2_w"] = (out, out, 3, 3)
            for bn in ("bn1", "bn2"):
                shapes[f"{name}_{bn}_g"] = shapes[f"{name}_{bn}_b"] = (out,)
            if block == 1 and (stride != 1 or channels != out):
                shapes[f"{name}_project_w"] = (out, channels, 1, 1)
                shapes[f"{name}_project_bn_g"] = shapes[f"{name}_project_bn_b"] = (out,)
            channels = out
    shapes["fc_w"] = (classes, channels)
    shapes["fc_b"] = (classes,)
    return shapes


def init(rng: np.random.Generator, width: int = 8, classes: int = 8, dtype=np.float32):
    """``(params, state)``: convolutions He-normal (fan out, as torchvision's ResNet), batch-norm
    scales 1 and shifts 0, the classifier PyTorch's Linear default (uniform in +-1/sqrt(fan in));
    running means 0 and variances 1."""
    params, state = {}, {}
    for name, shape in layers(width, classes).items():
        if name.startswith("fc_"):
            bound = 1 / np.sqrt(width * STAGES[-1][0])
            params[name] = rng.uniform(-bound, bound, shape).astype(dtype)
        elif name.endswith("_g"):
            params[name] = np.ones(shape, dtype)
            state[name[:-2] + "_mean"] = np.zeros(shape, dtype)
            state[name[:-2] + "_var"] = np.ones(shape, dtype)
        elif name.endswith("_b"):
            params[name] = np.zeros(shape, dtype)
        else:
            fan_out = shape[0] * shape[2] * shape[3]
            params[name] = rng.normal(0, np.sqrt(2 / fan_out), shape).astype(dtype)
    return params, state


def norm(x, params, state, name: str, training: bool):
    """Batch norm ``name`` of ``x``, and the running statistics it moves to: ``(y, moved)``, with
    ``moved`` a list of ``(key in state, new value)`` (empty in evaluation)."""
    mean, var = state[name + "_mean"], state[name + "_var"]
    y = nn.batch_norm(x, params[name + "_g"], params[name + "_b"], mean, var, training=training)
    if not training:
        return y, []
    new_mean, new_var = nn.batch_norm_statistics(x, mean, var)
    return y, [(name + "_mean", new_mean), (name + "_var", new_var)]


def block(x, params, state, name: str, stride: int, training: bool):
    """A basic block: two 3x3 convolutions with batch norm, the input added back, relu; ``(y, moved)``."""
    h = nn.conv2d(x, params[name + "_conv1_w"], stride=stride, padding=1)
    h, moved1 = norm(h, params, state, name + "_bn1", training)
    h = nn.conv2d(nn.relu(h), params[name + "_conv2_w"], padding=1)
    h, moved2 = norm(h, params, state, name + "_bn2", training)
    moved = [*moved1, *moved2]
    if name + "_project_w" in params:
        shortcut = nn.conv2d(x, params[name + "_project_w"], stride=stride)
        shortcut, moved3 = norm(shortcut, params, state, name + "_project_bn", training)
        moved = [*moved, *moved3]
    else:
        shortcut = x
    return nn.relu(h + shortcut), moved


def forward(params, state, images, training: bool):
    """The class scores ``(N, classes)`` of ``images`` ``(N, 3, H, W)``, and the running
    statistics the batch norms move to (``norm``'s ``moved``, all of them)."""
    x = nn.conv2d(images, params["stem_w"], padding=1)
    x, moved = norm(x, params, state, "stem_bn", training)
    x = nn.relu(x)
    for stage, (_, stride) in enumerate(STAGES, 1):
        for index in range(1, BLOCKS + 1):
            x, more = block(x, params, state, f"stage{stage}_block{index}", stride if index == 1 else 1, training)
            moved = [*moved, *more]
    x = nn.global_avg_pool2d(x)
    return x @ params["fc_w"].T + params["fc_b"], moved


def logits(params, state, images, training: bool):
    """The class scores alone (what evaluation needs)."""
    return forward(params, state, images, training)[0]


def loss(params, state, images, labels):
    """The mean cross-entropy of a training batch (batch statistics); ``state``'s running
    statistics move as PyTorch's do (written here, in the function cpsgrad differentiates: a
    helper it calls may not write into its caller's arrays, so the helpers return them)."""
    scores, moved = forward(params, state, images, True)
    for key, value in moved:
        state[key] = value
    return nn.softmax_cross_entropy(scores, labels)


loss_and_gradients = cpsgrad.value_and_grad(loss)

MODEL = vision_training.Model(
    name="resnet", title="ResNet-18 layout", init=init, logits=logits, step=loss_and_gradients,
    width=8, lr=0.05, weight_decay=5e-4)

if __name__ == "__main__":
    sys.exit(vision_training.main(MODEL))
