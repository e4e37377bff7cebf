"""Programs that write into arrays, lists and dicts in place, as numerical code does.

`x[i] = v` in loops and branches, slices, masks, integer arrays (with a repeated position),
`x[i] op= v`, `x op= y` on arrays nothing else shares, writes of inactive values into arrays an
active computation read before (the backward must see the old values), views read before a
write, lists and dicts written by key. Each function's docstring says what it exercises; the
jax transcriptions use `.at[].set()`. `REFUSED` lists the writes cpsgrad refuses because another
name would see the change behind the gradient's back.
"""

import jax.numpy as jnp
import numpy as np

from cpsgrad.testing.strategies import arrays, floats, ints
from tests.corpus import Case

DECAY = 0.9
THRESHOLD = 0.5


def fill_recurrence(w, n):
    """A loop filling an array element by element from the previous one."""
    x = np.zeros(n + 1)
    x[0] = w
    for i in range(1, n + 1):
        x[i] = DECAY * x[i - 1] * w + np.sin(x[i - 1])
    return np.sum(x * x)


def rows_scaled(A, s):
    """Rows written through slices `A2[i, :] = ...` and one element updated `+=` per row."""
    B = np.ones(A.shape)
    for i in range(A.shape[0]):
        B[i, :] = A[i, :] * s[i]
        B[i, 0] += s[i] ** 2
    return np.sum(np.tanh(B))


def scattered(w):
    """An integer-array write whose index repeats a position: the last value written wins."""
    x = np.zeros(4)
    x[np.array([0, 2, 0])] = w[:3] * 2.0
    return np.sum(x * np.arange(1.0, 5.0))


def masked_clamp(x):
    """A boolean-mask write of a constant (its gradient there is zero)."""
    y = x * 2.0
    y[y > THRESHOLD] = THRESHOLD
    return np.sum(y**2)


def copy_then_write(x):
    """Writing into a copy of the argument (`x.copy()`), the argument read after."""
    y = x.copy()
    y[0] = x[-1] * 3.0
    return np.sum(y * x)


def branch_writes(x, flag):
    """A write in each branch of an if."""
    y = np.zeros(3)
    if flag > 0:
        y[1] = x[0]
    else:
        y[2] = x[1] * x[2]
    return np.sum(y * x)


def inactive_mask_changed(x):
    """An inactive array read by a product, then changed: the product's backward sees the old one."""
    mask = np.ones(x.shape)
    y = x * mask
    mask[0] = 5.0
    z = x * mask
    return np.sum(y * z)


def augmented_buffer(x, n):
    """`s += ...` on an array the function made: computed as a new array."""
    s = np.zeros(x.shape)
    for i in range(n):
        s += x * (i + 1)
        s *= DECAY
    return np.sum(s * s)


def list_slots(w):
    """A list written by index, then read."""
    slots = [w, w * 2.0, 3.0]
    slots[2] = w * w
    slots[0] = slots[0] + slots[2]
    return slots[0] * slots[1] + slots[2]


def dict_entries(w):
    """A dict written by key: a new key, then an existing one overwritten."""
    table = {"a": w}
    table["b"] = w * 3.0
    table["a"] = table["a"] * table["b"]
    return table["a"] + table["b"]


def views_read_first(x):
    """A row view read before the next write into its array (Python's view sees only its own time)."""
    grid = np.zeros((3, x.shape[0]))
    grid[0] = x
    for i in range(1, 3):
        previous = grid[i - 1]
        grid[i] = np.cos(previous) * x
    return np.sum(grid)


def broadcast_into_column(x):
    """A scalar broadcast into a column, then a row overwritten."""
    grid = np.zeros((2, 3))
    grid[:, 1] = x[0]
    grid[0] = x
    return np.sum(grid * grid)


def jax_fill_recurrence(w, n):
    x = jnp.zeros(n + 1)
    x = x.at[0].set(w)
    for i in range(1, n + 1):
        x = x.at[i].set(DECAY * x[i - 1] * w + jnp.sin(x[i - 1]))
    return jnp.sum(x * x)


def jax_rows_scaled(A, s):
    B = jnp.ones(A.shape)
    for i in range(A.shape[0]):
        B = B.at[i, :].set(A[i, :] * s[i])
        B = B.at[i, 0].add(s[i] ** 2)
    return jnp.sum(jnp.tanh(B))


def jax_copy_then_write(x):
    y = x.at[0].set(x[-1] * 3.0)
    return jnp.sum(y * x)


def jax_inactive_mask_changed(x):
    mask = jnp.ones(x.shape)
    y = x * mask
    mask = mask.at[0].set(5.0)
    z = x * mask
    return jnp.sum(y * z)


