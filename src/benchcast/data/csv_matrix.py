"""A score matrix stored as a CSV table (catalog format ``csv_matrix``).

``orientation: items_by_models`` (the MDAD paper's GPQA dump, ``model_scores.csv``): one row per
item, one column per model (the header holds the model names), plus the non-model columns the
catalog lists in ``item_columns``; ``subtask_column`` (one of them) names each item's subtask.
``orientation: models_by_items``: one row per model, its name in ``model_column``, one column per
item (the header holds the item ids).

Every cell of a model's column must be a number (0/1 for ``item_binary``, which the ingest checks);
headers must be unique. Errors name the file, the column or row and the fix.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.data.io import BOOLEAN_SCORES, TEXT_ENCODING, check_separator, not_text, open_text
from benchcast.errors import DataError

ORIENTATIONS = ("items_by_models", "models_by_items")


@dataclass(frozen=True)
class CsvMatrix:
    scores: np.ndarray  # (models, items) float64
    model_names: list[str]
    item_names: list[str] | None  # from a models_by_items header; None: items in row order
    subtasks: list[str] | None  # per item, from subtask_column


def read_header(path: Path) -> list[str]:
    """The first row of a CSV file (``DataError`` if the file is empty or separated by semicolons)."""
    with open_text(path, "give the CSV file itself (UTF-8 text)") as fh:
        try:
            header = next(csv.reader(fh))
        except StopIteration:
            raise DataError(path, "header", "the file is empty", "re-download the file") from None
    check_separator(path, header)
    return header


def _unique(names: list[str], path: Path, what: str) -> None:
    repeated = sorted(n for n, c in Counter(names).items() if c > 1)
    if repeated:
        raise DataError(
            path,
            "header",
            f"{len(repeated)} repeated {what} names, e.g. {repeated[:3]}",
            f"give every {what} one column",
        )


def _numeric(frame: pd.DataFrame, path: Path, what: str, booleans: bool = False) -> np.ndarray:
    values = frame.apply(pd.to_numeric, errors="coerce")
    bad = values.isna() & frame.notna()
    if booleans and bad.to_numpy().any():  # TRUE/FALSE as a spreadsheet writes 0/1 scores
        values = values.fillna(frame.where(bad).apply(lambda column: column.map(BOOLEAN_SCORES)))
        bad = values.isna() & frame.notna()
    if bad.to_numpy().any():
        row, col = np.argwhere(bad.to_numpy())[0]
        raise DataError(
            path,
            f"{what} '{frame.columns[col]}', row {row + 2}",
            f"value {frame.iat[row, col]!r} is not a number",
            "scores must be numbers (1 = correct, 0 = wrong); list non-score columns in the catalog's item_columns",
        )
    return values.to_numpy(dtype=np.float64)


def _unreadable(path: Path, exc: Exception, columns: int) -> DataError:
    """A CSV that does not parse (a row with more cells than the header has columns, an unclosed
    quote): the line pandas names, in one line."""
    found = re.search(r"line (\d+), saw (\d+)", str(exc))
    if found:
        line, saw = found.groups()
        return DataError(
            path, f"line {line}", f"has {saw} cells, the header {columns} columns", "give every row one cell per column"
        )
    return DataError(path, "(rows)", f"is not a readable CSV table ({' '.join(str(exc).split())})", "fix the file")


def read_csv_matrix(
    path: str | Path,
    orientation: str = "items_by_models",
    item_columns: list[str] | tuple[str, ...] = (),
    subtask_column: str | None = None,
    model_column: str = "model",
    booleans: bool = False,
) -> CsvMatrix:
    """Read a CSV score matrix (module docstring) as models x items; with ``booleans``, scores
    written ``TRUE``/``FALSE`` (:data:`~benchcast.data.io.BOOLEAN_SCORES`) are 1/0."""
    path = Path(path)
    if orientation not in ORIENTATIONS:
        raise DataError(path, "orientation", f"unknown orientation {orientation!r}", f"use one of {ORIENTATIONS}")
    header = read_header(path)
    if "" in header:
        raise DataError(
            path, "header", f"column {header.index('') + 1} has no name", "name every column (or drop a trailing comma)"
        )
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], encoding=TEXT_ENCODING)
    except UnicodeDecodeError as exc:
        raise not_text(path, exc, "give the CSV file itself (UTF-8 text)") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise _unreadable(path, exc, len(header)) from None
    if orientation == "items_by_models":
        extra = list(item_columns)
        missing = [c for c in extra if c not in header]
        if missing:
            raise DataError(path, "header", f"no column {missing[0]!r}", "fix item_columns in the catalog entry")
        if subtask_column is not None and subtask_column not in extra:
            raise DataError(path, "subtask_column", f"{subtask_column!r} is not one of item_columns", "list it there")
        models = [c for c in header if c not in extra]
        _unique(models, path, "model")
        if not models:
            raise DataError(path, "header", "no model columns", "the header must name one column per model")
        scores = _numeric(frame[models], path, "model", booleans).T
        subtasks = None if subtask_column is None else frame[subtask_column].astype(str).tolist()
        return CsvMatrix(np.ascontiguousarray(scores), models, None, subtasks)
    if model_column not in header:
        raise DataError(path, "header", f"no column {model_column!r}", "name the model column, or set model_column")
    items = [c for c in header if c != model_column]
    if header.count(model_column) > 1:
        raise DataError(path, "header", f"{header.count(model_column)} columns are named {model_column!r}", "keep one")
    _unique(items, path, "item")
    missing = frame[model_column].isna().to_numpy()
    if missing.any():
        row = int(np.flatnonzero(missing)[0]) + 2
        raise DataError(path, f"{model_column}, row {row}", "has no model name", "name the model of every row")
    names = frame[model_column].astype(str).tolist()
    return CsvMatrix(_numeric(frame[items], path, "item", booleans), names, items, None)
