"""Corpora of user-style programs to differentiate, each program paired with its input domain."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis.strategies import SearchStrategy


@dataclass(frozen=True)
class Case:
    """A program, strategies for each of its arguments (in order), and what to differentiate."""

    function: Callable[..., Any]
    arguments: tuple[SearchStrategy[Any], ...]
    argnums: int | tuple[int, ...] = 0

    @property
    def name(self) -> str:
        return self.function.__name__
