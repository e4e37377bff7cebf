"""Derivative rules for scipy.integrate: `odeint` and `solve_ivp`, by the adjoint method.

The forward is scipy's own call. The backward integrates, with the same solver, backward in
time between consecutive output times and then to the start, the augmented system

    y' = f(y, t),   a' = -a . df/dy,   p' = -a . df/dp

(the state, its adjoint, the adjoint of the differentiable leaves p of `args`), adding the
output's adjoint g at each time point (ode_adjoint.Sweep). Then y0's gradient is a at the start;
an output time's is g[i] . f(y[i], t[i]); the start's is -a . f(y0, t0) (moving the start with
y0 held shifts the whole trajectory). odeint's t[0] is both the first output time and the start,
and gets both; solve_ivp's outputs are at t_eval, its start is t_span[0] (t_span[1] gets 0).
The VJPs of the user's `func` come from its own derivative program (ode_adjoint.UserVJP). A
`func` holding values of its own (a closure over differentiable values made in the
differentiated function) is refused: pass such values in `args`.
"""
# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
from __future__ import annotations

import numpy as np
import scipy.integrate

from cpsgrad.errors import UnsupportedError
from cpsgrad.rules.registry import rule
from cpsgrad.rules.scipy.ode_adjoint import Layout, Sweep, conformed, holds_nothing
from cpsgrad.rules.scipy.ode_adjoint import augmented_tolerances as tolerances
from cpsgrad.runtime.adjoints import DictAdjoint, is_zero, item

_ODEINT = "scipy.integrate.odeint"
_SOLVE_IVP = "scipy.integrate.solve_ivp"


@rule(scipy.integrate.odeint)
def odeint(
    func,
    y0,
    t,
    args=(),
    *,
    Dfun=None,
    col_deriv=0,
    full_output=0,
    ml=None,
    mu=None,
    rtol=None,
    atol=None,
    tcrit=None,
    h0=0.0,
    hmax=0.0,
    hmin=0.0,
    ixpr=0,
    mxstep=0,
    mxhnil=0,
    mxordn=12,
    mxords=5,
    printmessg=0,
    tfirst=False,
):
    y = scipy.integrate.odeint(
        func,
        y0,
        t,
        args,
        Dfun=Dfun,
        col_deriv=col_deriv,
        full_output=full_output,
        ml=ml,
        mu=mu,
        rtol=rtol,
        atol=atol,
        tcrit=tcrit,
        h0=h0,
        hmax=hmax,
        hmin=hmin,
        ixpr=ixpr,
        mxstep=mxstep,
        mxhnil=mxhnil,
        mxordn=mxordn,
        mxords=mxords,
        printmessg=printmessg,
        tfirst=tfirst,
    )
    y_d = yield y
    func_d += differentiable_function(func, "scipy.integrate.odeint")
    back = OdeintBackward(
        y_d,
        y,
        func,
        y0,
        t,
        args,
        full_output,
        tfirst,
        solver_options(rtol, atol, tcrit, hmax, hmin, mxstep, mxordn, mxords),
    )
    args_d += back.args_adjoint()
    y0_d += back.y0_adjoint()
    t_d += back.t_adjoint()


@rule(scipy.integrate.solve_ivp)
def solve_ivp(
    fun,
    t_span,
    y0,
    method="RK45",
    t_eval=None,
    dense_output=False,
    events=None,
    vectorized=False,
    args=None,
    *,
    rtol=1e-3,
    atol=1e-6,
    first_step=None,
    max_step=None,
    min_step=None,
    jac=None,
    jac_sparsity=None,
    lband=None,
    uband=None,
):
    sol = scipy.integrate.solve_ivp(
        fun,
        t_span,
        y0,
        method,
        t_eval,
        dense_output,
        events,
        vectorized,
        args,
        rtol=rtol,
        atol=atol,
        first_step=first_step,
        max_step=max_step,
        min_step=min_step,
        jac=jac,
        jac_sparsity=jac_sparsity,
        lband=lband,
        uband=uband,
    )
    sol_d = yield sol
    fun_d += differentiable_function(fun, "scipy.integrate.solve_ivp")
    back = SolveIvpBackward(
        sol_d, sol, fun, t_span, y0, t_eval, args, (method, dense_output, events, vectorized), (rtol, atol, max_step)
    )
    args_d += back.args_adjoint()
    y0_d += back.y0_adjoint()
    t_span_d += back.t_span_adjoint()
    t_eval_d += back.t_eval_adjoint()


