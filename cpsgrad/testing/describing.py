"""How check_grad's messages name a function, its arguments and values."""

from __future__ import annotations

import inspect
import reprlib
from collections.abc import Callable
from typing import Any

import numpy as np


def _parameter_names(f: Callable[..., Any], count: int) -> list[str]:
    """Names for f's first `count` positional arguments (arg0, arg1, ... where unknown)."""
    try:
        parameters = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    names = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [names[i] if i < len(names) else f"arg{i}" for i in range(count)]


def _name(f: Callable[..., Any]) -> str:
    return getattr(f, "__qualname__", None) or repr(f)


def _describe_value(value: Any, *, values: bool = True) -> str:
    """'float64 array of shape (2, 3)', 'float 0.5', 'float32 0.5'; without the value: 'float'."""
    if isinstance(value, np.ndarray):
        return f"{value.dtype} array of shape {value.shape}"
    if isinstance(value, np.generic):
        return f"{value.dtype} {value.item()!r}" if values else str(value.dtype)
    kind = type(value).__name__
    return f"{kind} {value!r}" if values else kind


def _show_argument(value: Any) -> str:
    """An argument in a message: small arrays in full on one line, bigger ones by shape."""
    if isinstance(value, np.ndarray):
        if value.size <= 8:
            return " ".join(repr(value).split())
        return f"array(shape={value.shape}, dtype={value.dtype})"
    return reprlib.repr(value)


def _describe_call(f: Callable[..., Any], args: tuple[Any, ...], argnums: Any) -> str:
    names = _parameter_names(f, len(args))
    shown = ", ".join(f"{n}={_show_argument(a)}" for n, a in zip(names, args, strict=True))
    return f"{_name(f)}({shown}) with argnums={argnums!r}"
