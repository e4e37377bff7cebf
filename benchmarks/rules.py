"""numpy and scipy rules: cpsgrad's gradient of one call against HIPS autograd's, family by family.

Issue 16's target: "rules at least as fast as autograd's on the same call (a benchmark over the
new rule families, ratios from one run)". Each case is one small loss written once, with its
modules as globals (`np`, `special`, `stats`), so that each peer runs the same source with them
rebound (`scalar.rebind`): numpy / scipy for cpsgrad, `autograd.numpy` / `autograd.scipy` for
autograd, `jax.numpy` / `jax.scipy` for JAX without jit (`--peers all`).

Method:
1. cpsgrad's gradient is checked against central finite differences of the plain function along
   a random direction (step 1e-6, rtol 1e-6); it is the reference.
2. Every peer's gradient is computed once (the warm-up) and compared with cpsgrad's: the
   relative error in norm at most 1e-8 (of the symmetric parts for a function of a symmetric
   matrix that reads one triangle, `cholesky` and `eigh`: the peers symmetrise). A peer without
   the function (autograd has no rule for some of them) or one that disagrees is reported and
   not timed.
3. The timing is scalar.py's: interleaved rounds, the minimum time per gradient call; ratio =
   peer time / cpsgrad time (> 1: cpsgrad is faster). `--quick` is one short round.

    python benchmarks/rules.py [--quick] [--peers none|all|autograd,jax] [--only solve,fft]
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # one thread each, as every peer is measured (DESIGN.md section 7)

import argparse  # noqa: E402
import importlib.metadata  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from datetime import date  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.special  # noqa: E402
import scipy.stats  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scalar  # noqa: E402  (the timing helpers: time_all, three_figures, rebind, cpu_model)

import cpsgrad  # noqa: E402

# ---- the cases: one loss each, over the modules named np / special / stats -----------------------

special = scipy.special  # the cases' own bindings (numpy's and scipy's); each peer rebinds them
stats = scipy.stats


def solve(a, b):
    return np.sum(np.linalg.solve(a, b) ** 2)


def inv(a):
    return np.sum(np.linalg.inv(a) * np.arange(a.shape[0]))


def slogdet(a):
    return np.linalg.slogdet(a)[1]


def det(a):
    return np.linalg.det(a)


def cholesky(a):
    return np.sum(np.linalg.cholesky(a) * np.arange(a.shape[0]))


def eigh_values(a):
    return np.sum(np.linalg.eigh(a)[0] ** 3)


def norm_fro(a):
    return np.linalg.norm(a)


def fft_power(x):
    return np.sum(np.abs(np.fft.fft(x)) ** 2 * np.arange(x.shape[0]))


def rfft_power(x):
    return np.sum(np.abs(np.fft.rfft(x)) ** 2)


def einsum_chain(a, b):
    return np.sum(np.einsum("ij,jk->ik", a, b) ** 2)


def tensordot_pair(a, b):
    return np.sum(np.tensordot(a, b, axes=1) ** 2)


def kron_pair(a, b):
    return np.sum(np.kron(a, b) ** 2)


def logsumexp(x):
    return special.logsumexp(x)


def gammaln(x):
    return np.sum(special.gammaln(x))


def digamma(x):
    return np.sum(special.digamma(x))


def erf(x):
    return np.sum(special.erf(x) * x)


def norm_logpdf(x, mu, sigma):
    return np.sum(stats.norm.logpdf(x, mu, sigma))


def mvn_logpdf(x, mean, cov):
    return np.sum(stats.multivariate_normal.logpdf(x, mean, cov))


def sort_weighted(x):
    return np.sum(np.sort(x) * np.arange(x.shape[0]))


def cumprod(x):
    return np.sum(np.cumprod(x))


def roll_repeat(x):
    return np.sum(np.roll(np.repeat(x, 3), 2) * np.arange(3 * x.shape[0]))


def diag_trace(a):
    return np.trace(a @ a) + np.sum(np.diag(a) ** 2)


def tile_flip(x):
    return np.sum(np.flip(np.tile(x, 2)) * np.arange(2 * x.shape[0]))


def pad_reflect(x):
    return np.sum(np.pad(x, 3, mode="reflect") ** 2)


@dataclass
class Case:
    family: str
    function: object
    arguments: tuple  # numpy inputs; the gradient is with respect to the first
    # a function of a symmetric matrix that reads one triangle (numpy's cholesky and eigh read the
    # lower): cpsgrad's gradient is the function's own, autograd's and JAX's a symmetrised one; they
    # are compared on symmetric directions, by their symmetric parts
    symmetric: bool = False


def _spd(rng, n):
    m = rng.standard_normal((n, n))
    return m @ m.T / n + np.eye(n)


def cases() -> list[Case]:
    rng = np.random.default_rng(0)
    n = 30
    a = _spd(rng, n)
    x = rng.standard_normal(256)
    positive = rng.uniform(0.5, 3.0, 256)
    points = rng.standard_normal((20, 5))
    return [
        Case("linalg", solve, (a, rng.standard_normal(n))),
        Case("linalg", inv, (a,)),
        Case("linalg", slogdet, (a,)),
        Case("linalg", det, (_spd(rng, 8),)),
        Case("linalg", cholesky, (a,), symmetric=True),
        Case("linalg", eigh_values, (a,), symmetric=True),
        Case("linalg", norm_fro, (rng.standard_normal((n, n)),)),
        Case("fft", fft_power, (x,)),
        Case("fft", rfft_power, (x,)),
        Case("products", einsum_chain, (rng.standard_normal((n, n)), rng.standard_normal((n, n)))),
        Case("products", tensordot_pair, (rng.standard_normal((n, n)), rng.standard_normal((n, n)))),
        Case("products", kron_pair, (rng.standard_normal((6, 6)), rng.standard_normal((5, 5)))),
        Case("special", logsumexp, (x,)),
        Case("special", gammaln, (positive,)),
        Case("special", digamma, (positive,)),
        Case("special", erf, (x,)),
        Case("stats", norm_logpdf, (x, 0.3, 1.7)),
        Case("stats", mvn_logpdf, (points, np.zeros(5), _spd(rng, 5))),
        Case("sorting", sort_weighted, (x,)),
        Case("scans", cumprod, (rng.uniform(0.9, 1.1, 64),)),
        Case("shapes", roll_repeat, (x,)),
        Case("shapes", diag_trace, (rng.standard_normal((n, n)),)),
        Case("shapes", tile_flip, (x,)),
        Case("padding", pad_reflect, (x,)),
    ]


# ---- the peers -----------------------------------------------------------------------------------


def _numpy_modules():
    return {"np": np, "special": scipy.special, "stats": scipy.stats}


def cpsgrad_peer(case):
    gradient = cpsgrad.grad(scalar.rebind(case.function, **_numpy_modules()))
    return lambda: gradient(*case.arguments)


def autograd_peer(case):
    autograd = scalar.import_peer("autograd")
    modules = {
        "np": importlib.import_module("autograd.numpy"),
        "special": importlib.import_module("autograd.scipy.special"),
        "stats": importlib.import_module("autograd.scipy.stats"),
    }
    gradient = autograd.grad(scalar.rebind(case.function, **modules))
    return lambda: gradient(*case.arguments)


def jax_peer(case):
    jax, jnp = scalar.import_jax()
    modules = {
        "np": importlib.import_module("jax.numpy"),
        "special": importlib.import_module("jax.scipy.special"),
        "stats": importlib.import_module("jax.scipy.stats"),
    }
    gradient = jax.grad(scalar.rebind(case.function, **modules))
    arguments = tuple(jnp.asarray(argument) for argument in case.arguments)
    return lambda: gradient(*arguments).block_until_ready()


PEERS = {"autograd": ("HIPS autograd", autograd_peer), "jax": ("jax.grad (no jit)", jax_peer)}
DISTRIBUTIONS = {"cpsgrad": "cpsgrad", "autograd": "autograd", "jax": "jax"}


@dataclass
class Result:
    microseconds: float | None = None
    reason: str = ""
    failed: bool = False


def finite_difference_check(case, gradient) -> str | None:
    """None when `gradient` matches central differences of the plain function along a random
    direction, else what differs."""
    plain = scalar.rebind(case.function, **_numpy_modules())
    rng = np.random.default_rng(1)
    first, rest = case.arguments[0], case.arguments[1:]
    direction = rng.standard_normal(np.shape(first))
    step = 1e-6
    numeric = (plain(first + step * direction, *rest) - plain(first - step * direction, *rest)) / (2 * step)
    analytic = float(np.sum(np.asarray(gradient) * direction))
    if not np.isclose(analytic, numeric, rtol=1e-6, atol=1e-8):
        return f"directional derivative {analytic!r}, finite differences {numeric!r}"
    return None


def check(case, peer_names):
    results = {"cpsgrad": Result()}
    calls = {}
    try:
        call = cpsgrad_peer(case)
        expected = np.asarray(call())
    except Exception as error:  # a benchmark reports, it does not stop at the first case
        results["cpsgrad"] = Result(reason=f"error: {type(error).__name__}", failed=True)
        return calls, results
    mismatch = finite_difference_check(case, expected)
    if mismatch:
        results["cpsgrad"] = Result(reason="WRONG vs finite differences", failed=True)
        print(f"{case.function.__name__}: cpsgrad {mismatch}", file=sys.stderr)
        return calls, results
    calls["cpsgrad"] = call
    for name in peer_names:
        try:
            peer_call = PEERS[name][1](case)
            got = np.asarray(peer_call())
        except scalar.Unavailable as error:
            results[name] = Result(reason=str(error))
            continue
        except Exception as error:  # no rule in the peer: reported, not timed
            results[name] = Result(reason=f"refused ({type(error).__name__})")
            continue
        mine = expected
        if case.symmetric:
            got, mine = (got + got.T) / 2, (expected + expected.T) / 2
        error = np.linalg.norm(got - mine) / max(np.linalg.norm(mine), 1e-300)
        if error > 1e-8:
            results[name] = Result(reason=f"differs (rel. error {error:.1e})")
            continue
        results[name] = Result()
        calls[name] = peer_call
    return calls, results


# ---- report and command line ---------------------------------------------------------------------


def versions(peer_names):
    found = []
    for name in ["cpsgrad", *peer_names]:
        try:
            found.append(f"{DISTRIBUTIONS[name]} {importlib.metadata.version(DISTRIBUTIONS[name])}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{DISTRIBUTIONS[name]} not installed")
    return ", ".join(found)


def report(checked, peer_names, timing):
    print(
        f"numpy/scipy rules, {date.today().isoformat()}; {scalar.cpu_model()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}; Python {platform.python_version()}; {versions(peer_names)}"
    )
    print(f"Microseconds per gradient call, {timing}; ratio = peer time / cpsgrad time (> 1: cpsgrad is faster).\n")
    header = " | ".join(f"{PEERS[name][0]} us | ratio" for name in peer_names)
    print(f"| family | case | cpsgrad us | {header} |" if header else "| family | case | cpsgrad us |")
    print("| --- | --- | ---: |" + " ---: | ---: |" * len(peer_names))
    slower = []
    for case, results in checked:
        mine = results["cpsgrad"]
        cells = [scalar.three_figures(mine.microseconds) if mine.microseconds else mine.reason]
        for name in peer_names:
            peer = results[name]
            if peer.microseconds is None or mine.microseconds is None:
                cells += [peer.reason or "n/a", "n/a"]
                continue
            speedup = peer.microseconds / mine.microseconds
            cells += [scalar.three_figures(peer.microseconds), scalar.three_figures(speedup)]
            if name == "autograd" and speedup < 1:
                slower.append(f"{case.function.__name__} ({scalar.three_figures(speedup)}x)")
        print(f"| {case.family} | {case.function.__name__} | " + " | ".join(cells) + " |")
    if "autograd" in peer_names:
        verdict = "met" if not slower else "NOT met: slower on " + ", ".join(slower)
        print(f"\nTarget, cpsgrad at least as fast as autograd on every case autograd runs: {verdict}")


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: one short timing round")
    parser.add_argument("--peers", default="autograd", help="none, all, or a comma list of: autograd, jax")
    parser.add_argument("--only", default="", help="a comma list of case names (default: every case)")
    arguments = parser.parse_args(argv)
    names = {"none": [], "all": list(PEERS)}.get(arguments.peers)
    if names is None:
        names = [name.strip() for name in arguments.peers.split(",") if name.strip()]
        unknown = [name for name in names if name not in PEERS]
        if unknown:
            parser.error(f"unknown peer(s) {', '.join(unknown)}; choose from {', '.join(PEERS)}")
    arguments.peers = names
    return arguments


def main(argv=None):
    arguments = parse_arguments(argv)
    wanted = {name.strip() for name in arguments.only.split(",") if name.strip()}
    selected = [case for case in cases() if not wanted or case.function.__name__ in wanted]
    repeats, seconds = (1, 0.002) if arguments.quick else (7, 0.05)
    checked = []
    for case in selected:
        calls, results = check(case, arguments.peers)
        scalar.time_all(calls, results, repeats, seconds)
        checked.append((case, results))
    timing = f"minimum over {repeats} interleaved round(s) of at least {seconds:g} s a peer"
    if arguments.quick:
        timing += " (--quick: a smoke run, not a measurement)"
    report(checked, arguments.peers, timing)
    return 1 if any(results["cpsgrad"].failed for _, results in checked) else 0


if __name__ == "__main__":
    sys.exit(main())
