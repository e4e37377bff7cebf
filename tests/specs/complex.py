"""Complex values through the rules that differentiate them (cpsgrad/rules/complex_support.py),
against jax.grad on the same function (JAX's convention: docs/design.md, "Complex numbers").

Each case is a `Kink` (tests/test_rules_arrays.py compares cpsgrad's gradient with jax.grad's to
1e-12): real-valued functions of complex arguments through np.real, np.imag, np.abs(...)**2 and
sum(real(z * conj(w))), real arguments with complex intermediates, and the non-holomorphic parts
(abs, angle, conj, real, imag). tests/test_complex.py runs every rule spec on complex inputs
against finite differences of the real and imaginary parts as the second check.
"""

import numpy as np

from tests.specs import Kink as K


def J():
    import jax.numpy

    return jax.numpy


Z = np.array([0.5 + 1.0j, -1.5 + 0.25j, 2.0 - 0.75j])
V = np.array([1.0 - 0.5j, 0.25 + 2.0j, -0.5 - 1.0j])
X = np.array([0.3, -1.2, 0.8])
M = np.array([[2.0 + 0.5j, 0.3 - 0.2j, 0.1j], [-0.4 + 0.1j, 1.5 - 0.3j, 0.2], [0.25, 0.6j, 1.8 + 0.2j]])
C = 0.75 - 1.25j
MASK = np.array([True, False, True])


def svd_vectors(a):  # one call: each call's backward checks its own vectors' phases
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return (np.sum(np.abs(u) * M.real[: len(u), : len(s)]) + np.sum(np.abs(vh) * M.imag[: len(s)])
            + np.real(np.sum(u @ vh * C)))


def jax_svd_vectors(a):
    u, s, vh = J().linalg.svd(a, full_matrices=False)
    return (J().sum(J().abs(u) * M.real[: len(u), : len(s)]) + J().sum(J().abs(vh) * M.imag[: len(s)])
            + J().real(J().sum(u @ vh * C)))


def eigh_parts(a):  # numpy's eigh reads a's lower triangle, JAX's symmetrizes: a Hermitian a for both
    w, v = np.linalg.eigh(a + np.conj(a.T))
    return np.sum(w * X) + np.sum(np.abs(v) * M.real)

