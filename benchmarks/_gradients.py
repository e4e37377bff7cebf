"""What the gradient suites (rnn.py, tree.py) share: checking every peer against the reference
gradient, the report and the command line. A suite describes itself with a `Suite` and calls
`main(suite)`; timing is scalar.py's (`time_all`), so every suite measures alike."""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

import numpy as np
from scalar import Result, Unavailable, cpu_model, three_figures, time_all

RELATIVE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Suite:
    """One gradient benchmark: its workload, its peers and what it aims for."""

    title: str  # first words of the report's header
    describe: Callable  # workload -> the line saying what is differentiated
    make_workload: Callable  # () -> an object with .name
    reference: Callable  # workload -> the reference gradients (checked by the suite itself)
    cpsgrad_peer: Callable  # workload -> the no-argument gradient call of cpsgrad
    peers: dict  # name -> (label, workload -> no-argument gradient call)
    distributions: dict  # peer name (without -jit/-batched) -> its distribution, for versions
    targets: tuple  # (peer, least peer time / cpsgrad time, what it means)
    parameter_names: tuple  # of the differentiated arguments, in order
    description: str  # --help


def as_numpy(value):
    """A peer's gradient (numpy, torch or JAX array) as a float64 numpy array."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float64)


def relative_error(got, expected):
    return float(np.linalg.norm(got - expected) / np.linalg.norm(expected))


def one_line(error):
    return " ".join(f"ERROR {type(error).__name__}: {error}".split())


def checked_call(suite, make_peer, workload, expected):
    """Build the peer's gradient call and run it once (also the warm-up), or explain why not."""
    try:
        call = make_peer(workload)
        got = [as_numpy(gradient) for gradient in call()]
    except Unavailable as reason:
        return None, Result(reason=f"n/a ({reason})")
    except Exception as error:
        return None, Result(reason=one_line(error), failed=True)
    if len(got) != len(expected):
        return None, Result(reason=f"WRONG {len(got)} gradients, expected {len(expected)}", failed=True)
    for name, value, wanted in zip(suite.parameter_names, got, expected, strict=True):
        if value.shape != wanted.shape:
            return None, Result(reason=f"WRONG d/d{name} has shape {value.shape}, expected {wanted.shape}", failed=True)
        error = relative_error(value, wanted)
        if not error <= RELATIVE_TOLERANCE:
            return None, Result(reason=f"WRONG d/d{name}: relative error {error:.2e}", failed=True)
    return call, Result()


def check(suite, workload, peer_names):
    """Build and check every peer's gradient call; nothing is timed yet."""
    expected = suite.reference(workload)
    makers = {"cpsgrad": suite.cpsgrad_peer} | {name: suite.peers[name][1] for name in peer_names}
    checked = {name: checked_call(suite, make_peer, workload, expected) for name, make_peer in makers.items()}
    calls = {name: call for name, (call, _) in checked.items() if call is not None}
    return calls, {name: result for name, (_, result) in checked.items()}


def ratio(result, cpsgrad):
    if result.microseconds is None or cpsgrad.microseconds is None:
        return "n/a"
    return three_figures(result.microseconds / cpsgrad.microseconds)


def table_rows(suite, workload, results):
    cpsgrad = results["cpsgrad"]
    for name, result in results.items():
        label = "cpsgrad" if name == "cpsgrad" else suite.peers[name][0]
        time = three_figures(result.microseconds) if result.microseconds is not None else result.reason
        yield f"| {workload.name} | {label} | {time} | {ratio(result, cpsgrad)} |"


def target_lines(suite, results):
    cpsgrad = results["cpsgrad"].microseconds
    for name, wanted, label in suite.targets:
        peer = results.get(name)
        if cpsgrad is None or peer is None or peer.microseconds is None:
            yield f"- {label}: not measured"
        else:
            speedup = peer.microseconds / cpsgrad
            verdict = "met" if speedup >= wanted else "NOT met"
            yield (f"- {label}: {verdict} (cpsgrad / peer time {three_figures(1 / speedup)}, "
                   f"peer / cpsgrad {three_figures(speedup)})")


def versions(suite, peer_names):
    found = []
    for name in ["cpsgrad", *peer_names]:
        distribution = suite.distributions[name.removesuffix("-jit").removesuffix("-batched")]
        try:
            found.append(f"{distribution} {importlib.metadata.version(distribution)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{distribution} not installed")
    return ", ".join(dict.fromkeys(found))


def report(suite, workload, results, peer_names, timing):
    print(f"{suite.title}, {date.today().isoformat()}; {cpu_model()}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}; Python {platform.python_version()}; "
          f"{versions(suite, peer_names)}")
    print(suite.describe(workload))
    print(f"Microseconds per gradient call, {timing}; ratio = peer time / cpsgrad time "
          "(> 1: cpsgrad is faster).\n")
    print("| workload | peer | us per gradient | peer / cpsgrad |")
    print("| --- | --- | ---: | ---: |")
    for row in table_rows(suite, workload, results):
        print(row)
    print("\nTargets:")
    for line in target_lines(suite, results):
        print(line)


def peer_list(suite):
    """--peers: none, all, or a comma-separated list of peer names."""

    def parse(text):
        if text == "none":
            return []
        if text == "all":
            return list(suite.peers)
        names = [name.strip() for name in text.split(",") if name.strip()]
        unknown = [name for name in names if name not in suite.peers]
        if unknown:
            raise argparse.ArgumentTypeError(
                f"unknown peer(s) {', '.join(unknown)}; choose from {', '.join(suite.peers)}"
            )
        return [name for name in suite.peers if name in names]

    return parse


def parse_arguments(suite, argv):
    parser = argparse.ArgumentParser(description=suite.description)
    parser.add_argument("--quick", action="store_true", help="smoke run: one short timing round")
    parser.add_argument("--peers", type=peer_list(suite), default=list(suite.peers),
                        help=f"none, all (default) or a comma list of: {', '.join(suite.peers)}")
    return parser.parse_args(argv)


def main(suite, argv=None):
    arguments = parse_arguments(suite, argv)
    repeats, seconds = (1, 0.002) if arguments.quick else (15, 0.05)
    workload = suite.make_workload()
    calls, results = check(suite, workload, arguments.peers)
    time_all(calls, results, repeats, seconds)
    timing = f"minimum over {repeats} interleaved round(s) of at least {seconds:g} s a peer"
    if arguments.quick:
        timing += " (--quick: a smoke run, not a measurement)"
    report(suite, workload, results, arguments.peers, timing)
    failed = any(result.failed for result in results.values())
    missing = results["cpsgrad"].microseconds is None
    return 1 if failed or missing else 0
