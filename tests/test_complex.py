"""Complex numbers, JAX's convention (docs/design.md, "Complex numbers"): complex arguments,
complex intermediates of real arguments, the rules that differentiate complex values and the
guard that refuses the others.

`test_every_rule_spec_on_complex_inputs` runs every rule spec of tests/test_rules_arrays.py (and
tests/specs/) on complex inputs (and on a complex first input with real others): the gradient must
match central differences of the real and imaginary parts separately (d/dx - i d/dy, JAX's), or the
call must be refused by name; never a wrong answer. tests/specs/complex.py checks against jax.grad.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import scipy.special

import cpsgrad
from cpsgrad.errors import CpsgradError, NonScalarOutputError, UnsupportedError
from tests.specs import FLOAT
from tests.test_rules_arrays import SPECS

STEP = 2.0**-14


def _derivative(evaluate, t: float) -> float:
    """Richardson-extrapolated central difference of a real function of a real `t`."""
    h = STEP * max(abs(t), 1.0)
    wide = (evaluate(t + h) - evaluate(t - h)) / (2 * h)
    narrow = (evaluate(t + h / 2) - evaluate(t - h / 2)) / h
    return (4 * narrow - wide) / 3


def numeric_gradient(function, args: tuple, position: int):
    """d/dx - i d/dy of the real `function` in argument `position` (d/dx alone for a real one)."""
    x = args[position]

    def at(value) -> float:
        moved = list(args)
        moved[position] = value
        return float(function(*moved))

    if not isinstance(x, np.ndarray):
        if type(x) is float:
            return _derivative(at, x)
        real = _derivative(lambda t: at(type(x)(complex(t, x.imag))), x.real)
        return real - 1j * _derivative(lambda t: at(type(x)(complex(x.real, t))), x.imag)
    complex_ = x.dtype.kind == "c"
    gradient = np.zeros(x.shape, np.complex128 if complex_ else np.float64)
    for index in np.ndindex(x.shape):

        def moved(t, index=index, imaginary=False):
            y = x.copy()
            y[index] = complex(y[index].real, t) if imaginary else (complex(t, y[index].imag) if complex_ else t)
            return at(y)

        gradient[index] = _derivative(moved, float(x[index].real))
        if complex_:
            gradient[index] -= 1j * _derivative(lambda t, m=moved: m(t, imaginary=True), float(x[index].imag))
    return gradient


def assert_gradients(function, args: tuple, argnums: tuple[int, ...], rtol=1e-6):
    """cpsgrad's value and gradients against the original and central differences; each gradient
    in its argument's type, shape and dtype."""
    value, gradients = cpsgrad.value_and_grad(function, argnums=argnums)(*args)
    original = function(*args)
    assert value == original or (np.isnan(value) and np.isnan(original)), (value, original)
    for position, gradient in zip(argnums, gradients, strict=True):
        x = args[position]
        if isinstance(x, np.ndarray):
            assert type(gradient) is np.ndarray and gradient.shape == x.shape and gradient.dtype == x.dtype
        else:
            assert type(gradient) is type(x), (type(gradient), type(x))
        expected = numeric_gradient(function, args, position)
        scale = max(float(np.max(np.abs(expected), initial=0.0)), 1.0)
        np.testing.assert_allclose(gradient, expected, rtol=rtol, atol=1e-7 * scale, err_msg=f"argument {position}")


# ---- every rule spec on complex inputs ----------------------------------------------------------


class _OutputShape:
    shape: tuple = ()

    def __rmul__(self, output):
        self.shape = np.shape(output)
        return output

    __mul__ = __rmul__


def _complex_inputs(spec, rng, mixed: bool) -> tuple:
    """Real parts in the spec's domain (distinct, off the grid's ties when `apart`), imaginary parts
    in +-0.3; with `mixed`, only the first input is complex."""
    inputs = []
    for position, (shape, (low, high)) in enumerate(zip(spec.shapes, spec.domains(), strict=True)):
        size = 1 if shape == FLOAT else int(np.prod(shape))
        if spec.apart:
            real = rng.permutation(np.linspace(low, high, size + 2)[1:-1]) + 0.013 * (position + 1)
        else:
            real = rng.uniform(low, high, size)
        value = real + 1j * rng.uniform(-0.3, 0.3, size) if position == 0 or not mixed else real
        inputs.append(
            complex(value[0])
            if shape == FLOAT and np.iscomplexobj(value)
            else float(value[0])
            if shape == FLOAT
            else value.reshape(shape)
        )
    return tuple(inputs)


