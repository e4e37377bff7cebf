"""The catalogue of numpy/scipy calls the program generator draws (`programs(rules=True)`, rule_forms.py).

Each entry is `(construct, family, template)`: the template is the call's text with placeholders
for drawn operands, `{v}` `{w}` `{u}` vectors of length 3, `{m}` `{p}` 3 x 3 matrices and `{e}` a
float (a placeholder written twice is one drawn operand written twice). Every template's value has
the shape of its list (VECTOR: (3,), MATRIX: (3, 3), FLOAT: a scalar): a call of another shape
is sliced or reduced back (`np.tile({v}, 2)[1:4]`, `np.kron({v}, {w}).reshape(3, 3)`).

The operands are anything the generator draws, so a template keeps them on the call's domain by
construction: a log sees `1.0 + {v} * {v}`, arcsin `np.tanh({v}) * 0.9`, an exponential a
`tanh`; linear algebra takes matrices built to be well conditioned from the drawn values, with
`SPD` symmetric positive definite (eigenvalues in [3, 4.5]), `DOMINANT` diagonally dominant
(invertible, positive determinant) and `SEPARATED` symmetric with eigenvalues in [0.7, 1.3],
[1.7, 2.3] and [2.7, 3.3] (so eigenvectors, up to sign, and singular values are differentiable;
eigenvectors are squared, which their sign does not change). Sorting, max, min, clip and where
have kinks only where drawn values tie or meet a constant: measure zero for the drawn arguments
(kept apart from each other and from the round constants: grammar.apart), and check_grad skips a
kink within its step.
"""

from __future__ import annotations

import string

FLOAT, VECTOR, MATRIX = "float", "vector", "matrix"

SPD = "(np.eye(3) * 3.0 + np.outer(np.tanh({v}), np.tanh({v})) * 0.5)"
DOMINANT = "(np.eye(3) * 3.0 + np.tanh({m}) * 0.5)"
SEPARATED = "(np.diag([1.0, 2.0, 3.0]) + np.tanh({m} + {m}.T) * 0.05)"

SCIPY_MODULES = ("scipy.special", "scipy.stats", "scipy.linalg", "scipy.signal")

