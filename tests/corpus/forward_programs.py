"""Programs for tests/test_forward_mode.py (forward mode, `cpsgrad.jvp`), at module level so that
cpsgrad reads their source. Not a corpus of tests/test_corpus.py (no CASES): the tests that use
them say what each must give."""

import functools

import numpy as np

import cpsgrad
from cpsgrad import nn

# --- dtypes and the structure of outputs -------------------------------------------------------


def float32_layer(W, x):
    return np.tanh(W @ x) * 2.0


def tuple_output(x, y):
    return x * y, np.sin(x) + y


def dict_output(x, y):
    return {"product": x * y, "nested": {"sum": x + 2.0 * y}}


def list_output(x):
    return [x * 2.0, np.sum(x**2)]


# --- aliasing and writes -----------------------------------------------------------------------


def aliased_writes(x):
    y = x.copy()
    y[1:] *= 2
    z = y
    z[0] = 5.0
    return y * x


def write_through_a_view(x):
    y = x * 1.0
    v = y[1:]
    v[0] = 3 * y[0]
    return y * x


def write_into_the_argument(x):
    v = x[1:]
    v[0] = 3 * x[0]
    return x * x


# --- control flow and calls --------------------------------------------------------------------


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def newton_sqrt(a):
    y = a if a > 1.0 else 1.0
    while abs(y * y - a) > 1e-12 * a:
        y = 0.5 * (y + a / y)
    return y


def halvings(x):
    count = 0
    while x > 1.0:
        x = x / 2.0
        count += 1
    return x * count


def loop_control(x, n):
    total = 0.0
    for i in range(n):
        if i % 2 == 1:
            continue
        if total > 10.0:
            break
        total = total + x * i
    return total


def early_return(x):
    if x > 0.0:
        return x * x
    for i in range(3):
        if x < -i - 0.5:
            return x * (i + 1)
    return -x


def weighted(v, scale):
    return scale * v


def scaled_shift(v, scale=2.0, *, shift=0.0):
    return scale * v + shift


def keywords_by_name(x, y):
    return weighted(scale=y, v=x) + weighted(y, scale=x * y)


def default_omitted(x):
    return scaled_shift(x)


def keyword_only(x, y):
    return scaled_shift(x, 3.0, shift=y * y)


# --- one numpy operation of each tangent kind ---------------------------------------------------


def elementwise(x, y):
    return np.sin(x) * np.exp(y) + x**2 / (1.0 + y * y) - np.tanh(x * y)


def scalar_and_array(s, x):
    return s * x + s**2 - x / (2.0 + s)


def sum_reshape_transpose(x):
    return np.sum(x, axis=0) + np.reshape(x, (3, 2))[:, 1] * np.transpose(x)[:, 0]


def concatenate_and_index(x):
    d = np.concatenate([x[0], x[1, ::2], x[:, 1]])
    return d[1:5] * x[1, 2]


def matmul(A, x):
    return A @ x


def dot(A, x):
    return np.dot(A, x * x)


def einsum(A, x):
    return np.einsum("ij,j->i", A, x) * np.einsum("ij,ij->", A, A)


def softmax(x):
    return nn.softmax(x)


def log_softmax(x):
    return nn.log_softmax(x)


def logsumexp(x):
    return nn.logsumexp(x)


def inv(A):
    return np.linalg.inv(A)


def solve(A, b):
    return np.linalg.solve(A, b)


def det(A):
    return np.linalg.det(A)


def max_with_axis(x):
    return np.max(x, axis=1)


def norm(x):
    return np.linalg.norm(x)


def prod(x):
    return np.prod(x)


# --- Jacobians -----------------------------------------------------------------------------------

MIXING = np.array([[0.5, -1.0, 0.25], [1.5, 0.3, -0.7], [-0.2, 0.8, 1.1], [0.9, -0.4, 0.6]])


def vector_to_vector(x):
    return np.tanh(MIXING @ x) * np.sum(x * x)


def matrix_to_vector(W, v):
    return np.sin(W @ v) + W[:, 0] ** 2


def square(x):
    return x * x


SQUARE_GRADIENT = cpsgrad.grad(square)


def calls_a_gradient(x):
    return SQUARE_GRADIENT(x) * x


def with_a_try(x):
    try:
        y = x * 2.0
    except ValueError:
        y = x
    return y


def with_a_nested_def(x):
    def inner(y):
        return y * 2.0

    return inner(3.0) * x


# --- minimal reproductions of the bugs found (tests/test_forward_mode.py `BUGS`) -----------------


def tuple_plus_a_constant(w):
    return np.hstack((w, w * 2.0) + (np.ones(2),))


def in_place_helper(v):
    v *= 2.0
    return v


def calls_an_in_place_helper(x):
    y = x * 1.0
    z = in_place_helper(y)
    return np.sum(y * z)


def product(a, b):
    return a * b


TRIPLED = functools.partial(product, 3.0)


def calls_a_partial(x):
    return TRIPLED(x)


def checked_log(s):
    if s <= 0.0:
        raise ValueError(f"needs a positive value, not {s}")
    return np.log(s)


def raises_in_a_branch_not_taken(s):
    return checked_log(s) * 2.0


def extends_a_list(x):
    values = [x]
    values.extend([x * x])
    return values[0] + values[1]


def copies_a_dict(x):
    return dict({"a": x})["a"] * 2.0


def merges_dicts(x):
    merged = {"a": x} | {"b": 2.0 * x}
    return merged["a"] + merged["b"]


class Box:
    def __init__(self, value):
        self.value = value

    def __call__(self, x):
        return self.value * x


def sets_an_attribute(x):
    box = Box(1.0)
    box.value = x
    return box.value * 3.0


def constructs_an_object(x):
    return Box(x).value * 3.0


BOX = Box(3.0)


def calls_an_object(x):
    return BOX(x)


class Dense:
    def forward(self, x, w):
        return x * w


LAYERS = (Dense(), Dense())


def methods_of_fixed_objects(w1, w2):
    x = 1.0
    for layer, w in zip(LAYERS, (w1, w2), strict=True):
        x = layer.forward(x, w)
    return x


def powers(x, n):
    value = 1.0
    for _ in range(n):
        yield value
        value = value * x


def tuple_of_a_generator(x):
    return tuple(powers(x, 3))[2]


def list_of_a_generator(x):
    return list(powers(x, 3))[2]


def sqrt_in_a_condition(x):
    if np.sqrt(np.sum(x * x)) > 1.0:
        return x[0] * 2.0
    return x[0]


def updated_by_pairs(x, y):
    d = {"a": x}
    d.update([("a", y)])
    return d["a"]


def dict_of_pairs(x, y):
    d = dict([("p", x), ("q", y)])
    return d["p"] * d["q"]


def sorted_list(x, y):
    return sorted([x, y])[0]


def removes_from_a_list(x, y):
    v = [x, y]
    v.insert(1, x * y)
    v.remove(y)
    return v[1]


def with_a_context_manager(x):
    with np.errstate(divide="ignore"):
        y = x * 2.0
    return y
