"""numpy's other in-place calls as writes: `np.add.at`, `np.subtract.at`, `np.multiply.at`,
`np.put` (and `x.put`), `np.putmask`, `np.place`, `np.fill_diagonal` (transforms/ufunc_writes.py,
cpsgrad/runtime/keyed_writes.py).

Each program is checked three ways: its value equals the original's exactly, its gradient
matches finite differences, and it matches jax.grad of the same program written with
`.at[].add()` / `.at[].set()` (the functional form of the same write; a multiply at repeated
indices by hand: jax has no gradient of that scatter)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cpsgrad
from cpsgrad.errors import UnsupportedError
from cpsgrad.testing import check_grad
from cpsgrad.testing.programs import check_program, programs
from tests.drawing import draw_until_seen

W = np.arange(1.0, 7.0)
REPEATS = np.array([0, 2, 0, 5, 2, 0])


def add_repeats(x, v):
    y = np.zeros(6)
    np.add.at(y, REPEATS, v * x)  # position 0 three times, 2 twice
    return np.sum(np.sin(y) * W)


def jax_add_repeats(x, v):
    y = jnp.zeros(6).at[REPEATS].add(v * x)
    return jnp.sum(jnp.sin(y) * W)


def subtract_rows(A, v):
    B = A * 1.0
    np.subtract.at(B, np.array([1, 1, 0]), v)  # v (3,) broadcast to B[idx]'s (3, 3): each row minus v
    return np.sum(B * B * A)


def jax_subtract_rows(A, v):
    B = (A * 1.0).at[jnp.array([1, 1, 0])].add(-jnp.broadcast_to(v, (3, 3)))
    return jnp.sum(B * B * A)


def subtract_float(x, s):
    y = x * 1.0
    np.subtract.at(y, [3, 3, 1], s * 0.5)  # a float broadcast to the indexed shape
    return np.sum(y**3)


def jax_subtract_float(x, s):
    y = (x * 1.0).at[jnp.array([3, 3, 1])].add(-s * 0.5)
    return jnp.sum(y**3)


def tuple_index(A, v):
    B = np.ones((3, 3)) * A
    np.add.at(B, (np.array([0, 1, 0]), np.array([2, 2, 2])), v)  # (0, 2) twice
    return np.sum(np.tanh(B))


def jax_tuple_index(A, v):
    B = (jnp.ones((3, 3)) * A).at[jnp.array([0, 1, 0]), jnp.array([2, 2, 2])].add(v)
    return jnp.sum(jnp.tanh(B))


def mask_index(x, s):
    y = x * 2.0
    np.add.at(y, x > 0.0, s)
    return np.sum(y**2)


def jax_mask_index(x, s):
    y = jnp.where(x > 0.0, x * 2.0 + s, x * 2.0)
    return jnp.sum(y**2)


def slice_index(x, s):
    y = x.copy()
    np.subtract.at(y, slice(1, 4), s * x[0])
    return np.sum(y**3)


def jax_slice_index(x, s):
    y = x.at[1:4].add(-s * x[0])
    return jnp.sum(y**3)


def int_index_in_loop(x, v):
    y = np.zeros(3)
    for i in range(6):
        np.add.at(y, i % 3, v[i] * x[i])  # an int index, one call per element
    return np.sum(y * y)


def jax_int_index_in_loop(x, v):
    y = jnp.zeros(3)
    for i in range(6):
        y = y.at[i % 3].add(v[i] * x[i])
    return jnp.sum(y * y)


def multiply_repeats(x, v):
    y = x + 1.0
    np.multiply.at(y, np.array([0, 1, 0, 0]), v)
    return np.sum(y * W[:4])


def jax_multiply_repeats(x, v):  # jax has no gradient of a multiply scatter with repeats: by hand
    y = (x + 1.0) * jnp.stack([v[0] * v[2] * v[3], v[1], 1.0, 1.0])
    return jnp.sum(y * W[:4])


def multiply_zero_factor(x, v):
    y = x + 1.0
    f = v * 1.0
    f[1] = 0.0  # position 0 gets the factors f[0] and 0.0: its other factor's gradient is 0, 0.0's is not
    np.multiply.at(y, np.array([0, 0, 2, 2, 2]), f)
    return np.sum(y * W[:4])


def jax_multiply_zero_factor(x, v):
    f = (v * 1.0).at[1].set(0.0)
    y = (x + 1.0) * jnp.stack([f[0] * f[1], 1.0, f[2] * f[3] * f[4], 1.0])
    return jnp.sum(y * W[:4])


def put_modes(x, v):
    y = np.zeros(6)
    np.put(y, [0, 7, 0, -1], v, mode="wrap")  # 7 wraps to 1; 0 written twice: the second value stays
    y.put([2, 3, 4], x[:2], mode="clip")  # v shorter than the indices: repeated
    np.put(y, [-2], x[5] * 3.0)
    return np.sum(np.sin(y) * W) + np.sum(y * x)


def jax_put_modes(x, v):
    y = jnp.zeros(6).at[jnp.array([1, 0, 5])].set(v[jnp.array([1, 2, 0])])
    y = y.at[jnp.array([2, 3, 4])].set(x[jnp.array([0, 1, 0])])
    y = y.at[4].set(x[5] * 3.0)
    return jnp.sum(jnp.sin(y) * W) + jnp.sum(y * x)


def putmask_cyclic(x, v):
    y = x * 1.0
    np.putmask(y, x > 0.1, v)  # y.flat[n] = v[n % 4] where the mask holds
    return np.sum(y * y * W)


def jax_putmask_cyclic(x, v):
    return jnp.sum(jnp.where(x > 0.1, jnp.resize(v, 6), x) ** 2 * W)


def place_in_order(x, v):
    y = x * 1.0
    np.place(y, x < 0.3, v)  # the k-th masked element gets v[k % 4]
    return np.sum(y * y * W)


def jax_place_in_order(x, v):
    mask = np.asarray(x < 0.3)
    positions = np.flatnonzero(mask)
    y = (x * 1.0).at[positions].set(v[np.arange(len(positions)) % 4])
    return jnp.sum(y * y * W)


def diagonal_wrapped(A, v):
    B = A * 1.0
    np.fill_diagonal(B, v, wrap=True)  # a tall matrix: the diagonal starts again after a blank row
    return np.sum(B * B * A)


def jax_diagonal_wrapped(A, v):
    rows, columns = np.array([0, 1, 2, 3, 5, 6]), np.array([0, 1, 2, 3, 0, 1])  # row 4 left blank
    B = (A * 1.0).at[rows, columns].set(v[np.arange(6) % 2])
    return jnp.sum(B * B * A)


def diagonal_cube(C, s):
    D = C * 1.0
    np.fill_diagonal(D, s * 2.0)
    return np.sum(np.sin(D) * C)


def jax_diagonal_cube(C, s):
    i = jnp.arange(3)
    D = (C * 1.0).at[i, i, i].set(s * 2.0)
    return jnp.sum(jnp.sin(D) * C)


def _rng_inputs(seed, *shapes):
    rng = np.random.default_rng(seed)
    return tuple(float(rng.normal()) if shape == () else rng.normal(size=shape) for shape in shapes)


PROGRAMS = [
    (add_repeats, jax_add_repeats, ((6,), ())),
    (subtract_rows, jax_subtract_rows, ((3, 3), (3,))),
    (subtract_float, jax_subtract_float, ((4,), ())),
    (tuple_index, jax_tuple_index, ((3, 3), (3,))),
    (mask_index, jax_mask_index, ((6,), ())),
    (slice_index, jax_slice_index, ((6,), ())),
    (int_index_in_loop, jax_int_index_in_loop, ((6,), (6,))),
    (multiply_repeats, jax_multiply_repeats, ((4,), (4,))),
    (multiply_zero_factor, jax_multiply_zero_factor, ((4,), (5,))),
    (put_modes, jax_put_modes, ((6,), (3,))),
    (putmask_cyclic, jax_putmask_cyclic, ((6,), (4,))),
    (place_in_order, jax_place_in_order, ((6,), (4,))),
    (diagonal_wrapped, jax_diagonal_wrapped, ((7, 4), (2,))),
    (diagonal_cube, jax_diagonal_cube, ((3, 3, 3), ())),
]
IDS = [program.__name__ for program, _, _ in PROGRAMS]


@pytest.mark.parametrize(("program", "transcription", "shapes"), PROGRAMS, ids=IDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_values_gradients_and_jax(program, transcription, shapes, seed):
    args = _rng_inputs(seed, *shapes)
    expected = program(*args)
    value, gradient = cpsgrad.value_and_grad(program, argnums=(0, 1))(*args)
    assert value == expected  # the writes are numpy's own calls: exactly the original's values
    check_grad(program, *args, argnums=(0, 1))
    with jax.enable_x64(True):
        reference = jax.grad(transcription, argnums=(0, 1))(*(jnp.asarray(a) for a in args))
        assert float(transcription(*(jnp.asarray(a) for a in args))) == pytest.approx(expected, rel=1e-12)
    for ours, theirs in zip(gradient, reference, strict=True):
        np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-9, atol=1e-12)


def test_a_repeated_index_sums_the_gradient_and_matches_a_one_hot_rewrite():
    def scatter(v):
        y = np.zeros(3)
        np.add.at(y, [0, 0, 0, 2], v)
        return np.sum(y * np.array([1.0, 10.0, 100.0]))

    def by_one_hot(v):
        y = np.zeros(3)
        y = y + np.eye(3)[[0, 0, 0, 2]].T @ v
        return np.sum(y * np.array([1.0, 10.0, 100.0]))

    v = np.array([0.5, -1.0, 2.0, 3.0])
    assert scatter(v) == pytest.approx(by_one_hot(v), rel=1e-15)
    np.testing.assert_array_equal(cpsgrad.grad(scatter)(v), [1.0, 1.0, 1.0, 100.0])
    np.testing.assert_allclose(cpsgrad.grad(scatter)(v), cpsgrad.grad(by_one_hot)(v))


def test_put_keeps_the_last_value_at_a_repeated_position():
    def put_twice(v):
        y = np.zeros(3)
        np.put(y, [1, 1, 2], v)
        return np.sum(y * np.array([1.0, 10.0, 100.0]))

    v = np.array([3.0, 4.0, 5.0])
    assert cpsgrad.value_and_grad(put_twice)(v)[0] == put_twice(v) == 40.0 + 500.0
    np.testing.assert_array_equal(cpsgrad.grad(put_twice)(v), [0.0, 10.0, 100.0])


def adds_into_argument(x, v):
    np.add.at(x, [0, 0, 2], v)
    return np.sum(x * x)


def helper_adds(u, v):
    np.subtract.at(u, [1, 1], v)
    return u[1] * 1.0


def calls_an_adder(x, v):
    y = x * 2.0
    z = helper_adds(y, v)
    return z * v


def test_a_parameter_written_is_the_callers_array_and_ends_as_the_original_leaves_it():
    x, v = np.array([1.0, 2.0, 3.0]), 0.5
    plain = x.copy()
    expected = adds_into_argument(plain, v)
    ours = x.copy()
    value, (dx, dv) = cpsgrad.value_and_grad(adds_into_argument, argnums=(0, 1))(ours, v)
    assert value == expected
    np.testing.assert_array_equal(ours, plain)  # the caller sees the change, as after Python's run
    after = np.array([2.0, 2.0, 3.5])
    np.testing.assert_allclose(dx, 2 * after)
    assert dv == pytest.approx(2 * (2 * after[0] + after[2]))
    # through a helper: the caller's own array, not read again
    x = np.array([1.0, 2.0, 3.0])
    assert cpsgrad.value_and_grad(calls_an_adder, argnums=(0, 1))(x, 0.7)[0] == calls_an_adder(x, 0.7)
    check_grad(calls_an_adder, x, 0.7, argnums=(0, 1))


def helper_puts(u, v):
    np.put(u, [0], v)
    return u[0]


def reads_after_a_put(x):
    y = x * 1.0
    z = helper_puts(y, x[1])
    return np.sum(y) + z


def test_a_helper_writing_into_an_array_the_caller_reads_again_differentiates():
    # the call becomes one of helper_puts's variant returning u, and y is bound to it again
    # (transforms/written_arguments.py): the read after the call goes back through the put
    check_grad(reads_after_a_put, np.array([1.0, 2.0]))
    x = np.array([1.0, 2.0])
    assert cpsgrad.value_and_grad(reads_after_a_put)(x)[0] == reads_after_a_put(np.array([1.0, 2.0]))


def maximum_at(x):
    y = x * 1.0
    np.maximum.at(y, [0, 0], x[1])
    return np.sum(y)


def into_a_global(x):
    np.add.at(W, [0], x)
    return x


def into_an_attribute(x):
    np.put(x.T, [0], 1.0)
    return np.sum(x)


def place_from_itself(x):
    y = x * 1.0
    np.place(y, y > -10.0, y[:2])  # np.place reads y[:2] as it writes: refused
    return np.sum(y)


def into_a_list(x):
    y = [1.0, 2.0]
    np.add.at(y, [0], x)
    return x


@pytest.mark.parametrize(
    ("program", "message"),
    [
        (maximum_at, r"np\.maximum\.at.*differentiates np\.add\.at, np\.subtract\.at and np\.multiply\.at"),
        (into_a_global, r"np\.add\.at\) whose target is not a local variable"),
        (into_an_attribute, r"np\.put\) whose target is not a local variable"),
        (place_from_itself, r"np\.place whose value shares memory with the array it writes into"),
        (into_a_list, r"np\.add\.at into a list"),
    ],
)
def test_what_is_not_differentiated_is_refused_with_the_rewrite(program, message):
    with pytest.raises(UnsupportedError, match=message) as raised:
        cpsgrad.grad(program)(np.array([1.0, 2.0, 3.0]))
    assert "test_ufunc_at.py" in str(raised.value)


def test_the_program_shows_the_write_with_its_key():
    text = cpsgrad.show(add_repeats, example=(np.ones(6), 0.5))
    assert "y_1 = cpsgrad_runtime.written(y, cpsgrad_runtime.ufunc_at(cpsgrad_runtime.numpy.add, indices=" in text
    assert "cpsgrad_runtime.restore(y_1, cpsgrad_runtime.ufunc_at(" in text
    normalized = cpsgrad.show(put_modes, stage="normalize")
    assert "cpsgrad_runtime.put_key(ind=" in normalized and 'mode="wrap"' in normalized


def test_put_out_of_bounds_raises_numpys_error_before_writing():
    def put_far(x):
        y = np.zeros(3)
        np.put(y, [5], x)
        return np.sum(y)

    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        put_far(1.0)
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        cpsgrad.grad(put_far)(1.0)


def test_an_int_target_counts_without_a_gradient():
    def counts(x):
        c = np.zeros(3, dtype=np.int64)
        np.add.at(c, [0, 0, 2], 1)
        return np.sum(c * x)

    x = np.array([1.0, 2.0, 3.0])
    assert cpsgrad.value_and_grad(counts)(x)[0] == counts(x)
    np.testing.assert_array_equal(cpsgrad.grad(counts)(x), [2.0, 0.0, 1.0])


def test_the_generator_draws_ufunc_at_and_put_writes_and_they_pass():
    """programs(writes=True) draws `np.add.at`-like and `np.put`-like writes (cpsgrad/testing/
    mutations.py); each program holding one checks out (value exact, gradient against finite
    differences) or is one of the refusals check_program accepts."""
    checked = []

    def each(program):
        if program.constructs & {"write-ufunc-at", "write-put"}:
            with program:
                check_program(program)  # raises on a wrong value or gradient
            checked.append(program)

    def held(program):  # a note can outlive text drawn and dropped later: the source decides
        source = program.source if program.constructs & {"write-ufunc-at", "write-put"} else ""
        puts = any(f"np.{form}(" in source for form in ("put", "putmask", "place"))
        return {name for name, there in (("put", puts), ("at", ".at(" in source)) if there}

    missing = draw_until_seen(programs(writes=True), {"put", "at"}, examples=25, each=each, found=held)
    assert not missing and checked


def put_one(x, i):
    y = np.zeros(4)
    np.put(y, i, x * 2.0, mode="wrap")
    np.put(y, i + 1, x * 3.0, mode="clip")
    np.put(y, -1, x)
    return np.sum(y * np.array([1.0, 10.0, 100.0, 1000.0]))


@pytest.mark.parametrize("i", [-5, -1, 0, 2, 3, 6])
def test_put_with_an_int_index_in_each_mode(i):
    expected = put_one(1.5, i)
    value, gradient = cpsgrad.value_and_grad(put_one)(1.5, i)
    assert value == expected
    assert gradient == pytest.approx((expected - put_one(0.0, i)) / 1.5)  # linear in x
    with pytest.raises(IndexError, match="index 9 is out of bounds"):
        cpsgrad.grad(put_far_int)(1.0)


def put_far_int(x):
    y = np.zeros(3)
    np.put(y, 9, x)
    return np.sum(y)


def complex_scatter(z, w):
    y = z * 1.0
    np.add.at(y, [0, 0, 2], w)
    np.multiply.at(y, [1, 1], w[:2])
    return np.sum(np.abs(y) ** 2)


def jax_complex_scatter(z, w):
    y = (z * 1.0).at[jnp.array([0, 0, 2])].add(w)
    y = y * jnp.stack([1.0, w[0] * w[1], 1.0])
    return jnp.sum(jnp.abs(y) ** 2)


def test_complex_values_follow_jaxs_convention():
    rng = np.random.default_rng(4)
    z = rng.normal(size=3) + 1j * rng.normal(size=3)
    w = rng.normal(size=3) + 1j * rng.normal(size=3)
    assert cpsgrad.value_and_grad(complex_scatter)(z, w)[0] == complex_scatter(z, w)
    ours = cpsgrad.grad(complex_scatter, argnums=(0, 1))(z, w)
    with jax.enable_x64(True):
        theirs = jax.grad(jax_complex_scatter, argnums=(0, 1))(jnp.asarray(z), jnp.asarray(w))
    for mine, reference in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine, np.asarray(reference), rtol=1e-9, atol=1e-12)


def keywords(x, v):
    y = np.zeros(3)
    np.put(y, ind=[2, 0], v=x[:2], mode="clip")
    B = np.zeros((2, 2))
    np.fill_diagonal(B, val=v, wrap=False)
    np.putmask(y, mask=np.array([False, True, False]), values=v * 2.0)
    return np.sum(y * np.array([1.0, 2.0, 3.0])) + np.sum(B * B)


def test_numpys_keywords_bind_as_numpy_binds_them():
    x, v = np.array([0.5, -1.5, 2.0]), 0.75
    assert cpsgrad.value_and_grad(keywords, argnums=(0, 1))(x, v)[0] == keywords(x, v)
    check_grad(keywords, x, v, argnums=(0, 1))


def starred(x):
    y = x * 1.0
    arguments = ([0], 1.0)
    np.put(y, *arguments)
    return np.sum(y)


def test_starred_arguments_are_refused_with_the_rewrite():
    with pytest.raises(UnsupportedError, match=r"np\.put with starred arguments.*pass each argument by itself"):
        cpsgrad.grad(starred)(np.ones(2))


def float32_scatter(x):
    y = np.zeros(3, dtype=np.float32)
    np.add.at(y, [0, 0, 1], x * 2.0)
    return np.sum(y * y)


def test_a_float32_target_keeps_its_dtype_and_gradient():
    x = np.array([0.5, 1.0, -2.0], dtype=np.float32)
    value, gradient = cpsgrad.value_and_grad(float32_scatter)(x)
    assert value == float32_scatter(x) and gradient.dtype == np.float32
    check_grad(float32_scatter, x)


def put_mode(x, mode):
    y = np.zeros(3)
    np.put(y, [4, -5], x, mode=mode)
    return np.sum(y * np.array([1.0, 10.0, 100.0]))


@pytest.mark.parametrize("mode", ["wrap", "clip", 0, 1])
def test_put_reads_the_mode_as_numpy_does(mode):
    x = np.array([2.0, 3.0])
    expected = put_mode(x, mode)
    value, gradient = cpsgrad.value_and_grad(put_mode)(x, mode)
    assert value == expected
    np.testing.assert_allclose(gradient, [put_mode(np.array([1.0, 0.0]), mode), put_mode(np.array([0.0, 1.0]), mode)])


def test_put_refuses_a_mode_numpy_refuses():
    with pytest.raises(ValueError, match="clipmode must be one of"):
        cpsgrad.grad(put_mode)(np.ones(2), "x")


def place_other_size(x):
    y = x * 1.0
    np.place(y, np.array([True, False]), 1.0)
    return np.sum(y)


def putmask_other_size(x):
    y = x * 1.0
    np.putmask(y, np.array([True, False]), 1.0)
    return np.sum(y)


@pytest.mark.parametrize("program", [place_other_size, putmask_other_size])
def test_a_mask_of_another_size_raises_numpys_error(program):
    with pytest.raises(ValueError) as original:
        program(np.ones(3))
    with pytest.raises(ValueError) as ours:
        cpsgrad.grad(program)(np.ones(3))
    assert str(ours.value) == str(original.value)
