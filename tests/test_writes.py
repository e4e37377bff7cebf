"""Writes in place (`x[i] = v`, `x op= y`): what the generated code does, the final state of what
was written, the run-time refusals, and the adjoint helpers' ownership rules. The programs
themselves are checked against finite differences and jax in tests/corpus/write_programs.py."""

import numpy as np
import pytest

import cpsgrad
from cpsgrad import runtime
from cpsgrad.testing import check_grad

LOG = []


def fill(w, n):
    x = np.zeros(n)
    for i in range(n):
        x[i] = w * i
    return np.sum(x * x)


def test_the_program_writes_in_place_and_restores_in_its_backward():
    text = cpsgrad.show(fill, example=(0.5, 3))
    assert "x_1 = cpsgrad_runtime.written(x, i, t" in text  # the user's name, one operation a line
    assert "x_1_overwritten = cpsgrad_runtime.overwritten(x, i)" in text
    assert "cpsgrad_runtime.restore(x_1, i, x_1_overwritten)" in text
    assert "x = cpsgrad_runtime.written(x, i, t" in cpsgrad.show(fill, stage="normalize")
    assert cpsgrad.grad(fill)(0.5, 4) == pytest.approx(2 * 0.5 * (1 + 4 + 9))


def keeps_a_buffer(w):
    buffer = np.zeros(3)
    LOG.append(buffer)  # plain Python keeps the array: it must end as the original leaves it
    buffer[0] = 7.0
    y = w * buffer[0]
    buffer[1] = 9.0
    return y * w


def test_what_was_written_ends_as_the_original_leaves_it():
    LOG.clear()
    expected = keeps_a_buffer(1.5)
    value, gradient = cpsgrad.value_and_grad(keeps_a_buffer)(1.5)
    assert value == expected and gradient == 2 * 7.0 * 1.5
    np.testing.assert_array_equal(LOG[0], LOG[1])
    np.testing.assert_array_equal(LOG[1], [7.0, 9.0, 0.0])


def helper_with_buffer(v, n):
    out = np.empty(n)
    for i in range(n):
        out[i] = v * (i + 1.0)
    return out


def calls_a_writer(w):
    first = helper_with_buffer(w, 3)
    second = helper_with_buffer(first[2], 2)
    return np.sum(first) + np.sum(second**2)


def writes_until(w, limit):
    x = np.zeros(6)
    i = 0
    while True:
        x[i] = w**i
        if x[i] > limit:
            break
        i += 1
    return np.sum(x)


@pytest.mark.parametrize(
    ("function", "arguments"),
    [(calls_a_writer, (0.7,)), (writes_until, (1.7, 4.0)), (writes_until, (0.5, 0.2))],
)
def test_writes_in_user_functions_and_loops_with_break(function, arguments):
    check_grad(function, *arguments)


def writes_floats_into_ints(w):
    counts = np.zeros(3, dtype=np.int64)
    counts[0] = w * 10.0  # truncated: no derivative through it
    return float(counts[0]) + w


def writes_into_float32(w):
    x = np.zeros(2, dtype=np.float32)
    x[0] = w * 2.0
    return float(np.sum(x * x))


def test_written_dtypes():
    assert cpsgrad.grad(writes_floats_into_ints)(0.55) == 1.0
    gradient = cpsgrad.grad(writes_into_float32)(0.5)
    assert type(gradient) is float and gradient == pytest.approx(8.0 * 0.5)


def grows_a_list(w):
    xs = [w, w]
    xs[0:1] = [w, w, w]
    return xs[0]


def casts_in_place(x):
    y = np.zeros(2, dtype=np.float32)
    y += x
    return float(np.sum(y))


def broadcasts_in_place(x):
    y = np.zeros(1)
    y += x
    return np.sum(y)


def test_what_numpy_or_python_would_do_otherwise_is_refused_at_run_time():
    with pytest.raises(cpsgrad.UnsupportedError, match="slice assignment that changes a list's length"):
        cpsgrad.grad(grows_a_list)(1.0)
    with pytest.raises(cpsgrad.UnsupportedError, match=r"test_writes\.py:\d+:\d+: y \+= x \(an array\).*cast"):
        cpsgrad.grad(casts_in_place)(np.ones(2))
    with pytest.raises(cpsgrad.UnsupportedError, match=r"y \+= x \(an array\).*float64\[3\] result"):
        cpsgrad.grad(broadcasts_in_place)(np.ones(3))
    assert cpsgrad.grad(broadcasts_in_place)(2.0) == 1.0  # a number broadcasts nowhere