def _real_of(function, weights, arity: int):
    """`np.real(function(*inputs, weights))` as a function cpsgrad can transform."""
    if arity == 1:

        def one(a):
            return np.real(function(a, weights))

        return one
    if arity == 2:

        def two(a, b):
            return np.real(function(a, b, weights))

        return two
    if arity == 3:

        def three(a, b, c):
            return np.real(function(a, b, c, weights))

        return three

    def four(a, b, c, d):
        return np.real(function(a, b, c, d, weights))

    return four


SWEEP = [
    pytest.param(spec, mixed, id=f"{spec.name}-{'mixed' if mixed else 'complex'}")
    for spec in SPECS
    for mixed in (False, True)
    if len(spec.shapes) <= 4
]


@pytest.mark.parametrize(("spec", "mixed"), SWEEP)
def test_every_rule_spec_on_complex_inputs(spec, mixed):
    rng = np.random.default_rng(zlib.crc32(spec.name.encode()))
    inputs = _complex_inputs(spec, rng, mixed)
    probe = _OutputShape()
    with np.errstate(all="ignore"):
        try:
            spec.function(*inputs, probe)
        except (TypeError, ValueError, NotImplementedError, np.linalg.LinAlgError):
            pytest.skip("numpy itself does not take these complex inputs")
    weights = rng.uniform(0.5, 1.5, probe.shape) * rng.choice([-1.0, 1.0], probe.shape)
    weights = weights + 1j * rng.uniform(-1.0, 1.0, probe.shape)
    function = _real_of(spec.function, weights, len(inputs))
    try:
        cpsgrad.grad(function, argnums=tuple(range(len(inputs))))(*inputs)
    except CpsgradError as error:
        assert isinstance(error, UnsupportedError) and "complex" in str(error), error
        return
    single = spec.dtypes == ("float32",)  # computes in float32 whatever the input
    assert_gradients(function, inputs, tuple(range(len(inputs))), rtol=2e-3 if single else 1e-5)


# ---- the convention, worked ----------------------------------------------------------------------


def squared_magnitude(z):
    return np.abs(z) ** 2


def test_the_convention_is_jax_s():
    # f(x + iy) = x**2 + y**2: df/dx - i df/dy = 2x - 2iy = 2 conj(z)
    assert cpsgrad.grad(squared_magnitude)(3.0 + 4.0j) == pytest.approx(6.0 - 8.0j, rel=1e-15)
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        assert complex(jax.grad(lambda z: jax.numpy.abs(z) ** 2)(3.0 + 4.0j)) == 6.0 - 8.0j


def phase_of_a_real(x):
    return np.real(np.exp(1j * x) * (2.0 - 1.0j))


def test_a_real_argument_gets_a_real_gradient():
    gradient = cpsgrad.grad(phase_of_a_real)(0.7)
    assert type(gradient) is float
    assert gradient == pytest.approx(-2.0 * np.sin(0.7) + np.cos(0.7), rel=1e-14)
    gradient = cpsgrad.grad(lambda x: np.sum(np.real(np.exp(1j * x))))(np.array([0.5, 1.0], dtype=np.float32))
    assert gradient.dtype == np.float32


# ---- whole programs ------------------------------------------------------------------------------


def rotate(z, turns):
    for _ in range(turns):
        z = z * np.exp(0.3j) + 0.1 * np.conj(z)
    return z


def loops_and_calls(z, x):
    w = rotate(z, 3)
    total = 0.0
    for k in range(3):
        if np.real(w[k]) > 0:
            total = total + np.abs(w[k] * x[k]) ** 2
        else:
            total = total + np.imag(w[k]) * x[k]
    return total


def power_series(z, n):
    if n == 0:
        return 1.0 + 0.0j
    return 1.0 + z * power_series(z, n - 1) / n


def recursion(z):
    return np.real(power_series(z, 6)) + np.imag(power_series(z * 1j, 4))


def used_twice(z):
    unused = np.exp(z)  # noqa: F841  (a result computed, never used: its adjoint is the symbolic zero)
    return np.real(z * z * np.conj(z)) + np.angle(z)


def of_containers(params):
    return np.sum(np.abs(params["a"] * params["b"][0]) ** 2) + np.real(params["b"][1] * 2.0j)


Z3 = np.array([0.5 + 1.0j, -1.5 + 0.25j, 2.0 - 0.75j])


def test_loops_branches_and_user_functions():
    assert_gradients(loops_and_calls, (Z3, np.array([0.3, -1.2, 0.8])), (0, 1))


def test_recursion():
    assert_gradients(recursion, (0.4 - 0.3j,), (0,))


def test_an_argument_used_twice_and_a_result_discarded():
    assert_gradients(used_twice, (0.8 + 0.6j,), (0,))
    assert_gradients(used_twice, (np.complex128(0.8 + 0.6j),), (0,))


