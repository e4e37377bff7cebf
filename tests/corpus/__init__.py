"""Corpora of user-style programs to differentiate, each program paired with its input domain.

tests/test_corpus.py runs every corpus module named in its `CORPORA`; what a module declares
for it is described there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis.strategies import SearchStrategy


@dataclass(frozen=True)
class Case:
    """A program, strategies for each of its arguments (in order), and what to differentiate.

    `jax` is the program transcribed to jax.numpy, whose `jax.grad` the gradient must match;
    `xfail` is why the case is known to fail (a cpsgrad bug): the tests mark it
    xfail(strict=True), so that it must keep failing until the bug is fixed.
    """

    function: Callable[..., Any]
    arguments: tuple[SearchStrategy[Any], ...]
    argnums: int | tuple[int, ...] = 0
    jax: Callable[..., Any] | None = None
    xfail: str | None = None

    @property
    def name(self) -> str:
        return self.function.__name__
