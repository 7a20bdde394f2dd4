"""A leaderboard built from a lab's lm-evaluation-harness logs (``benchcast leaderboard from-lm-eval``).

Every folder holding ``samples_*.jsonl`` files is one model (named by the run's
``results_*.json``, else by the folder); its items are ``<task>/<doc_id>``, scored by one metric
after one filter per task: by default the first metric the log lists and the first filter it holds
(the task config's order), or those ``--metric`` / ``--filter`` name. The result is a models x
items Parquet matrix whose metadata holds the harness facts (:mod:`benchcast.data.harness_identity`),
so ``select --format lm-eval``, ``estimate`` from harness logs and ``plan`` take it as they take
a catalog dataset.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.data.catalog import DatasetSpec
from benchcast.data.harness_identity import DOC_COLUMN, METADATA_KEY, TASK_COLUMN, split_item_id
from benchcast.data.io import write_parquet_atomic
from benchcast.data.item_level import RawItemMatrix
from benchcast.errors import ConfigError, DataError
from benchcast.lm_eval.files import SampleFile, iter_lines, one_model, sample_files, task_scores

MISSING = ("refuse", "drop-models", "drop-items")


@dataclass
class Board:
    scores: pd.DataFrame  # model_id + one column per item (task/doc_id)
    facts: dict
    dropped_models: list[str]
    dropped_items: int
    report: list[str]  # what was chosen and found, one line each


def _choices(text: list[str] | None, what: str) -> tuple[str | None, dict[str, str]]:
    """``--metric acc`` (every task) or ``--metric TASK=acc`` (one task), repeatable."""
    every, per_task = None, {}
    for item in text or []:
        task, sep, value = item.rpartition("=")
        if not value:
            raise ConfigError(f"--{what} {item!r} names no {what}; fix: --{what} NAME or --{what} TASK=NAME")
        if sep:
            per_task[task] = value
        else:
            every = value
    return every, per_task


def _first_line(f: SampleFile) -> dict:
    for _, line in iter_lines(f.path):
        return line
    raise DataError(f.path, "(lines)", "is empty", "rerun the harness for this task")


def _first_filter(f: SampleFile) -> str:
    return str(_first_line(f).get("filter"))


def by_model(folders) -> dict[str, list[SampleFile]]:
    """``{model: its log files}``: one model per folder holding logs."""
    groups: dict[Path, list[SampleFile]] = defaultdict(list)
    for f in sample_files(folders):
        groups[f.path.parent.resolve()].append(f)
    models: dict[str, list[SampleFile]] = {}
    where: dict[str, Path] = {}
    for folder, files in sorted(groups.items()):
        name = one_model(files, str(folder))
        if name in models:
            raise DataError(
                folder,
                "model",
                f"model {name!r} is also in {where[name]}",
                "give each model one folder (pass one run's output per model)",
            )
        models[name], where[name] = files, folder
    return models


def build_board(folders, metric: list[str] | None = None, filt: list[str] | None = None, missing="refuse") -> Board:
    """The models x items matrix of the harness logs under ``folders``."""
    if missing not in MISSING:
        raise ConfigError(f"--missing {missing!r}; fix: one of {', '.join(MISSING)}")
    models = by_model(folders)
    if len(models) < 2:
        raise DataError(
            " ".join(map(str, folders)),
            "models",
            f"{len(models)} model folder found",
            "pass the harness output of at least 2 models (one folder per model)",
        )
    metric_all, metric_of = _choices(metric, "metric")
    filter_all, filter_of = _choices(filt, "filter")
    chosen: dict[str, tuple[str, str]] = {}
    cells: dict[str, dict[str, float]] = {}
    for name, files in models.items():
        row: dict[str, float] = {}
        for f in files:
            if f.task not in chosen:
                first = _first_line(f)
                m = metric_of.get(f.task) or metric_all or (first.get("metrics") or [None])[0]
                if not m:
                    raise DataError(f.path, "line 1", "lists no metrics", "pass --metric TASK=METRIC")
                chosen[f.task] = (str(m), filter_of.get(f.task) or filter_all or _first_filter(f))
            m, fl = chosen[f.task]
            for doc, (score, _) in task_scores(f, m, fl).items():
                key = f"{f.task}/{doc}"
                if key in row and row[key] != score:
                    raise DataError(
                        f.path,
                        "doc_id",
                        f"document {doc} of {f.task} has another {m} in another log of {name}",
                        "keep one run's logs per task in a model's folder",
                    )
                row[key] = score
        cells[name] = row
    unknown = sorted((set(metric_of) | set(filter_of)) - set(chosen))
    if unknown:
        raise ConfigError(f"--metric/--filter name tasks no log has: {unknown}; fix: use the tasks' own names")
    items = sorted(
        {k for row in cells.values() for k in row}, key=lambda k: (k.rpartition("/")[0], int(k.rpartition("/")[2]))
    )
    names = sorted(cells)
    matrix = np.full((len(names), len(items)), np.nan)
    col = {k: j for j, k in enumerate(items)}
    for i, name in enumerate(names):
        for k, v in cells[name].items():
            matrix[i, col[k]] = v
    report = [f"{task}: {m} after filter {fl!r}" for task, (m, fl) in sorted(chosen.items())]
    holes = np.isnan(matrix)
    dropped_models: list[str] = []
    dropped_items = 0
    if holes.any():
        short = [(names[i], int(holes[i].sum())) for i in np.flatnonzero(holes.any(axis=1))]
        report.append(
            f"{len(short)} of {len(names)} models miss some of the {len(items)} items, e.g. "
            + ", ".join(f"{n} ({k} missing)" for n, k in short[:3])
        )
        if missing == "refuse":
            raise DataError(
                " ".join(map(str, folders)),
                "items",
                report[-1],
                "run every model on the same documents, or pass --missing drop-models (keep the models that have "
                "every item) or --missing drop-items (keep the items every model has)",
            )
        if missing == "drop-models":
            keep = ~holes.any(axis=1)
            dropped_models = [n for n, k in zip(names, keep) if not k]
            names, matrix = [n for n, k in zip(names, keep) if k], matrix[keep]
        else:
            keep = ~holes.any(axis=0)
            dropped_items = int((~keep).sum())
            items, matrix = [k for k, kk in zip(items, keep) if kk], matrix[:, keep]
    if len(names) < 2 or len(items) < 2:
        raise DataError(
            " ".join(map(str, folders)), "shape", f"{len(names)} models x {len(items)} items left", "run more"
        )
    docs = pd.Series([k.rpartition("/")[0] for k in items]).value_counts()
    facts = {
        "identity": "verified",
        "evidence": f"built from the lm-evaluation-harness logs of {len(names)} models: items are the logged "
        "(task, doc_id) pairs",
        "tasks": {t: {"metric": m, "filter": fl, "docs": int(docs.get(t, 0))} for t, (m, fl) in sorted(chosen.items())},
        "run_args": "",
    }
    frame = pd.DataFrame(matrix, columns=items)
    frame.insert(0, "model_id", names)
    return Board(frame, facts, dropped_models, dropped_items, report)


def write_board(board: Board, out: str | Path) -> Path:
    out = Path(out)
    if out.suffix.lower() != ".parquet":
        raise DataError(
            out,
            "(file name)",
            "a harness leaderboard is Parquet (it keeps the tasks' metrics)",
            "name it e.g. board.parquet",
        )
    write_parquet_atomic(board.scores, out, {METADATA_KEY: json.dumps(board.facts, sort_keys=True).encode()})
    return out


def read_logs_dataset(spec: DatasetSpec, folder: Path, paths: list[str]) -> RawItemMatrix:
    """A catalog dataset of format ``lm_eval_logs`` (a folder of harness logs, one model per folder,
    with the entry's ``lm_eval_logs`` options ``metric``, ``filter`` and ``missing``) as the ingest's
    raw matrix (:class:`benchcast.data.item_level.RawItemMatrix`): the ``harness_reader`` that
    :func:`benchcast.data.item_level.build_tables` is given for that format."""
    options = dict(spec.extra.get("lm_eval_logs") or {})
    unknown = sorted(set(options) - {"metric", "filter", "missing"})
    if unknown:
        raise DataError(
            folder, f"lm_eval_logs.{unknown[0]}", "is not an option", "use metric, filter and missing (as from-lm-eval)"
        )
    board = build_board([folder], options.get("metric"), options.get("filter"), str(options.get("missing", "refuse")))
    scores = board.scores.drop(columns="model_id").to_numpy(np.float64)
    items = [split_item_id(c) for c in board.scores.columns[1:]]
    columns = {TASK_COLUMN: [t for t, _ in items], DOC_COLUMN: np.asarray([d for _, d in items], dtype=np.int32)}
    names = board.scores["model_id"].tolist()
    return RawItemMatrix(
        scores, names, paths, ["scores"] * len(names), subtasks=columns[TASK_COLUMN], harness=(columns, board.facts)
    )