# ---- helpers ----------------------------------------------------------------------------------


def solver_options(rtol, atol, tcrit, hmax, hmin, mxstep, mxordn, mxords) -> dict:
    """The options of the forward call the backward's solves take too (not Dfun, the banded
    Jacobian's ml and mu, h0 or the printing flags: the augmented system is another)."""
    return {
        "rtol": rtol,
        "atol": atol,
        "tcrit": tcrit,
        "hmax": hmax,
        "hmin": hmin,
        "mxstep": mxstep,
        "mxordn": mxordn,
        "mxords": mxords,
    }


def differentiable_function(func, construct: str):
    """The adjoint of `func` where the transform takes it for differentiable: none for a function
    holding no values of its own (handed through `**options`, every argument is taken for
    differentiable); refused for a closure, a partial, a function with defaults, a bound method or
    a callable object, whose values could carry a gradient that would be lost."""
    if holds_nothing(func):
        return 0.0
    raise UnsupportedError(
        None,
        f"{construct} of {getattr(func, '__qualname__', type(func).__name__)}",
        "func may carry a differentiable value (a closure, lambda or partial made in the differentiated "
        "function over its values, a function with defaults, a method of an object), whose gradient through "
        "the solver is not computed; define func at module level and pass those values in args",
    )


class OdeintBackward:
    """odeint's backward, run on the first request: with the adjoints of `args` when those are
    asked for first (the template asks for args', then y0's, then t's: an inactive args costs
    no integration of its adjoint)."""

    def __init__(self, y_d, y, func, y0, t, args, full_output, tfirst, options):
        if full_output:
            info = item(y_d, 1)
            if not is_zero(info) and not (isinstance(info, DictAdjoint) and all(map(is_zero, info.values()))):
                raise UnsupportedError(
                    None,
                    f"{_ODEINT}(full_output=True)",
                    "the solver's infodict (step sizes, times reached, ...) is not differentiated; use only the "
                    "solution, odeint(...)[0], or call odeint without full_output",
                )
            y_d, y = item(y_d, 0), y[0]
        y = np.asarray(y)
        g = None if is_zero(y_d) else np.array(np.broadcast_to(np.asarray(y_d, dtype=np.float64), y.shape))
        times = np.asarray(t, dtype=np.float64).ravel()
        self.extra = args if isinstance(args, tuple) else (args,)
        self.sweep = Sweep(_ODEINT, func, self.extra, tfirst, y, g, times, times[0], y[0], _odeint_solve(options))
        self.y0, self.t = y0, t
        self.found = None  # Sweep.run's

    def args_adjoint(self):
        layouts = [Layout(part, _ODEINT, f"args[{j}]") for j, part in enumerate(self.extra)]
        if self.found is None:
            self.found = self.sweep.run(tuple(j for j, layout in enumerate(layouts) if layout.size))
        flat = self.found[3]
        return 0.0 if flat is None else Layout(self.extra, _ODEINT, "args").adjoint(flat)

    def y0_adjoint(self):
        if self.found is None:
            self.found = self.sweep.run(None)
        return conformed(self.y0, self.found[0], _ODEINT, "y0")

    def t_adjoint(self):
        if self.found is None:
            self.found = self.sweep.run(None)
        t_bar = self.found[1].copy()
        t_bar[0] += self.found[2]  # t[0] is the first output's time and the start
        return conformed(self.t, t_bar, _ODEINT, "t")


def _odeint_solve(options: dict):
    def integrate(dynamics, state, t_from, t_to, n):
        found = tolerances(options, n, state.size - 2 * n)
        path, info = scipy.integrate.odeint(
            dynamics, state, np.array([t_from, t_to]), tfirst=True, full_output=True, **found
        )
        if info["message"] != "Integration successful.":
            raise UnsupportedError(
                None,
                f"{_ODEINT}'s backward solve",
                f"odeint of the adjoint system from t={float(t_from)!r} to t={float(t_to)!r} failed ({info['message']}); the "
                "gradient would be wrong: raise mxstep, or check that the forward solve succeeds",
            )
        return path[1]

    return integrate


