"""What ``--properties`` and ``--alerts`` cost ``glocalkd screen``, with and without ``--top``.

Runs ``glocalkd screen`` on one library with each set of options in turn, round after round
(alternated, so that other work on a shared machine falls on every variant alike), each in its own
process under ``/usr/bin/time -v``, and prints and writes (``benchmarks/out/properties_bench.json``)
the CPU seconds (user + sys of the command and its parsing workers) and the wall seconds of each run.

    python -m benchmarks.properties_bench MODEL LIBRARY [--rounds 2] [--top 1000] [--threads 1]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

VARIANTS = {
    "plain": [],
    "top": ["--top", "{top}"],
    "properties": ["--properties"],
    "properties-top": ["--properties", "--top", "{top}"],
    "alerts": ["--alerts"],
    "alerts-top": ["--alerts", "--top", "{top}"],
}


def _wall(text: str) -> float:
    """Seconds from ``/usr/bin/time -v``'s ``h:mm:ss`` or ``m:ss.ss``."""
    parts = [float(p) for p in text.split(":")]
    return sum(p * 60 ** k for k, p in enumerate(reversed(parts)))


def run_once(model: str, library: str, options: list[str], threads: int, report: Path) -> dict:
    """One ``glocalkd screen`` run.

    Args:
        model: the model file.
        library: the SMILES library.
        options: the options after the usual ones.
        threads: torch's threads (``--threads``).
        report: the report to write.

    Returns:
        ``user``, ``sys``, ``cpu`` (their sum) and ``wall`` seconds, and ``max_rss_mb`` (the largest process).
    """
    command = ["/usr/bin/time", "-v", sys.executable, "-m", "core", "screen", model, library, "-o", str(report),
               "--threads", str(threads), *options]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    stats = dict(line.strip().rsplit(": ", 1) for line in done.stderr.splitlines() if ": " in line)
    user, system = float(stats["User time (seconds)"]), float(stats["System time (seconds)"])
    return {"user": user, "sys": system, "cpu": round(user + system, 2),
            "wall": round(_wall(stats["Elapsed (wall clock) time (h:mm:ss or m:ss)"]), 2),
            "max_rss_mb": round(int(stats["Maximum resident set size (kbytes)"]) / 1024, 1)}


def main(argv: list[str] | None = None) -> None:
    """Run every variant ``--rounds`` times, alternated, and report each run.

    Args:
        argv: the command line (None: ``sys.argv``).
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("library")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--top", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated, from: " + ", ".join(VARIANTS))
    args = parser.parse_args(argv)
    out = Path("benchmarks/out")
    out.mkdir(parents=True, exist_ok=True)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(1, args.rounds + 1):
            for name in args.variants.split(","):
                options = [o.format(top=args.top) for o in VARIANTS[name]]
                run = {"variant": name, "round": round_,
                       **run_once(args.model, args.library, options, args.threads, Path(tmp) / f"{name}.csv")}
                runs.append(run)
                print(json.dumps(run), flush=True)
                (out / "properties_bench.json").write_text(json.dumps(runs, indent=1) + "\n")


if __name__ == "__main__":
    main()
