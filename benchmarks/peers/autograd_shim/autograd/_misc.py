"""autograd.misc: `flatten` and the optimizers (adam, sgd, rmsprop), in plain numpy.

The optimizers are autograd's (autograd/misc/optimizers.py), written over this flatten: they only
call the gradient function they are given, so with the shim's `grad` they run cpsgrad's."""

import types

import numpy as np

from autograd._shim import unsupported


def flatten(value):
    """A flat float vector of a nested tuple/list/dict of arrays and numbers, and its inverse."""
    if isinstance(value, (tuple, list)):
        parts = [flatten(v) for v in value]
        sizes = np.cumsum([0] + [len(p[0]) for p in parts])
        flat = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0)

        def unflatten(vector):
            return type(value)(p[1](vector[a:b]) for p, a, b in zip(parts, sizes[:-1], sizes[1:], strict=True))

        return flat, unflatten
    if isinstance(value, dict):
        keys = sorted(value)
        flat, unflatten_list = flatten([value[k] for k in keys])
        return flat, lambda vector: dict(zip(keys, unflatten_list(vector), strict=True))
    array = np.asarray(value, dtype=float)
    shape, scalar = array.shape, not isinstance(value, np.ndarray)
    return array.ravel(), (lambda vector: float(vector[0]) if scalar else np.reshape(vector, shape))


def unflatten_optimizer(optimize):
    def _optimize(grad, x0, callback=None, *args, **kwargs):
        _x0, unflatten = flatten(x0)
        _grad = lambda x, i: flatten(grad(unflatten(x), i))[0]
        if callback:
            _callback = lambda x, i, g: callback(unflatten(x), i, unflatten(g))
        else:
            _callback = None
        return unflatten(optimize(_grad, _x0, _callback, *args, **kwargs))

    return _optimize


@unflatten_optimizer
def sgd(grad, x, callback=None, num_iters=200, step_size=0.1, mass=0.9):
    velocity = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + step_size * velocity
    return x


@unflatten_optimizer
def rmsprop(grad, x, callback=None, num_iters=100, step_size=0.1, gamma=0.9, eps=10**-8):
    avg_sq_grad = np.ones(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        avg_sq_grad = avg_sq_grad * gamma + g**2 * (1 - gamma)
        x = x - step_size * g / (np.sqrt(avg_sq_grad) + eps)
    return x


@unflatten_optimizer
def adam(grad, x, callback=None, num_iters=100, step_size=0.001, b1=0.9, b2=0.999, eps=10**-8):
    m = np.zeros(len(x))
    v = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * (g**2) + b2 * v
        mhat = m / (1 - b1 ** (i + 1))
        vhat = v / (1 - b2 ** (i + 1))
        x = x - step_size * mhat / (np.sqrt(vhat) + eps)
    return x


optimizers = types.ModuleType("autograd.misc.optimizers")
optimizers.sgd, optimizers.rmsprop, optimizers.adam = sgd, rmsprop, adam
optimizers.unflatten_optimizer = unflatten_optimizer
flatten_module = types.ModuleType("autograd.misc.flatten")
flatten_module.flatten = flatten
const_graph = unsupported("autograd.misc.const_graph")