class SolveIvpBackward:
    """solve_ivp's backward (as OdeintBackward's): the gradient of what the program read of
    `sol.y` at the times `t_eval`; to y0, t_span's start, t_eval and the elements of args."""

    def __init__(self, sol_d, sol, fun, t_span, y0, t_eval, args, flags, options):
        method, dense_output, events, vectorized = flags
        for name, given in (("dense_output", dense_output), ("vectorized", vectorized)):
            if given:
                refuse_ivp(f"{name}=True", f"the gradient through solve_ivp is taken without {name}")
        if events is not None:
            refuse_ivp(
                "events",
                "the gradient through solve_ivp is taken without events (its t_events, y_events and "
                "the end they may make are not differentiated)",
            )
        adjoints = sol_d if isinstance(sol_d, DictAdjoint) else {}
        for key, adjoint in adjoints.items():
            if key != "y" and not is_zero(adjoint):
                refuse_ivp(f"its result's {key}", "only sol.y is differentiated (sol.t is t_eval as given)")
        y_d = adjoints.get("y", 0.0)
        if t_eval is None and not is_zero(y_d):
            refuse_ivp("sol.y without t_eval", "the solver's own times move with the inputs; pass t_eval")
        if not sol.success:
            refuse_ivp("a failed solve", f"the forward solve did not finish ({sol.message})")
        if np.iscomplexobj(sol.y):
            refuse_ivp("a complex state", "complex states are not differentiated yet")
        y = np.asarray(sol.y).T
        g = None if is_zero(y_d) else np.array(np.broadcast_to(np.asarray(y_d, dtype=np.float64), sol.y.shape).T)
        times = np.asarray(sol.t, dtype=np.float64) if t_eval is not None else np.zeros(0)
        start = float(t_span[0])
        self.extra = () if args is None else tuple(args)
        self.args = args
        state = np.ravel(np.asarray(y0, dtype=np.float64))
        self.sweep = Sweep(_SOLVE_IVP, fun, self.extra, True, y, g, times, start, state, _ivp_solve(method, options))
        self.y0, self.t_span, self.t_eval = y0, t_span, t_eval
        self.found = None

    def args_adjoint(self):
        layouts = [Layout(part, _SOLVE_IVP, f"args[{j}]") for j, part in enumerate(self.extra)]
        if self.found is None:
            self.found = self.sweep.run(tuple(j for j, layout in enumerate(layouts) if layout.size))
        flat = self.found[3]
        return 0.0 if flat is None else Layout(self.args, _SOLVE_IVP, "args").adjoint(flat)

    def y0_adjoint(self):
        if self.found is None:
            self.found = self.sweep.run(None)
        return conformed(self.y0, self.found[0], _SOLVE_IVP, "y0")

    def t_span_adjoint(self):
        if self.found is None:
            self.found = self.sweep.run(None)
        return conformed(self.t_span, np.array([self.found[2], 0.0]), _SOLVE_IVP, "t_span")

    def t_eval_adjoint(self):
        if self.found is None:
            self.found = self.sweep.run(None)
        return conformed(self.t_eval, self.found[1], _SOLVE_IVP, "t_eval")


def refuse_ivp(what: str, advice: str):
    raise UnsupportedError(None, f"{_SOLVE_IVP} with {what}", advice)


def _ivp_solve(method, options: tuple):
    rtol, atol, max_step = options

    def integrate(dynamics, state, t_from, t_to, n):
        found = tolerances({"rtol": rtol, "atol": atol}, n, state.size - 2 * n)
        if max_step is not None:
            found["max_step"] = max_step
        solved = scipy.integrate.solve_ivp(dynamics, (t_from, t_to), state, method=method, **found)
        if not solved.success:
            refuse_ivp("a failed backward solve", f"the adjoint system's solve did not finish ({solved.message})")
        return solved.y[:, -1]

    return integrate
