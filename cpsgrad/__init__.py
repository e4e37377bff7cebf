"""cpsgrad: gradients of ordinary Python functions by a continuation-passing-style source transform.

>>> import cpsgrad
>>> cpsgrad.grad(f)(x)            # doctest: +SKIP
"""

from cpsgrad import nn, optim
from cpsgrad import rules as _rules  # noqa: F401  (registers the built-in rule table)
from cpsgrad.api import grad, show, value_and_grad
from cpsgrad.errors import (
    ArgumentError,
    CpsgradError,
    DepthLimitError,
    HigherOrderError,
    NonFiniteError,
    NonScalarOutputError,
    NoRuleError,
    SourceError,
    UnsupportedError,
)
from cpsgrad.forward import jacfwd, jvp
from cpsgrad.higher_order import hessian, hvp
from cpsgrad.kernels import cuda_available
from cpsgrad.kernels.device_array import DeviceArray, to_device, to_host
from cpsgrad.rules.registry import not_differentiable, rule
from cpsgrad.runtime.effects import observer
from cpsgrad.vjp import jacrev, vjp

__version__ = "0.1.0"

__all__ = [
    "ArgumentError",
    "DeviceArray",
    "CpsgradError",
    "HigherOrderError",
    "DepthLimitError",
    "NoRuleError",
    "NonFiniteError",
    "NonScalarOutputError",
    "SourceError",
    "UnsupportedError",
    "cuda_available",
    "grad",
    "hessian",
    "hvp",
    "jacfwd",
    "jacrev",
    "jvp",
    "nn",
    "not_differentiable",
    "observer",
    "optim",
    "rule",
    "show",
    "to_device",
    "to_host",
    "value_and_grad",
    "vjp",
]


def __getattr__(name):
    # cpsgrad.distributed (MPI data parallelism) is imported when first used, never by `import cpsgrad`
    if name == "distributed":
        import importlib

        return importlib.import_module("cpsgrad.distributed")
    raise AttributeError(f"module 'cpsgrad' has no attribute {name!r}")
