"""Benchmark every item-level method as the leaderboard grows (issue 38): fit, select and estimate
seconds and peak memory per (method, size), each cell in its own capped process, and the growth
exponents in models and in items. See ``benchcast.scaling.benchmark`` and docs/performance.md.

Usage: .venv/bin/python scripts/performance/benchmark_scaling.py [--sizes 500x2000 1000x10000 ...]
       [--methods gp_irt pca ...] [--version before=OTHER/src --version after=src]
       [--settings default|whole_leaderboard] [--memory-cap-gb 16]
       [--time-cap-s 900] [--out scaling.csv]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchcast.methods import REGISTRY
from benchcast.scaling.benchmark import DEFAULT_SIZES, SETTINGS, Size, growth, run


def _version(text: str) -> tuple[str, Path]:
    label, sep, src = text.partition("=")
    if not sep or not (Path(src) / "benchcast").is_dir():
        raise SystemExit(f"--version {text!r}: expected LABEL=SRC with SRC a checkout's src folder")
    return label, Path(src)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", nargs="+", default=list(DEFAULT_SIZES), help="MODELSxITEMS, e.g. 1000x10000")
    ap.add_argument("--methods", nargs="+", default=sorted(REGISTRY), help="default: every registered method")
    ap.add_argument(
        "--version",
        action="append",
        metavar="LABEL=SRC",
        help="measure the checkout whose src folder is SRC under LABEL (repeat: paired, in order); "
        "default: this checkout as 'after'",
    )
    ap.add_argument(
        "--settings",
        choices=sorted(SETTINGS),
        default="default",
        help="the methods' settings: their defaults, or the approximations for whole leaderboards "
        "(benchcast.scaling.benchmark.WHOLE_LEADERBOARD); recorded per row, a resumed table keeps them apart",
    )
    ap.add_argument("--budget", type=int, default=100)
    ap.add_argument("--targets", type=int, default=20)
    ap.add_argument(
        "--blas-threads",
        default="1",
        help="BLAS threads per cell: 1 (the workflow's and the command line's), N, or 'default' (the BLAS's own "
        "count, as a program that imports benchcast has: OpenBLAS starts one per core); recorded per row",
    )
    ap.add_argument("--memory-cap-gb", type=float, default=16.0)
    ap.add_argument("--time-cap-s", type=float, default=900.0)
    ap.add_argument("--data-dir", type=Path, help="where the synthetic matrices are kept (default: a temp folder)")
    ap.add_argument("--out", type=Path, default=Path("scaling.csv"))
    args = ap.parse_args()
    unknown = sorted(set(args.methods) - set(REGISTRY))
    if unknown:
        ap.error(f"unknown methods {unknown}; the registered ones are {sorted(REGISTRY)}")
    table = run(
        [Size.parse(s) for s in args.sizes],
        args.methods,
        args.out,
        versions=dict(_version(v) for v in args.version) if args.version else None,
        budget=args.budget,
        targets=args.targets,
        memory_cap_gb=args.memory_cap_gb,
        time_cap_s=args.time_cap_s,
        data_dir=args.data_dir,
        params=SETTINGS[args.settings],
        blas_threads=args.blas_threads,
    )
    print(growth(table).round(2).to_string(index=False))


if __name__ == "__main__":
    main()
