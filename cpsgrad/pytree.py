"""Walking nested parameters: the leaves of dicts, lists, tuples, NamedTuples and dataclass
instances, each with its path, and the leaves of a second tree at the same paths.

One walker for everything that visits parameters (`cpsgrad.optim`, the training examples):

>>> import numpy as np
>>> params = {"W": np.zeros((2, 2)), "layers": [np.ones(3)]}
>>> [path_string(path) for path, _ in leaves_with_paths(params)]
["['W']", "['layers'][0]"]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np

Path = tuple  # of keys (dict), indices (list, tuple) and field names (NamedTuple, dataclass)


_LEAF_TYPES = frozenset({np.ndarray, float, int, complex, bool, type(None), np.float32, np.float64})


class _Field(str):
    """A path step into an attribute (a NamedTuple's or a dataclass's field)."""


def _children(tree) -> list[tuple[Any, Any]] | None:
    """(path step, child) of a container, in its order; None for a leaf."""
    if type(tree) in _LEAF_TYPES:  # the common leaves, without the dataclass and NamedTuple checks
        return None
    if isinstance(tree, dict):
        return list(tree.items())
    if isinstance(tree, tuple) and hasattr(type(tree), "_fields"):
        return [(_Field(name), value) for name, value in zip(type(tree)._fields, tree, strict=True)]
    if isinstance(tree, (list, tuple)):
        return list(enumerate(tree))
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        return [(_Field(f.name), getattr(tree, f.name)) for f in dataclasses.fields(tree)]
    return None


def leaves_with_paths(tree, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every leaf of `tree` (anything that is not a dict, list, tuple, NamedTuple or dataclass
    instance) with its path, depth first in the containers' own order."""
    children = _children(tree)
    if children is None:
        yield path, tree
        return
    for step, child in children:
        yield from leaves_with_paths(child, (*path, step))


def leaves(tree) -> list:
    """The leaves of `tree` in the order of `leaves_with_paths`."""
    return [leaf for _, leaf in leaves_with_paths(tree)]


def path_string(path: Path) -> str:
    """A path as Python writes the access: `['W'][0].bias`."""
    return "".join(f".{step}" if isinstance(step, _Field) else f"[{step!r}]" for step in path)


def _step(tree, step, path: Path, name: str):
    if isinstance(step, _Field):
        if not hasattr(tree, step):
            raise ValueError(f"{name}{path_string(path)} has no field {str(step)!r}: "
                             "it must have the parameters' structure")
        return getattr(tree, step)
    try:
        return tree[step]
    except (KeyError, IndexError, TypeError):
        raise ValueError(f"{name}{path_string(path)} has no entry [{step!r}]: "
                         "it must have the parameters' structure") from None


def leaves_like(reference, other, name: str = "grads") -> list:
    """The leaves of `other` at the paths of `reference`'s leaves, in the same order; a
    ValueError naming the path where `other` lacks one or has more entries than `reference`."""
    found = []
    for path, _ in leaves_with_paths(reference):
        node = other
        for depth, step in enumerate(path):
            node = _step(node, step, path[:depth], name)
        found.append(node)
    expected = sum(1 for _ in leaves_with_paths(reference))
    if sum(1 for _ in leaves_with_paths(other)) != expected:
        extra = {path_string(p) for p, _ in leaves_with_paths(other)}
        extra -= {path_string(p) for p, _ in leaves_with_paths(reference)}
        where = ", ".join(sorted(extra)) or "(a leaf where the parameters have a container)"
        raise ValueError(f"{name} has entries the parameters do not: {where}")
    return found
