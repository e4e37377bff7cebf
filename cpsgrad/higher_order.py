"""Second derivatives: `hvp` (a Hessian-vector product that never forms the Hessian) and `hessian`.

Each level is generated as source from the level below, so perturbations of different levels
never meet (no perturbation confusion): forward mode writes f's tangent program
(transforms/forward_mode/), a plain Python function whose second result is the directional
derivative `<grad f(x), v>`; the reverse mode then differentiates that program as it would any
user function (its helpers have rules: cpsgrad/rules/tangent_helpers.py). Its gradient in `x`
is `H v`, for one forward and one backward pass of the tangent program: reverse over forward.

`cpsgrad.show(f, mode="forward")` prints the tangent program; `cpsgrad.show` of its `run`
(`cpsgrad.transforms.forward_mode.transform(f, positions).run`) prints the reverse program of it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cpsgrad import api, runtime
from cpsgrad.errors import ArgumentError, HigherOrderError
from cpsgrad.runtime import kinds
from cpsgrad.runtime.adjoints import SequenceAdjoint
from cpsgrad.runtime.targets import is_gradient
from cpsgrad.transforms import forward_mode


def hvp(function: Callable, primals, tangents):
    """The Hessian of the scalar-valued `function` at `primals` times `tangents`: the tangent of
    `grad(function, argnums=every primal)` along `tangents` (JAX's recipe
    `jvp(grad(f), primals, tangents)[1]`), in the primals' structure: one array (or float) for
    one primal, a tuple for several. The Hessian is never formed: one tangent program run
    forward and backward, about the cost of two or three gradients."""
    if is_gradient(function):
        raise HigherOrderError("hvp takes the function itself, not its cpsgrad gradient")
    primals, tangents = _pairs("hvp", primals, tangents)
    positions = tuple(range(len(primals)))
    program = forward_mode.transform(function, positions, tuple(map(kinds.of, primals)))
    run = api._runner(program.run, positions)

    def reset(value):  # the tangent program's (out, out_t): seed the directional derivative alone
        runtime.keep_final_writes()
        out, direction = value
        if not (type(direction) is float or (isinstance(direction, (np.ndarray, np.floating)) and np.size(direction)
                                             == 1)):
            raise ArgumentError(f"hvp needs a function returning a real scalar; it returned {type(out).__name__}")
        seed = 1.0 if type(direction) is float or np.ndim(direction) == 0 else np.ones_like(direction)
        return value, SequenceAdjoint([0.0, seed])

    _, gradients = run((*primals, *tangents), {}, reset)
    return gradients[0] if len(primals) == 1 else tuple(gradients)


def hessian(function: Callable, argnums: int = 0):
    """The Hessian of the scalar-valued `function` in its argument `argnums` (a float or a float
    array of shape I): an array of shape I + I, one `hvp` per element of the argument (forward
    over reverse, by columns), the other arguments held fixed."""
    if not isinstance(argnums, int) or isinstance(argnums, bool):
        raise ArgumentError(f"hessian takes one argument position, not {argnums!r}")

    def of(*args):
        primal = args[argnums]
        if not (isinstance(primal, float) or (isinstance(primal, np.ndarray) and primal.dtype.kind == "f")):
            raise ArgumentError(f"hessian differentiates a float or a float array; argument {argnums} is a "
                                f"{type(primal).__name__}")
        shape = np.shape(primal)
        columns = []
        for element in range(int(np.prod(shape, dtype=int))):
            direction = np.zeros(shape, np.asarray(primal).dtype)
            direction.reshape(-1)[element] = 1.0
            tangent = float(direction) if isinstance(primal, float) else direction
            directions = [_zero(a) for a in args]
            directions[argnums] = tangent
            column = hvp(function, tuple(args), tuple(directions))
            column = column if len(args) == 1 else column[argnums]
            columns.append(np.asarray(column))
        return np.stack(columns, axis=-1).reshape(shape + shape) if columns else np.zeros(shape + shape)

    return of


def _zero(value):
    if isinstance(value, np.ndarray):
        return np.zeros_like(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_zero(v) for v in value)
    if isinstance(value, dict):
        return {k: _zero(v) for k, v in value.items()}
    return 0.0


def _pairs(name: str, primals, tangents) -> tuple[tuple, tuple]:
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise ArgumentError(f"{name} takes the primals and the tangents as tuples: {name}(f, (x,), (v,))")
    if len(primals) != len(tangents):
        raise ArgumentError(f"{name} got {len(primals)} primals and {len(tangents)} tangents; give one tangent each")
    from cpsgrad.forward import _as_float, _check_pair

    for position, (primal, tangent) in enumerate(zip(primals, tangents, strict=True)):
        _check_pair(position, primal, tangent)
        if isinstance(primal, (int, np.integer)) and not isinstance(primal, bool):
            raise ArgumentError(f"{name} differentiates every primal; primal {position} is an integer "
                                "(close over it instead)")
    return tuple(primals), tuple(_as_float(p, t) for p, t in zip(primals, tangents, strict=True))
