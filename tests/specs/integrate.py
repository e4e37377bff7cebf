"""Specs of scipy.integrate.odeint and solve_ivp (cpsgrad/rules/scipy/integrate.py): a damped
linear system with its rate in args, solved tightly (rtol = atol = 1e-12) so that finite
differences see the solution's derivative and not the solver's error; float64 only (a float32
state is solved in float64 by scipy). tests/test_rules_integrate.py has the closed forms, jax,
the other argument forms and the refusals."""

from __future__ import annotations

import numpy as np
import scipy.integrate

from tests.specs import FLOAT, S

TIMES = np.linspace(0.0, 1.0, 4)
TIGHT = 1e-12


def damped(y, t, k):
    return np.array([y[1], -k * y[0] - 0.3 * y[1]])


def damped_first(t, y, k):
    return damped(y, t, k)


SPECS = [
    S("odeint in y0 and args",
      lambda y0, k, w: np.sum(scipy.integrate.odeint(damped, y0, TIMES, (k,), rtol=TIGHT, atol=TIGHT) * w),
      [(2,), FLOAT], ((-1.0, 1.0), (0.5, 2.0)), dtypes=("float64",)),
    S("solve_ivp in y0 and args",
      lambda y0, k, w: np.sum(scipy.integrate.solve_ivp(damped_first, (0.0, 1.0), y0, t_eval=TIMES, args=(k,),
                                                        method="DOP853", rtol=TIGHT, atol=TIGHT).y * w),
      [(2,), FLOAT], ((-1.0, 1.0), (0.5, 2.0)), dtypes=("float64",)),
]


def _unused_odeint(y0, flag):
    y = scipy.integrate.odeint(damped, y0, TIMES, (1.0,))
    if flag:
        return np.sum(y)
    return np.sum(y0)


def _unused_solve_ivp(y0, flag):
    sol = scipy.integrate.solve_ivp(damped_first, (0.0, 1.0), y0, t_eval=TIMES, args=(1.0,))
    if flag:
        return np.sum(sol.y)
    return np.sum(y0)


ZERO_CASES = [
    (scipy.integrate.odeint, _unused_odeint, (np.array([0.5, -0.2]),)),
    (scipy.integrate.solve_ivp, _unused_solve_ivp, (np.array([0.5, -0.2]),)),
]
