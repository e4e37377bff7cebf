"""Run one autograd example as __main__, recording the gradients of its first steps.

    python _example_driver.py EXAMPLE.py OUT.pkl STEPS

Run with the shim first on PYTHONPATH (cpsgrad) or without it (real autograd). Every function
made by `autograd.grad`, `value_and_grad`, `elementwise_grad`, `grad_and_aux` or `jacobian` is
wrapped: its first STEPS results are recorded (as float64 leaves), and the next call ends the
example (`_Enough`), so no iteration count needs patching. matplotlib is a stub (plots are not
drawn) and the network is closed (an example that downloads data is reported as such).
"""

import functools
import pickle
import runpy
import sys
import traceback
import types
import urllib.request
from pathlib import Path

import numpy as np


class _Enough(BaseException):
    """The example made STEPS gradient calls: stop it (a BaseException, past `except Exception`)."""


class _NoNetwork(Exception):
    pass


class _Stub(types.ModuleType):
    """Any attribute, any call, any index: a plotting library that draws nothing."""

    def __init__(self, name="stub"):
        super().__init__(name)
        self.__path__ = []

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Stub(f"{self.__name__}.{name}")

    def __call__(self, *args, **kwargs):
        return _Stub(self.__name__ + "()")

    def __getitem__(self, key):
        return _Stub(self.__name__ + "[]")

    def __iter__(self):
        return iter([_Stub(self.__name__ + "[0]"), _Stub(self.__name__ + "[1]")])


def _leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for k in sorted(value, key=repr) for leaf in _leaves(value[k])]
    try:
        return [np.array(value, dtype=complex if np.iscomplexobj(value) else float)]
    except (TypeError, ValueError):
        return []


def main(example: str, out: str, steps: int) -> None:
    recorded: list = []
    outcome: dict = {"status": "finished"}

    def record(made):
        def wrap(function):
            @functools.wraps(function)  # keeps the shim's marks (__peer_gradient__)
            def recording(*args, **kwargs):
                if len(recorded) >= steps:
                    raise _Enough
                result = function(*args, **kwargs)
                recorded.append(_leaves(result))
                return result

            return recording

        def operator(*args, **kwargs):
            return wrap(made(*args, **kwargs))

        return operator

    for name in ("matplotlib", "matplotlib.pyplot", "matplotlib.image", "matplotlib.cm", "seaborn"):
        sys.modules[name] = _Stub(name)

    def closed(*args, **kwargs):
        raise _NoNetwork("the example downloads data: not run (the runner never downloads)")

    urllib.request.urlretrieve = closed
    urllib.request.urlopen = closed
    import autograd

    for name in ("grad", "value_and_grad", "elementwise_grad", "grad_and_aux", "jacobian", "multigrad_dict"):
        if hasattr(autograd, name):
            setattr(autograd, name, record(getattr(autograd, name)))
    path = Path(example).resolve()
    sys.path.insert(0, str(path.parent))
    sys.argv = [str(path)]
    try:
        runpy.run_path(str(path), run_name="__main__")
    except _Enough:
        outcome = {"status": "stopped"}
    except BaseException as error:  # noqa: BLE001 - reported to the runner, which classifies
        outcome = {"status": "raised", "kind": type(error).__name__, "module": type(error).__module__,
                   "message": str(error)[:500], "traceback": "".join(traceback.format_exception(error))[-6000:],
                   "cpsgrad_error": _is_cpsgrad_error(error),
                   "function_fails": getattr(error, "__peer_function_fails__", False)}
    outcome["gradients"] = recorded
    with open(out, "wb") as handle:
        pickle.dump(outcome, handle)


def _is_cpsgrad_error(error) -> bool:
    try:
        from cpsgrad.errors import CpsgradError
    except ImportError:
        return False
    return isinstance(error, CpsgradError)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
