"""Data-parallel scaling: training throughput (samples per second) of 1 rank against N ranks in
the same run, for a data-parallel example (docs/examples/distributed_*.py), and the bytes each
step puts on the wire against the parameters' size times the all-reduce's factor.

    python benchmarks/distributed.py [--example docs/examples/distributed_char_rnn.py]
        [--batches 32,64,256] [--ranks 1,2] [--steps 60] [--repeats 3] [--out DIR]

For each global batch, every rank count runs `--repeats` times, interleaved (1, 2, 1, 2, ...) so
that a change in the machine's load hits both alike; the best run of each counts. Each rank has
one thread (the example sets NUMBA/OMP/OPENBLAS/MKL_NUM_THREADS=1 under mpirun). Two scalings:
strong (the same global batch split over more ranks) and weak (each rank keeping the batch one
rank had: N ranks at batch N*B against 1 rank at B), both from the table.

The wire bytes come from Open MPI's own counters (`--mca pml_monitoring_enable 1`): what every
rank sent to every other in collectives, in two runs of 2 and 12 steps, whose difference is 10
steps' all-reduces and nothing else (not the broadcast, not the first step's check); the
theoretical factor of a bandwidth-optimal all-reduce is 2 (N - 1) / N of the payload per rank.

With `--out DIR`, writes DIR/distributed.json, DIR/distributed.md (the table) and DIR/distributed.png.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,tcp",
          "--mca", "btl_tcp_if_include", "lo"]


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "PMI_"))}
    for name in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = "1"
    return env


def run_once(example: Path, ranks: int, batch: int, steps: int, extra: list[str], monitor: bool = False):
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "summary.json"
        command = [*MPIRUN, "-n", str(ranks)]
        if monitor:
            command += ["--mca", "pml_monitoring_enable", "1", "--mca", "pml_monitoring_enable_output", "2"]
        command += [sys.executable, str(example), "--steps", str(steps), "--batch", str(batch),
                    "--json", str(out), *extra]
        done = subprocess.run(command, capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=900)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        summary = json.loads(out.read_text())
    if monitor:
        summary["wire"] = _wire_bytes(done.stderr + done.stdout, ranks)
    return summary


def _wire_bytes(text: str, ranks: int) -> int:
    """Bytes every rank sent to every other in collective calls: the sum of Open MPI's monitoring
    lines `C <rank> <peer> <bytes> bytes <n> msgs sent`, one per pair that talked."""
    pairs = {}
    for line in text.splitlines():
        match = re.match(r"C\t(\d+)\t(\d+)\t(\d+) bytes", line)
        if match:
            pairs[(match.group(1), match.group(2))] = int(match.group(3))
    if len({sender for sender, _ in pairs}) != ranks:
        raise RuntimeError(f"Open MPI's monitoring reported {len(pairs)} sending pairs for {ranks} ranks:\n"
                           f"{text[-2000:]}")
    return sum(pairs.values())


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--example", default=str(ROOT / "docs" / "examples" / "distributed_char_rnn.py"))
    parser.add_argument("--batches", default="32,64,256")
    parser.add_argument("--ranks", default="1,2")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--extra", default="", help="more options for the example, space-separated")
    parser.add_argument("--out", default=None, help="where the JSON, table and PNG go (default: none written)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: batch 32, 12 steps, one repeat")
    parser.add_argument("--peers", default="all", help="accepted as every suite takes it; this suite has none "
                        "(Horovod and torch DDP are all-reduces of the same buffers over the same MPI)")
    options = parser.parse_args(argv)
    if options.quick:
        options.batches, options.steps, options.repeats = "32", 12, 1
    if shutil.which("mpirun") is None:
        print("mpirun is not installed: apt-get install openmpi-bin libopenmpi-dev", file=sys.stderr)
        return 2
    example = Path(options.example)
    batches = [int(b) for b in options.batches.split(",")]
    rank_counts = [int(r) for r in options.ranks.split(",")]
    extra = options.extra.split()
    out = Path(options.out) if options.out else None
    record = {"example": str(example.relative_to(ROOT) if example.is_relative_to(ROOT) else example),
              "cores": os.cpu_count(), "load_before": load_average(), "runs": [], "wire": []}
    best: dict[tuple[int, int], dict] = {}
    for batch in batches:
        for repeat in range(options.repeats):
            for ranks in rank_counts:
                summary = run_once(example, ranks, batch, options.steps, extra)
                summary["repeat"] = repeat
                record["runs"].append(summary)
                key = (batch, ranks)
                if key not in best or summary["samples_per_second"] > best[key]["samples_per_second"]:
                    best[key] = summary
                print(f"batch {batch:4d}, {ranks} rank(s), run {repeat + 1}: "
                      f"{summary['samples_per_second']:8.0f} samples/s", flush=True)
    for ranks in rank_counts:
        if ranks > 1:  # two monitored runs: their difference is `more` steps' traffic, nothing else
            short, more = 2, 10
            low = run_once(example, ranks, batches[0], short, extra, monitor=True)
            high = run_once(example, ranks, batches[0], short + more, extra, monitor=True)
            per_rank = (high["wire"] - low["wire"]) / more / ranks
            factor = 2 * (ranks - 1) / ranks
            record["wire"].append({"ranks": ranks, "payload_bytes": high["bytes_per_step"],
                                   "parameter_bytes": high["parameter_bytes"],
                                   "sent_per_rank_per_step": per_rank, "theoretical_factor": factor,
                                   "ratio_to_theory": per_rank / (high["parameter_bytes"] * factor),
                                   "messages_per_step": high["messages_per_step"]})
    record["load_after"] = load_average()
    record["best"] = [best[key] for key in sorted(best)]
    table = _table(record, best, batches, rank_counts)
    print(table)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "distributed.json").write_text(json.dumps(record, indent=2))
        (out / "distributed.md").write_text(table)
        _plot(best, batches, rank_counts, out / "distributed.png", record)
    return 0


def _table(record, best, batches, rank_counts) -> str:
    one = rank_counts[0]
    lines = [f"{record['example']}, {record['cores']} cores, load average {record['load_before']} before, "
             f"{record['load_after']} after; best of the repeats", "",
             "| global batch | ranks | samples/s | strong speed-up | weak speed-up | ms/step | gradients ms | "
             "reduce+update ms |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for batch in batches:
        for ranks in rank_counts:
            row = best[(batch, ranks)]
            strong = row["samples_per_second"] / best[(batch, one)]["samples_per_second"]
            base = best.get((batch // ranks, one)) if batch % ranks == 0 else None
            weak = f"{row['samples_per_second'] / base['samples_per_second']:.2f}x" if base else "-"
            lines.append(f"| {batch} | {ranks} | {row['samples_per_second']:.0f} | {strong:.2f}x | {weak} | "
                         f"{row['seconds_per_step'] * 1e3:.2f} | {row['gradients_seconds'] * 1e3:.2f} | "
                         f"{row['reduce_and_update_seconds'] * 1e3:.2f} |")
    for wire in record["wire"]:
        lines += ["", f"{wire['ranks']} ranks: {wire['messages_per_step']:.0f} all-reduce message(s) a step of "
                  f"{wire['payload_bytes']:.0f} bytes ({wire['parameter_bytes']} bytes of parameters); each rank "
                  f"sent {wire['sent_per_rank_per_step']:.0f} bytes a step (Open MPI's counters), "
                  f"{wire['ratio_to_theory']:.3f} times the parameters' size times 2(N-1)/N = "
                  f"{wire['theoretical_factor']:.2f}"]
    return "\n".join(lines) + "\n"


def _plot(best, batches, rank_counts, path: Path, record) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(6.5, 4))
    width = 0.8 / len(rank_counts)
    for i, ranks in enumerate(rank_counts):
        values = [best[(batch, ranks)]["samples_per_second"] for batch in batches]
        positions = [j + (i - (len(rank_counts) - 1) / 2) * width for j in range(len(batches))]
        axes.bar(positions, values, width, label=f"{ranks} rank(s)")
    axes.set_xticks(range(len(batches)), [str(b) for b in batches])
    axes.set_xlabel("global batch (sequences)")
    axes.set_ylabel("samples per second")
    axes.set_title(f"{Path(record['example']).stem}: data-parallel throughput, {record['cores']} cores")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)


if __name__ == "__main__":
    sys.exit(main())
