"""The benchmark inventory: per-benchmark category, metric, unit and item count.

BenchPress's ``data.json`` names its benchmarks but says nothing else about
them. The paper's benchmark inventory (Table 9, transcribed as
``resources/paper/benchpress_benchmark_inventory.csv``, notes in
``resources/paper/benchpress_benchmark_inventory.md``) supplies ``category``,
``metric``, ``scale``, ``is_percentage``, ``lower_is_better`` and ``items``.
:func:`read_benchmark_inventory` validates the CSV;
:func:`attach_benchmark_inventory` joins it onto the benchmarks table (the
ingest does this when the catalog entry has a ``files.inventory`` role).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.data.aggregate.parsing import _csv_row
from benchcast.data.aggregate.scales import SCALES, _place_after_metric
from benchcast.data.aggregate.table import AggregateTables
from benchcast.errors import DataError

#: Columns of ``resources/paper/benchpress_benchmark_inventory.csv``.
INVENTORY_COLUMNS = (
    "benchmark_id",
    "name",
    "category",
    "metric",
    "items",
    "scale",
    "is_percentage",
    "lower_is_better",
    "link",
)


_INVENTORY_REQUIRED = ("benchmark_id", "category", "metric", "items", "scale", "is_percentage", "lower_is_better")


def read_benchmark_inventory(path: str | os.PathLike) -> pd.DataFrame:
    """Read and validate a benchmark inventory CSV (e.g. the BenchPress Table 9 one).

    Parameters
    ----------
    path : str or path-like
        A CSV with columns :data:`INVENTORY_COLUMNS` (``name`` and ``link`` are
        informational and may be absent; other extra columns are ignored).
        ``metric``/``category`` may be empty; ``items`` is empty or a whole
        number; ``scale`` is empty or one of :data:`SCALES`;
        ``is_percentage``/``lower_is_better`` are ``true``, ``false`` (any case)
        or empty.

    Returns
    -------
    pandas.DataFrame
        In file order: ``benchmark_id`` (str, unique), ``category``,
        ``metric``, ``scale`` (str, NA when empty), ``is_percentage``,
        ``lower_is_better`` (nullable ``boolean``), ``items`` (``Int64``).

    Raises
    ------
    DataError
        Unreadable file, missing column, empty or duplicate ``benchmark_id``,
        a value that is not a boolean / whole number / known scale, or an
        ``is_percentage`` that contradicts ``scale`` (it must be true exactly
        when scale is ``percent``). The message names the row and its CSV line.
    """
    path = Path(path)
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise DataError(
            path,
            "(file)",
            "file does not exist",
            "check the path; the BenchPress inventory lives in the repository at "
            "resources/paper/benchpress_benchmark_inventory.csv",
        ) from None
    except pd.errors.EmptyDataError as exc:
        raise DataError(
            path, "(header)", "the file is empty", f"write a header row with columns {list(INVENTORY_COLUMNS)}"
        ) from exc
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DataError(
            path,
            "(CSV syntax)",
            f"cannot parse the CSV ({exc})",
            "fix the quoting/encoding (UTF-8, comma-separated, quote fields that contain commas)",
        ) from exc
    except OSError as exc:
        raise DataError(
            path, "(file)", f"cannot read the file ({exc.strerror})", "check the path and its permissions"
        ) from exc
    missing = [c for c in _INVENTORY_REQUIRED if c not in raw.columns]
    if missing:
        raise DataError(
            path,
            missing[0],
            f"required column is missing (columns: {list(raw.columns)})",
            f"give the inventory the columns {list(INVENTORY_COLUMNS)}",
        )
    raw = raw.fillna("").apply(lambda col: col.str.strip())  # short rows: missing trailing cells are empty

    def where(col: str, i: int) -> str:
        return f"column '{col}', {_csv_row(i)} (benchmark '{raw['benchmark_id'].iloc[i]}')"

    ids = raw["benchmark_id"]
    if (ids == "").any():
        i = int(np.flatnonzero((ids == "").to_numpy())[0])
        raise DataError(
            path,
            f"column 'benchmark_id', {_csv_row(i)}",
            "benchmark id is empty",
            "fill in the matrix's benchmark id or delete the row",
        )
    dup = ids.duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        first = int(np.flatnonzero((ids == ids.iloc[i]).to_numpy())[0])
        raise DataError(
            path,
            f"column 'benchmark_id', {_csv_row(i)}",
            f"duplicate benchmark id {ids.iloc[i]!r} (first at {_csv_row(first)})",
            "keep one row per benchmark id (merge or delete the repeat)",
        )

    def booleans(col: str) -> pd.Series:
        values = []
        for i, v in enumerate(raw[col]):
            low = v.lower()
            if low not in ("true", "false", ""):
                raise DataError(
                    path,
                    where(col, i),
                    f"not a boolean: {v!r}",
                    "write true or false (or leave the cell empty if unknown)",
                )
            values.append(None if low == "" else low == "true")
        return pd.Series(values, dtype="boolean")

    scales = []
    for i, v in enumerate(raw["scale"]):
        if v and v not in SCALES:
            raise DataError(
                path,
                where("scale", i),
                f"unknown scale {v!r}",
                f"use one of {', '.join(SCALES)} (or leave the cell empty if unknown)",
            )
        scales.append(v or None)
    is_pct = booleans("is_percentage")
    lower = booleans("lower_is_better")
    for i, (scale, pct) in enumerate(zip(scales, is_pct)):
        if scale is not None and pct is not pd.NA and bool(pct) != (scale == "percent"):
            raise DataError(
                path,
                where("is_percentage", i),
                f"is_percentage={str(bool(pct)).lower()} contradicts scale={scale!r}",
                "is_percentage must be true exactly when scale is 'percent'",
            )
    items = []
    for i, v in enumerate(raw["items"]):
        if v == "":
            items.append(None)
        elif re.fullmatch(r"\d+", v):
            items.append(int(v))
        else:
            raise DataError(
                path,
                where("items", i),
                f"not a whole number: {v!r}",
                "write the item count as digits without separators (or leave it empty if unknown)",
            )
    return pd.DataFrame(
        {
            "benchmark_id": ids.astype("str"),
            "category": pd.Series([v or None for v in raw["category"]], dtype="str"),
            "metric": pd.Series([v or None for v in raw["metric"]], dtype="str"),
            "scale": pd.Series(scales, dtype="str"),
            "is_percentage": is_pct,
            "lower_is_better": lower,
            "items": pd.Series(items, dtype="Int64"),
        }
    )


def attach_benchmark_inventory(tables: AggregateTables, path: str | os.PathLike) -> AggregateTables:
    """Left-join a benchmark inventory CSV onto ``tables.benchmarks`` by ``benchmark_id``.

    Parameters
    ----------
    tables : AggregateTables
        E.g. from :func:`read_benchpress`. Not modified.
    path : str or path-like
        The inventory (see :func:`read_benchmark_inventory`), e.g.
        ``resources/paper/benchpress_benchmark_inventory.csv``.

    Returns
    -------
    AggregateTables
        Same models and scores; ``benchmarks`` keeps its rows and order, its
        ``category``/``metric`` NA cells are filled from the inventory (a value
        the source already has is kept), and ``scale`` (str),
        ``is_percentage``, ``lower_is_better`` (nullable ``boolean``) and
        ``items`` (``Int64``) follow ``metric`` (replacing columns of those
        names).

    Raises
    ------
    DataError
        Everything :func:`read_benchmark_inventory` rejects, and an inventory
        whose ids are not exactly the matrix's: an id the matrix lacks, or a
        matrix benchmark without a row. The message names the file, the field
        and the fix.
    """
    path = Path(path)
    inv = read_benchmark_inventory(path)
    matrix_ids = pd.Index(tables.benchmarks["benchmark_id"])
    known = inv["benchmark_id"].isin(matrix_ids)
    if not known.all():
        i = int(np.flatnonzero(~known.to_numpy())[0])
        extra = inv["benchmark_id"][~known].tolist()
        raise DataError(
            path,
            f"column 'benchmark_id', {_csv_row(i)}",
            f"{len(extra)} id(s) are not benchmarks of the matrix: {extra[:5]}",
            "fix the id to the matrix's benchmark id (website/data.json 'benchmarks'), or delete the row",
        )
    missing = matrix_ids[~matrix_ids.isin(inv["benchmark_id"])].tolist()
    if missing:
        raise DataError(
            path,
            "column 'benchmark_id'",
            f"{len(missing)} benchmark(s) of the matrix have no row: {missing[:5]}",
            "add one row per matrix benchmark (an unknown value may be left empty)",
        )
    row = inv.set_index("benchmark_id").reindex(matrix_ids)
    b = tables.benchmarks.reset_index(drop=True)
    for col in ("category", "metric"):
        b[col] = pd.Series([own if not pd.isna(own) else new for own, new in zip(b[col], row[col])], dtype="str")
    benchmarks = _place_after_metric(
        b, {col: row[col] for col in ("scale", "is_percentage", "lower_is_better", "items")}
    )
    return AggregateTables(models=tables.models, benchmarks=benchmarks, scores=tables.scores)
