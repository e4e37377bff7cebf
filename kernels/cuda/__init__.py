"""CUDA kernels (numba-cuda ``@cuda.jit``): the catalog of ops this device provides.

``CATALOG`` maps an op name to ``(module, index_args)`` as the CPU catalog does; the table
imports a module (and so numba.cuda) on first dispatch of a device array, so this file must
stay import-free.
"""

_UNARY = (
    "neg abs exp log log1p sqrt square sin cos tanh sigmoid relu leaky_relu hardtanh clip softplus"
)

CATALOG: dict[str, tuple[str, tuple[int, ...]]] = {
    **{op: ("elementwise", ()) for op in _UNARY.split()},
    **{op: ("binary", ()) for op in "add sub mul div pow maximum minimum".split()},
    "where": ("binary", (0,)),
    **{op: ("reductions", ()) for op in "sum mean max min logsumexp".split()},
    **{op: ("linalg", ()) for op in "matmul outer transpose".split()},
    "softmax": ("softmax", ()),
    "log_softmax": ("softmax", ()),
    "softmax_cross_entropy": ("softmax", (1,)),
    "gather": ("indexing", (1,)),
    "embedding": ("indexing", (1,)),
    **{op: ("indexing", ()) for op in "concatenate stack pad".split()},
    "conv2d": ("conv", ()),
    **{op: ("pooling", ()) for op in "max_pool2d avg_pool2d global_avg_pool2d".split()},
    "batch_norm": ("normalization", ()),
    "dropout": ("normalization", ()),
    "lstm_cell": ("recurrent", ()),
    "gru_cell": ("recurrent", ()),
}
