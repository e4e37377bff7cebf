"""CPU kernels (numba ``@njit`` and numpy/BLAS): the catalog of ops this device provides.

``CATALOG`` maps an op name to ``(module, index_args)``: the module under ``cpsgrad.kernels.cpu``
that defines ``<op>_forward`` and ``<op>_backward``, and the positions of integer or boolean
arguments. The table imports a module on first dispatch, so this file must stay
free of numba (the elementwise entries come from ``cpsgrad.kernels.formulas.catalog``, which
imports only ``math``).
"""

from cpsgrad.kernels.formulas.catalog import BINARY, UNARY

CATALOG: dict[str, tuple[str, tuple[int, ...]]] = {
    **{entry.name: ("elementwise", ()) for entry in UNARY},
    **{entry.name: ("binary", ()) for entry in BINARY},
    "where": ("binary", (0,)),
    **{op: ("reductions", ()) for op in "sum mean max min logsumexp".split()},
    **{op: ("linalg", ()) for op in "matmul outer transpose".split()},
    "gather": ("indexing", (1,)),
    "embedding": ("indexing", (1,)),
    **{op: ("indexing", ()) for op in "concatenate stack pad".split()},
    "softmax": ("softmax", ()),
    "log_softmax": ("softmax", ()),
    "softmax_cross_entropy": ("softmax", (1,)),
    "conv2d": ("conv", ()),
    **{op: ("pooling", ()) for op in "max_pool2d avg_pool2d global_avg_pool2d".split()},
    "batch_norm": ("normalization", ()),
    "dropout": ("normalization", ()),
    "lstm_cell": ("recurrent", ()),
    "gru_cell": ("recurrent", ()),
}
