"""Programs that once went wrong (found by adversarial testing); each must stay right."""

import dataclasses
import functools
import math
import typing

import numpy as np


def len(sequence):  # noqa: A001  (shadows the builtin on purpose)
    return 1


def break_in_inner_else(x, n):
    s = x
    for _ in range(n):
        for _ in range(1):
            s = s * 2.0
        else:
            break
    return s


def continue_in_inner_else(x, n):
    s = x
    for _ in range(n):
        j = 0
        while j < 1:
            s = s * 2.0
            j += 1
        else:
            continue
        s = s * 100.0
    return s


def linear(x, y):
    return x * 3.0 + y


def global_len_shadowed(x, data):
    s = 0.0
    for d in data:
        s += d * x
    return s


def local_len_shadowed(x, data):
    len = 3.0  # noqa: F811
    s = 0.0
    for d in data:
        s += d * x * len
    return s


def appends(x):
    values = []
    values.append(x)
    return values[0]


def reverses(x):
    values = [x, 2.0]
    values.reverse()
    return values[0]


def pops(x):
    values = [x, 2.0]
    return values.pop()


def repeats(x):
    values = [x] * 2
    return values[1]


def concatenates(x, data):
    values = data + [x]
    return values[-1] * values[0]


def loop_over_reversed(x):
    s = 0.0
    for v in reversed([x, 2.0 * x]):
        s = s * 10.0 + v
    return s


def loop_over_tuple_variable(x):
    pair = (x, 2.0)
    s = 0.0
    for v in pair:
        s = s + v * v
    return s


def zip_of_one_list(x):
    values = [x, 3.0]
    s = 0.0
    for p, q in zip(values, values, strict=True):
        s = s + p * q
    return s


def compares_unbound(x):
    if x > 0:
        y = x * 2.0
    if y == 1.0:
        return x
    return x * 3.0


def returns_unbound(x):
    if x > 0:
        y = x * 2.0
    return y


def square_root(x):
    return math.sqrt(x)


def square_root_times_zero(x):
    return math.sqrt(x) * 0.0 + x


def bitwise_on_data(x, n):
    return x * (n & 1) + x * (n >> 1) + x * (~n)


def remainder(x, y):
    quotient, rest = divmod(x, y)
    return rest * quotient + math.fmod(x, y)


def product_and_distance(x, y):
    return math.prod([x, y, 2.0]) + math.dist((x, y), (1.0, 2.0))


def zip_strict_mismatch(x, data):
    s = 0.0
    for a, b in zip((x, x), data, strict=True):
        s = s + a * b
    return s


def doubled(function):
    @functools.wraps(function)
    def wrapper(x):
        return 2.0 * function(x)

    return wrapper


@doubled
def decorated_square(x):
    return x * x


def split(x):
    return (1.0 + 0.0 * x, 3.0 * x)


def split_rule(x):
    a, b = split(x)
    a_d, b_d = yield a, b
    x_d += 3.0 * b_d  # noqa: F821, F841


def uses_split(x):
    b, a = split(x)
    return b * 5.0 + 10.0 * a


def scale(x, factor=2.0):
    return x * factor


def scale_rule(x, factor=2.0):
    y = scale(x, factor)
    y_d = yield y
    x_d += y_d * factor  # noqa: F821, F841
    factor_d += y_d * x  # noqa: F821, F841


def uses_scale_default(x):
    factor = 10.0
    return scale(x) + factor


def loop_then_constant(x, n):
    for _ in range(n):
        x = x * 2.0
    c = 2.0
    return c


def maximum(x, y):
    return max(x, y)


def power(x, y):
    return abs(x) ** y


def absolute(x):
    return abs(x)


def counting_loop(x, n):
    s = x
    i = 0
    while i < n:
        s = s * 1.0001
        i += 1
    return s


def transpose_of_a_product(x):
    return np.sum((x * 2.0).T)


def transpose_of_an_entry(p):
    return np.sum(p["W"].T)


def transpose_of_a_row(x):
    return np.sum(x[0].T @ x[1])


def method_of_a_transposed_row(x):
    return x[0].T.sum()


def unpacks_one_element(x):
    t = (x * 2.0,)
    a, = t
    return a * x


def unpacks_one_element_in_a_branch(x, flag):
    t = (x * 2.0,)
    if flag:
        (a,) = t
    else:
        a = x
    return a * x


def power_of_a_negative_constant(x):
    return math.atan2(x, 1.0 + (-0.5) ** 2) + x


def negative_base_and_exponent(x):
    return (-2.0) ** 2 * x + x ** -1.0 + (-x) ** 2


# ---- found from outside (HIPS autograd's examples): aliasing and differentiable subscripts ----


def twice(a, b):
    return a * 2.0 - b


def unused_call_with_one_array_twice(x):
    unused = twice(x, x)  # noqa: F841
    return np.sum(x)


