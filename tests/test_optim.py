"""cpsgrad.optim: every optimizer against its update equations written out here and against
torch.optim step by step (float64, 10 steps, 1e-12 relative); pytrees; clipping; schedules;
the refusals."""

import dataclasses
import math
from typing import NamedTuple

import numpy as np
import pytest

from cpsgrad import optim, pytree


class Layer(NamedTuple):
    weight: np.ndarray
    bias: np.ndarray


@dataclasses.dataclass
class Head:
    scale: np.ndarray
    table: np.ndarray


def make_params(rng):
    return {
        "W": rng.standard_normal((3, 4)),
        "layers": [Layer(rng.standard_normal((2, 2)), rng.standard_normal(2))],
        "pair": (rng.standard_normal(()), rng.standard_normal(5)),
        "head": Head(rng.standard_normal(3), rng.standard_normal((2, 3))),
    }


def gradients_at(params, step):
    """Gradients in the parameters' structure that depend on the parameters and the step (so
    a wrong update changes every later gradient)."""
    def at(path, leaf):
        return np.sin(leaf * (step + 1)) + 0.1 * np.cos(np.arange(leaf.size).reshape(leaf.shape))
    return {
        "W": at(None, params["W"]),
        "layers": [Layer(at(None, params["layers"][0].weight), at(None, params["layers"][0].bias))],
        "pair": (at(None, params["pair"][0]), at(None, params["pair"][1])),
        "head": Head(at(None, params["head"].scale), at(None, params["head"].table)),
    }


# ---------------------------------------------------------------- the update equations, written out

def sgd_reference(lr, momentum=0.0, nesterov=False, weight_decay=0.0, dampening=0.0):
    def step(t, p, g, s):
        g = g + weight_decay * p
        if momentum:
            s["b"] = g.copy() if t == 1 else momentum * s["b"] + (1 - dampening) * g
            g = g + momentum * s["b"] if nesterov else s["b"]
        return p - lr * g
    return step


def adagrad_reference(lr, eps=1e-8, weight_decay=0.0, lr_decay=0.0):
    def step(t, p, g, s):
        g = g + weight_decay * p
        s["sum"] = s.get("sum", 0.0) + g**2
        return p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s["sum"]) + eps)
    return step


def rmsprop_reference(lr, alpha=0.99, eps=1e-8, momentum=0.0, weight_decay=0.0, centered=False):
    def step(t, p, g, s):
        g = g + weight_decay * p
        s["v"] = alpha * s.get("v", 0.0) + (1 - alpha) * g**2
        v = s["v"]
        if centered:
            s["m"] = alpha * s.get("m", 0.0) + (1 - alpha) * g
            v = v - s["m"] ** 2
        update = g / (np.sqrt(v) + eps)
        if momentum:
            s["b"] = momentum * s.get("b", 0.0) + update
            update = s["b"]
        return p - lr * update
    return step


def adam_reference(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
                   decoupled=False):
    b1, b2 = betas

    def step(t, p, g, s):
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
        s["v"] = b2 * s.get("v", 0.0) + (1 - b2) * g**2
        v = s["v"]
        if amsgrad:
            s["vmax"] = np.maximum(s.get("vmax", 0.0), v)
            v = s["vmax"]
        m_hat = s["m"] / (1 - b1**t)
        return p - lr * m_hat / (np.sqrt(v) / math.sqrt(1 - b2**t) + eps)
    return step


# (id, ours, the equations, torch's class name and keywords)
CASES = [
    ("sgd", lambda p: optim.SGD(p, lr=0.1), sgd_reference(0.1), "SGD", {"lr": 0.1}),
    ("sgd-momentum", lambda p: optim.SGD(p, lr=0.05, momentum=0.9, weight_decay=0.01),
     sgd_reference(0.05, momentum=0.9, weight_decay=0.01),
     "SGD", {"lr": 0.05, "momentum": 0.9, "weight_decay": 0.01}),
    ("sgd-dampening", lambda p: optim.SGD(p, lr=0.05, momentum=0.8, dampening=0.3),
     sgd_reference(0.05, momentum=0.8, dampening=0.3),
     "SGD", {"lr": 0.05, "momentum": 0.8, "dampening": 0.3}),
    ("sgd-nesterov", lambda p: optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True),
     sgd_reference(0.05, momentum=0.9, nesterov=True),
     "SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True}),
    ("adagrad", lambda p: optim.Adagrad(p, lr=0.1), adagrad_reference(0.1),
     "Adagrad", {"lr": 0.1, "eps": 1e-8}),
    ("adagrad-decay", lambda p: optim.Adagrad(p, lr=0.1, weight_decay=0.1, lr_decay=0.05),
     adagrad_reference(0.1, weight_decay=0.1, lr_decay=0.05),
     "Adagrad", {"lr": 0.1, "eps": 1e-8, "weight_decay": 0.1, "lr_decay": 0.05}),
    ("rmsprop", lambda p: optim.RMSprop(p, lr=0.01), rmsprop_reference(0.01),
     "RMSprop", {"lr": 0.01}),
    ("rmsprop-centered-momentum",
     lambda p: optim.RMSprop(p, lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.1),
     rmsprop_reference(0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.1),
     "RMSprop", {"lr": 0.01, "alpha": 0.9, "momentum": 0.5, "centered": True, "weight_decay": 0.1}),
    ("adam", lambda p: optim.Adam(p, lr=0.01), adam_reference(0.01), "Adam", {"lr": 0.01}),
    ("adam-decay-amsgrad",
     lambda p: optim.Adam(p, lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True),
     adam_reference(0.01, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True),
     "Adam", {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.1, "amsgrad": True}),
    ("adamw", lambda p: optim.AdamW(p, lr=0.01, weight_decay=0.1),
     adam_reference(0.01, weight_decay=0.1, decoupled=True),
     "AdamW", {"lr": 0.01, "weight_decay": 0.1}),
]
IDS = [case[0] for case in CASES]
STEPS = 10


