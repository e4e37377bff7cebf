"""The derivatives `math` and numpy share, each written once (cpsgrad/rules/module_templates.py).

Each template is a rule written over the placeholder module `m`: cpsgrad/rules/math.py registers
it with `m` read as `math` (the scalar rule, exactly as written here), cpsgrad/rules/numpy/ufuncs.py
and binary.py with `m` read as numpy (`m.asin` is `np.arcsin`) and each accumulation made a slope
that `chain` multiplies by the output's adjoint and sums back to the input's shape. `kernel=`
names the fused kernel the numpy rule calls instead (kernels/formulas/elementwise.py holds its
compiled derivative; below its threshold it multiplies by the slope written here);
`singular_in_numpy=True` marks the functions that `math` refuses at a point where numpy returns
a value with an infinite slope (math.log(0) raises, np.log(0) is -inf), whose numpy slope then
divides with `cpsgrad_runtime.array_divide`.

`math` names a constant here (`math.pi`, `math.log(2.0)`) and `m` the module of the call. What
the two modules do differently stays in their own rule modules: math.pow and np.power,
math.hypot and np.hypot (np.hypot's slope is 0.5 at the origin), math.fmod and np.fmod.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds, over `m`:
# ruff: noqa: F821, F841
import math

import numpy as np

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.rules.module_templates import elementary
from cpsgrad.rules.operators import sign

# ---- trigonometric and hyperbolic -------------------------------------------------------------


@elementary(math.sin, np.sin, kernel="sin")
def sin(x):
    y = m.sin(x)
    y_d = yield y
    x_d += y_d * m.cos(x)


@elementary(math.cos, np.cos, kernel="cos")
def cos(x):
    y = m.cos(x)
    y_d = yield y
    x_d += -y_d * m.sin(x)


@elementary(math.tan, np.tan)
def tan(x):
    y = m.tan(x)
    y_d = yield y
    x_d += y_d * (1.0 + y * y)


@elementary(math.asin, np.arcsin)
def asin(x):
    y = m.asin(x)
    y_d = yield y
    x_d += cpsgrad_runtime.divide(y_d, m.sqrt(1.0 - x * x))


@elementary(math.acos, np.arccos)
def acos(x):
    y = m.acos(x)
    y_d = yield y
    x_d += cpsgrad_runtime.divide(-y_d, m.sqrt(1.0 - x * x))


@elementary(math.atan, np.arctan)
def atan(x):
    y = m.atan(x)
    y_d = yield y
    x_d += y_d / (1.0 + x * x)


@elementary(math.sinh, np.sinh)
def sinh(x):
    y = m.sinh(x)
    y_d = yield y
    x_d += y_d * m.cosh(x)


@elementary(math.cosh, np.cosh)
def cosh(x):
    y = m.cosh(x)
    y_d = yield y
    x_d += y_d * m.sinh(x)


@elementary(math.tanh, np.tanh, kernel="tanh")
def tanh(x):
    y = m.tanh(x)
    y_d = yield y
    x_d += y_d * (1.0 - y * y)


@elementary(math.asinh, np.arcsinh)
def asinh(x):
    y = m.asinh(x)
    y_d = yield y
    x_d += y_d / m.sqrt(x * x + 1.0)


@elementary(math.acosh, np.arccosh)
def acosh(x):
    y = m.acosh(x)
    y_d = yield y
    x_d += cpsgrad_runtime.divide(y_d, m.sqrt(x * x - 1.0))


@elementary(math.atanh, np.arctanh, singular_in_numpy=True)
def atanh(x):
    y = m.atanh(x)
    y_d = yield y
    x_d += y_d / (1.0 - x * x)


# ---- exponentials and logarithms --------------------------------------------------------------


@elementary(math.exp, np.exp)
def exp(x):
    y = m.exp(x)
    y_d = yield y
    x_d += y_d * y


@elementary(math.exp2, np.exp2)
def exp2(x):
    y = m.exp2(x)
    y_d = yield y
    x_d += y_d * y * math.log(2.0)


@elementary(math.expm1, np.expm1)
def expm1(x):
    y = m.expm1(x)
    y_d = yield y
    x_d += y_d * (y + 1.0)


@elementary(math.log, np.log, singular_in_numpy=True)
def log(x):
    y = m.log(x)
    y_d = yield y
    x_d += y_d / x


@elementary(math.log2, np.log2, singular_in_numpy=True)
def log2(x):
    y = m.log2(x)
    y_d = yield y
    x_d += y_d / math.log(2.0) / x


@elementary(math.log10, np.log10, singular_in_numpy=True)
def log10(x):
    y = m.log10(x)
    y_d = yield y
    x_d += y_d / math.log(10.0) / x


@elementary(math.log1p, np.log1p, kernel="log1p", singular_in_numpy=True)
def log1p(x):
    y = m.log1p(x)
    y_d = yield y
    x_d += y_d / (1.0 + x)


# ---- roots, angles, magnitude -----------------------------------------------------------------


@elementary(math.sqrt, np.sqrt, kernel="sqrt")
def sqrt(x):
    y = m.sqrt(x)
    y_d = yield y
    x_d += cpsgrad_runtime.divide(y_d * 0.5, y)


@elementary(math.cbrt, np.cbrt)
def cbrt(x):
    y = m.cbrt(x)
    y_d = yield y
    x_d += cpsgrad_runtime.divide(y_d, 3.0 * y * y)


@elementary(math.degrees, np.degrees, np.rad2deg)
def degrees(x):
    y = m.degrees(x)
    y_d = yield y
    x_d += y_d * (180.0 / math.pi)


@elementary(math.radians, np.radians, np.deg2rad)
def radians(x):
    y = m.radians(x)
    y_d = yield y
    x_d += y_d * (math.pi / 180.0)


@elementary(math.fabs, np.fabs)
def fabs(x):
    y = m.fabs(x)
    y_d = yield y
    x_d += y_d * sign(x)


# ---- two arguments ----------------------------------------------------------------------------


@elementary(math.atan2, np.arctan2)
def atan2(y, x):
    z = m.atan2(y, x)
    z_d = yield z
    y_d += cpsgrad_runtime.divide(z_d * x, x * x + y * y)
    x_d += cpsgrad_runtime.divide(-z_d * y, x * x + y * y)
