"""The leaderboard a new model is placed in: a catalog dataset the workflow ingested, or a user's
own models x items matrix (CSV or Parquet whose first column, ``model_id``, names the models and
whose other columns are item ids holding 0/1 scores). Both are read into a
:class:`~benchcast.data.item_level.ResponseMatrix` and checked the same way; the checksum ties a
stored fit and a selection to the exact matrix they were made from.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.data.catalog import DEFAULT_CATALOG
from benchcast.data.csv_matrix import read_csv_matrix, read_header
from benchcast.data.item_level import ResponseMatrix, load_response_matrix, validate_binary
from benchcast.errors import DataError, did_you_mean

#: a user's matrix, as every message and help text says it
MATRIX_FORM = "a CSV or Parquet file whose first column, model_id, names the models and whose other columns are item ids holding 0/1 scores"

#: names the model column of a user's matrix may have (``model`` is what ``benchcast plan`` read first)
MODEL_COLUMNS = ("model_id", "model")


@dataclass(frozen=True)
class Leaderboard:
    key: str  # a catalog dataset's name, or "<file stem>-<checksum prefix>" for a user's matrix
    matrix: ResponseMatrix
    checksum: str  # sha256 of the model ids, item ids and scores
    path: Path  # the folder or file it was read from


def checksum(matrix: ResponseMatrix) -> str:
    h = hashlib.sha256()
    for ids in (matrix.model_ids, matrix.item_ids):
        h.update("\x1f".join(map(str, ids)).encode("utf-8") + b"\x1e")
    h.update(np.ascontiguousarray(matrix.scores, dtype="<f8").tobytes())
    return h.hexdigest()


def _check_ids(ids: list[str], path: Path, what: str, field: str) -> None:
    repeated = sorted(i for i, c in Counter(ids).items() if c > 1)
    if repeated:
        raise DataError(
            path, field, f"{len(repeated)} repeated {what} ids, e.g. {repeated[:3]}", f"give each {what} one entry"
        )


def _read_user_matrix(path: Path) -> ResponseMatrix:
    if not path.is_file():
        raise DataError(
            path, "(file)", "does not exist", "pass a catalog dataset name or the path of a models x items CSV/Parquet"
        )
    if path.stat().st_size == 0:
        raise DataError(path, "(file)", "the file is empty", f"give {MATRIX_FORM}")
    if path.suffix.lower() == ".parquet":
        try:
            frame = pd.read_parquet(path)
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise DataError(path, "(file)", f"is not a readable Parquet file ({exc})", f"give {MATRIX_FORM}") from None
        header = [str(c) for c in frame.columns]
    else:
        header = read_header(path)
        frame = None
    if not header or header[0] not in MODEL_COLUMNS:
        raise DataError(
            path,
            "header",
            f"the first column is {header[0] if header else None!r}",
            "make the first column `model_id` (one row per model) and the others item ids holding 0/1 scores",
        )
    if frame is None:
        table = read_csv_matrix(path, orientation="models_by_items", model_column=header[0])
        names, items, scores = table.model_names, list(table.item_names or []), table.scores
    else:
        names, items = frame[header[0]].astype(str).tolist(), header[1:]
        try:
            scores = frame.drop(columns=frame.columns[0]).to_numpy(np.float64)
        except (TypeError, ValueError):
            raise DataError(path, "scores", "a cell is not a number", "store 0/1 scores in every item column") from None
    _check_ids(names, path, "model", header[0])
    _check_ids(items, path, "item", "header")
    if len(names) < 2 or len(items) < 2:
        raise DataError(
            path, "shape", f"{len(names)} models x {len(items)} items", "give at least 2 models and 2 items"
        )
    validate_binary(scores, path)
    return ResponseMatrix(path.stem, np.ascontiguousarray(scores), names, names, items, ["all"] * len(items))


def known_datasets(datasets_dir: str | Path, catalog: str | Path = DEFAULT_CATALOG) -> set[str]:
    """The dataset names a user may mean: those ingested under ``datasets_dir`` and the catalog's
    item-level datasets (when the catalog file is there)."""
    names = {p.parent.name for p in Path(datasets_dir).glob("*/responses.parquet")}
    if Path(catalog).is_file():
        from benchcast.data.catalog import load_catalog

        try:
            names |= set(load_catalog(catalog).names("item_binary"))
        except (OSError, ValueError):  # a broken catalog is the workflow's to report, not a hint's
            pass
    return names


def _data_dir_option(data_dir, datasets_dir) -> str:
    return f" --data-dir {Path(data_dir).as_posix()}" if datasets_dir is None else ""


def load_leaderboard(
    dataset: str, data_dir: str | Path = "results", datasets_dir: str | Path | None = None
) -> Leaderboard:
    """``dataset``: a catalog dataset ingested under ``<data_dir>/data/<dataset>/`` (or
    ``<datasets_dir>/<dataset>/``), or a path to a user's matrix (a name ending in .csv/.parquet,
    or any existing file)."""
    path = Path(dataset)
    if path.suffix.lower() in (".csv", ".parquet") or path.is_file():
        matrix = _read_user_matrix(path)
        digest = checksum(matrix)
        return Leaderboard(f"{path.stem}-{digest[:12]}", matrix, digest, path)
    folder = (Path(data_dir) / "data" if datasets_dir is None else Path(datasets_dir)) / dataset
    if not (folder / "responses.parquet").is_file():
        known = known_datasets(folder.parent)
        if dataset in known or not known:
            problem, name = f"no ingested dataset {dataset!r} here", dataset
        else:
            problem, name = f"unknown dataset {dataset!r}{did_you_mean(dataset, known)}", "NAME"
        raise DataError(
            folder,
            "responses.parquet",
            problem,
            ("use a name `benchcast datasets` lists; " if name == "NAME" else "")
            + f"fetch it first (benchcast fetch {name}{_data_dir_option(data_dir, datasets_dir)}), pass the "
            "--data-dir that holds it, or give a CSV path",
        )
    matrix = load_response_matrix(folder, dataset)
    validate_binary(matrix.scores, folder / "responses.parquet")
    return Leaderboard(dataset, matrix, checksum(matrix), folder)
