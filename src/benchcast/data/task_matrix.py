"""Several ingested datasets joined into one multi-task matrix (task-level evaluation,
:mod:`benchcast.trials.tasks`): every dataset's subtasks become tasks (a dataset without subtasks is one
task), models are joined on their ids (or on their row position, for dumps without model names such
as GLUE), and each model gets a release key for the date split.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.data.item_level import load_response_matrix
from benchcast.errors import ConfigError

JOINS = ("model_id", "position")
RELEASES = ("position", "upload_date", "none")


@dataclass
class TaskMatrix:
    """Models x items scores of several tasks; ``tasks``: each item's task (``0 .. n_tasks - 1``);
    ``release``: a release key per model (smaller is older; NaN unknown)."""

    name: str
    scores: np.ndarray
    tasks: np.ndarray
    task_names: list[str]
    model_ids: list[str]
    release: np.ndarray
    dropped_duplicates: int = 0

    @property
    def task_sizes(self) -> np.ndarray:
        return np.bincount(self.tasks, minlength=len(self.task_names))

    def task_accuracy(self, rows=None) -> np.ndarray:
        """(models, tasks) mean score per task."""
        scores = self.scores if rows is None else self.scores[rows]
        return np.stack([scores[:, self.tasks == t].mean(axis=1) for t in range(len(self.task_names))], axis=1)


def load_task_matrix(
    data_root: str | Path,
    name: str,
    datasets: Sequence[str],
    join: str = "model_id",
    release: str = "position",
    dedupe: bool = True,
) -> TaskMatrix:
    """Join ``datasets`` (ingested under ``data_root/<dataset>/``) into one :class:`TaskMatrix`.

    ``join``: ``model_id`` (the models every dataset has, in the first dataset's order) or
    ``position`` (row i is one model in every dataset; the counts must match). ``release``:
    ``position`` (the first dataset's model order, e.g. HELM's addition order), ``upload_date``
    (sloth's metadata; NaN where a model has none) or ``none``. ``dedupe`` drops a model whose
    answers repeat an earlier model's exactly (Open LLM v2 lists 19 models twice), so that no copy
    sits on both sides of a split."""
    if join not in JOINS or release not in RELEASES:
        raise ConfigError(f"task matrix '{name}': join must be one of {JOINS} and release one of {RELEASES}")
    root = Path(data_root)
    parts = [load_response_matrix(root / d, d) for d in datasets]
    models = pd.read_parquet(root / datasets[0] / "models.parquet").set_index("model_id")
    if join == "model_id":
        common = set.intersection(*(set(p.model_ids) for p in parts))
        ids = [m for m in parts[0].model_ids if m in common]
        rows = [[p.model_ids.index(m) for m in ids] for p in parts]
    else:
        counts = {d: len(p.model_ids) for d, p in zip(datasets, parts)}
        if len(set(counts.values())) != 1:
            raise ConfigError(f"task matrix '{name}': join by position needs equal model counts, got {counts}")
        ids, rows = list(parts[0].model_ids), [list(range(len(parts[0].model_ids)))] * len(parts)
    if len(ids) < 4:
        raise ConfigError(f"task matrix '{name}': only {len(ids)} models are in every one of {list(datasets)}")
    scores = np.hstack([p.scores[r] for p, r in zip(parts, rows)])
    labels = [f"{d}/{s}" if len(set(p.subtasks)) > 1 else d for d, p in zip(datasets, parts) for s in p.subtasks]
    tasks, task_names = task_index(labels)
    if release == "position":
        key = models.loc[ids, "model_idx"].to_numpy(dtype=np.float64)
    elif release == "upload_date":
        key = pd.to_datetime(models.loc[ids, "upload_date"], errors="coerce").to_numpy(dtype="datetime64[D]")
        key = np.where(np.isnat(key), np.nan, key.astype(np.int64).astype(np.float64))
    else:
        key = np.full(len(ids), np.nan)
    dropped = 0
    if dedupe:
        _, first = np.unique(scores, axis=0, return_index=True)
        keep = np.sort(first)
        dropped = len(ids) - len(keep)
        scores, key, ids = scores[keep], key[keep], [ids[i] for i in keep]
    return TaskMatrix(name, scores, tasks, task_names, ids, key, dropped)


def task_index(labels: Sequence) -> tuple[np.ndarray, list]:
    """Each item's task as ``0 .. n_tasks - 1`` (tasks in order of first appearance) and the names."""
    names = list(dict.fromkeys(np.asarray(labels).tolist()))
    lookup = {name: i for i, name in enumerate(names)}
    return np.array([lookup[x] for x in np.asarray(labels).tolist()], dtype=np.int64), names
