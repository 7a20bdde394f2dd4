"""Writing :class:`~benchcast.data.aggregate.table.AggregateTables` to Parquet.

:func:`write_aggregate` writes ``models.parquet``, ``benchmarks.parquet`` and
``scores.parquet`` atomically and reproducibly (see its Notes).
"""

from __future__ import annotations

import os
from pathlib import Path

from benchcast.data.aggregate.table import AggregateTables
from benchcast.data.io import write_parquet_atomic


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