VECTOR_CALLS = (
    # elementwise ufuncs, on their domains
    ("np.log", "ufunc", "np.log(1.0 + {v} * {v})"),
    ("np.log1p", "ufunc", "np.log1p({v} * {v})"),
    ("np.log2", "ufunc", "np.log2(0.5 + {v} * {v})"),
    ("np.log10", "ufunc", "np.log10(1.5 + {v} * {v})"),
    ("np.sqrt", "ufunc", "np.sqrt(0.5 + {v} * {v})"),
    ("np.cbrt", "ufunc", "np.cbrt(1.0 + {v} * {v})"),
    ("np.arcsin", "ufunc", "np.arcsin(np.tanh({v}) * 0.9)"),
    ("np.arccos", "ufunc", "np.arccos(np.tanh({v}) * 0.9)"),
    ("np.arctan", "ufunc", "np.arctan({v})"),
    ("np.arcsinh", "ufunc", "np.arcsinh({v})"),
    ("np.arccosh", "ufunc", "np.arccosh(1.5 + {v} * {v})"),
    ("np.arctanh", "ufunc", "np.arctanh(np.tanh({v}) * 0.9)"),
    ("np.sinh", "ufunc", "np.sinh(np.tanh({v}))"),
    ("np.cosh", "ufunc", "np.cosh(np.tanh({v}))"),
    ("np.tan", "ufunc", "np.tan(np.tanh({v}))"),
    ("np.expm1", "ufunc", "np.expm1(np.tanh({v}))"),
    ("np.exp2", "ufunc", "np.exp2(np.tanh({v}))"),
    ("np.square", "ufunc", "np.square({v})"),
    ("np.reciprocal", "ufunc", "np.reciprocal(1.0 + {v} * {v})"),
    ("np.abs", "ufunc", "np.abs({v})"),
    ("np.sinc", "ufunc", "np.sinc({v})"),
    ("np.hypot", "ufunc", "np.hypot({v}, 0.5 + {w} * {w})"),
    ("np.arctan2", "ufunc", "np.arctan2({v}, 1.0 + {w} * {w})"),
    ("np.power", "ufunc", "np.power(0.5 + {v} * {v}, np.tanh({w}))"),
    ("np.logaddexp", "ufunc", "np.logaddexp({v}, {w})"),
    ("np.minimum", "ufunc", "np.minimum({v}, {w})"),
    ("np.clip", "ufunc", "np.clip({v}, -0.6, 0.9)"),
    ("np.where", "ufunc", "np.where({v} > 0.1, {v}, {w} * 0.5)"),
    # scipy.special and scipy.stats
    ("scipy.special.expit", "special", "scipy.special.expit({v})"),
    ("scipy.special.logit", "special", "scipy.special.logit(0.1 + 0.8 * scipy.special.expit({v}))"),
    ("scipy.special.erf", "special", "scipy.special.erf({v})"),
    ("scipy.special.erfc", "special", "scipy.special.erfc({v})"),
    ("scipy.special.erfinv", "special", "scipy.special.erfinv(np.tanh({v}) * 0.9)"),
    ("scipy.special.gammaln", "special", "scipy.special.gammaln(1.0 + {v} * {v})"),
    ("scipy.special.digamma", "special", "scipy.special.digamma(1.0 + {v} * {v})"),
    ("scipy.special.ndtr", "special", "scipy.special.ndtr({v})"),
    ("scipy.special.log_ndtr", "special", "scipy.special.log_ndtr({v})"),
    ("scipy.special.softmax", "special", "scipy.special.softmax({v})"),
    ("scipy.special.log_softmax", "special", "scipy.special.log_softmax({v})"),
    ("scipy.special.xlogy", "special", "scipy.special.xlogy({v}, 1.0 + {w} * {w})"),
    ("scipy.stats.norm.logpdf", "stats", "scipy.stats.norm.logpdf({v}, {e}, 1.0 + {e} * {e})"),
    ("scipy.stats.norm.logpdf", "stats", "scipy.stats.norm.logpdf({v})"),
    ("scipy.stats.norm.cdf", "stats", "scipy.stats.norm.cdf({v}, 0.5, 1.5)"),
    ("scipy.stats.norm.pdf", "stats", "scipy.stats.norm.pdf({v})"),
    # scans and reductions along an axis
    ("np.cumsum", "scan", "np.cumsum({v})"),
    ("np.cumprod", "scan", "np.cumprod({v})"),
    ("np.sort", "sort", "np.sort({v})"),
    ("np.max-axis", "reduction", "np.max({m}, axis=1)"),
    ("np.min-axis", "reduction", "np.min({m}, axis=0)"),
    ("np.prod-axis", "reduction", "np.prod({m}, axis=0)"),
    ("np.std-axis", "reduction", "np.std({m}, axis=1)"),
    ("np.var-axis", "reduction", "np.var({m}, axis=0)"),
    ("keepdims", "reduction", "np.mean({m}, axis=0, keepdims=True)[0]"),
    ("np.linalg.norm-axis", "reduction", "np.linalg.norm({m}, axis=1)"),
    # arrangements, indexing, padding and differences
    ("np.roll", "arrangement", "np.roll({v}, 1)"),
    ("np.roll", "arrangement", "np.roll({v}, -2)"),
    ("np.flip", "arrangement", "np.flip({v})"),
    ("np.tile", "arrangement", "np.tile({v}, 2)[1:4]"),
    ("np.repeat", "arrangement", "np.repeat({v}, 2)[::2]"),
    ("np.concatenate", "arrangement", "np.concatenate([{v}, {w}])[2:5]"),
    ("np.hstack", "arrangement", "np.hstack([{v}, {w}])[1:4]"),
    ("np.append", "arrangement", "np.append({v}, {e})[1:]"),
    ("np.pad", "padding", "np.pad({v}, 1, mode='edge')[:3]"),
    ("np.pad", "padding", "np.pad({v}, (2, 1))[1:4]"),
    ("np.pad", "padding", "np.pad({v}, 1, mode='reflect')[2:]"),
    ("np.diff", "difference", "np.concatenate([np.diff({v}), {v}[:1]])"),
    ("np.take", "indexing", "np.take({v}, [2, 0, 0])"),
    ("integer-index", "indexing", "{v}[[1, 1, 0]]"),
    ("np.take", "indexing", "np.take({m}, [0, 4, 7])"),
    ("np.take_along_axis", "indexing", "np.take_along_axis({v}, np.array([2, 1, 1]), axis=0)"),
    ("np.diag", "arrangement", "np.diag({m})"),
    ("np.diagonal", "arrangement", "np.diagonal({m})"),
    ("np.ravel", "arrangement", "np.ravel({m})[2:5]"),
    ("np.reshape", "arrangement", "np.reshape({m}, 9)[::4]"),
    ("np.atleast_2d", "arrangement", "np.atleast_2d({v})[0]"),
    ("np.stack", "arrangement", "np.stack([{v}, {w}], axis=1)[:, 1]"),
    # contractions and products
    ("np.einsum", "contraction", "np.einsum('ij,j->i', {m}, {v})"),
    ("np.einsum", "contraction", "np.einsum('ii->i', {m})"),
    ("np.einsum", "contraction", "np.einsum('ij,ij->j', {m}, {p})"),
    ("np.einsum", "contraction", "np.einsum('...j,j->...', {m}, {v})"),
    ("np.tensordot", "contraction", "np.tensordot({m}, {v}, axes=1)"),
    ("np.kron", "contraction", "np.kron({v}, {w})[::3]"),
    ("np.cross", "contraction", "np.cross({v}, {w})"),
    ("np.matmul", "contraction", "np.matmul({v}, {m})"),
    ("np.inner", "contraction", "np.inner({m}, {v})"),
    # convolution
    ("np.convolve", "signal", "np.convolve({v}, {w}, mode='same')"),
    ("np.convolve", "signal", "np.convolve({v}, {w})[1:4]"),
    ("np.correlate", "signal", "np.correlate({v}, {w}, mode='same')"),
    ("scipy.signal.convolve", "signal", "scipy.signal.convolve({v}, {w}, mode='same')"),
    # linear algebra on well-conditioned matrices
    ("np.linalg.solve", "linalg", f"np.linalg.solve({SPD}, {{w}})"),
    ("np.linalg.solve", "linalg", f"np.linalg.solve({DOMINANT}, {{v}})"),
    ("np.linalg.inv", "linalg", f"np.linalg.inv({DOMINANT}) @ {{v}}"),
    ("np.linalg.eigh", "linalg", f"np.linalg.eigh({SEPARATED})[0]"),
    ("np.linalg.eigvalsh", "linalg", f"np.linalg.eigvalsh({SEPARATED})"),
    ("np.linalg.svd", "linalg", f"np.linalg.svd({SEPARATED}, compute_uv=False)"),
    ("np.linalg.lstsq", "linalg", f"np.linalg.lstsq({DOMINANT}, {{v}}, rcond=None)[0]"),
    ("scipy.linalg.solve_triangular", "linalg",
     f"scipy.linalg.solve_triangular(np.linalg.cholesky({SPD}), {{w}}, lower=True)"),
    ("scipy.linalg.cho_solve", "linalg", f"scipy.linalg.cho_solve(scipy.linalg.cho_factor({SPD}), {{w}})"),
    # fft
    ("np.fft.fft", "fft", "np.real(np.fft.fft({v}))"),
    ("np.fft.fft", "fft", "np.abs(np.fft.fft({v}))"),
    ("np.fft.fft", "fft", "np.imag(np.fft.fft({v}, norm='ortho'))"),
    ("np.fft.ifft", "fft", "np.real(np.fft.ifft(np.fft.fft({v}) * np.fft.fft({w})))"),
    ("np.fft.rfft", "fft", "np.fft.irfft(np.fft.rfft({v}), n=3)"),
    ("np.fft.fftshift", "fft", "np.fft.fftshift({v})"),
)

