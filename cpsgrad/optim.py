"""Optimizers that update nested parameters in place: SGD (momentum, Nesterov), Adagrad,
RMSprop, Adam and AdamW; gradient clipping; learning-rate schedules as plain callables.

Parameters are any tree of float numpy arrays (dicts, lists, tuples, NamedTuples, dataclass
instances, nested); gradients come in the same structure, as `cpsgrad.grad` returns them.
Each update is written as `torch.optim` writes it, so a model trained here and with torch from
the same weights follows the same path (tests/test_optim.py checks it step by step).

>>> import numpy as np
>>> params = {"w": np.array([1.0, -2.0])}
>>> opt = Adagrad(params, lr=0.1)
>>> opt.step({"w": np.array([0.5, 0.5])})
>>> params["w"]
array([ 0.9, -2.1])
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from cpsgrad.pytree import leaves, leaves_like, leaves_with_paths, path_string

Schedule = Callable[[int], float]

__all__ = [
    "SGD",
    "Adagrad",
    "Adam",
    "AdamW",
    "Optimizer",
    "RMSprop",
    "clip_by_global_norm",
    "clip_by_value",
    "constant",
    "cosine",
    "linear_warmup",
    "parameter_count",
    "step_decay",
]


# ---------------------------------------------------------------- leaves

def _updatable(tree, name: str) -> list[np.ndarray]:
    """`tree`'s leaves, each a writeable float ndarray, or a TypeError naming the first that
    is not."""
    found = []
    for path, leaf in leaves_with_paths(tree):
        where = f"{name}{path_string(path)}"
        if isinstance(leaf, (float, np.floating)):
            raise TypeError(
                f"{where} is a float scalar ({type(leaf).__name__}), which cannot be updated in "
                "place: hold it as a 0-d array, np.array(value), and read it with float(...)"
            )
        if not isinstance(leaf, np.ndarray):
            raise TypeError(f"{where} is a {type(leaf).__name__}, not a numpy array: the "
                            "optimizers update float numpy arrays in place")
        if leaf.dtype.kind != "f":
            raise TypeError(f"{where} has dtype {leaf.dtype}: the optimizers update float arrays "
                            "(convert it with .astype(np.float64))")
        if not leaf.flags.writeable:
            raise TypeError(f"{where} is a read-only array: it cannot be updated in place")
        found.append(leaf)
    return found


def _gradients(params, grads, shapes) -> list[np.ndarray]:
    found = []
    for (path, _), gradient, shape in zip(leaves_with_paths(params), leaves_like(params, grads),
                                          shapes, strict=True):
        gradient = np.asarray(gradient)
        if gradient.shape != shape and gradient.ndim != 0:
            raise ValueError(f"grads{path_string(path)} has shape {gradient.shape}, the "
                             f"parameter {shape}")
        found.append(gradient)
    return found


# ---------------------------------------------------------------- optimizers

class Optimizer:
    """The part every optimizer shares: the parameters' leaves, one state dict per leaf, the
    step count and the learning rate (a float, or a schedule called with the number of steps
    taken before this one: 0 at the first)."""

    def __init__(self, params, lr: float | Schedule):
        self.params = params
        self._leaves = _updatable(params, "params")
        self._shapes = [leaf.shape for leaf in self._leaves]
        if not callable(lr) and not lr >= 0.0:
            raise ValueError(f"lr must be a nonnegative float or a schedule, not {lr!r}")
        self.lr = lr
        self.zero_state()

    def zero_state(self) -> None:
        """Forget every accumulator and the step count, as a freshly made optimizer."""
        self.steps = 0
        self.state: list[dict[str, np.ndarray]] = [{} for _ in self._leaves]

    def current_lr(self) -> float:
        """The learning rate the next step uses."""
        return float(self.lr(self.steps)) if callable(self.lr) else float(self.lr)

    def step(self, grads) -> None:
        """Update every parameter in place from `grads` (the parameters' structure)."""
        gradients = _gradients(self.params, grads, self._shapes)
        lr = self.current_lr()
        self.steps += 1
        for param, gradient, state in zip(self._leaves, gradients, self.state, strict=True):
            self._update(param, np.broadcast_to(gradient, param.shape), state, lr)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict, lr: float) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not define its update")

    def state_dict(self) -> dict:
        """The step count and copies of every accumulator, keyed by the parameter's path."""
        paths = [path_string(path) for path, _ in leaves_with_paths(self.params)]
        return {
            "steps": self.steps,
            "state": {path: {key: value.copy() for key, value in state.items()}
                      for path, state in zip(paths, self.state, strict=True)},
        }

    def load_state_dict(self, saved: dict) -> None:
        """Take back what `state_dict` gave (of an optimizer over the same structure)."""
        paths = [path_string(path) for path, _ in leaves_with_paths(self.params)]
        if set(saved["state"]) != set(paths):
            raise ValueError("the saved state is of parameters of another structure: "
                             f"{sorted(saved['state'])} against {paths}")
        self.steps = int(saved["steps"])
        self.state = [{key: np.array(value, copy=True) for key, value in saved["state"][p].items()}
                      for p in paths]


