"""The Parquet tables of an aggregate dataset: writing them, and reading them back as a matrix.

:func:`write_aggregate` writes ``models.parquet``, ``benchmarks.parquet`` and
``scores.parquet`` atomically and reproducibly (see its Notes); :func:`load_score_matrix`
reads them back as the (models x benchmarks) matrix every benchmark-level method works on.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.data.aggregate.table import AggregateTables
from benchcast.data.io import write_parquet_atomic
from benchcast.errors import DataError


def write_aggregate(tables: AggregateTables, out_dir: str | os.PathLike) -> dict[str, Path]:
    """Write ``models.parquet``, ``benchmarks.parquet`` and ``scores.parquet``.

    Parameters
    ----------
    tables : AggregateTables
        What to write; rows are written in the tables' order (the readers'
        orders are fixed by the source files), without the pandas index.
    out_dir : str or path-like
        Created if needed.

    Returns
    -------
    dict
        ``{"models": Path, "benchmarks": Path, "scores": Path}``.

    Notes
    -----
    Each file is written to a temporary file in ``out_dir`` and moved into place
    with ``os.replace``, so a reader never sees a half-written file under the
    final name. The files hold no timestamps (zstd-compressed Parquet), so the
    same tables give byte-identical files with the same library versions.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name in ("models", "benchmarks", "scores"):
        target = out / f"{name}.parquet"
        write_parquet_atomic(getattr(tables, name), target)
        paths[name] = target
    return paths


def load_score_matrix(
    scores: str | os.PathLike, models: str | os.PathLike, benchmarks: str | os.PathLike
) -> tuple[np.ndarray, pd.DataFrame, pd.DataFrame]:
    """The ingested tables as a (models x benchmarks) float matrix, NaN = missing, in table order
    (the source's order, which the BenchPress fold file indexes), with the models and benchmarks tables."""
    s = pd.read_parquet(scores)
    m = pd.read_parquet(models)
    b = pd.read_parquet(benchmarks)
    rows = pd.Index(m["model_id"]).get_indexer(s["model_id"])
    cols = pd.Index(b["benchmark_id"]).get_indexer(s["benchmark_id"])
    if (rows < 0).any() or (cols < 0).any():
        raise DataError(
            scores,
            "model_id/benchmark_id",
            "a score refers to a model or benchmark not in the tables",
            "re-run the ingest so the three Parquet files come from one dump",
        )
    M = np.full((len(m), len(b)), np.nan)
    M[rows, cols] = s["score"].to_numpy(dtype=np.float64)
    return M, m, b