def relative_error(found, expected):
    return np.max(np.abs(found - expected)) / max(np.max(np.abs(expected)), 1e-300)


@pytest.mark.parametrize(("name", "ours", "equations", "torch_name", "torch_options"), CASES, ids=IDS)
def test_against_the_update_equations(name, ours, equations, torch_name, torch_options):
    params = make_params(np.random.default_rng(0))
    expected = [leaf.copy() for leaf in pytree.leaves(params)]
    states = [{} for _ in expected]
    optimizer = ours(params)
    identities = [id(leaf) for leaf in pytree.leaves(params)]
    for t in range(1, STEPS + 1):
        grads = gradients_at(params, t)
        for i, g in enumerate(pytree.leaves(grads)):
            expected[i] = equations(t, expected[i], g, states[i])
        optimizer.step(grads)
        for found, wanted in zip(pytree.leaves(params), expected, strict=True):
            assert relative_error(found, wanted) < 1e-12, (name, t)
    assert [id(leaf) for leaf in pytree.leaves(params)] == identities  # in place


@pytest.mark.parametrize(("name", "ours", "equations", "torch_name", "torch_options"), CASES, ids=IDS)
def test_against_torch_step_by_step(name, ours, equations, torch_name, torch_options):
    torch = pytest.importorskip("torch")
    params = make_params(np.random.default_rng(1))
    tensors = [torch.tensor(leaf.copy(), dtype=torch.float64, requires_grad=True)
               for leaf in pytree.leaves(params)]
    theirs = getattr(torch.optim, torch_name)(tensors, **torch_options)
    optimizer = ours(params)
    for t in range(1, STEPS + 1):
        grads = gradients_at(params, t)
        for tensor, g in zip(tensors, pytree.leaves(grads), strict=True):
            tensor.grad = torch.tensor(g, dtype=torch.float64)
        theirs.step()
        optimizer.step(grads)
        for found, tensor in zip(pytree.leaves(params), tensors, strict=True):
            assert relative_error(found, tensor.detach().numpy()) < 1e-12, (name, t)


def test_clipping_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    grads = {"a": 4 * rng.standard_normal((3, 3)), "b": [4 * rng.standard_normal(4)]}
    tensors = [torch.tensor(g.copy(), requires_grad=True) for g in pytree.leaves(grads)]
    for tensor, g in zip(tensors, pytree.leaves(grads), strict=True):
        tensor.grad = torch.tensor(g.copy())
    total = optim.clip_by_global_norm(grads, 2.0)
    expected = torch.nn.utils.clip_grad_norm_(tensors, 2.0)
    assert total == pytest.approx(float(expected), rel=1e-12)
    assert total > 2.0
    for g, tensor in zip(pytree.leaves(grads), tensors, strict=True):
        np.testing.assert_allclose(g, tensor.grad.numpy(), rtol=1e-12)
    optim.clip_by_value(grads, 0.5)
    torch.nn.utils.clip_grad_value_(tensors, 0.5)
    for g, tensor in zip(pytree.leaves(grads), tensors, strict=True):
        np.testing.assert_allclose(g, tensor.grad.numpy(), rtol=1e-12)


def test_clipping_equations():
    grads = [np.array([3.0, -4.0]), (np.array([[12.0]]),)]
    total = optim.clip_by_global_norm(grads, 6.5)
    assert total == 13.0
    np.testing.assert_allclose(grads[0], np.array([3.0, -4.0]) * 6.5 / (13.0 + 1e-6))
    small = {"g": np.array([0.1, -0.2])}
    assert optim.clip_by_global_norm(small, 1.0) == pytest.approx(math.sqrt(0.05))
    np.testing.assert_array_equal(small["g"], [0.1, -0.2])  # under the limit: untouched
    optim.clip_by_value(grads, 1.0)
    np.testing.assert_array_equal(grads[1][0], [[1.0]])
    assert grads[0].max() <= 1.0 and grads[0].min() >= -1.0


