"""Colour crops: a small CIFAR-like set of 32x32 RGB images cut from scikit-image's bundled photos,
labelled by the photo they come from. It is NOT CIFAR-10: eight classes, each one photograph,
so a class is a texture and palette (a cat's fur, coffee, a nebula, stained tissue) rather than
an object seen many ways. It is offline (the photos ship inside the scikit-image wheel; none
needs pooch or a download) and deterministic (no randomness anywhere).

How it is made, for each photo of ``PHOTOS``:

1. the photo, uint8 RGB, is scaled (anti-aliased, ``skimage.transform.rescale``) so that its
   shorter side is ``SHORT_SIDE`` pixels (the large ones -- retina, Hubble -- shrink; the
   others stay near their size);
2. it is split by position: the left ``1 - TEST_FRACTION`` of its columns is for training,
   the rest for testing (so no test crop overlaps a training crop);
3. 32x32 crops are cut from each part on a grid of ``stride`` pixels (default 12), and the flat
   ones left out (a pixel deviation below ``FLAT``, 0.02 of the range: the colour wheel's white
   margin, the night sky between the Hubble galaxies), which would be the same image in both
   parts and in several classes.

Pixels become float32 in [0, 1] and then are normalised per channel with the mean and standard
deviation of the training crops (both parts use the training statistics, as CIFAR's usual
normalisation does). Images are NCHW: ``(N, 3, 32, 32)``; labels are ``int64`` indices into
``PHOTOS``.

    from datasets import colour_crops
    train, test = colour_crops.load()               # Crops(images, labels, classes, source)
    train, test = colour_crops.load(stride=24)      # fewer, less overlapping crops

    python docs/examples/datasets/colour_crops.py   # prints the counts per class
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# The colour photos scikit-image 0.26 ships in its wheel (``skimage.data``; ``cat`` is
# ``chelsea`` again and is left out).
PHOTOS = ("astronaut", "chelsea", "coffee", "rocket", "hubble_deep_field", "immunohistochemistry",
          "retina", "colorwheel")
SIZE = 32
SHORT_SIDE = 300
TEST_FRACTION = 0.2
FLAT = 0.02
SOURCE = "scikit-image's bundled photos (skimage.data), 32x32 crops labelled by photo"


@dataclass(frozen=True)
class Crops:
    images: np.ndarray  # (N, 3, 32, 32) float32, normalised per channel
    labels: np.ndarray  # (N,) int64 indices into classes
    classes: tuple[str, ...]
    source: str

    def __len__(self) -> int:
        return len(self.labels)

    def subset(self, rows) -> Crops:
        return Crops(self.images[rows], self.labels[rows], self.classes, self.source)


def _photo(name: str) -> np.ndarray:
    """Photo ``name`` as float32 RGB in [0, 1], its shorter side ``SHORT_SIDE`` pixels."""
    import skimage.data
    from skimage.transform import rescale

    image = getattr(skimage.data, name)()[..., :3].astype(np.float32) / np.float32(255)
    scale = SHORT_SIDE / min(image.shape[:2])
    if scale != 1:
        image = rescale(image, scale, anti_aliasing=scale < 1, channel_axis=2, preserve_range=True)
    return np.asarray(image, np.float32).clip(0, 1)


def _crops(part: np.ndarray, stride: int) -> np.ndarray:
    """Every SIZE x SIZE crop of ``part`` (H, W, 3) on a ``stride`` grid that is not flat, as
    (n, 3, SIZE, SIZE)."""
    windows = np.lib.stride_tricks.sliding_window_view(part, (SIZE, SIZE), axis=(0, 1))
    windows = windows[::stride, ::stride].reshape(-1, 3, SIZE, SIZE)  # (rows * cols, 3, SIZE, SIZE)
    return np.ascontiguousarray(windows[windows.std(axis=(1, 2, 3)) >= FLAT])


@lru_cache(maxsize=4)
def _raw(stride: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    if stride < 1:
        raise ValueError(f"stride must be a positive number of pixels, not {stride}")
    parts = {"train": ([], []), "test": ([], [])}
    for label, name in enumerate(PHOTOS):
        photo = _photo(name)
        split = int(round(photo.shape[1] * (1 - TEST_FRACTION)))
        for which, part in (("train", photo[:, :split]), ("test", photo[:, split:])):
            crops = _crops(part, stride)
            parts[which][0].append(crops)
            parts[which][1].append(np.full(len(crops), label, np.int64))
    joined = [np.concatenate(items) for which in ("train", "test") for items in parts[which]]
    return tuple(joined)


def load(stride: int = 12) -> tuple[Crops, Crops]:
    """``(train, test)``: the crops of every photo on a ``stride``-pixel grid, ordered by class
    then position, normalised per channel by the training crops' mean and deviation."""
    train_x, train_y, test_x, test_y = _raw(stride)
    mean = train_x.mean(axis=(0, 2, 3), dtype=np.float64).astype(np.float32)[:, None, None]
    std = train_x.std(axis=(0, 2, 3), dtype=np.float64).astype(np.float32)[:, None, None]
    source = f"{SOURCE}, stride {stride}"
    return (Crops((train_x - mean) / std, train_y.copy(), PHOTOS, source),
            Crops((test_x - mean) / std, test_y.copy(), PHOTOS, source))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stride", type=int, default=12)
    arguments = parser.parse_args()
    train, test = load(arguments.stride)
    print(f"{train.source}: {len(train)} training crops, {len(test)} test")
    for label, name in enumerate(PHOTOS):
        print(f"  {label} {name:22s} train {np.sum(train.labels == label):5d}  test {np.sum(test.labels == label):4d}")