def test_the_overwritten_part_of_an_adjoint_nothing_else_holds_is_dropped_in_place():
    target = np.zeros(4)
    adjoint = np.ones(4)
    dropped = runtime.overwritten_adjoint(adjoint, target, 1)
    assert dropped is adjoint and dropped.tolist() == [1.0, 0.0, 1.0, 1.0]
    shared = np.ones(4)
    alias = shared
    copied = runtime.overwritten_adjoint(shared, target, slice(0, 2))
    assert copied is not shared and alias.tolist() == [1.0] * 4 and copied.tolist() == [0.0, 0.0, 1.0, 1.0]
    view = runtime.written_adjoint(adjoint, target, slice(2, 4), np.zeros(2))
    runtime.overwritten_adjoint(adjoint, target, slice(2, 4))
    assert view.tolist() == [1.0, 1.0]  # the value's part was copied before the target's was dropped


def test_the_last_write_to_a_repeated_position_gets_the_adjoint():
    target = np.zeros(3)
    key = np.array([0, 1, 0])
    runtime.written(target, key, np.array([1.0, 2.0, 3.0]))
    assert target.tolist() == [3.0, 2.0, 0.0]
    adjoint = np.array([10.0, 20.0, 30.0])
    assert runtime.written_adjoint(adjoint, target, key, np.zeros(3)).tolist() == [0.0, 20.0, 10.0]


# -- writes into the arrays of parameters --------------------------------------------------------


def normalizes_in_place(x):
    x[0] = x[1] * 3.0
    x *= 2.0
    return np.sum(x * x)


def test_an_argument_written_into_ends_as_python_leaves_it():
    x = np.array([0.3, -0.2, 0.5])
    expected = x.copy()
    value = normalizes_in_place(expected)
    result, gradient = cpsgrad.value_and_grad(normalizes_in_place)(x)
    assert result == value
    np.testing.assert_array_equal(x, expected)  # the caller sees the writes, as in Python
    # d/dx of sum((2 * [3 x1, x1, x2])^2) at the original x
    np.testing.assert_allclose(gradient, [0.0, 8.0 * (9.0 + 1.0) * -0.2, 8.0 * 0.5])
    check_grad(lambda x: normalizes_in_place(x.copy()), np.array([0.3, -0.2, 0.5]))


def writes_first(x, y):
    x[0] = 1.0
    return np.sum(x * y)


def test_an_argument_written_into_may_not_be_another_argument():
    a = np.ones(3)
    with pytest.raises(cpsgrad.UnsupportedError, match="writes into the array of its parameter 1, which is also"):
        cpsgrad.grad(writes_first)(a, a)
    with pytest.raises(cpsgrad.UnsupportedError, match="shares memory"):
        cpsgrad.grad(writes_first)(a, a[::-1])
    np.testing.assert_array_equal(cpsgrad.grad(writes_first)(np.ones(3), np.ones(3)), [0.0, 1.0, 1.0])


def doubles(v):
    v *= 2.0
    v[0] += 1.0
    return np.sum(v)


def passes_its_own(x):
    y = x * 3.0
    return doubles(y) * x[0]


def passes_and_reads(x):
    y = x * 3.0
    total = doubles(y)
    return total + np.sum(y)


def passes_its_argument(x):
    return doubles(x)


def doubles_then_rebinds(v):
    v *= 2.0
    v = v + 1.0  # a new array: what the caller's name holds is not what this returns
    return np.sum(v)


def passes_to_a_rebinding_callee_and_reads(x):
    y = x * 3.0
    total = doubles_then_rebinds(y)
    return total + np.sum(y)


def passes_and_reads_another_name(x):
    y = x * 3.0
    z = y
    total = doubles(y)
    return total + np.sum(z)  # z is y's array: the call's rewrite binds y again, not z


def passes_for_its_effect_and_reads(x):
    y = x * 3.0
    doubles(y)
    return np.sum(y * y)


def passes_by_keyword_in_a_loop_and_reads(x):
    y = x * 1.0
    s = 0.0
    for _ in range(3):
        s = s + _scaled_into(scale=x[0], v=y) + np.sum(np.sin(y))
    return s + np.sum(y * y)


def _scaled_into(v, scale):
    v[1:] = v[1:] * scale + v[:-1]
    v += scale
    if scale > 10.0:
        return 0.0
    return np.sum(v)


