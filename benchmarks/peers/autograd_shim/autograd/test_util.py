"""autograd.test_util on cpsgrad: check_grads runs the reverse-mode first-order check (`_shim`)."""

from itertools import product

from autograd._shim import TOL, check_grads, unsupported

RTOL = 1e-6
check_equivalent = unsupported("autograd.test_util.check_equivalent")
check_vjp = unsupported("autograd.test_util.check_vjp")
check_jvp = unsupported("autograd.test_util.check_jvp")


def scalar_close(a, b):
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL


def combo_check(fun, *args, **kwargs):
    # as autograd's: every combination of the arguments and keyword values given
    _check_grads = lambda f: check_grads(f, *args, **kwargs)

    def _combo_check(*args, **kwargs):
        kwarg_key_vals = [[(k, x) for x in xs] for k, xs in kwargs.items()]
        for _args in product(*args):
            for _kwargs in product(*kwarg_key_vals):
                _check_grads(fun)(*_args, **dict(_kwargs))

    return _combo_check
