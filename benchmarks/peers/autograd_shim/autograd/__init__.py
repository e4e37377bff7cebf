"""A stand-in `autograd` package: autograd's API mapped onto cpsgrad (see `_shim.py`).

`autograd.numpy` and `autograd.scipy.*` are the real numpy and scipy modules (aliased in
`sys.modules`), `autograd.builtins`' containers are Python's own, and the APIs with no cpsgrad
counterpart (primitive, defvjp, jacobian, hessian, forward mode, ...) import but raise
`ShimUnsupported` when used.
"""

import builtins
import sys
import types

import numpy
import scipy.integrate
import scipy.linalg
import scipy.signal
import scipy.special
import scipy.stats

from autograd import _misc
from autograd._shim import elementwise_grad, grad, unsupported, unsupported_module, value_and_grad

_scipy_misc = types.ModuleType("autograd.scipy.misc")
_scipy_misc.logsumexp = scipy.special.logsumexp

_ALIASES = {
    "autograd.numpy": numpy,
    "autograd.numpy.random": numpy.random,
    "autograd.numpy.linalg": numpy.linalg,
    "autograd.numpy.fft": numpy.fft,
    "autograd.scipy": scipy,
    "autograd.scipy.special": scipy.special,
    "autograd.scipy.stats": scipy.stats,
    "autograd.scipy.signal": scipy.signal,
    "autograd.scipy.linalg": scipy.linalg,
    "autograd.scipy.integrate": scipy.integrate,
    "autograd.scipy.misc": _scipy_misc,
}
for _name in ("norm", "multivariate_normal", "t", "beta", "gamma", "poisson", "dirichlet", "chi2"):
    _ALIASES[f"autograd.scipy.stats.{_name}"] = getattr(scipy.stats, _name)

_builtins = types.ModuleType("autograd.builtins")
_builtins.list, _builtins.tuple, _builtins.dict = builtins.list, builtins.tuple, builtins.dict
_builtins.isinstance, _builtins.type = builtins.isinstance, builtins.type
_ALIASES["autograd.builtins"] = _builtins
for _module in ("core", "extend", "tracer", "wrap_util", "util", "differential_operators", "numpy.numpy_boxes",
                "numpy.numpy_vspaces", "numpy.numpy_vjps", "numpy.numpy_wrapper", "scipy.special.gamma"):
    _ALIASES.setdefault(f"autograd.{_module}", unsupported_module(f"autograd.{_module}"))
_ALIASES["autograd.misc"] = _misc
_ALIASES["autograd.misc.optimizers"] = _misc.optimizers
_ALIASES["autograd.misc.flatten"] = _misc.flatten_module
sys.modules.update(_ALIASES)

misc = _misc
# `from autograd import list, tuple, dict, isinstance, type` and `autograd.builtins`: Python's own
list, tuple, dict = builtins.list, builtins.tuple, builtins.dict
isinstance, type = builtins.isinstance, builtins.type
globals()["builtins"] = _builtins

__all__ = ["grad", "value_and_grad", "elementwise_grad"]


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return unsupported(f"autograd.{name}")
