"""Training a two-layer MLP classifier with gradients from cpsgrad, parameters in a dict.

The loss is plain numpy on a minibatch (matrix products, a ReLU written `np.maximum(z, 0.0)`, a
softmax cross-entropy written with np.exp, np.log and np.max), and

    loss, grads = cpsgrad.value_and_grad(loss_fn)(params, X, y)

gives the loss and a dict with the keys of `params`. The training loop around it is ordinary
Python (cpsgrad does not see it): minibatch SGD, `params = {k: params[k] - lr * grads[k] ...}`.

The data are scikit-learn's 8x8 handwritten digits (`load_digits`, 1,797 images, 10 classes)
when scikit-learn is installed, and otherwise three interleaved spirals in the plane generated
from a fixed seed (a problem a linear classifier cannot solve); the output says which.

    python docs/examples/mlp_training.py [--steps 600] [--hidden 64] [--synthetic]
"""

import argparse
import sys
import time

import numpy as np

import cpsgrad

# ---- data ---------------------------------------------------------------------------------------


def spirals(points_per_class=200, classes=3, seed=0):
    """`classes` interleaved noisy spiral arms in the plane: X (n, 2), integer labels y (n,)."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for label in range(classes):
        radius = np.linspace(0.05, 1.0, points_per_class)
        angle = (np.linspace(0.0, 4.0, points_per_class) + label * 2 * np.pi / classes
                 + rng.normal(scale=0.2, size=points_per_class))
        X.append(np.stack([radius * np.sin(angle), radius * np.cos(angle)], axis=1))
        y.append(np.full(points_per_class, label))
    return np.concatenate(X), np.concatenate(y)


def load_data(synthetic=False, seed=0):
    """(X_train, y_train, X_test, y_test, description): digits if scikit-learn is installed (and
    `synthetic` is false), else spirals; a fixed shuffle, a fifth of the examples held out."""
    digits = None
    if not synthetic:
        try:
            from sklearn.datasets import load_digits
        except ImportError:
            pass
        else:
            digits = load_digits()
    if digits is not None:
        X, y = digits.data / 16.0, digits.target
        description = "scikit-learn digits: 1,797 8x8 images, 64 features, 10 classes"
    else:
        X, y = spirals(seed=seed)
        reason = "--synthetic" if synthetic else "scikit-learn is not installed"
        description = f"synthetic spirals ({reason}): 600 points, 2 features, 3 classes, seed {seed}"
    order = np.random.default_rng(seed).permutation(len(y))
    X, y = X[order], y[order]
    test = len(y) // 5
    return X[test:], y[test:], X[:test], y[:test], description


# ---- the model: what cpsgrad differentiates -----------------------------------------------------


def loss_fn(params, X, y):
    """Mean softmax cross-entropy of the MLP on the minibatch X (n, features), labels y (n,)."""
    hidden = np.maximum(X @ params["W1"] + params["b1"], 0.0)
    scores = hidden @ params["W2"] + params["b2"]
    top = np.max(scores, axis=1, keepdims=True)
    log_probabilities = scores - top - np.log(np.sum(np.exp(scores - top), axis=1, keepdims=True))
    return -np.mean(log_probabilities[np.arange(len(y)), y])


def predict(params, X):
    hidden = np.maximum(X @ params["W1"] + params["b1"], 0.0)
    return np.argmax(hidden @ params["W2"] + params["b2"], axis=1)


def init_params(features, hidden, classes, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "W1": rng.normal(scale=np.sqrt(2.0 / features), size=(features, hidden)),
        "b1": np.zeros(hidden),
        "W2": rng.normal(scale=np.sqrt(1.0 / hidden), size=(hidden, classes)),
        "b2": np.zeros(classes),
    }


def finite_difference_check(params, X, y, grads, entries=5, step=1e-5, seed=1):
    """Max over the parameters of the relative error (in norm) of `grads` against central
    differences of loss_fn, on `entries` random entries of each parameter."""
    rng = np.random.default_rng(seed)
    worst = 0.0
    for key, value in params.items():
        exact, numeric = [], []
        for _ in range(entries):
            index = tuple(int(rng.integers(n)) for n in value.shape)
            plus = {k: v.copy() for k, v in params.items()}
            minus = {k: v.copy() for k, v in params.items()}
            plus[key][index] += step
            minus[key][index] -= step
            numeric.append((loss_fn(plus, X, y) - loss_fn(minus, X, y)) / (2 * step))
            exact.append(grads[key][index])
        worst = max(worst, np.linalg.norm(np.subtract(exact, numeric)) / np.linalg.norm(numeric))
    return worst


# ---- training -----------------------------------------------------------------------------------


def main(steps=600, hidden=64, batch=64, lr=0.5, synthetic=False, every=50, report=print):
    """Runs the example; returns what it measured (the tests read it)."""
    X_train, y_train, X_test, y_test, description = load_data(synthetic)
    report(f"data: {description}")
    report(f"{len(y_train)} training and {len(y_test)} test examples; hidden {hidden}, "
           f"minibatches of {batch}, SGD lr {lr}, {steps} steps")
    classes = int(y_train.max()) + 1
    params = init_params(X_train.shape[1], hidden, classes)

    grads = cpsgrad.grad(loss_fn)(params, X_train[:batch], y_train[:batch])
    fd_error = finite_difference_check(params, X_train[:batch], y_train[:batch], grads)
    report(f"gradient check against central differences: max relative error {fd_error:.2e}")

    rng = np.random.default_rng(1)
    losses = [loss_fn(params, X_train, y_train)]
    report(f"step    0  training loss {losses[0]:.4f}")
    start = time.perf_counter()
    for step in range(1, steps + 1):
        rows = rng.choice(len(y_train), size=batch, replace=False)
        loss, grads = cpsgrad.value_and_grad(loss_fn)(params, X_train[rows], y_train[rows])
        params = {k: params[k] - lr * grads[k] for k in params}
        if step % every == 0 or step == steps:
            losses.append(loss_fn(params, X_train, y_train))
            report(f"step {step:4d}  training loss {losses[-1]:.4f}  (minibatch {loss:.4f})")
    seconds = time.perf_counter() - start
    train_accuracy = np.mean(predict(params, X_train) == y_train)
    test_accuracy = np.mean(predict(params, X_test) == y_test)
    report(f"{steps} steps in {seconds:.2f} s ({1e3 * seconds / steps:.2f} ms a step)")
    report(f"accuracy: training {train_accuracy:.3f}, test {test_accuracy:.3f}")
    ok = fd_error < 1e-5 and losses[-1] < losses[0]
    report("gradient check passed, loss decreased" if ok else "CHECK FAILED")
    return {"ok": ok, "fd_error": fd_error, "losses": losses, "test_accuracy": test_accuracy,
            "data": description}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--synthetic", action="store_true",
                        help="use the synthetic spirals even when scikit-learn is installed")
    arguments = parser.parse_args()
    result = main(arguments.steps, arguments.hidden, arguments.batch, arguments.lr, arguments.synthetic)
    sys.exit(0 if result["ok"] else 1)
