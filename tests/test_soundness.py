"""The soundness audit's own checks (docs/design.md, "Every flow accounted for"): where a
differentiable value can go that no finite-difference test would notice being dropped."""

import libcst as cst
import pytest
import scipy.linalg  # noqa: F401  (the scipy rule families load once their libraries are imported)
import scipy.signal  # noqa: F401
import scipy.special  # noqa: F401
import scipy.stats  # noqa: F401

from cpsgrad.rules.registry import TABLE

# A rule parameter whose template adds nothing to its adjoint must take only values that carry
# no derivative: integers, shapes, axes, flags, keys, dtypes, labels, or an argument the result
# depends on piecewise constantly (`np.arange`'s stop, `copysign`'s sign, `full_like`'s shape
# source). Each name here was reviewed against every rule that has it; a new rule that forgets
# an adjoint fails this test instead of silently giving zero.
WITHOUT_ADJOINT = {
    "axis", "axis1", "axis2", "axes", "source", "destination", "keepdims", "order", "dtype",
    "shape", "ord", "offset", "num", "endpoint", "stop", "indices_or_sections", "pad_width",
    "kernel_size", "stride", "padding", "key", "index", "indices", "labels", "condition",
    "start", "kind", "names", "definition", "indexer",
    "k", "shift", "reps", "repeats", "kth",  # diag/tril/triu/rot90 offsets, roll, tile, repeat, partition: ints
    "targets", "input_lengths", "target_lengths", "blank", "reduction", "zero_infinity",  # ctc_loss: labels, flags
    "operator", "in_place",  # x op= y on a subclass: the operator and the in-place function, not values
    "mode", "deg", "tol",  # np.pad's mode, np.angle's flag, np.real_if_close's threshold (real values only)
    "condlist",  # np.select's booleans
    "first", "second", "third", "fourth", "fifth", "sixth",  # item_at / transpose axes: ints
    "a",  # np.full_like(a, fill): only a's shape and dtype
    "like",  # forward mode's fitted/fresh/broadcast_like(t, like): only like's shape and dtype
    "y",  # copysign(x, y): piecewise constant in y
    "return_sign", "allow_singular",  # logsumexp's and multivariate_normal's flags
    "self",  # a frozen distribution's method: the distribution, an object (its parameters fixed)
    "where", "rewrite",  # alias_after_update/alias_after_write: the located words of a refusal (strings)
    "axisa", "axisb", "axisc", "n", "copy",  # np.cross's axes, diff's order, matrix_power's power; nan_to_num's flag
    "rcond", "hermitian", "UPLO", "full_matrices", "compute_uv",  # linalg: a rank cutoff (piecewise constant), flags
    "lower", "transposed", "trans", "unit_diagonal", "assume_a",  # scipy.linalg: which triangle / form, flags
    "overwrite_a", "overwrite_b", "check_finite", "disp", "blocksize",  # scipy.linalg's options
    "method",  # scipy.signal.convolve / correlate: direct or fft, the same result
    "matched",  # xs.remove(v): v is only compared with the elements (piecewise constant)
    "dense_output", "events", "vectorized",  # solve_ivp's flags and event functions: refused in its backward unless off
    "lapack_driver", "lwork", "pivoting", "overwrite_ab", "return_rank",  # scipy.linalg's options and flags
    "l_and_u",  # solve_banded's band widths: ints
    "cond", "atol", "rtol",  # lstsq's and pinvh's rank cutoffs: piecewise constant
    "s", "norm",  # numpy.fft's output lengths (ints) and scaling mode (a string)
}


def _rules():
    TABLE.load_deferred()
    for primitive in TABLE.primitives():
        for rule in TABLE.rules_for(primitive):
            if rule.differentiable:
                yield rule


def test_every_rule_parameter_without_an_adjoint_is_reviewed():
    unreviewed = []
    for rule in _rules():
        backward = cst.Module(body=list(rule.parts[3])).code
        for parameter in rule.differentiable_parameters:
            if f"{parameter}_d" not in backward and parameter not in WITHOUT_ADJOINT:
                unreviewed.append(f"{rule.name}({parameter})")
    assert not unreviewed, f"rule parameters that never get an adjoint: {unreviewed}"


@pytest.mark.parametrize("name", sorted(WITHOUT_ADJOINT))
def test_the_reviewed_names_are_still_used(name):
    """No stale entries: each reviewed name is a parameter of some rule that gives it nothing."""
    assert any(
        name in rule.differentiable_parameters and f"{name}_d" not in cst.Module(body=list(rule.parts[3])).code
        for rule in _rules()
    )