MATRIX_CALLS = (
    ("np.stack", "arrangement", "np.stack([{v}, {w}, {u}])"),
    ("np.vstack", "arrangement", "np.vstack([{v}, {w}, {v}])"),
    ("np.column_stack", "arrangement", "np.column_stack([{v}, {w}, {u}])"),
    ("np.diag", "arrangement", "np.diag({v})"),
    ("np.tril", "arrangement", "np.tril({m})"),
    ("np.triu", "arrangement", "np.triu({m}, 1)"),
    ("np.rot90", "arrangement", "np.rot90({m})"),
    ("np.fliplr", "arrangement", "np.fliplr({m})"),
    ("np.flipud", "arrangement", "np.flipud({m})"),
    ("np.roll", "arrangement", "np.roll({m}, 1, axis=0)"),
    ("np.tile", "arrangement", "np.tile({v}, (3, 1))"),
    ("np.pad", "padding", "np.pad({m}, 1)[1:4, 0:3]"),
    ("np.cumsum", "scan", "np.cumsum({m}, axis=1)"),
    ("np.sort", "sort", "np.sort({m}, axis=0)"),
    ("keepdims", "reduction", "{m} * np.sum({p}, axis=1, keepdims=True)"),
    ("np.einsum", "contraction", "np.einsum('i,j->ij', {v}, {w})"),
    ("np.einsum", "contraction", "np.einsum('ij,jk->ik', {m}, {p})"),
    ("np.einsum", "contraction", "np.einsum('ij->ji', {m})"),
    ("np.tensordot", "contraction", "np.tensordot({m}, {p}, axes=1)"),
    ("np.kron", "contraction", "np.kron({v}, {w}).reshape(3, 3)"),
    ("np.linalg.inv", "linalg", f"np.linalg.inv({DOMINANT})"),
    ("np.linalg.cholesky", "linalg", f"np.linalg.cholesky({SPD})"),
    ("np.linalg.matrix_power", "linalg", f"np.linalg.matrix_power({DOMINANT}, 2)"),
    ("np.linalg.eigh", "linalg", f"np.linalg.eigh({SEPARATED})[1] ** 2"),
    ("np.linalg.pinv", "linalg", f"np.linalg.pinv({DOMINANT})"),
    ("scipy.linalg.expm", "linalg", "scipy.linalg.expm(np.tanh({m}) * 0.5)"),
    ("np.fft.fft2", "fft", "np.real(np.fft.fft2({m}))"),
)

