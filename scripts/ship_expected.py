"""Write a finished run's expected outputs, which ``benchcast verify`` checks an evaluator's run against.

    python scripts/ship_expected.py results --name tour --configfile config/config.yaml
    python scripts/ship_expected.py results --name all_papers --configfile config/all_papers.yaml --copies csv

Into ``resources/expected/<name>/`` (``--out`` elsewhere): the studies' paper-vs-ours and acceptance
tables, ``digests.tsv`` of every deterministic output, ``jobs.csv`` (each job's seconds and peak
memory from the run's ``benchmarks/``), ``manifest.json`` and copies of the deterministic outputs
(``--copies``) for ``benchcast verify --rounding``. ``--other-kernels KERNELS=PATH``: the same config's
run made under other BLAS kernels (a results folder, or its ``digests.tsv``), e.g. with
``OPENBLAS_CORETYPE=SandyBridge``; the outputs whose bytes differ there are the manifest's
``kernel_dependent``, which ``benchcast verify`` does not hold to our bytes on a machine with other
kernels. The logic: :mod:`benchcast.verify.expected`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchcast.errors import BenchcastError, DataError
from benchcast.verify.digests import digests, read_digests
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
    parser.add_argument(
        "--other-kernels",
        action="append",
        default=[],
        metavar="KERNELS=PATH",
        help="the same run under other BLAS kernels (results folder or digests.tsv), by a line naming them",
    )
    args = parser.parse_args(argv)
    out = args.out or REPO / EXPECTED_DIR / args.name
    try:
        other_kernels = dict(other_run(spec) for spec in args.other_kernels)
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
            other_kernels=other_kernels,
        )
    except BenchcastError as exc:
        print(f"ship_expected: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(manifest, indent=2))
    print(f"written: {out}")
    return 0


def other_run(spec: str) -> tuple[str, list[tuple[str, str]]]:
    """``KERNELS=PATH`` -> (KERNELS, the digests of the run at PATH, relative to its results folder)."""
    label, sep, path = spec.rpartition("=")
    path = Path(path)
    if not sep or not label.strip():
        raise DataError(
            "(command line)", "--other-kernels", f"{spec!r} is not KERNELS=PATH", "e.g. 'SandyBridge=../sb/results'"
        )
    if path.is_dir():
        return label, digests(path, relative=True)
    if path.is_file():
        return label, read_digests(path)
    raise DataError(path, "--other-kernels", "no such results folder or digests file", "give a finished run's results/")


if __name__ == "__main__":
    raise SystemExit(main())
