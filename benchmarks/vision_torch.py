"""PyTorch's form of docs/examples/squeezenet.py and resnet.py, written with torch.nn.functional on
the same parameter dicts (numpy arrays in, torch tensors used): the peer of
benchmarks/training_vision.py and the reference of tests/test_vision_models.py.

Same layers, order, names and conventions as the examples (PyTorch's batch norm moves the
running statistics in place, as the examples' ``state`` moves); only the dropout mask differs
in its draw, so the SqueezeNet comparisons pass a mask drawn as cpsgrad draws it
(``dropout_mask``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "examples"))

import resnet  # noqa: E402
import squeezenet  # noqa: E402


def tensors(tree: dict, requires_grad: bool = False) -> dict:
    import torch

    return {k: torch.tensor(v, requires_grad=requires_grad) for k, v in tree.items()}


def dropout_mask(shape: tuple, p: float, seed: int, dtype) -> np.ndarray:
    """The scaled keep mask ``cpsgrad.nn.dropout(x, p, seed=seed)`` multiplies by."""
    from cpsgrad import nn

    return nn.dropout(np.ones(shape, dtype), p, seed=seed)


def squeezenet_logits(params, images, mask=None):
    """``squeezenet.logits`` in torch; ``mask`` the dropout's scaled mask (None: no dropout)."""
    import torch
    import torch.nn.functional as F

    def conv_relu(x, name, padding=0, stride=1):
        return F.relu(F.conv2d(x, params[name + "_w"], params[name + "_b"], stride=stride, padding=padding))

    x = conv_relu(images, "conv1", padding=1, stride=2)
    for index in range(1, len(squeezenet.FIRES) + 1):
        s = conv_relu(x, f"fire{index}_squeeze")
        x = torch.cat([conv_relu(s, f"fire{index}_expand1"), conv_relu(s, f"fire{index}_expand3", padding=1)], 1)
        if index in squeezenet.POOL_AFTER:
            x = F.max_pool2d(x, 2)
    if mask is not None:
        x = x * mask
    x = F.conv2d(x, params["classifier_w"], params["classifier_b"])
    return x.mean(dim=(2, 3))


def resnet_logits(params, state, images, training=True):
    """``resnet.logits`` in torch; ``state``'s tensors move in place while training."""
    import torch.nn.functional as F

    def norm(x, name):
        return F.batch_norm(x, state[name + "_mean"], state[name + "_var"], params[name + "_g"],
                            params[name + "_b"], training=training, momentum=0.1, eps=1e-5)

    x = F.relu(norm(F.conv2d(images, params["stem_w"], padding=1), "stem_bn"))
    for stage, (_, stride) in enumerate(resnet.STAGES, 1):
        for index in range(1, resnet.BLOCKS + 1):
            name, step = f"stage{stage}_block{index}", stride if index == 1 else 1
            h = F.relu(norm(F.conv2d(x, params[name + "_conv1_w"], stride=step, padding=1), name + "_bn1"))
            h = norm(F.conv2d(h, params[name + "_conv2_w"], padding=1), name + "_bn2")
            if name + "_project_w" in params:
                x = norm(F.conv2d(x, params[name + "_project_w"], stride=step), name + "_project_bn")
            x = F.relu(h + x)
    return x.mean(dim=(2, 3)) @ params["fc_w"].T + params["fc_b"]


def loss_and_gradients(model: str, params, state, images, labels, seed=0):
    """``(loss, grads)`` (numpy) of one training batch in torch, as the examples' steps return
    them; ``state`` (numpy) moves in place for the ResNet."""
    import torch
    import torch.nn.functional as F

    p, y = tensors(params, True), torch.tensor(labels)
    if model == "resnet":
        s = tensors(state)
        scores = resnet_logits(p, s, torch.tensor(images))
        for key, value in s.items():
            state[key][...] = value.numpy()
    else:
        mask_shape = _squeezenet_pool_shape(params, images)
        mask = torch.tensor(dropout_mask(mask_shape, 0.5, seed, images.dtype))
        scores = squeezenet_logits(p, torch.tensor(images), mask)
    loss = F.cross_entropy(scores, y)
    loss.backward()
    return loss.item(), {k: v.grad.numpy() for k, v in p.items()}


def _squeezenet_pool_shape(params, images) -> tuple:
    """The shape of the activations the SqueezeNet's dropout sees."""
    channels = params["classifier_w"].shape[1]
    size = images.shape[-1]
    size = (size + 2 - 3) // 2 + 1  # conv1, stride 2, padding 1
    for _ in squeezenet.POOL_AFTER:
        size //= 2
    return (images.shape[0], channels, size, size)