def swaps_into(a, b):
    a[0], b[0] = b[0] * 2.0, a[0] * 3.0


def passes_two_written_and_reads(x, w):
    a, b = x * 1.0, w * 1.0
    swaps_into(a, b)
    return np.sum(a * b) + np.sum(a)


def passes_one_array_twice(x):
    y = x * 1.0
    return writes_first(y, y)


@pytest.mark.parametrize("function", [passes_its_own])
def test_a_callee_writes_into_an_array_its_caller_gives_up(function):
    check_grad(function, np.array([0.3, -0.2, 0.5]))


@pytest.mark.parametrize(
    "function", [passes_and_reads, passes_for_its_effect_and_reads, passes_by_keyword_in_a_loop_and_reads]
)
def test_a_callee_writing_into_what_its_caller_reads_after_differentiates(function):
    """The call is one of a variant of the callee that returns the array it wrote into, and the
    caller's name is bound to it again (transforms/written_arguments.py): reads after the call take
    their gradient back through the callee's writes."""
    check_grad(function, np.array([0.3, -0.2, 0.5]))
    given, expected = np.array([0.3, -0.2, 0.5]), np.array([0.3, -0.2, 0.5])
    value, _ = cpsgrad.value_and_grad(function)(given)
    assert value == function(expected)
    np.testing.assert_array_equal(given, expected)


def test_a_callee_writing_into_two_arrays_its_caller_reads_after_differentiates():
    check_grad(passes_two_written_and_reads, np.array([0.3, -0.2, 0.5]), np.array([1.5, 0.25, -0.75]),
               argnums=(0, 1))


def test_a_callee_writing_into_the_top_level_argument_changes_it_as_python_does():
    given, expected = np.array([0.3, -0.2, 0.5]), np.array([0.3, -0.2, 0.5])
    assert cpsgrad.grad(passes_its_argument)(given) == pytest.approx([2.0, 2.0, 2.0])
    assert passes_its_argument(expected) == pytest.approx(1.2 + 1.0)
    np.testing.assert_array_equal(given, expected)


@pytest.mark.parametrize(
    ("function", "message"),
    [
        (passes_and_reads_another_name,
         "doubles__written writes into the array of its parameter v, and what this call passes for it is read"),
        (passes_to_a_rebinding_callee_and_reads,
         "doubles_then_rebinds writes into the array of its parameter v, and what this call passes for it is"),
        (passes_one_array_twice, "is also passed as argument 2"),
    ],
)
def test_a_callee_writing_into_what_its_caller_still_reads_is_refused_at_the_call(function, message):
    with pytest.raises(cpsgrad.UnsupportedError, match=message) as raised:
        cpsgrad.grad(function)(np.array([0.3, -0.2, 0.5]))
    assert raised.value.location is not None and raised.value.location.filename == __file__


# ---- copies of containers, and calls through *args: what a write shares ---------------------------


def _halved(fun, position):
    """A wrapper in the form of autograd's test helper `symmetrize_matrix_arg`."""

    def wrapped(*args):
        args = list(args)  # a new list: writing its slot changes nobody's tuple
        args[position] = 0.5 * (args[position] + args[position].T)
        return fun(*args)

    return wrapped


def _matrix_loss(a, m):
    return np.sum(np.tanh(a @ m))


_SYMMETRIZED = _halved(_matrix_loss, 1)


def calls_a_symmetrizing_wrapper(a, m):
    return _SYMMETRIZED(a, m)


def copies_then_writes_a_slot(a, b):
    pair = (a, b)
    copied = list(pair)
    copied[0] = 3.0 * b
    return np.sum(pair[0] * copied[0]) + np.sum(copied[1])


def test_a_write_into_a_list_copied_from_star_arguments_differentiates():
    rng = np.random.default_rng(0)
    a, m = rng.standard_normal(3), rng.standard_normal((3, 3))
    check_grad(calls_a_symmetrizing_wrapper, a, m, argnums=(0, 1))
    check_grad(copies_then_writes_a_slot, a, rng.standard_normal(3), argnums=(0, 1))
    # `cpsgrad show` shows the wrapper's program (it crashed on a callee with *args)
    assert "= cpsgrad_runtime.written(args_1, position, t" in cpsgrad.show(calls_a_symmetrizing_wrapper, argnums=(0, 1))


_GLOBAL_ARRAYS = [np.zeros(3)]


