"""Functions for tests/test_containers.py: containers (dicts, tuples, lists, NamedTuples,
dataclasses) as differentiated arguments, intermediate values and results."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np


class Linear(NamedTuple):
    W: np.ndarray
    b: np.ndarray


@dataclasses.dataclass
class Layer:
    W: np.ndarray
    b: np.ndarray
    scale: float = 1.0


@dataclasses.dataclass(frozen=True)
class Frozen:
    a: float
    b: float


# ---- differentiated containers ------------------------------------------------------------------


def mlp(params, x):
    h = np.tanh(params["W1"] @ x + params["b1"])
    return np.sum((params["W2"] @ h + params["b2"]) ** 2)


def unpacks_tuple(p, x):
    W, b = p
    return np.sum(np.tanh(W @ x + b))


def scalar_dict(p):
    return p["a"] * p["b"] + p["a"] ** 2 - 3.0 * p["c"]


def variable_keys(p, names):
    total = 0.0
    for name in names:
        total = total + p[name] * p[name]
    return total


def nested(params, x):
    h = x
    for layer in params["layers"]:
        h = np.tanh(layer["W"] @ h + layer["b"])
    return params["scale"] * np.sum(h * h)


def list_of_tuples(ps, x):
    total = 0.0
    for i in range(len(ps)):
        a, b = ps[i]
        total = total + np.sum(a * x) * b
    return total


def uses_one_leaf(p):
    return 2.0 * p["used"]


def same_shape_leaves(p):
    return np.sum((p["a"] + p["b"]) * 3.0)


# ---- dicts as values ----------------------------------------------------------------------------


def dict_display(x, y):
    d = {"x": x, "y": y * y, "sum": x + y}
    return d["x"] * d["y"] + d["sum"] + len(d)


def dict_display_overwritten(x, y):
    d = {"v": x, "w": y, "v": y * 3.0}  # noqa: F601 - the first "v" is overwritten
    return d["v"] * d["w"]


def dict_display_variable_keys(x, y, k1, k2):
    d = {k1: x, k2: y}
    return d["a"] * 2.0 + d.get("b", 0.5) * y


def dict_methods(p):
    total = 0.0
    for v in p.values():
        total = total + np.sum(v)
    for k, v in p.items():
        if k != "skip":
            total = total + np.sum(v * v)
    for k in p.keys():
        total = total + np.sum(p[k]) * 0.5
    return total + np.sum(p.get("a")) * p.get("missing", 2.0)


def dict_method_default(x, d):
    return d.get("a", x) * x


def builds_params(x):
    params = {"w": x, "b": x * x}
    return apply(params, 2.0)


def apply(params, v):
    return params["w"] * v + params["b"]


def returns_dict(x):
    d = layer_out(x)
    return d["h"] * d["z"]


def layer_out(x):
    z = x * 2.0
    return {"z": z, "h": z * z}


def dict_through_helper(params, x):
    h = dense(params["l1"], x)
    h = dense(params["l2"], h)
    return np.sum(h)


def dense(p, x):
    return np.tanh(p["W"] @ x + p["b"])


def split_params(params, x):
    first, second = pair(params)
    return np.sum(first * x) + np.sum(second)


def pair(params):
    return (params["a"] * 2.0, params["b"])


# ---- recursion with a parameter dict ------------------------------------------------------------


def tree_loss(params, tree):
    h = encode(params, tree)
    return np.sum(h * params["out"])


def encode(params, tree):
    if isinstance(tree, tuple):
        left = encode(params, tree[0])
        right = encode(params, tree[1])
        return np.tanh(params["W"] @ np.concatenate([left, right]) + params["b"])
    return np.tanh(params["E"] * tree)


def tree(depth, value=0.3):
    if depth == 0:
        return value
    return (tree(depth - 1, value * 1.1), tree(depth - 1, -value))


def optional_bias(p, x):
    b = p.get("b")
    y = p["w"] * x
    if b is not None:
        y = y + b
    if p["c"] is None:
        y = y * 2.0
    return y * y


def isinstance_dispatch(p):
    total = 0.0
    for v in p:
        if isinstance(v, tuple):
            total = total + v[0] * v[1]
        elif isinstance(v, np.ndarray):
            total = total + np.sum(v)
        else:
            total = total + v * 3.0
    return total


# ---- append and pop -----------------------------------------------------------------------------


def collects_and_stacks(x, n):
    outs = []
    h = x
    for _ in range(n):
        h = np.tanh(h * 1.5 + 0.1)
        outs.append(h)
    return np.sum(np.stack(outs) ** 2)


def collects_and_sums(x, n):
    terms = []
    for i in range(n):
        terms.append(x ** i)
    return sum(terms)


def stack_machine(x):
    stack = [x]
    stack.append(x * 2.0)
    stack.append(stack[-1] + 1.0)
    a = stack.pop()
    b = stack.pop()
    stack.append(a * b)
    c = stack.pop(0)
    return stack[0] + c * len(stack)


def appends_in_branches(x, n):
    values = list()
    for i in range(n):
        if i % 2 == 0:
            values.append(x * i)
        else:
            values.append(-x)
    total = 0.0
    for v in values:
        total = total + v * v
    return total


def appends_then_returns_through_call(x):
    values = []
    values.append(x)
    values.append(x * x)
    return total_of(values)


def total_of(values):
    return values[0] + values[1] * 3.0


def appends_after_loop_over_it(x):
    values = [x]
    for _ in range(3):
        for v in values:
            x = x + v * 0.5
        values.append(x)
    return sum(values)


# ---- NamedTuples and dataclasses ----------------------------------------------------------------


def named_tuple_params(p, x):
    return np.sum(np.tanh(p.W @ x + p.b))


def named_tuple_indexed(p, x):
    return np.sum(p[0] @ x) * np.sum(p[1])


def dataclass_params(p, x):
    return p.scale * np.sum(np.tanh(p.W @ x + p.b))


def frozen_dataclass(p):
    return p.a * p.b + p.a


def dataclasses_in_a_dict(params, x):
    h = x
    for name in ("first", "second"):
        layer = params[name]
        h = np.tanh(layer.W @ h + layer.b)
    return np.sum(h)


# ---- refused ------------------------------------------------------------------------------------


def appends_to_alias(x):
    values = []
    other = values
    values.append(x)
    return other[0]


def appends_to_parameter(x, values):
    values.append(x)
    return values[0]


def extends(x):
    values = [x]
    values.extend([x])
    return values[1]


def appends_after_passing(x):
    values = []
    keep(values)
    values.append(x)
    return values[0]


def keep(values):
    return len(values)


def stores_then_appends(x):
    values = []
    pair = (values, 1.0)
    values.append(x)
    return pair[0][0]


# ---- constructing NamedTuples and dataclasses ---------------------------------------------------


def builds_named_tuple(x):
    p = Linear(x * 2.0, x + 1.0)
    q = Linear(b=x, W=p.W * p.b)
    return q.W * q[1] + p[0]


def builds_dataclass(x):
    layer = Layer(x, x * x, scale=3.0)
    return layer.W * layer.scale + layer.b


def updates_params(params, x):
    new = Layer(params.W * 0.9, params.b - np.sum(x) * 0.1)
    return np.sum(new.W @ x + new.b)