def test_containers_of_complex_values():
    params = {"a": Z3.astype(np.complex64), "b": (0.5 - 0.5j, 1.5 + 2.0j)}
    gradient = cpsgrad.grad(of_containers)(params)
    assert gradient["a"].dtype == np.complex64 and type(gradient["b"][1]) is complex
    expected_a = 2.0 * np.abs(params["b"][0]) ** 2 * np.conj(params["a"])
    np.testing.assert_allclose(gradient["a"], expected_a, rtol=1e-6)
    assert gradient["b"][1] == 2.0j  # Re(2i z): d/dx = 0, d/dy = -2, so 0 - i (-2)


def real_if_close_of(z):
    return np.sum(np.real_if_close(z * 2.0) * np.array([1.0, -2.0]))


def test_real_if_close():
    assert_gradients(real_if_close_of, (np.array([1.0 + 1e-15j, 2.0 + 0.0j]),), (0,))


# ---- what is refused -----------------------------------------------------------------------------


def sorts(z):
    return np.sum(np.real(np.sort(z)))


def qr_of(z):
    return np.sum(np.abs(np.linalg.qr(np.outer(z, z + 1.0) + np.eye(3))[1]))


def clips(z):
    return np.sum(np.abs(np.maximum(z, 0.5)))


def sign_of_slogdet(z):
    return np.real(np.linalg.slogdet(np.outer(z, z) + np.eye(3))[0] * (1.0 + 2.0j))


def complex_result(z):
    return z * 2.0


@pytest.mark.parametrize(
    ("function", "construct"),
    [
        (sorts, "np.sort with a complex input or result"),
        (qr_of, "np.linalg.qr with a complex input or result"),
        (clips, "np.maximum with a complex input or result"),
        (sign_of_slogdet, "the sign of np.linalg.slogdet of a complex matrix"),
    ],
)
def test_rules_without_complex_support_are_refused_at_the_call(function, construct):
    with pytest.raises(UnsupportedError) as raised:
        cpsgrad.grad(function)(Z3)
    message = str(raised.value)
    assert construct in message
    assert f"{__file__}:{function.__code__.co_firstlineno + 1}:" in message


def test_a_complex_output_is_refused():
    with pytest.raises(NonScalarOutputError, match="real scalar"):
        cpsgrad.grad(complex_result)(1.0 + 1.0j)
    with pytest.raises(NonScalarOutputError, match="real scalar"):
        cpsgrad.grad(complex_result)(np.complex128(1.0))


def test_the_real_path_has_no_guard_for_supported_rules():
    shown = cpsgrad.show(loops_and_calls, "final")
    assert "refuse_complex_operands" not in shown
    assert "refuse_complex_operands('np.sort with a complex input or result', " in cpsgrad.show(sorts, "final")


def complex_predicates(z):
    return np.real(z) * np.iscomplexobj(z) + np.sum(np.isreal(np.array([z, 1.0]))) + np.sum(np.iscomplex(z))


def test_complex_predicates_carry_no_gradient():
    assert cpsgrad.grad(complex_predicates)(1.0 + 1.0j) == 1.0


# ---- writes, containers, Python numbers, the complex builtin -------------------------------------

X3 = np.array([0.3, -1.2, 0.8])


def writes_complex_values(z):
    a = np.zeros(3, dtype=complex)
    a[0] = z[1] * 2.0
    a[1:] = z[:2] * 1j
    return np.sum(np.abs(a) ** 2)


def writes_reals_into_a_complex_array(x):
    a = np.zeros(3, dtype=complex)
    a[0] = x[1] * 1j
    a[2] = x[0]
    return np.sum(np.real(a * (1 - 2j)))


def writes_parts_into_a_real_array(z):
    r = np.zeros(3)
    r[0] = np.abs(z[0])
    r[1] = np.real(z[1] * z[2])
    return np.sum(r * X3)


def complex_values_in_containers(x):
    d = {"a": x[0] * (1 + 1j), "b": x[1]}
    parts = [d["a"], 2j * x[2]]
    return np.real(d["a"] * d["b"]) + np.imag(sum(parts))


def square_root_of_a_negative_float(x):
    return (x**0.5).real + abs(x**0.5) + abs(x * 1j)


def built_from_parts(x, y):
    return np.abs(complex(x, y)) ** 2 + np.real(complex(x, y) * (1 + 2j)) + np.imag(complex(x * 1j) * 3.0)


def error_functions(z):
    return np.sum(np.real(scipy.special.erf(z) * (1.0 - 0.5j) + scipy.special.erfc(z * 0.5)))