def writes_an_element_of_a_copied_list(xs, w):
    copied = list(xs)
    first = copied[0]
    first[1] = w  # the array is xs's own element: the caller's, changed as Python changes it
    return np.sum(first * first)


def writes_an_element_of_a_copied_global_list(w):
    copied = list(_GLOBAL_ARRAYS)
    first = copied[0]
    first[1] = w
    return np.sum(first * first)


def test_the_items_of_a_copied_list_are_still_the_originals():
    xs = [np.zeros(3)]
    assert cpsgrad.grad(writes_an_element_of_a_copied_list, argnums=1)(xs, 2.0) == 4.0
    np.testing.assert_array_equal(xs[0], [0.0, 2.0, 0.0])  # the caller sees the write
    with pytest.raises(cpsgrad.UnsupportedError, match="the global or free variable _GLOBAL_ARRAYS's"):
        cpsgrad.grad(writes_an_element_of_a_copied_global_list)(2.0)


# ---- a callee's write in a loop: the next pass reads what it wrote ---------------------------------


def _doubles_the_first(v):
    v[0] = v[0] * 2.0 + v[1]
    return 0.0


def _doubles_the_first_then_rebinds(v):
    v[0] = v[0] * 2.0 + v[1]
    v = v[::-1]  # rebinds its parameter: the call is not rewritten (transforms/written_arguments.py)
    return 0.0


def reads_then_gives_up_in_a_loop(w):
    p = w * 1.0
    s = 0.0
    for _ in range(3):
        s = s + np.sum(p * p)  # from the second pass on, reads what the call below wrote
        s = s + _doubles_the_first_then_rebinds(p)
    return s


def reads_then_gives_up_in_a_while_loop(w):
    p = w * 1.0
    s = 0.0
    i = 0
    while i < 3:
        s = s + np.sum(p * p)
        s = s + _doubles_the_first_then_rebinds(p)
        i += 1
    return s


def reads_what_the_call_wrote_in_a_loop(w):
    p = w * 1.0
    s = 0.0
    for _ in range(3):
        s = s + np.sum(p * p)  # from the second pass on, reads what the call below wrote
        s = s + _doubles_the_first(p)
    return s


def gives_up_then_reads_nothing_in_a_loop(w):
    s = 0.0
    for _ in range(3):
        p = w * 1.0  # a new array each pass: the call may write into it
        s = s + np.sum(p * p) + _doubles_the_first(p)
    return s


@pytest.mark.parametrize("function", [reads_then_gives_up_in_a_loop, reads_then_gives_up_in_a_while_loop])
def test_a_call_in_a_loop_may_not_write_into_what_the_next_pass_reads(function):
    """The consent of a call seen again by the loop's fixpoint kept its first visit's answer: the
    gradient was silently wrong (9.8 for 32.2)."""
    with pytest.raises(cpsgrad.UnsupportedError, match="writes into the array of its parameter v"):
        cpsgrad.grad(function)(np.array([0.3, 0.7, 1.1]))


def test_a_call_in_a_loop_writing_into_what_the_next_pass_reads_differentiates():
    # the gradient the loop's fixpoint once got wrong (9.8) and then refused: 32.2 at w[0]
    check_grad(reads_what_the_call_wrote_in_a_loop, np.array([0.3, 0.7, 1.1]))


def test_a_call_in_a_loop_writing_into_a_new_array_each_pass_differentiates():
    check_grad(gives_up_then_reads_nothing_in_a_loop, np.array([0.3, 0.7, 1.1]))


# ---- consent chains: a function giving its own parameter to a callee that writes into it ----------


def _writes_first(v, w):
    v[0] = v[0] * w + v[1]
    return np.sum(v * v)


def passes_its_parameter_on(p, w):
    s = np.sum(p * p)
    return s + _writes_first(p, w)  # p is this function's caller's: the write is its caller's to allow


def passes_it_on_twice_removed(p, w):
    return 2.0 * passes_its_parameter_on(p, w)


def owns_what_it_passes(x, w):
    q = x * 1.0
    return passes_it_on_twice_removed(q, w)


def reads_what_it_passed(x, w):
    q = x * 1.0
    r = passes_its_parameter_on(q, w)
    return r + np.sum(q)  # reads what the callee's callee wrote


