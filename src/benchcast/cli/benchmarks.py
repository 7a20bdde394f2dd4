"""``benchcast benchmarks``: the benchmark ids ``benchcast complete`` knows, with scale and range (one of
the listings, with ``datasets`` and ``methods``: the same ``--grep`` and ``--out``).

::

    benchcast benchmarks --grep gpqa
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from benchcast.cli.common import add_data_dir, add_listing, print_listing
from benchcast.cli.complete import data_folder, load_matrix


def add_parser(sub) -> None:
    b = sub.add_parser("benchmarks", help="list the benchmark ids that complete knows, with scale and range")
    add_data_dir(b)
    b.add_argument("--data", help="the ingested BenchPress tables (default <data-dir>/data/benchpress)")
    add_listing(b)


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
    return print_listing(table, args)
