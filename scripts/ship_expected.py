"""Write a finished run's expected outputs, which ``benchcast verify`` checks an evaluator's run against.

    python scripts/ship_expected.py results --name tour --configfile config/config.yaml
    python scripts/ship_expected.py results --name all_papers --configfile config/all_papers.yaml --copies csv

Into ``resources/expected/<name>/`` (``--out`` elsewhere): the studies' paper-vs-ours and acceptance
tables, ``digests.tsv`` of every deterministic output, ``jobs.csv`` (each job's seconds and peak
memory from the run's ``benchmarks/``), ``manifest.json`` and copies of the deterministic outputs
(``--copies``) for ``benchcast verify --rounding``. The logic: :mod:`benchcast.verify.expected`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchcast.errors import BenchcastError
from benchcast.verify.expected import COPIES, EXPECTED_DIR, MAX_COPY_MB, write_expected

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, help="the run's results folder (its benchmarks/ beside it)")
    parser.add_argument("--name", required=True, help="the run's name, after its config (tour, all_papers)")
    parser.add_argument("--configfile", nargs="+", required=True, help="the config file(s) the run was given")
    parser.add_argument("--config", nargs="*", default=[], help="the run's --config pairs, if any")
    parser.add_argument("--command", help="the Snakemake command as run (default: built from the config files)")
    parser.add_argument("--commit", help="the commit of the code that made the run (default: HEAD)")
    parser.add_argument("--copies", choices=COPIES, default="csv", help="deterministic outputs to copy (default csv)")
    parser.add_argument(
        "--max-copy-mb", type=float, default=MAX_COPY_MB, help=f"copy no output larger (default {MAX_COPY_MB:g})"
    )
    parser.add_argument("--out", type=Path, help="default: resources/expected/NAME of this repository")
    args = parser.parse_args(argv)
    out = args.out or REPO / EXPECTED_DIR / args.name
    try:
        manifest = write_expected(
            args.results,
            out,
            args.name,
            args.configfile,
            args.command,
            args.commit,
            args.config,
            args.copies,
            args.max_copy_mb,
        )
    except BenchcastError as exc:
        print(f"ship_expected: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(manifest, indent=2))
    print(f"written: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