def _nonnegative(**values: float) -> None:
    for name, value in values.items():
        if not value >= 0.0:
            raise ValueError(f"{name} must be nonnegative, not {value!r}")


class SGD(Optimizer):
    """Stochastic gradient descent, with momentum and Nesterov's form as torch.optim.SGD:
    `g += weight_decay * p`; `b = g` at the first step, then `b = momentum * b + (1 - dampening)
    * g`; `g = g + momentum * b` (Nesterov) or `g = b`; `p -= lr * g`."""

    def __init__(self, params, lr: float | Schedule, momentum: float = 0.0,
                 nesterov: bool = False, weight_decay: float = 0.0, dampening: float = 0.0):
        _nonnegative(momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0.0 or dampening != 0.0):
            raise ValueError("Nesterov momentum needs momentum > 0 and dampening 0")
        super().__init__(params, lr)
        self.momentum, self.nesterov = momentum, nesterov
        self.weight_decay, self.dampening = weight_decay, dampening

    def _update(self, param, grad, state, lr):
        if self.weight_decay:
            grad = grad + self.weight_decay * param
        if self.momentum:
            if "momentum" not in state:
                state["momentum"] = np.array(grad, dtype=param.dtype, copy=True)
            else:
                buffer = state["momentum"]
                buffer *= self.momentum
                buffer += grad if self.dampening == 0.0 else (1.0 - self.dampening) * grad  # 1.0 * g is g
            buffer = state["momentum"]
            grad = grad + self.momentum * buffer if self.nesterov else buffer
        param -= lr * grad


class Adagrad(Optimizer):
    """Adagrad as torch.optim.Adagrad: `g += weight_decay * p`; `s += g * g`;
    `p -= lr / (1 + (t - 1) * lr_decay) * g / (sqrt(s) + eps)` at step t (from 1)."""

    def __init__(self, params, lr: float | Schedule = 0.1, eps: float = 1e-8,
                 weight_decay: float = 0.0, lr_decay: float = 0.0,
                 initial_accumulator_value: float = 0.0):
        _nonnegative(eps=eps, weight_decay=weight_decay, lr_decay=lr_decay,
                     initial_accumulator_value=initial_accumulator_value)
        self.eps, self.weight_decay, self.lr_decay = eps, weight_decay, lr_decay
        self.initial_accumulator_value = initial_accumulator_value
        super().__init__(params, lr)

    def _update(self, param, grad, state, lr):
        if self.weight_decay:
            grad = grad + self.weight_decay * param
        if "sum" not in state:
            state["sum"] = np.full_like(param, self.initial_accumulator_value)
        squares = state["sum"]
        squares += grad * grad
        lr = lr / (1.0 + (self.steps - 1) * self.lr_decay)
        param -= lr * grad / (np.sqrt(squares) + self.eps)


class RMSprop(Optimizer):
    """RMSprop as torch.optim.RMSprop: `g += weight_decay * p`; `v = alpha * v + (1 - alpha) *
    g * g`; the denominator `sqrt(v) + eps` (centered: `sqrt(v - m * m) + eps` with `m` the
    running mean of g); with momentum `b = momentum * b + g / denominator`, `p -= lr * b`;
    without, `p -= lr * g / denominator`."""

    def __init__(self, params, lr: float | Schedule = 0.01, alpha: float = 0.99,
                 eps: float = 1e-8, momentum: float = 0.0, weight_decay: float = 0.0,
                 centered: bool = False):
        _nonnegative(alpha=alpha, eps=eps, momentum=momentum, weight_decay=weight_decay)
        self.alpha, self.eps, self.momentum = alpha, eps, momentum
        self.weight_decay, self.centered = weight_decay, centered
        super().__init__(params, lr)

    def _update(self, param, grad, state, lr):
        if self.weight_decay:
            grad = grad + self.weight_decay * param
        if "square_avg" not in state:
            state["square_avg"] = np.zeros_like(param)
        square_avg = state["square_avg"]
        square_avg *= self.alpha
        square_avg += (1.0 - self.alpha) * grad * grad
        if self.centered:
            if "grad_avg" not in state:
                state["grad_avg"] = np.zeros_like(param)
            grad_avg = state["grad_avg"]
            grad_avg *= self.alpha
            grad_avg += (1.0 - self.alpha) * grad
            denominator = np.sqrt(square_avg - grad_avg * grad_avg) + self.eps
        else:
            denominator = np.sqrt(square_avg) + self.eps
        if self.momentum:
            if "momentum" not in state:
                state["momentum"] = np.zeros_like(param)
            buffer = state["momentum"]
            buffer *= self.momentum
            buffer += grad / denominator
            param -= lr * buffer
        else:
            param -= lr * grad / denominator