FLOAT_CALLS = (
    ("np.prod", "reduction", "np.prod({v})"),
    ("np.max", "reduction", "np.max({v})"),
    ("np.min", "reduction", "np.min({m})"),
    ("np.std", "reduction", "np.std({v})"),
    ("np.var", "reduction", "np.var({m})"),
    ("np.median", "sort", "np.median({v})"),
    ("np.linalg.norm", "reduction", "np.linalg.norm({v})"),
    ("np.linalg.norm", "reduction", "np.linalg.norm({m})"),
    ("np.trace", "reduction", "np.trace({m}, offset=1)"),
    ("np.einsum", "contraction", "np.einsum('i,i->', {v}, {w})"),
    ("np.einsum", "contraction", "np.einsum('ij->', {m})"),
    ("np.tensordot", "contraction", "np.tensordot({m}, {p}, axes=2)"),
    # (np.vdot has no rule: refused with NoRuleError)
    ("np.inner", "contraction", "np.inner({v}, {w})"),
    ("np.linalg.det", "linalg", f"np.linalg.det({DOMINANT})"),
    ("np.linalg.det", "linalg", f"np.linalg.det({SPD})"),
    ("np.linalg.slogdet", "linalg", f"np.linalg.slogdet({SPD})[1]"),
    ("scipy.special.logsumexp", "special", "scipy.special.logsumexp({v})"),
    ("scipy.special.logsumexp", "special", "scipy.special.logsumexp({m}, axis=0)[1]"),
    ("scipy.special.gammaln", "special", "scipy.special.gammaln(1.0 + {e} * {e})"),
    ("scipy.special.expit", "special", "scipy.special.expit({e})"),
    ("scipy.special.erf", "special", "scipy.special.erf({e})"),
    ("scipy.stats.norm.logpdf", "stats", "np.sum(scipy.stats.norm.logpdf({v}, 0.5, 1.5))"),
    ("scipy.stats.norm.logpdf", "stats", "scipy.stats.norm.logpdf({e}, -0.5, 1.0 + {e} * {e})"),
    ("np.diff", "difference", "np.sum(np.diff({v}) ** 2)"),
    ("np.diff", "difference", "np.sum(np.diff({m}, axis=0) * {p}[1:])"),
    ("np.fft.rfft", "fft", "np.sum(np.abs(np.fft.rfft({v})) ** 2)"),
    ("np.convolve", "signal", "np.mean(np.convolve({v}, {w}))"),
    ("np.kron", "contraction", "np.sum(np.kron({v}, {w}) * np.tile({u}, 3))"),
)

CALLS = {VECTOR: VECTOR_CALLS, MATRIX: MATRIX_CALLS, FLOAT: FLOAT_CALLS}
FAMILIES = tuple(sorted({family for calls in CALLS.values() for _, family, _ in calls}))
CONSTRUCTS = tuple(sorted({construct for calls in CALLS.values() for construct, _, _ in calls}))

_OPERANDS = {"v": VECTOR, "w": VECTOR, "u": VECTOR, "m": MATRIX, "p": MATRIX, "e": FLOAT}


def placeholders(template: str) -> list[str]:
    """The distinct placeholders of `template`, in the order they first appear."""
    names: list[str] = []
    for _, name, _, _ in string.Formatter().parse(template):
        if name is not None and name not in names:
            names.append(name)
    return names


def fill(template: str, operand) -> str:
    """`template` with each placeholder replaced by `operand(kind)`, drawn once a placeholder."""
    return template.format(**{name: operand(_OPERANDS[name]) for name in placeholders(template)})