def chain_of_calls_with_one_array_twice(x):
    y = twice(x, x)
    z = twice(y, x)
    return np.sum(z * x)


def repeated_by_keyword_in_a_loop(x):
    s = 0.0
    for _ in range(3):
        y = twice(x, b=x)
        s = s + np.sum(y * x)
    return s


def scaled(p):
    return p * 3.0


def reads_the_element(a, values):
    return scaled(values[0])


def tail_call_reaches_the_array_by_another_route(x):
    y = reads_the_element(x, [x])  # the callee's callee gets x as an element of a list
    return np.sum(y * x) + np.sum(x)


def through_a_list_element(a, values):
    t = scaled(values[0])
    return np.sum(t * a)


def a_callee_of_a_callee_reaches_the_array_by_another_route(x):
    return through_a_list_element(x, [x]) + np.sum(x * x)


def swapping(a, b, n):
    if n == 0:
        return a * b
    return swapping(b, a, n - 1) + a


def recursion_swapping_one_array_passed_twice(x):
    return np.sum(swapping(x, x, 3) * x)


def identity(a):
    return a


def results_discarded_and_used_twice(x):
    unused = identity(x)  # noqa: F841
    return np.sum(identity(x) * identity(x))


def r_of_an_array_twice(x):
    return np.sum(np.r_[x, x] * np.arange(6.0))


def r_of_arrays_and_numbers(x):
    s = np.sum(x)
    return np.sum(np.r_[s, 2.0 * x, x[0]] ** 3)


def c_of_columns(x):
    return np.sum(np.c_[x, x * x] * np.arange(6.0).reshape(3, 2))


def r_and_c_of_matrices(m):
    return np.sum(np.r_[m, m * 2.0] ** 2) + np.sum(np.c_[m, m**2] * 1.5)


class Doubler:
    def __getitem__(self, k):
        return k * 2.0


def subscript_of_a_user_class(v):
    return Doubler()[v]


class Quadratic:
    def __init__(self, c):
        self.c = c

    def __getitem__(self, v):
        return self.c[0] + self.c[1] * v * v


def subscripts_of_a_user_class_by_computed_values(v):
    q = Quadratic((1.0, 3.0))
    return q[v] + q[v * 2.0]


TABLE = np.array([10.0, 20.0, 30.0, 40.0])


def lookup_by_a_computed_integer_index(x):
    index = np.floor(np.abs(x) * 2).astype(int)
    return np.sum(TABLE[index] * x)


def dict_read_by_a_differentiable_key(v):
    d = {1.5: 2.0}
    return d[v] * v


def shapes_are_not_differentiable(x):
    n = x.shape[0]
    return np.sum(x.reshape(x.shape + (1,))) * n


def random_draw_sized_by_a_shape(m):
    rs = np.random.RandomState(0)
    return np.sum(m @ rs.randn(m.shape[0], 3))


# ---- bindings resolved when the program was made, rebound later --------------------------------

sine = math.sin


def reads_a_rebound_global_function(v):
    return sine(v)


activation = np.tanh


def layer_of_a_rebound_activation(x):
    return activation(x) * 2.0


def network_calling_the_layer(x):
    return np.sum(layer_of_a_rebound_activation(x))


def helper_to_redefine(v):
    return v * 3.0


def calls_the_redefined_helper(v):
    return helper_to_redefine(v) + 1.0


def sum_of_np_sin(x):
    return np.sum(np.sin(x))


def slices_a_user_object_by_a_differentiable_bound(v):
    return Quadratic((1.0, 2.0))[v:2.0] * v


def unused_r_(x):
    unused = np.r_[x, x * 2.0]  # noqa: F841
    return np.sum(x)


def r_of_an_array_and_a_range(x):
    return np.sum(np.r_[x, 1:3, x * 2.0, 0:1:3j] * np.arange(9.0))


def c_of_a_column_and_a_range(x):
    return np.sum(np.c_[x, 0:3] * np.arange(6.0).reshape(3, 2))


def std_of_one_value(x):
    return np.std(x) * 3.0


def std_of_single_rows(x):
    return np.sum(np.std(x, axis=0, keepdims=True) * np.array([[1.0, 2.0, 3.0]]))


def product_plus_first(a, b):
    return a * b + a


def alternating_helpers_with_one_array_twice(x):
    s = 0.0
    for i in range(4):
        s = s + np.sum(product_plus_first(x, x) if i % 2 else twice(x, x))
    return s


def passes_its_parameters_on_swapped_and_twice(a, b):
    return product_plus_first(b, a) + product_plus_first(a, a)


def helper_of_a_helper_with_one_array_twice(x):
    return np.sum(passes_its_parameters_on_swapped_and_twice(x, x) * x)


def aliases_by_name(x):
    y = x
    return np.sum(product_plus_first(x, y) * product_plus_first(y, x))


