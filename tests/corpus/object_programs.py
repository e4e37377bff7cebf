"""Programs written with objects of the user's own classes, as models are written.

Layers with `__init__` and `__call__`, an MLP holding its layers in a list, an RNN cell whose
method updates `self.h` in a loop, an optimizer-like accumulator (`self.total += x`), objects
made in a helper and returned, two names for one object, an object handed to a helper that
writes its attribute, writes in branches and loops, objects in a list whose method is called
for its effect. Each jax transcription is the functional version (the attributes as values).
`REFUSED` lists what cpsgrad refuses (runtime/objects.py): a write of a differentiable value
into an object the function did not build, and an object of a class that is not plain.
"""

import jax.numpy as jnp
import numpy as np

from cpsgrad.testing.strategies import arrays, floats, ints
from tests.corpus import Case


class Layer:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return np.tanh(x @ self.w + self.b)


class MLP:
    def __init__(self, w1, b1, w2, b2):
        self.layers = [Layer(w1, b1), Layer(w2, b2)]

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def mlp_of_layers(w1, b1, w2, b2, x):
    """An MLP of two Layer objects in a list, its forward a loop over them."""
    net = MLP(w1, b1, w2, b2)
    return np.sum(net.forward(x) ** 2)


def jax_mlp_of_layers(w1, b1, w2, b2, x):
    for w, b in ((w1, b1), (w2, b2)):
        x = jnp.tanh(x @ w + b)
    return jnp.sum(x**2)


class Cell:
    def __init__(self, w, h):
        self.w = w
        self.h = h

    def step(self, x):
        self.h = np.tanh(self.w @ self.h + x)


def rnn_cell(w, h0, xs):
    """A cell whose method updates `self.h` (called for its effect) over the rows of xs."""
    cell = Cell(w, h0)
    for x in xs:
        cell.step(x)
    return np.sum(cell.h**2)


def jax_rnn_cell(w, h0, xs):
    h = h0
    for x in xs:
        h = jnp.tanh(w @ h + x)
    return jnp.sum(h**2)


class Accumulator:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def add(self, value):
        self.total += value
        self.count += 1


def accumulates(x, n):
    """An optimizer-like object built with no differentiable value, accumulating `self.total += v`."""
    accumulator = Accumulator()
    for i in range(n):
        accumulator.add(x * (i + 1.0))
    accumulator.total += x * x
    return accumulator.total / (accumulator.count + 1)


def jax_accumulates(x, n):
    total = 0.0
    for i in range(n):
        total = total + x * (i + 1.0)
    return (total + x * x) / (n + 1)


def made_by(x):
    layer = Layer(x * 2.0, x)
    layer.b = layer.b + 1.0
    return layer


def made_in_a_helper(x):
    """An object made and written in a helper, returned, then written again in a branch."""
    layer = made_by(x)
    if x > 0:
        layer.w = layer.w * x
    else:
        layer.w -= x
    return layer.w + layer.b * layer.b


def jax_made_in_a_helper(x):
    w, b = x * 2.0, x + 1.0
    w = jnp.where(x > 0, w * x, w - x)
    return w + b * b


def two_names(w):
    """Two names for one object: a write through one is seen through the other."""
    a = Layer(w, 0.0)
    b = a
    b.w = 2.0 * b.w
    return np.sum(a.w * w)


def jax_two_names(w):
    return jnp.sum(2.0 * w * w)


def scale_weight(layer, factor):
    layer.w = layer.w * factor
    return None


def written_by_a_helper(w, s):
    """An object handed to a helper that writes its attribute (the result discarded)."""
    layer = Layer(w, s)
    _ = scale_weight(layer, s)
    return np.sum(np.sin(layer.w)) + layer.b


def jax_written_by_a_helper(w, s):
    return jnp.sum(jnp.sin(w * s)) + s


def writes_in_a_loop(x, n):
    """Attribute writes in a loop and a branch, the old value read before each."""
    state = Layer(x, x * x)
    for i in range(n):
        if i % 2 == 0:
            state.w = state.w * state.b
        else:
            state.b = state.b + state.w
    return state.w - state.b


def jax_writes_in_a_loop(x, n):
    w, b = x, x * x
    for i in range(n):
        if i % 2 == 0:
            w = w * b
        else:
            b = b + w
    return w - b


def cells_in_a_list(w, x):
    """Objects kept in a list, each stepped by a method for its effect, read back through the list."""
    cells = [Cell(w, x), Cell(w * 0.5, x * 2.0)]
    for cell in cells:
        cell.step(x)
    return np.sum(cells[0].h * cells[1].h)


def jax_cells_in_a_list(w, x):
    first = jnp.tanh(w @ x + x)
    second = jnp.tanh((w * 0.5) @ (x * 2.0) + x)
    return jnp.sum(first * second)


def overwritten_value(x):
    """An attribute overwritten after a read: the gradient of the old value does not leak on."""
    holder = Layer(x * 3.0, 0.0)
    before = holder.w * 2.0
    holder.w = 5.0
    return before + holder.w * x


def jax_overwritten_value(x):
    return x * 6.0 + 5.0 * x


# --- refused -----------------------------------------------------------------------------------


class Config:
    pass


CONFIG = Config()
CONFIG.scale = 1.0


def writes_into_a_global_object(x):
    config = CONFIG
    config.scale = x
    return config.scale * x


class Slotted:
    __slots__ = ("w",)

    def __init__(self, w):
        self.w = w


def slotted_object(x):
    return Slotted(x).w * x


EXAMPLES = 6
JAX_EXAMPLES = 4

CASES = [
    Case(
        mlp_of_layers,
        (arrays((3, 3)), arrays(3), arrays((3, 2)), arrays(2), arrays(3)),
        argnums=(0, 1, 2, 3, 4),
        jax=jax_mlp_of_layers,
    ),
    Case(
        rnn_cell,
        (arrays((2, 2), min_value=-0.5, max_value=0.5), arrays(2), arrays((3, 2))),
        argnums=(0, 1, 2),
        jax=jax_rnn_cell,
    ),
    Case(accumulates, (floats(-2.0, 2.0), ints(0, 4)), jax=jax_accumulates),
    Case(made_in_a_helper, (floats(-2.0, 2.0, exclude_near=(0.0,)),), jax=jax_made_in_a_helper),
    Case(two_names, (arrays(3),), jax=jax_two_names),
    Case(written_by_a_helper, (arrays(3), floats(-2.0, 2.0)), argnums=(0, 1), jax=jax_written_by_a_helper),
    Case(writes_in_a_loop, (floats(-1.2, 1.2), ints(0, 4)), jax=jax_writes_in_a_loop),
    Case(cells_in_a_list, (arrays((2, 2)), arrays(2)), argnums=(0, 1), jax=jax_cells_in_a_list),
    Case(overwritten_value, (floats(-2.0, 2.0),), jax=jax_overwritten_value),
]

REFUSED = [
    (writes_into_a_global_object, (0.5,), r"assignment of a differentiable value .* to \.scale of a Config object"),
    (slotted_object, (0.5,), r"it defines __slots__"),
]
