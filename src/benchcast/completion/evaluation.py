"""Held-out evaluation of a score predictor on the paper's folds (BenchPress Section 4.2).

The paper's fold file (``folds_s10_f3_bs42_ms1.json``) lists, for 10 seeds x 3 folds, the
held-out (model index, benchmark index) cells: within each seed the three folds partition
every model's observed cells. For each fold the training matrix is the full matrix with
that fold's cells hidden; a predictor completes it, and the fold's cells are scored.
Per fold: pooled MedAPE / MedAE over its cells; the configuration's number is the median
over the 30 folds, and coverage is the share of all held-out cells that got a finite
prediction (the paper code's ``merge_results``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.errors import DataError
from benchcast.stats.metrics import completion_errors

__all__ = ["Fold", "load_folds", "validate_folds", "train_matrix", "evaluate_predictor", "summarize_folds"]


@dataclass(frozen=True)
class Fold:
    """One held-out fold: its seed, fold number and (k, 2) array of (model, benchmark) cells."""

    seed: int
    fold: int
    cells: np.ndarray


def load_folds(path: str | Path, shape: tuple[int, int] | None = None) -> list[Fold]:
    """Read the paper's fold JSON (keys ``folds[*].seed/fold/test_cells``, ``n_models``, ``n_bench``).

    With ``shape`` the file's matrix shape must match it and every cell must lie inside.
    """
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise DataError(
            path,
            "(file)",
            "fold file does not exist",
            "point the benchpress study's folds at folds_s10_f3_bs42_ms1.json",
        ) from None
    except json.JSONDecodeError as exc:
        raise DataError(path, f"(JSON, line {exc.lineno})", exc.msg, "re-download the fold file") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("folds"), list):
        raise DataError(path, "folds", "missing or not a list", "pass the BenchPress folds JSON")
    if shape is not None:
        file_shape = (doc.get("n_models"), doc.get("n_bench"))
        if file_shape != tuple(shape):
            raise DataError(
                path,
                "n_models/n_bench",
                f"folds are for a {file_shape} matrix, the data is {tuple(shape)}",
                "use the fold file that belongs to this score matrix",
            )
    folds = []
    for k, rec in enumerate(doc["folds"]):
        try:
            cells = np.asarray(rec["test_cells"], dtype=np.int64).reshape(-1, 2)
            seed, fold = int(rec["seed"]), int(rec["fold"])
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(
                path,
                f"folds[{k}]",
                f"malformed record ({exc})",
                "each fold needs integer seed, fold and a list of [model, benchmark] test_cells",
            ) from None
        if (
            shape is not None
            and cells.size
            and (cells.min() < 0 or cells[:, 0].max() >= shape[0] or cells[:, 1].max() >= shape[1])
        ):
            raise DataError(
                path,
                f"folds[{k}].test_cells",
                "a cell index lies outside the matrix",
                "use the fold file that belongs to this score matrix",
            )
        folds.append(Fold(seed=seed, fold=fold, cells=cells))
    if not folds:
        raise DataError(path, "folds", "is empty", "pass a fold file with at least one fold")
    return folds


def validate_folds(folds: list[Fold], observed: np.ndarray, source: str | Path | None = None) -> None:
    """Every held-out cell must be observed, and a fold must not list a cell twice."""
    for f in folds:
        if not observed[f.cells[:, 0], f.cells[:, 1]].all():
            bad = f.cells[~observed[f.cells[:, 0], f.cells[:, 1]]][0]
            raise DataError(
                source,
                f"seed {f.seed} fold {f.fold}",
                f"held-out cell {tuple(bad)} has no observed score",
                "the fold file does not belong to this score matrix",
            )
        flat = f.cells[:, 0] * observed.shape[1] + f.cells[:, 1]
        if len(np.unique(flat)) != len(flat):
            raise DataError(source, f"seed {f.seed} fold {f.fold}", "lists a cell twice", "regenerate the folds")


def train_matrix(M: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """A copy of ``M`` with the held-out ``cells`` hidden (NaN)."""
    train = np.array(M, dtype=np.float64, copy=True)
    train[cells[:, 0], cells[:, 1]] = np.nan
    return train


def evaluate_predictor(M: np.ndarray, folds: list[Fold], predict: Callable[[np.ndarray], np.ndarray]) -> pd.DataFrame:
    """Run ``predict(train)`` on every fold; one row per held-out cell.

    Returns columns ``seed, fold, model, benchmark, actual, predicted``. The predictor only
    ever sees the training matrix, a copy with the fold's cells set to NaN (so a held-out
    value cannot leak into its own prediction).
    """
    rows = []
    for f in folds:
        train = train_matrix(M, f.cells)
        pred = np.asarray(predict(train), dtype=np.float64)
        if pred.shape != M.shape:
            raise ValueError(f"predictor returned shape {pred.shape}, expected {M.shape}")
        i, j = f.cells[:, 0], f.cells[:, 1]
        rows.append(
            pd.DataFrame(
                {
                    "seed": np.full(len(i), f.seed, dtype=np.int64),
                    "fold": np.full(len(i), f.fold, dtype=np.int64),
                    "model": i,
                    "benchmark": j,
                    "actual": M[i, j],
                    "predicted": pred[i, j],
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def summarize_folds(cells: pd.DataFrame, by: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-fold pooled metrics and, per group ``by``, the median over folds and the coverage.

    Returns ``(per_fold, summary)``; ``summary`` has ``medape, medae`` (medians over folds),
    ``coverage`` (predicted cells / held-out cells) and ``n_folds``.
    """
    by = list(by or [])
    keys = by + ["seed", "fold"]
    recs = []
    for key, g in cells.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        recs.append({**dict(zip(keys, key)), **completion_errors(g["actual"].to_numpy(), g["predicted"].to_numpy())})
    per_fold = pd.DataFrame(recs)
    agg = per_fold.groupby(by, sort=True) if by else [((), per_fold)]
    out = []
    for key, g in agg:
        key = key if isinstance(key, tuple) else (key,)
        out.append(
            {
                **dict(zip(by, key)),
                "medape": float(np.nanmedian(g["medape"])),
                "medae": float(np.nanmedian(g["medae"])),
                "coverage": float(g["n"].sum() / g["n_total"].sum()),
                "n_folds": int(len(g)),
            }
        )
    return per_fold, pd.DataFrame(out)