@pytest.mark.parametrize(
    ("function", "args", "argnums"),
    [
        (error_functions, (Z3 * 0.5,), (0,)),
        (writes_complex_values, (Z3,), (0,)),
        (writes_reals_into_a_complex_array, (X3,), (0,)),
        (writes_parts_into_a_real_array, (Z3,), (0,)),
        (complex_values_in_containers, (X3,), (0,)),
        (square_root_of_a_negative_float, (-4.0,), (0,)),
        (built_from_parts, (0.3, 0.7), (0, 1)),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_writes_containers_and_python_numbers(function, args, argnums):
    assert_gradients(function, args, argnums)


# ---- decompositions of complex matrices: phase-free losses differentiated, the others refused ---

A34 = np.array(
    [
        [0.5 + 1.0j, -1.0, 0.25j, 2.0 - 0.5j],
        [1.5 - 0.5j, 0.75j, -0.5 + 0.25j, 0.3],
        [0.2, 1.0 + 1.0j, 0.6 - 0.8j, -1.2j],
    ]
)
A33 = A34[:, :3] + 2.0 * np.eye(3)
W33 = np.array([[0.3, -1.2, 0.8], [1.1, 0.4, -0.6], [-0.9, 0.7, 0.2]])


def svd_moduli(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(np.abs(u) * W33) + np.sum(s * W33[0]) + np.sum(np.abs(vh) * np.hstack([W33, W33[:, :1]]))


def svd_of_the_transpose(a):
    u, s, vh = np.linalg.svd(a.T, full_matrices=False)
    return np.sum(np.abs(u) * np.vstack([W33, W33[:1]])) + np.real(np.sum(u @ vh * (1.0 - 2.0j)))


def singular_values_and_norms(a):
    return np.sum(np.linalg.svd(a, compute_uv=False) * W33[1]) + np.linalg.norm(a, "nuc") + np.linalg.norm(a, 2)


def eigh_moduli(a):
    w, v = np.linalg.eigh(a, "U")
    return np.sum(w * W33[2]) + np.sum(np.abs(v) * W33)


def eig_moduli(a):
    w, v = np.linalg.eig(a)
    return np.real(np.sum(w * (1.0 + 0.5j))) + np.sum(np.abs(v) * W33)


def stacked_values(a):
    return (
        np.sum(np.linalg.eigvalsh(a) * W33[:2]) + np.sum(np.linalg.eigvalsh(a, "U") ** 2) + np.sum(np.linalg.svdvals(a))
    )


def stacked_vectors(a):
    u, s, vh = np.linalg.svd(a)
    return (
        np.sum(np.abs(u)) + np.sum(np.abs(vh[..., :2, :]) * 0.5) + np.sum(np.abs(np.linalg.eig(a)[1]) * W33[:2, None])
    )


STACK = np.stack([A33, A33.T * (0.5 - 1.0j) + np.eye(3)])


def root_of(a):
    return np.real(np.sum(scipy.linalg.sqrtm(a) * (W33 + 1.0j)))


def extremes(a):
    return np.real(np.max(a) * (2.0 - 1.0j)) + np.imag(np.sum(np.min(a, axis=0)))


@pytest.mark.parametrize(
    ("function", "args"),
    [
        (svd_moduli, (A34,)),
        (svd_of_the_transpose, (A34,)),
        (singular_values_and_norms, (A34,)),
        (eigh_moduli, (A33,)),  # not Hermitian: numpy reads the upper triangle
        (eig_moduli, (A33,)),
        (eig_moduli, (W33,)),  # a real matrix with complex eigenpairs
        (stacked_values, (STACK,)),
        (stacked_vectors, (STACK,)),
        (root_of, (A33,)),
        (root_of, (W33 - 2.0 * np.eye(3),)),  # a real matrix with a complex root
        (extremes, (A34,)),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_decompositions_of_complex_matrices(function, args):
    assert_gradients(function, args, (0,), rtol=1e-5)


def left_vectors(a):
    return np.real(np.sum(np.linalg.svd(a, full_matrices=False)[0] * W33))


def eigenvectors_squared(a):
    return np.real(np.sum(np.linalg.eigh(a)[1] ** 2))


def first_component(a):
    return np.real(np.linalg.eig(a)[1][0, 1])


@pytest.mark.parametrize(
    ("function", "construct"),
    [
        (left_vectors, "np.linalg.svd's complex singular vectors"),
        (eigenvectors_squared, "np.linalg.eigh's eigenvectors"),
        (first_component, "np.linalg.eig's complex eigenvectors"),
    ],
)
def test_a_loss_that_depends_on_the_vectors_phase_is_refused(function, construct):
    argument = A34 if function is left_vectors else A33
    with pytest.raises(UnsupportedError, match="defined only up to a phase") as raised:
        cpsgrad.grad(function)(argument)
    assert construct in str(raised.value)
    assert f"{__file__}:{function.__code__.co_firstlineno + 1}:" in str(raised.value)
