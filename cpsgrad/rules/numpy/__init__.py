"""Derivative rules for the numpy API, one module a group: `ufuncs` (unary), `binary` (binary ufuncs,
`where`, `clip`), `reductions`, `products`, `shapes`, `creation`, `arrangements` (diagonals, rolls,
tiles, flips, joins), `sorting` (sort, take, choose, select), `padding` (`np.pad`), `parts` (real,
imag, conj, angle), `contractions` (einsum, tensordot, kron, cross), `signals` (convolve,
correlate, polyval, interp), `differences` (diff, gradient, cumprod), `nan_reductions`,
`masked_reductions` (the reductions' `where=` and `initial=`), `ufunc_methods` (reduce, accumulate,
outer), `ufunc_scans` (maximum/minimum.accumulate, reduceat), `linalg` and `linalg_decompositions` (numpy.linalg),
`fft` (numpy.fft).

Every gradient has its input's shape and dtype (float32 stays float32; a Python float gets a
Python float); broadcasting is undone by `cpsgrad_runtime.unbroadcast`, and every backward gives
zero for the symbolic zero adjoint `0.0`. Methods and attributes of arrays are the rules of
`np.ndarray.<name>`, called with the array first (`x.sum(axis=0)` is `np.ndarray.sum(x, axis=0)`).

Kinks follow JAX 0.10: abs'(0) = 1; a tie in `np.maximum`/`np.minimum` gives half to each side;
`np.clip` is `minimum(maximum(x, low), high)`, so a value at a bound shares the adjoint equally
with that bound; `np.max`/`np.min` split the adjoint equally among tied elements; derivatives
that are infinite where the function is finite (sqrt at 0, log at 0) are inf, not an error.
`np.power` keeps the operator `**` conventions (`power_slope`).

The transform drops `cpsgrad_runtime.unbroadcast` from rules whose arguments are all Python
numbers, so the rules that can build an array from numbers (`np.full`, `np.arange`,
`np.broadcast_to`, copies and casts) go through `array_adjoint` instead.
"""

from cpsgrad.rules.numpy import (  # noqa: F401  (registers them)
    arrangements,
    binary,
    contractions,
    creation,
    differences,
    fft,
    linalg,
    linalg_decompositions,
    masked_reductions,
    nan_reductions,
    padding,
    parts,
    products,
    reductions,
    shapes,
    signals,
    sorting,
    ufunc_methods,
    ufunc_scans,
    ufuncs,
)