def jax_views_read_first(x):
    grid = jnp.zeros((3, x.shape[0]))
    grid = grid.at[0].set(x)
    for i in range(1, 3):
        grid = grid.at[i].set(jnp.cos(grid[i - 1]) * x)
    return jnp.sum(grid)


def project(vx, vy):
    """Writes into its parameters' arrays (`vx -= ...`): the caller's, which it passes and never reads again."""
    p = vx * vy
    vx -= 0.5 * np.roll(p, 1)
    vy[0] = vy[0] * 0.5 + p[0]
    return vx, vy


def advect(f, vx):
    """Returns a new array (np.reshape of new values): its result shares nothing with its arguments."""
    return np.reshape(f * DECAY + np.roll(vx, 1) * (1.0 - DECAY), f.shape)


def fluid_steps(vx, vy, steps):
    """HIPS autograd's fluid simulation, in small: helpers writing into the arrays they are given."""
    for _ in range(steps):
        vx_updated = advect(vx, vx)
        vy_updated = advect(vy, vx)
        vx, vy = project(vx_updated, vy_updated)
    return np.sum(vx**2) + np.sum(vy)


def jax_fluid_steps(vx, vy, steps):
    for _ in range(steps):
        vx_updated = jnp.reshape(vx * DECAY + jnp.roll(vx, 1) * (1.0 - DECAY), vx.shape)
        vy_updated = jnp.reshape(vy * DECAY + jnp.roll(vx, 1) * (1.0 - DECAY), vy.shape)
        p = vx_updated * vy_updated
        vx = vx_updated - 0.5 * jnp.roll(p, 1)
        vy = vy_updated.at[0].set(vy_updated[0] * 0.5 + p[0])
    return jnp.sum(vx**2) + jnp.sum(vy)


# --- refused: another name would see the change behind the gradient's back -------------------


def alias_read_after(w):
    x = np.zeros(3)
    c = x
    c[0] = w  # x is c's array: x sees the write (bound to it again after the write)
    return np.sum(x) * w


def jax_alias_read_after(w):
    x = jnp.zeros(3).at[0].set(w)
    return jnp.sum(x) * w


def view_read_after(w):
    x = np.zeros((2, 2))
    row = x[0]
    x[0, 1] = w  # row is x's first row: it sees the write (taken again from x after it)
    return np.sum(row * w)


def jax_view_read_after(w):
    x = jnp.zeros((2, 2)).at[0, 1].set(w)
    return jnp.sum(x[0] * w)


def scale_in_place(v):
    v *= 2.0
    return v


def reads_after_a_writer(x):
    y = x * 1.0
    z = scale_in_place(y)  # scale_in_place's variant returns y too: y is bound to it again
    return np.sum(y * z)


def jax_reads_after_a_writer(x):
    y = x * 2.0
    return jnp.sum(y * y)


def reads_after_a_writer_through_another_name(x):
    y = x * 1.0
    held = y
    scale_in_place(y)
    return np.sum(held * x)


def tuple_holds_written(x):
    y = np.zeros(2)
    pair = (y, x)
    y[0] = x[0]
    first, second = pair
    return np.sum(first * second[:2])


EXAMPLES = 8
JAX_EXAMPLES = 4

CASES = [
    Case(fill_recurrence, (floats(-1.5, 1.5), ints(1, 6)), jax=jax_fill_recurrence),
    Case(rows_scaled, (arrays((3, 2)), arrays(3)), argnums=(0, 1), jax=jax_rows_scaled),
    Case(scattered, (arrays(4),)),
    Case(masked_clamp, (arrays(4, exclude_near=(THRESHOLD / 2.0,)),)),
    Case(copy_then_write, (arrays(3),), jax=jax_copy_then_write),
    Case(branch_writes, (arrays(3), ints(-1, 1))),
    Case(inactive_mask_changed, (arrays(3),), jax=jax_inactive_mask_changed),
    Case(augmented_buffer, (arrays(3), ints(0, 4))),
    Case(list_slots, (floats(-2.0, 2.0),)),
    Case(dict_entries, (floats(-2.0, 2.0),)),
    Case(views_read_first, (arrays(3),), jax=jax_views_read_first),
    Case(broadcast_into_column, (arrays(3),)),
    Case(fluid_steps, (arrays(4), arrays(4), ints(0, 3)), argnums=(0, 1), jax=jax_fluid_steps),
    Case(alias_read_after, (floats(-2.0, 2.0),), jax=jax_alias_read_after),
    Case(view_read_after, (floats(-2.0, 2.0),), jax=jax_view_read_after),
    Case(reads_after_a_writer, (arrays(3),), jax=jax_reads_after_a_writer),
]

REFUSED = [
    (reads_after_a_writer_through_another_name, (np.ones(3),),
     r"scale_in_place__written writes into the array of its parameter v"),
    (tuple_holds_written, (np.ones(3),), r"read of pair after a write into the array it shares"),
]
