"""The leaderboard a new model is placed in: a catalog dataset the workflow ingested, or a user's
own models x items matrix (CSV or Parquet whose first column, ``model_id``, names the models and
whose other columns are item ids holding scores in [0, 1]: 0/1, or partial credit). Both are read into a
:class:`~benchcast.data.item_level.ResponseMatrix` and checked the same way; the checksum ties a
stored fit and a selection to the exact matrix they were made from.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from benchcast.data.answers import Answers, read_answers
from benchcast.data.catalog import DEFAULT_CATALOG
from benchcast.data.csv_matrix import read_csv_matrix, read_header
from benchcast.data.item_level import (
    ResponseMatrix,
    is_binary,
    load_response_matrix,
    validate_binary,
    validate_unit_scores,
)
from benchcast.data.raw_files import sha256_of
from benchcast.errors import DataError, did_you_mean
from benchcast.new_model import board_cache

#: a user's matrix, as every message and help text says it
MATRIX_FORM = (
    "a CSV or Parquet file whose first column, model_id, names the models and whose other columns are item ids "
    "holding scores in [0, 1] (0/1, or partial credit)"
)

#: names the model column of a user's matrix may have (``model`` is what ``benchcast plan`` read first)
MODEL_COLUMNS = ("model_id", "model")


@dataclass(frozen=True)
class Leaderboard:
    key: str  # a catalog dataset's name, or "<file stem>-<checksum prefix>" for a user's matrix
    matrix: ResponseMatrix
    checksum: str  # sha256 of the model ids, item ids and scores
    path: Path  # the folder or file it was read from
    #: a user's file read from the file itself: stores its bits for the next calls (see remember)
    unstored: Callable[[], None] | None = field(default=None, repr=False, compare=False)
    #: known to hold 0/1 scores only (a catalog dataset, checked cell by cell as it was loaded)
    checked_binary: bool = field(default=False, repr=False, compare=False)

    @functools.cached_property
    def binary(self) -> bool:
        """Every score is 0 or 1 (a stored board of bits is); else some are partial credit, which
        only the methods whose estimator takes them accept (:func:`benchcast.methods.base.check_scores`)."""
        if self.checked_binary or isinstance(self.matrix, board_cache.PackedResponseMatrix):
            return True
        return is_binary(self.matrix.scores)

    def answers(self, given) -> Answers:
        """A model's answers (``given``: what :func:`benchcast.data.answers.read_answers` takes) read
        against this leaderboard's items, and checked against its scores (partial credit only where
        the leaderboard holds it)."""
        return read_answers(given, self.matrix.item_ids, self.binary)

    def remember(self) -> None:
        """Store a user's matrix as bits (:mod:`benchcast.new_model.board_cache`) so that later
        calls on the same file bytes skip parsing it; called once a command has used it for a fit,
        so that bad input elsewhere in a call leaves nothing behind. A read-only data folder is
        not an error: every call then reads the file."""
        if self.unstored is not None and self.binary:  # bits hold 0/1 only: partial credit is read each call
            try:
                self.unstored()
            except (OSError, DataError):  # (a file that cannot be made is a DataError naming it)
                pass


def checksum(matrix: ResponseMatrix) -> str:
    """sha256 of the model ids, item ids and scores (:func:`board_cache.matrix_checksum`)."""
    return board_cache.matrix_checksum(matrix)


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
            frame = pq.read_table(path)
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise DataError(path, "(file)", f"is not a readable Parquet file ({exc})", f"give {MATRIX_FORM}") from None
        index = (frame.schema.pandas_metadata or {}).get("index_columns", [])  # a pandas index stored as a column
        frame = frame.drop_columns([c for c in index if isinstance(c, str)])
        header = [str(c) for c in frame.column_names]
    else:
        header = read_header(path)
        frame = None
    if not header or header[0] not in MODEL_COLUMNS:
        raise DataError(
            path,
            "header",
            f"the first column is {header[0] if header else None!r}",
            "make the first column `model_id` (one row per model) and the others item ids holding scores in [0, 1]",
        )
    if frame is None:
        table = read_csv_matrix(path, orientation="models_by_items", model_column=header[0], booleans=True)
        names, items, scores = table.model_names, list(table.item_names or []), table.scores
    else:
        names, items = [str(m) for m in frame.column(0).to_pylist()], header[1:]
        try:  # column by column into one C-ordered float64 matrix: no other copy of it
            scores = np.empty((frame.num_rows, len(items)))
            for j, column in enumerate(frame.columns[1:]):
                scores[:, j] = column.to_numpy(zero_copy_only=False)
        except (TypeError, ValueError, pa.ArrowException):
            raise DataError(
                path, "scores", "a cell is not a number", "store a score in [0, 1] in every item column"
            ) from None
    _check_ids(names, path, "model", header[0])
    _check_ids(items, path, "item", "header")
    if len(names) < 2 or len(items) < 2:
        raise DataError(
            path, "shape", f"{len(names)} models x {len(items)} items", "give at least 2 models and 2 items"
        )
    validate_unit_scores(scores, path)
    return ResponseMatrix(path.stem, np.ascontiguousarray(scores), names, names, items, ["all"] * len(items))


def _user_leaderboard(path: Path, boards_dir: Path) -> Leaderboard:
    """A user's matrix file: from its stored bits when these file bytes were read before
    (:mod:`benchcast.new_model.board_cache`), else read, validated and checksummed (and stored
    by :meth:`Leaderboard.remember`)."""
    if not path.is_file():
        _read_user_matrix(path)  # the missing file's message
    file_digest = sha256_of(path)
    stored = board_cache.cache_file(boards_dir, path, file_digest)
    if stored.is_file():
        matrix, digest = board_cache.read(stored, path.stem)
        return Leaderboard(f"{path.stem}-{digest[:12]}", matrix, digest, path)
    matrix = _read_user_matrix(path)
    digest = checksum(matrix)
    store = lambda: stored.is_file() or board_cache.write(matrix, digest, path, file_digest, stored)
    return Leaderboard(f"{path.stem}-{digest[:12]}", matrix, digest, path, store)


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
        return _user_leaderboard(path, Path(data_dir) / "boards")
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
    return Leaderboard(dataset, matrix, checksum(matrix), folder, checked_binary=True)