def test_a_parameter_passed_to_a_writing_callee_asks_the_caller_in_turn():
    x = np.array([0.3, 0.7, 1.1])
    check_grad(owns_what_it_passes, x, 1.5, argnums=(0, 1))
    check_grad(reads_what_it_passed, x, 1.5, argnums=(0, 1))  # through both callees' variants
    given, expected = x.copy(), x.copy()
    gradient = cpsgrad.grad(passes_it_on_twice_removed, argnums=1)(given, 1.5)
    value = passes_it_on_twice_removed(expected, 1.5)
    np.testing.assert_array_equal(given, expected)  # the top-level argument changes as Python changes it
    assert value == pytest.approx(2.0 * (np.sum(x * x) + (x[0] * 1.5 + x[1]) ** 2 + x[1] ** 2 + x[2] ** 2))
    assert gradient == pytest.approx(2.0 * 2.0 * (x[0] * 1.5 + x[1]) * x[0])


# -- several `x op= y` into what the caller gave: each in place, as Python runs them ---------------


def updates_twice(x, y):
    x += y
    x *= y
    return np.sum(x * x)


def updates_in_a_loop(x, y):
    for _ in range(3):
        x *= y
    return np.sum(np.sin(x))


def updates_in_a_branch(x, y):
    if y[0] > 0.0:
        x += y
    x *= 2.0
    x -= y
    return np.sum(x**2)


def updates_around_a_write(x, y):
    x += y
    x[0] = y[1] * 3.0
    x /= 2.0
    return np.sum(np.sin(x) * y)


def writes_a_product_of_its_elements(x, y):
    """Tangent's corpus writes into its argument so (test_subscript2's form)."""
    first = x[0]
    x[0] = first * x[1] + y[2]
    return np.sum(x)


def writes_from_a_power_of_itself(x, y):
    """test_subscript3's form: the argument written from a new array made of it, both read after."""
    z = x**2.0
    x[0] = z[1] * z[2]
    return np.sum(x * z * y)


@pytest.mark.parametrize("function", [updates_twice, updates_in_a_loop, updates_in_a_branch, updates_around_a_write,
                                      writes_a_product_of_its_elements, writes_from_a_power_of_itself])
def test_writes_and_augmented_assignments_into_an_argument_end_as_python_leaves_it(function):
    """Each `x op= y` into the caller's array is in place (the second one once computed a new
    array: the caller saw only the first); the gradient, of the argument as it was given."""
    x, y = np.array([0.3, -0.7, 1.1]), np.array([0.5, 1.5, -0.4])
    given, expected = x.copy(), x.copy()
    value, gradient = cpsgrad.value_and_grad(function, argnums=(0, 1))(given, y)
    assert value == function(expected, y)
    np.testing.assert_array_equal(given, expected)
    check_grad(lambda x, y: function(x.copy(), y), x, y, argnums=(0, 1),
               gradient=lambda x, y: cpsgrad.grad(function, argnums=(0, 1))(x.copy(), y))
    np.testing.assert_array_equal(gradient[0], cpsgrad.grad(function, argnums=(0, 1))(x.copy(), y)[0])


def extends_twice(xs, b):
    xs += [b]
    xs += [b * b]
    return xs[0] * xs[-1] + xs[-2]


def merges_into(d, b):
    d |= {"y": b, "x": d["x"] * b}
    return d["x"] * d["y"]


def test_augmented_assignments_into_an_argument_list_or_dict_change_it_as_python_does():
    """`xs += [v]` into the caller's list and `d |= m` into its dict are in place (they rebound
    the name: the caller's list and dict stayed as they were)."""
    xs, expected = [0.7, 2.0], [0.7, 2.0]
    value, (xs_d, b_d) = cpsgrad.value_and_grad(extends_twice, argnums=(0, 1))(xs, 1.3)
    assert value == extends_twice(expected, 1.3)
    assert xs == expected == [0.7, 2.0, 1.3, 1.3 * 1.3]
    assert xs_d == pytest.approx([1.3**2, 0.0]) and b_d == pytest.approx(0.7 * 2 * 1.3 + 1.0)
    d, expected = {"x": 0.7}, {"x": 0.7}
    value, (d_d, b_d) = cpsgrad.value_and_grad(merges_into, argnums=(0, 1))(d, 1.3)
    assert value == merges_into(expected, 1.3)
    assert d == expected == {"x": 0.7 * 1.3, "y": 1.3}
    assert d_d == pytest.approx({"x": 1.3 * 1.3}) and b_d == pytest.approx(2 * 0.7 * 1.3)