class Adam(Optimizer):
    """Adam as torch.optim.Adam: `g += weight_decay * p`; `m = b1 * m + (1 - b1) * g`;
    `v = b2 * v + (1 - b2) * g * g` (amsgrad: the running maximum of v in its place);
    `p -= lr / (1 - b1**t) * m / (sqrt(v) / sqrt(1 - b2**t) + eps)` at step t (from 1)."""

    _decoupled = False

    def __init__(self, params, lr: float | Schedule = 0.001,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False):
        beta1, beta2 = betas
        _nonnegative(beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay)
        if not (beta1 < 1.0 and beta2 < 1.0):
            raise ValueError(f"betas must be below 1, not {betas!r}")
        self.betas, self.eps, self.weight_decay, self.amsgrad = betas, eps, weight_decay, amsgrad
        super().__init__(params, lr)

    def _update(self, param, grad, state, lr):
        beta1, beta2 = self.betas
        if self.weight_decay:
            if self._decoupled:
                param *= 1.0 - lr * self.weight_decay
            else:
                grad = grad + self.weight_decay * param
        if "exp_avg" not in state:
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg *= beta1
        exp_avg += (1.0 - beta1) * grad
        exp_avg_sq *= beta2
        exp_avg_sq += (1.0 - beta2) * grad * grad
        if self.amsgrad:
            if "max_exp_avg_sq" not in state:
                state["max_exp_avg_sq"] = np.zeros_like(param)
            np.maximum(state["max_exp_avg_sq"], exp_avg_sq, out=state["max_exp_avg_sq"])
            exp_avg_sq = state["max_exp_avg_sq"]
        correction1 = 1.0 - beta1**self.steps
        correction2 = 1.0 - beta2**self.steps
        denominator = np.sqrt(exp_avg_sq) / math.sqrt(correction2) + self.eps
        param -= (lr / correction1) * exp_avg / denominator


class AdamW(Adam):
    """Adam with decoupled weight decay as torch.optim.AdamW: `p *= 1 - lr * weight_decay`
    before Adam's update, whose gradient has no decay term."""

    _decoupled = True

    def __init__(self, params, lr: float | Schedule = 0.001,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.01, amsgrad: bool = False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad)


# ---------------------------------------------------------------- clipping

def clip_by_value(grads, limit: float) -> None:
    """Clip every gradient to [-limit, limit] in place (min-char-rnn's `np.clip(d, -5, 5,
    out=d)`, torch's clip_grad_value_)."""
    _nonnegative(limit=limit)
    for gradient in _updatable(grads, "grads"):
        np.clip(gradient, -limit, limit, out=gradient)


def clip_by_global_norm(grads, max_norm: float) -> float:
    """Scale every gradient in place by `min(1, max_norm / (total + 1e-6))`, with `total` the
    2-norm of all of them together (torch's clip_grad_norm_); returns `total`."""
    _nonnegative(max_norm=max_norm)
    gradients = _updatable(grads, "grads")
    total = math.sqrt(sum(float(np.vdot(g, g).real) for g in gradients))
    scale = min(1.0, max_norm / (total + 1e-6))
    if scale < 1.0:
        for gradient in gradients:
            gradient *= scale
    return total


# ---------------------------------------------------------------- schedules
# A schedule is any callable from the number of steps taken (0 at the first) to a rate.

def constant(lr: float) -> Schedule:
    """`lr` at every step."""
    return lambda step: lr


def step_decay(lr: float, step_size: int, gamma: float = 0.1) -> Schedule:
    """`lr * gamma ** (step // step_size)` (torch's StepLR)."""
    if step_size < 1:
        raise ValueError(f"step_size must be a positive integer, not {step_size!r}")
    return lambda step: lr * gamma ** (step // step_size)


def cosine(lr: float, total_steps: int, min_lr: float = 0.0) -> Schedule:
    """From `lr` down to `min_lr` along half a cosine over `total_steps`, then `min_lr`
    (torch's CosineAnnealingLR within its first half period)."""
    if total_steps < 1:
        raise ValueError(f"total_steps must be a positive integer, not {total_steps!r}")

    def schedule(step: int) -> float:
        at = min(step, total_steps)
        return min_lr + (lr - min_lr) * (1.0 + math.cos(math.pi * at / total_steps)) / 2.0

    return schedule


def linear_warmup(schedule: float | Schedule, warmup_steps: int) -> Schedule:
    """`schedule` (a rate or a schedule) scaled by `(step + 1) / warmup_steps` during the first
    `warmup_steps` steps."""
    if warmup_steps < 1:
        raise ValueError(f"warmup_steps must be a positive integer, not {warmup_steps!r}")
    after = schedule if callable(schedule) else constant(schedule)
    return lambda step: after(step) * min(1.0, (step + 1) / warmup_steps)


def parameter_count(params) -> int:
    """How many numbers `params` holds."""
    return sum(int(np.size(leaf)) for leaf in leaves(params))