def rotating(a, b, c, n):
    if n == 0:
        return a * b * c
    return rotating(c, a, b, n - 1) * 0.5 + b


def recursion_rotating_one_array_in_two_of_three(x):
    return np.sum(rotating(x, x * 1.0, x, 4))


def containers_holding_one_array_twice(x):
    return np.sum(_list_product([x, x]) * _dict_product({"a": x, "b": x}))


def _list_product(values):
    return values[0] * values[1] + values[0]


def _dict_product(values):
    return values["a"] * values["b"] - values["a"]


def sliced_product(u, v):
    return u[:] * v


def calls_twice_with_one_array_twice(v):
    return np.sum(sliced_product(v, v) + sliced_product(v, v))


act = math.sin


def lambda_reads_a_rebound_global_function(x):
    g = lambda p: act(p)  # noqa: E731
    return g(x)


def nested_def_reads_a_rebound_global_function(x):
    def g(p):
        return act(p)

    return g(x)


def lambda_with_a_lambda_in_its_default(x, y):
    g = lambda u=(lambda u=(lambda: y)(): u)(): x * u  # noqa: E731, B008
    return g()


def calls_a_missing_attribute_with_a_failing_argument(x, n):
    return math.hupot(math.exp(x), n // 0.0)  # math has no hupot: on purpose


def methods_of_number_literals(x):
    a = (-1).__abs__()
    b = (2).bit_length()
    return x * a * b


SCALE = 2.0


def rescale():
    global SCALE
    SCALE = 5.0
    return 1.0


def reads_a_global_before_a_call_that_rebinds_it(x):
    return x * (SCALE + rescale())  # Python reads SCALE (2.0) before rescale() rebinds it


def reads_a_global_in_a_call_before_a_call_that_rebinds_it(x):
    return x * max(SCALE, rescale())


def reads_a_global_subscript_before_a_call_that_rebinds_it(x):
    return x * (SCALE < rescale()) + x * SCALE


def undefined_global_before_a_failing_call(x):
    return UNDEFINED_GLOBAL ^ int(math.log(x - x))  # noqa: F821  (NameError first, as in Python)


def undefined_callee_before_a_failing_argument(x):
    return undefined_function(x / (x - x))  # noqa: F821


def numpy_one_over(x):
    return np.float64(1.0) / x  # inf at x = 0.0, with numpy's warning, not ZeroDivisionError


def numpy_over_python_zero(x):
    return np.float64(x) / 0.0


@dataclasses.dataclass
class Scaler:
    w: float

    def __getitem__(self, k):
        return k * self.w


class ScaledPair(typing.NamedTuple):
    a: float
    b: float

    def __getitem__(self, k):
        return k * self.a


def subscript_of_a_differentiable_dataclass(x, w):
    scaler = Scaler(w)
    return scaler[x]


def subscript_of_a_differentiable_named_tuple(x, w):
    pair = ScaledPair(w, 1.0)
    return pair[0] * x  # a constant index: still ScaledPair.__getitem__, not the tuple's


def subscript_of_a_constant_dataclass(x):
    return Scaler(3.0)[x]


def lambda_with_an_empty_tuple_default(x):
    g = lambda u, w=(): u * (len(w) + 2.0) + x  # noqa: E731
    return g(x)


def maps_a_square(x):
    return sum(map(lambda v: v * v, [x, 2.0 * x]))  # noqa: C417  (map on purpose: normalize rewrites it)


reduce = functools.reduce


def reduces_a_product(x):
    return reduce(lambda a, b: a * b, [x, x, 3.0])


STOP = 2


def restop():
    global STOP
    STOP = 3
    return 1


def slices_with_a_global_bound_before_a_call_that_rebinds_it(x):
    v = np.array([1.0, 2.0, 3.0, 4.0]) * x
    return np.sum(v[STOP : restop() + 2])  # Python reads STOP (2) before restop() makes it 3


# ---- a differentiable value bound to a rule's parameter without an adjoint (session 9) -----------


def variance_with_a_differentiable_ddof(x):
    return np.var(x, ddof=x[0])  # np.var's rule has no derivative in ddof: it was silently 0


def sums_through_a_module_argument(m, x):
    return m.sum(m.sin(x))  # m.sum taken for ndarray.sum with m as the array: m.sin(x) landed on axis


def calls_with_numpy(x):
    return sums_through_a_module_argument(np, x)


def copysign_of_a_differentiable_sign(x, y):
    return math.copysign(x, y) * y  # copysign is piecewise constant in y: no adjoint, no refusal


def _pair(*functions):
    return functions


# a lambda continued on the next line inside a call's parentheses (inspect's block ends at the
# first line's end): only `x * 2.0 + x` was read, so value and gradient were 9 and 3 for 18 and 9
CONTINUED_LAMBDAS = _pair(
    lambda x: x * 2.0 + x
    + x * x,
    lambda y: math.sin(y)
    * y,
)
