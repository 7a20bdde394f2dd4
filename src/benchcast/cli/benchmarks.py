"""``benchcast benchmarks``: the benchmark ids ``benchcast complete`` knows, with scale and range.

::

    benchcast benchmarks --grep gpqa
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from benchcast.cli.common import add_data_dir
from benchcast.cli.complete import data_folder, load_matrix


def add_parser(sub) -> None:
    b = sub.add_parser("benchmarks", help="list the benchmark ids `complete` knows, with scale and range")
    add_data_dir(b)
    b.add_argument("--data", help="the ingested BenchPress tables (default <data-dir>/data/benchpress)")
    b.add_argument("--grep", help="only rows containing this text (case-insensitive)")
    b.add_argument("--out", help="also write the list as CSV here")


def run(args: argparse.Namespace) -> int:
    from benchcast.completion.transforms import percentage_columns

    M, _, benchmarks = load_matrix(data_folder(args))
    table = pd.DataFrame({"benchmark_id": benchmarks["benchmark_id"]})
    for c in ("name", "category"):
        if c in benchmarks.columns:
            table[c] = benchmarks[c].to_numpy()
    pct = (
        benchmarks["is_percentage"].to_numpy(dtype=bool)
        if "is_percentage" in benchmarks.columns and benchmarks["is_percentage"].notna().all()
        else percentage_columns(M)
    )
    scale = (
        benchmarks["scale"].astype(str).to_numpy() if "scale" in benchmarks.columns else np.where(pct, "percent", "")
    )
    table["scale"] = scale
    table["models_observed"] = np.isfinite(M).sum(axis=0)
    with np.errstate(all="ignore"):
        table["min"] = np.nanmin(np.where(np.isfinite(M), M, np.inf), axis=0)
        table["max"] = np.nanmax(np.where(np.isfinite(M), M, -np.inf), axis=0)
    if args.grep:
        hay = table.apply(lambda r: " ".join(map(str, r)), axis=1).str.lower()
        table = table[hay.str.contains(args.grep.lower(), regex=False)]
    if args.out:
        table.to_csv(args.out, index=False, float_format="%.4g")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0
