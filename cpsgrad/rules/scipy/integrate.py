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
`func` made in the differentiated function (a nested def or lambda over its values) gets the
adjoint of its environment, integrated beside args'; a partial, a bound method, a callable
object or a closure Python made is refused where it could carry a gradient.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
from __future__ import annotations

import numpy as np
import scipy.integrate

from cpsgrad.errors import UnsupportedError
from cpsgrad.rules.registry import rule
from cpsgrad.rules.scipy.ode_adjoint import Layout, Sweep, conformed, environment, holds_nothing
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
    func_d += back.func_adjoint()
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
    back = SolveIvpBackward(
        sol_d, sol, fun, t_span, y0, t_eval, args, (method, dense_output, events, vectorized), (rtol, atol, max_step)
    )
    fun_d += back.func_adjoint()
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


class Backward:
    """The backward of an ODE rule, run on its first request (`Sweep.run`). The templates ask for
    func's adjoint first, then args', then the others': the parameters' adjoints are integrated
    only where func or args is differentiable, func's environment only where func is."""

    construct = ""
    sweep: Sweep
    func: object
    extra: tuple  # the args func is called with
    args: object  # args as given (its adjoint's structure)
    found = None
    captured = None

    def run(self, parameters: bool):
        if self.found is None:
            differentiated = None
            if parameters:
                differentiated = tuple(j for j, part in enumerate(self.extra) if self._layout(part, j).size)
            self.found = self.sweep.run(differentiated, self.captured)
        return self.found

    def _layout(self, part, j):
        return Layout(part, self.construct, f"args[{j}]")

    def func_adjoint(self):
        """Where the transform takes func for differentiable: a function holding nothing gets no
        adjoint (handed through `**options`, every argument is taken for differentiable); a
        nested def or lambda of the differentiated function gets its environment's (what it
        captured, its defaults); anything else holding values is refused (ode_adjoint.environment)."""
        if holds_nothing(self.func):
            return 0.0
        assert self.found is None, "func's adjoint is asked for first"
        self.captured = environment(self.func, self.construct)
        flat = self.run(True)[3]
        used = sum(self._layout(part, j).size for j, part in enumerate(self.extra))
        return Layout(self.captured, self.construct, "func's captured values").adjoint(flat[used:])

    def args_adjoint(self):
        flat = self.run(True)[3]
        used = sum(self._layout(part, j).size for j, part in enumerate(self.extra))
        return Layout(self.args, self.construct, "args").adjoint(flat[:used])

    def y0_adjoint(self):
        return conformed(self.y0, self.run(False)[0], self.construct, "y0")


class OdeintBackward(Backward):
    """odeint's backward (`Backward`): to func's environment, args, y0 and t."""

    construct = _ODEINT

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
        self.func, self.args, self.y0, self.t = func, self.extra, y0, t

    def t_adjoint(self):
        found = self.run(False)
        t_bar = found[1].copy()
        t_bar[0] += found[2]  # t[0] is the first output's time and the start
        return conformed(self.t, t_bar, _ODEINT, "t")


def _odeint_solve(options: dict):
    """odeint of the augmented system from t_from to t_to. The forward's critical points (tcrit)
    inside the interval end pieces of it instead (lsoda takes them in the forward direction only),
    so no step crosses one."""
    options = dict(options)
    critical = np.ravel(np.asarray(options.pop("tcrit", None) if options.get("tcrit") is not None else [], float))

    def integrate(dynamics, state, t_from, t_to, n):
        found = tolerances(options, n, state.size - 2 * n)
        low, high = min(t_from, t_to), max(t_from, t_to)
        inside = sorted({float(c) for c in critical if low < c < high}, reverse=bool(t_to < t_from))
        for start, end in zip([t_from, *inside], [*inside, t_to], strict=True):
            path, info = scipy.integrate.odeint(
                dynamics, state, np.array([start, end]), tfirst=True, full_output=True, **found
            )
            if info["message"] != "Integration successful.":
                raise UnsupportedError(
                    None,
                    f"{_ODEINT}'s backward solve",
                    f"odeint of the adjoint system from t={float(start)!r} to t={float(end)!r} failed "
                    f"({info['message']}); the gradient would be wrong: raise mxstep, or check that the forward "
                    "solve succeeds",
                )
            state = path[1]
        return state

    return integrate


class SolveIvpBackward(Backward):
    """solve_ivp's backward (as OdeintBackward's): the gradient of what the program read of
    `sol.y` at the times `t_eval`; to fun's environment, args, y0, t_span's start and t_eval."""

    construct = _SOLVE_IVP

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
        self.func, self.y0, self.t_span, self.t_eval = fun, y0, t_span, t_eval

    def t_span_adjoint(self):
        return conformed(self.t_span, np.array([self.run(False)[2], 0.0]), _SOLVE_IVP, "t_span")

    def t_eval_adjoint(self):
        return conformed(self.t_eval, self.run(False)[1], _SOLVE_IVP, "t_eval")


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