KINKS = [
    K(
        "complex: real of z * z",
        lambda z: np.sum(np.real(z * z)),
        lambda z: J().sum(J().real(z * z)),
        (Z,),
    ),
    K(
        "complex: imag of z * z",
        lambda z: np.sum(np.imag(z * z)),
        lambda z: J().sum(J().imag(z * z)),
        (Z,),
    ),
    K(
        "complex: abs squared",
        lambda z: np.sum(np.abs(z) ** 2),
        lambda z: J().sum(J().abs(z) ** 2),
        (Z,),
    ),
    K(
        "complex: abs",
        lambda z: np.sum(np.abs(z)),
        lambda z: J().sum(J().abs(z)),
        (Z,),
    ),
    K(
        "complex: abs of a Python complex",
        lambda z: np.abs(z) * 2.0,
        lambda z: J().abs(z) * 2.0,
        (1.5 - 2.0j,),
    ),
    K(
        "complex: builtin abs",
        lambda z: np.sum(abs(z * C)),
        lambda z: J().sum(abs(z * C)),
        (Z,),
    ),
    K(
        "complex: angle",
        lambda z: np.sum(np.angle(z)),
        lambda z: J().sum(J().angle(z)),
        (Z,),
    ),
    K(
        "complex: angle in degrees",
        lambda z: np.sum(np.angle(z, deg=True)),
        lambda z: J().sum(J().angle(z, deg=True)),
        (Z,),
    ),
    K(
        "complex: conj",
        lambda z: np.sum(np.real(np.conj(z) * C)),
        lambda z: J().sum(J().real(J().conj(z) * C)),
        (Z,),
    ),
    K(
        "complex: z.conj() z.real z.imag",
        lambda z: np.sum((z.conj() * C).real + 2.0 * (z * z).imag),
        lambda z: J().sum((z.conj() * C).real + 2.0 * (z * z).imag),
        (Z,),
    ),
    K(
        "complex: inner product of two",
        lambda z, w: np.sum(np.real(z * np.conj(w))),
        lambda z, w: J().sum(J().real(z * J().conj(w))),
        (Z, V),
        argnums=(0, 1),
    ),
    K(
        "complex: exp of i x, real x",
        lambda x: np.sum(np.real(np.exp(1j * x)) * X),
        lambda x: J().sum(J().real(J().exp(1j * x)) * X),
        (X,),
    ),
    K(
        "complex: imag of a real times c",
        lambda x: np.sum(np.imag(x * C)),
        lambda x: J().sum(J().imag(x * C)),
        (X,),
    ),
    K(
        "complex: x.astype(complex)",
        lambda x: np.sum(np.abs(x.astype(np.complex128) * C) ** 2),
        lambda x: J().sum(J().abs(x.astype(J().complex128) * C) ** 2),
        (X,),
    ),
    K(
        "complex: a cast to real keeps the real part",
        lambda z: np.sum((z * C).astype(np.float64) * X),
        lambda z: J().sum((z * C).astype(J().float64) * X),
        (Z,),
    ),
    K(
        "complex: division and reflected operators",
        lambda z, w: np.sum(np.real((1.0 - z) / w + 2.0 / z - w**2)),
        lambda z, w: J().sum(J().real((1.0 - z) / w + 2.0 / z - w**2)),
        (Z, V),
        argnums=(0, 1),
    ),
    K(
        "complex: complex power",
        lambda z: np.sum(np.real(z**2.5 + z ** (0.5 + 1j))),
        lambda z: J().sum(J().real(z**2.5 + z ** (0.5 + 1j))),
        (Z,),
    ),
    K(
        "complex: power of a complex base",
        lambda z, w: np.sum(np.real(np.power(z, w))),
        lambda z, w: J().sum(J().real(J().power(z, w))),
        (Z, V),
        argnums=(0, 1),
    ),
    K(
        "complex: unary ufuncs",
        lambda z: np.sum(np.real(np.exp(z) + np.log(z) + np.sqrt(z) + np.sin(z) * np.cos(z))),
        lambda z: J().sum(J().real(J().exp(z) + J().log(z) + J().sqrt(z) + J().sin(z) * J().cos(z))),
        (Z,),
    ),
    K(
        "complex: more ufuncs",
        lambda z: np.sum(np.real(np.tanh(z) + np.sinh(z) + np.cosh(z) + np.square(z) + np.reciprocal(z))),
        lambda z: J().sum(J().real(J().tanh(z) + J().sinh(z) + J().cosh(z) + J().square(z) + J().reciprocal(z))),
        (Z,),
    ),
    K(
        "complex: log10 log2 log1p expm1",
        lambda z: np.sum(np.real(np.log10(z) + np.log2(z) + np.log1p(z) + np.expm1(z))),
        lambda z: J().sum(J().real(J().log10(z) + J().log2(z) + J().log1p(z) + J().expm1(z))),
        (Z,),
    ),
    K(
        "complex: arctan arcsinh tan exp2",
        lambda z: np.sum(np.real(np.arctan(z) + np.arcsinh(z) + np.tan(z) + np.exp2(z))),
        lambda z: J().sum(J().real(J().arctan(z) + J().arcsinh(z) + J().tan(z) + J().exp2(z))),
        (Z / 4,),
    ),
    K(
        "complex: sum mean prod cumsum",
        lambda z: np.sum(np.real(np.sum(z) * np.mean(z) + np.prod(z) + np.cumsum(z))),
        lambda z: J().sum(J().real(J().sum(z) * J().mean(z) + J().prod(z) + J().cumsum(z))),
        (Z,),
    ),
    K(
        "complex: reductions over an axis",
        lambda a: np.sum(np.real(np.sum(a, axis=0) * np.mean(a, axis=-1) + np.prod(a, axis=1))),
        lambda a: J().sum(J().real(J().sum(a, axis=0) * J().mean(a, axis=-1) + J().prod(a, axis=1))),
        (M,),
    ),
    K(
        "complex: dot and matmul",
        lambda a, z: np.sum(np.real(np.dot(a, z) * (a @ z) + z @ a)),
        lambda a, z: J().sum(J().real(J().dot(a, z) * (a @ z) + z @ a)),
        (M, Z),
        argnums=(0, 1),
    ),
    K(
        "complex: inner outer",
        lambda z, w: np.sum(np.real(np.inner(z, w) + np.outer(z, w))),
        lambda z, w: J().sum(J().real(J().inner(z, w) + J().outer(z, w))),
        (Z, V),
        argnums=(0, 1),
    ),
    K(
        "complex: einsum tensordot",
        lambda a, z: np.sum(np.real(np.einsum("ij,j->i", a, z) + np.tensordot(a, a, 1)[0])),
        lambda a, z: J().sum(J().real(J().einsum("ij,j->i", a, z) + J().tensordot(a, a, 1)[0])),
        (M, Z),
        argnums=(0, 1),
    ),
    K(
        "complex: shapes",
        lambda a: np.sum(np.real(np.transpose(a).reshape(9)[::2] * np.concatenate([a[0], a[1, :2]]))),
        lambda a: J().sum(J().real(J().transpose(a).reshape(9)[::2] * J().concatenate([a[0], a[1, :2]]))),
        (M,),
    ),
    K(
        "complex: broadcasting",
        lambda a, z: np.sum(np.real(a * z + z[:, None] * C)),
        lambda a, z: J().sum(J().real(a * z + z[:, None] * C)),
        (M, Z),
        argnums=(0, 1),
    ),
    K(
        "complex: solve",
        lambda a, z: np.sum(np.real(np.linalg.solve(a, z) * z)),
        lambda a, z: J().sum(J().real(J().linalg.solve(a, z) * z)),
        (M, Z),
        argnums=(0, 1),
    ),
    K(
        "complex: inv",
        lambda a: np.sum(np.real(np.linalg.inv(a) * C)),
        lambda a: J().sum(J().real(J().linalg.inv(a) * C)),
        (M,),
    ),
    K(
        "complex: matrix_power",
        lambda a: np.sum(np.real(np.linalg.matrix_power(a, 3) * C)),
        lambda a: J().sum(J().real(J().linalg.matrix_power(a, 3) * C)),
        (M,),
    ),
    K(
        "complex: where",
        lambda z, w: np.sum(np.real(np.where(MASK, z, w * z))),
        lambda z, w: J().sum(J().real(J().where(MASK, z, w * z))),
        (Z, V),
        argnums=(0, 1),
    ),
    K(
        "complex: mixed: a real times a complex",
        lambda x, z: np.sum(np.abs(x * z) ** 2),
        lambda x, z: J().sum(J().abs(x * z) ** 2),
        (X, Z),
        argnums=(0, 1),
    ),
    K(
        "complex: complex64",
        lambda z: np.sum(np.abs(z * 2.0) ** 2),
        lambda z: J().sum(J().abs(z * 2.0) ** 2),
        (Z.astype(np.complex64),),
    ),
    K(
        "complex: vector norms",
        lambda z: np.linalg.norm(z) + np.linalg.norm(z, 1) + np.linalg.norm(z, np.inf) + np.linalg.norm(z, 3),
        lambda z: J().linalg.norm(z) + J().linalg.norm(z, 1) + J().linalg.norm(z, J().inf) + J().linalg.norm(z, 3),
        (Z,),
    ),
    K(
        "complex: matrix norms",
        lambda a: np.linalg.norm(a) + np.linalg.norm(a, 1) + np.linalg.norm(a, -np.inf) + np.linalg.norm(a, axis=0)[1],
        lambda a: (
            J().linalg.norm(a) + J().linalg.norm(a, 1) + J().linalg.norm(a, -J().inf) + J().linalg.norm(a, axis=0)[1]
        ),
        (M,),
    ),
    K(
        "complex: var and std",
        lambda a: np.var(a) + np.std(a, axis=0)[1] + np.var(a, axis=1, ddof=1)[2] + np.std(a, keepdims=True)[0, 0],
        lambda a: J().var(a) + J().std(a, axis=0)[1] + J().var(a, axis=1, ddof=1)[2] + J().std(a, keepdims=True)[0, 0],
        (M,),
    ),
    K(
        "complex: det and slogdet",
        lambda a: np.real(np.linalg.det(a) * C) + np.linalg.slogdet(a)[1],
        lambda a: J().real(J().linalg.det(a) * C) + J().linalg.slogdet(a)[1],
        (M,),
    ),
    # decompositions of complex matrices: functions their vectors' phases do not change (others are refused)
    K(
        "complex: singular values, nuclear and 2-norms",
        lambda a: np.sum(np.linalg.svd(a, compute_uv=False) * X) + np.linalg.norm(a, "nuc") + np.linalg.norm(a, 2),
        lambda a: J().sum(J().linalg.svd(a, compute_uv=False) * X) + J().linalg.norm(a, "nuc") + J().linalg.norm(a, 2),
        (M,),
    ),
    K("complex: |u|, |vh| and u vh of svd", svd_vectors, jax_svd_vectors, (M,)),
    K("complex: |u|, |vh| and u vh of a wide svd", svd_vectors, jax_svd_vectors, (M[:2],)),
    K(
        "complex: eigh of a Hermitian matrix, values and |v|",
        eigh_parts,
        lambda a: J().sum(J().linalg.eigh(a + J().conj(a.T))[0] * X)
        + J().sum(J().abs(J().linalg.eigh(a + J().conj(a.T))[1]) * M.real),
        (M,),
    ),
    K(
        "complex: eigenvalues of a general matrix",
        lambda a: np.real(np.sum(np.exp(np.linalg.eigvals(a)) * C)),
        lambda a: J().real(J().sum(J().exp(J().linalg.eigvals(a)) * C)),
        (M,),
    ),
]
