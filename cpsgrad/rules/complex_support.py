"""Which built-in rules differentiate complex values (docs/design.md, "Complex numbers").

A rule listed here was checked on complex inputs (tests/test_complex.py runs every rule spec on
complex and mixed inputs against finite differences of the real and imaginary parts): its
backward follows JAX's convention. Every other built-in rule gets a guard in its inlined
backward, `cpsgrad_runtime.refuse_complex_operands`, that refuses the call when one of its
inputs or outputs is complex: an ordering (sort, clip; max and min select numpy's lexicographic
maximum, which they do differentiate), a real-only formula (qr, most of scipy's rules), or one
not checked yet. A new rule is refused on complex
values until it is added here with its tests. Users' own rules are never guarded.
"""

from __future__ import annotations

_ALL = "*"

#: module -> the names of its rules' templates that differentiate complex values ("*": all).
SUPPORTED: dict[str, frozenset[str] | str] = {
    "cpsgrad.rules.closures": _ALL,
    "cpsgrad.rules.subscripts": _ALL,
    "cpsgrad.rules.math": _ALL,  # math's functions raise for a complex argument
    "cpsgrad.rules.numpy.arrangements": _ALL,
    "cpsgrad.rules.numpy.contractions": _ALL,
    "cpsgrad.rules.numpy.fft": _ALL,
    "cpsgrad.rules.numpy.parts": _ALL,
    "cpsgrad.rules.numpy.products": _ALL,
    "cpsgrad.rules.numpy.shapes": _ALL,
    "cpsgrad.rules.numpy.ufuncs": _ALL,  # fabs, cbrt, degrees, radians raise for complex
    "cpsgrad.rules.containers": frozenset(
        {
            "alias_after_update",
            "alias_after_write",
            "appended",
            "checked_view",
            "concatenation",
            "construct",
            "dict_get",
            "dict_get_default",
            "dict_items",
            "dict_of",
            "dict_values",
            "enumerate_",
            "inserted",
            "inserted_at",
            "joined",
            "joined_tuple",
            "merged",
            "removed",
            "removed_value",
            "repetition",
            "reversed_list",
            "zip_",
            "view_after_write",
            "zip_three",
        }
    ),
    # not float_: float() of a numpy complex scalar keeps its real part (numpy warns), which its rule's
    # identity backward would not follow; the guard refuses it
    "cpsgrad.rules.operators": frozenset(
        {
            "abs_",
            "add",
            "as_sequence",
            "complex_",
            "complex_parts",
            "divmod_",
            "list_",
            "matmul",
            "mod",
            "mul",
            "neg",
            "pos",
            "pow_",
            "power",
            "reversed_",
            "sub",
            "sum_",
            "sum_start",
            "truediv",
            "tuple_",
        }
    ),
    "cpsgrad.rules.numpy.binary": frozenset(
        {
            "add",
            "arctan2",
            "divide",
            "fmod",
            "hypot",
            "logaddexp",
            "logaddexp2",
            "mod",
            "multiply",
            "power",
            "subtract",
            "where",
        }
    ),
    "cpsgrad.rules.numpy.creation": frozenset(
        {
            "arange",
            "array",
            "asarray",
            "astype",
            "copy",
            "float_scalar",
            "full",
            "full_like",
            "item",
            "item_at",
            "linspace",
        }
    ),
    "cpsgrad.rules.numpy.differences": frozenset({"cumprod", "diff", "nan_to_num", "polyval", "sinc"}),
    "cpsgrad.rules.numpy.linalg": frozenset(
        {"det", "inv", "matrix_norm", "matrix_power", "slogdet", "solve", "vector_norm"}
    ),
    # eigenvectors and singular vectors: a loss that depends on their phase is refused (the module's docstring)
    "cpsgrad.rules.numpy.linalg_decompositions": frozenset({"eig", "eigh", "eigvals", "eigvalsh", "svd", "svdvals"}),
    "cpsgrad.rules.numpy.nan_reductions": frozenset({"nancumprod", "nancumsum", "nanmean", "nanprod", "nansum"}),
    "cpsgrad.rules.numpy.reductions": frozenset(
        {"cumsum", "extremum", "mean", "norm", "prod", "std", "sum_", "trace", "var"}
    ),
    "cpsgrad.rules.numpy.sorting": frozenset({"choose", "select", "take", "take_along_axis"}),
    "cpsgrad.rules.scipy.linalg": frozenset({"sqrtm"}),  # holomorphic: the Sylvester equation transposed
    "cpsgrad.rules.scipy.special": frozenset({"erf", "erfc"}),  # holomorphic formulas
    "cpsgrad.rules.numpy.ufunc_methods": frozenset(
        {
            "add_accumulate",
            "add_outer",
            "add_reduce",
            "divide_outer",
            "multiply_accumulate",
            "multiply_outer",
            "multiply_reduce",
            "subtract_outer",
        }
    ),
}


def supports_complex(module: str, name: str) -> bool:
    """Whether the built-in rule `name` of `module` differentiates complex values."""
    names = SUPPORTED.get(module)
    return names is not None and (names == _ALL or name in names)
