"""The gradient of a differentiated argument that is an object of a plain class (runtime/objects.py
keeps its attributes' adjoints in the run's books): a new object of its class, made without
calling `__init__`, whose attributes are the attributes' gradients."""

from __future__ import annotations

import numpy as np

from cpsgrad.runtime.objects import _state, is_plain_object


def object_gradient(argument, as_gradient):
    """The gradient of a plain object argument: a new object of its class (made without calling
    `__init__`) whose attributes are the gradients of the argument's, read off the books
    (`as_gradient(value, adjoint)` conforms each); attributes that are not floats, arrays,
    containers or objects get None."""
    state = _state()
    if id(argument) in state.gradients:  # the same object twice (or a cycle): the same gradient
        return state.gradients[id(argument)]
    adjoints = state.adjoints.get(id(argument), {})
    gradient = state.gradients[id(argument)] = object.__new__(type(argument))
    for name, value in list(argument.__dict__.items()):
        gradient.__dict__[name] = as_gradient(value, adjoints.get(name, 0.0)) if _differentiable(value) else None
    return gradient


def differentiable_parts(value) -> list:
    """(label, attribute value) of a differentiated plain object's attributes that get gradients."""
    return [(f".{name}", part) for name, part in value.__dict__.items() if _differentiable(part)]


def _differentiable(value) -> bool:
    if isinstance(value, bool) or isinstance(value, (int, str, bytes)) or value is None:
        return False
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "f"
    return (
        isinstance(value, (float, np.floating, list, tuple, dict))
        or is_plain_object(value)
        or hasattr(type(value), "__dataclass_fields__")
    )