def test_schedules():
    assert [optim.constant(0.3)(t) for t in (0, 7)] == [0.3, 0.3]
    assert [optim.step_decay(1.0, 2, 0.5)(t) for t in range(5)] == [1.0, 1.0, 0.5, 0.5, 0.25]
    schedule = optim.cosine(1.0, 10, min_lr=0.1)
    assert schedule(0) == 1.0 and schedule(10) == pytest.approx(0.1) and schedule(20) == pytest.approx(0.1)
    assert schedule(5) == pytest.approx(0.55)
    warm = optim.linear_warmup(0.4, 4)
    assert [warm(t) for t in range(6)] == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.4, 0.4])


def test_a_schedule_drives_the_steps_against_torch():
    torch = pytest.importorskip("torch")
    params = [np.array([1.0, -2.0, 3.0])]
    tensor = torch.tensor(params[0].copy(), requires_grad=True)
    theirs = torch.optim.SGD([tensor], lr=0.2, momentum=0.5)
    scheduler = torch.optim.lr_scheduler.StepLR(theirs, step_size=3, gamma=0.5)
    ours = optim.SGD(params, lr=optim.step_decay(0.2, 3, 0.5), momentum=0.5)
    for t in range(8):
        g = np.cos(params[0] + t)
        tensor.grad = torch.tensor(g.copy())
        theirs.step()
        scheduler.step()
        ours.step([g])
        np.testing.assert_allclose(params[0], tensor.detach().numpy(), rtol=1e-12)


def test_state_dict_round_trip_and_zero_state():
    params = make_params(np.random.default_rng(3))
    first = optim.Adam(params, lr=0.01)
    for t in range(3):
        first.step(gradients_at(params, t))
    saved = first.state_dict()
    assert saved["steps"] == 3 and "['layers'][0].weight" in saved["state"]
    copy = {key: value for key, value in params.items()}
    second = optim.Adam(copy, lr=0.01)
    second.load_state_dict(saved)
    snapshot = [leaf.copy() for leaf in pytree.leaves(params)]
    first.step(gradients_at(params, 3))
    after_first = [leaf.copy() for leaf in pytree.leaves(params)]
    for leaf, old in zip(pytree.leaves(params), snapshot, strict=True):
        leaf[...] = old
    second.step(gradients_at(params, 3))
    for leaf, wanted in zip(pytree.leaves(params), after_first, strict=True):
        np.testing.assert_array_equal(leaf, wanted)
    second.zero_state()
    assert second.steps == 0 and all(state == {} for state in second.state)


def test_refusals_name_the_leaf():
    with pytest.raises(TypeError, match=r"params\['b'\] is a float scalar .*cannot be updated in place"):
        optim.SGD({"a": np.zeros(2), "b": 1.5}, lr=0.1)
    with pytest.raises(TypeError, match=r"params\[0\] has dtype int64"):
        optim.Adam([np.zeros(2, dtype=np.int64)])
    frozen = np.zeros(2)
    frozen.flags.writeable = False
    with pytest.raises(TypeError, match="read-only"):
        optim.Adagrad([frozen])
    with pytest.raises(TypeError, match=r"params\.bias\[0\] is a str, not a numpy array"):
        optim.SGD(Layer(np.zeros(2), ["1.0"]), lr=0.1)
    opt = optim.SGD({"a": np.zeros(2)}, lr=0.1)
    with pytest.raises(ValueError, match=r"grads has no entry \['a'\]"):
        opt.step({"b": np.zeros(2)})
    with pytest.raises(ValueError, match=r"grads\['a'\] has shape \(3,\)"):
        opt.step({"a": np.zeros(3)})
    with pytest.raises(ValueError, match=r"entries the parameters do not: \['c'\]"):
        opt.step({"a": np.zeros(2), "c": np.zeros(1)})
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD([np.zeros(1)], lr=0.1, nesterov=True)


def test_gradients_from_cpsgrad_grad_drive_a_dataclass_model():
    import cpsgrad

    params = Head(np.array([1.0, 2.0, 3.0]), np.ones((2, 3)))
    opt = optim.Adagrad(params, lr=0.5)
    losses = []
    for _ in range(20):
        loss, grads = cpsgrad.value_and_grad(_head_loss)(params)
        opt.step(grads)
        losses.append(loss)
    assert losses[-1] < 0.5 * losses[0]


def _head_loss(head):
    return np.sum((head.table @ head.scale - np.array([1.0, -1.0])) ** 2)


def test_paths():
    tree = {"W": np.zeros(1), "layers": [Layer(np.zeros(1), np.zeros(1))], "h": Head(np.zeros(1), np.zeros(1))}
    assert [pytree.path_string(p) for p, _ in pytree.leaves_with_paths(tree)] == [
        "['W']", "['layers'][0].weight", "['layers'][0].bias", "['h'].scale", "['h'].table"]
    assert optim.parameter_count(tree) == 5


def test_the_doc_page_example_runs(tmp_path):
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parent.parent / "docs" / "optim.md"
    source = "\n".join(re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.DOTALL))
    module = tmp_path / "optim_doc_example.py"
    module.write_text(source)
    namespace = {"__name__": "optim_doc_example", "__file__": str(module)}
    exec(compile(source, str(module), "exec"), namespace)
    assert namespace["value"] < namespace["first"]
