"""Item-level response matrices: read raw dumps, validate, write/read the Parquet tables.

Tables written per dataset:

``responses.parquet``
    long/tidy: ``model_idx`` (int32), ``item_idx`` (int32), ``score`` (float32, 0/1), sorted by
    model then item; every (model, item) pair present exactly once. Option-probability dumps
    (``npy_options``: score = the most probable option is the gold one) add ``p_correct``
    (float32), the probability the model gave the gold option.
``models.parquet``
    ``model_idx``, ``model_id`` (unique str), ``name`` (as in the source, may repeat when the
    catalog allows it), ``accuracy`` (full-benchmark mean), ``excluded`` (bool) and
    ``exclusion_reason`` -- rows the paper's loader drops are kept here but flagged, so
    nothing is silently lost; experiments use only ``excluded == False`` rows -- and
    ``file_role``, the catalog file the row was read from (``scores``; ``source`` or
    ``target`` for a ``npy_pair`` dump, whose files give the roles TailoredBench uses).
``items.parquet``
    ``item_idx``, ``item_id`` (``<dataset>/<position>``), ``subtask``, ``subtask_position``; where
    the catalog names the lm-evaluation-harness question of each item, ``lm_eval_task`` and
    ``lm_eval_doc_id`` too, and the file's metadata holds the harness facts
    (:mod:`benchcast.data.harness_identity`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.data.catalog import PUBLIC_URL_TEMPLATE, DatasetSpec
from benchcast.data.csv_matrix import read_csv_matrix
from benchcast.data.harness_identity import METADATA_KEY, catalog_columns
from benchcast.data.io import write_parquet_atomic
from benchcast.data.option_probs import read_option_dumps
from benchcast.data.safe_pickle import safe_load
from benchcast.errors import ConfigError, DataError, refuse_cells


@dataclass
class ResponseMatrix:
    """A dense models x items score matrix with its labels.

    ``scores[i, j]`` is model ``model_ids[i]``'s score on item ``item_ids[j]`` in [0, 1].
    """

    dataset: str
    scores: np.ndarray
    model_ids: list[str]
    model_names: list[str]
    item_ids: list[str]
    subtasks: list[str]
    file_roles: list[str] | None = None  # per model: the catalog file its row came from

    @property
    def shape(self) -> tuple[int, int]:
        return self.scores.shape  # type: ignore[return-value]

    def accuracy(self) -> np.ndarray:
        return self.scores.mean(axis=1)


# --------------------------------------------------------------------------- reading raw


def _read_model_list(path: Path, fmt: str | None) -> list[str]:
    if fmt == "txt" or path.suffix == ".txt":
        names = [line.strip() for line in path.read_text().splitlines() if line.strip()]
    else:
        names = safe_load(path)
        if not isinstance(names, list):
            raise DataError(
                path,
                "model list",
                "expected a pickled list of str, got an array",
                "point files.models at the *_models.jbl list",
            )
    return names


def _as_score_array(arr: object, path: Path) -> np.ndarray:
    if not isinstance(arr, np.ndarray):
        raise DataError(
            path,
            "scores",
            f"expected a numpy array, got {type(arr).__name__}",
            "point files.scores at the models x items score dump",
        )
    if arr.ndim != 2:
        raise DataError(
            path,
            "scores",
            f"expected a 2-D models x items array, got shape {arr.shape}",
            "re-export the dump as a 2-D array",
        )
    return arr.astype(np.float64)


@dataclass
class RawItemMatrix:
    """What an item-level dump holds: 0/1 ``scores`` (models x items), model ``names`` (None when
    the source has none), the ``paths`` read, per row the catalog file it came from
    (``file_roles``) and, for option-probability dumps, the gold option's probability."""

    scores: np.ndarray
    names: list[str] | None
    paths: list[str]
    file_roles: list[str]
    p_correct: np.ndarray | None = None
    subtasks: list[str] | None = None  # per item, where the dump names them (csv_matrix)
    harness: tuple[dict, dict] | None = None  # lm_eval_logs: the identity columns and the harness facts


#: reads a folder of harness logs (``spec``, the folder, the list of paths read so far) into a raw matrix
HarnessReader = Callable[[DatasetSpec, Path, list[str]], RawItemMatrix]


def read_raw_item_matrix(
    spec: DatasetSpec, raw_dir: str | Path | Mapping, harness_reader: HarnessReader | None = None
) -> RawItemMatrix:
    """Read the raw files of an item-level dataset (formats ``jbl``, ``npy_pair``, ``npy_options``,
    ``csv_matrix``, and ``lm_eval_logs``: a folder of lm-evaluation-harness logs, one model per
    folder, as ``benchcast leaderboard from-lm-eval`` reads it, with the entry's ``lm_eval_logs``
    options ``metric``, ``filter`` and ``missing``). The harness logs are read by ``harness_reader``
    (:func:`benchcast.lm_eval.board.read_logs_dataset`, which the workflow's ingest and ``benchcast
    fetch`` pass): reading the harness's files is :mod:`benchcast.lm_eval`'s, a layer above this one."""
    raw_dir = raw_dir if isinstance(raw_dir, Mapping) else Path(raw_dir)  # or each role's file
    paths: list[str] = []

    def need(role: str) -> Path:
        p = spec.local_path(raw_dir, role)
        if not p.exists():
            raise DataError(
                p,
                f"files.{role}",
                "file not found",
                f"set raw_dir to a mirror that has it, or run the download rule for '{spec.name}' "
                f"(URL: {spec.url(role, PUBLIC_URL_TEMPLATE)})",
            )
        paths.append(str(p))
        return p

    if spec.format == "jbl":
        sp = need("scores")
        scores = _as_score_array(safe_load(sp), sp)
        names = None
        if "models" in spec.files:
            mp = need("models")
            names = _read_model_list(mp, spec.files["models"].format)
            if len(names) != scores.shape[0]:
                raise DataError(
                    sp,
                    "rows",
                    f"score matrix has {scores.shape[0]} rows but model list {mp.name} has {len(names)} names",
                    "use the model list that belongs to this dump (same commit), or fix the catalog entry",
                )
        return RawItemMatrix(scores, names, paths, ["scores"] * scores.shape[0])
    if spec.format == "npy_pair":
        parts = []
        for role in ("source", "target"):
            p = need(role)
            try:
                parts.append(_as_score_array(np.load(p, allow_pickle=False), p))
            except ValueError as exc:
                raise DataError(p, role, f"not a plain .npy array ({exc})", "re-download the file") from exc
        if parts[0].shape[1] != parts[1].shape[1]:
            raise DataError(
                paths[1],
                "columns",
                f"source has {parts[0].shape[1]} items but target has {parts[1].shape[1]}",
                "use the source/target files of the same benchmark",
            )
        roles = ["source"] * parts[0].shape[0] + ["target"] * parts[1].shape[0]
        return RawItemMatrix(np.vstack(parts), None, paths, roles)
    if spec.format == "npy_options":
        files = [need(role) for role in ("source", "target", "labels")]
        max_items = spec.extra.get("max_items")
        scored, roles = read_option_dumps(*files, max_items=None if max_items is None else int(max_items))
        return RawItemMatrix(scored.correct, None, paths, roles, p_correct=scored.p_correct)
    if spec.format == "csv_matrix":
        options = {
            k: spec.extra[k]
            for k in ("orientation", "item_columns", "subtask_column", "model_column")
            if k in spec.extra
        }
        table = read_csv_matrix(need("scores"), **options)
        n_models = table.scores.shape[0]
        return RawItemMatrix(table.scores, table.model_names, paths, ["scores"] * n_models, subtasks=table.subtasks)
    if spec.format == "lm_eval_logs":
        if harness_reader is None:
            raise ConfigError(
                f"dataset '{spec.name}' is a folder of lm-evaluation-harness logs; fix: build its tables with "
                "harness_reader=benchcast.lm_eval.board.read_logs_dataset (the workflow's ingest and benchcast fetch do)"
            )
        return harness_reader(spec, need("logs"), paths)
    raise DataError(
        spec.files[next(iter(spec.files))].path,
        "format",
        f"format '{spec.format}' is not an item-level format",
        "use jbl, npy_pair, npy_options, csv_matrix or lm_eval_logs",
    )


# --------------------------------------------------------------------------- validation


def validate_unit_scores(scores: np.ndarray, path: str | Path) -> None:
    """A user's leaderboard: every score finite and in [0, 1] (0/1 for right/wrong, or partial credit:
    F1, a normalised ROUGE; :attr:`benchcast.methods.Method.scores` says which methods take which)."""
    refuse_cells(
        ~np.isfinite(scores) | (scores < 0) | (scores > 1),
        scores,
        path,
        "scores",
        "value {value!r} is not a score in [0, 1] ({count} such cells)",
        "give each item's score as 1 (right), 0 (wrong) or partial credit between them (a metric out of 100 "
        "divided by 100); leave no cell empty",
    )


def is_binary(scores: np.ndarray) -> bool:
    """Every score is exactly 0 or 1 (NaN is neither): the one test of 0/1 scores, for the checks that
    refuse other scores and the fast paths that need them."""
    return bool(((scores == 0.0) | (scores == 1.0)).all())


def validate_binary(scores: np.ndarray, path: str | Path) -> None:
    """Scores must be finite and exactly 0/1 (P-IRT/GP-IRT and eq. 4 assume binary accuracy)."""
    refuse_cells(
        ~np.isfinite(scores),
        scores,
        path,
        "scores",
        "{count} NaN/inf values where binary scores are required",
        "drop or re-evaluate those models/items",
    )
    refuse_cells(
        (scores != 0) & (scores != 1),
        scores,
        path,
        "scores",
        "value {value!r} is not 0/1 ({count} such cells)",
        "binarize the dump (correct = 1): the studies run on 0/1 datasets; a leaderboard of partial credit "
        "goes to benchcast select / estimate as a CSV or Parquet file",
    )


def resolve_model_ids(
    names: list[str] | None, n_rows: int, spec: DatasetSpec, path: str | Path
) -> tuple[list[str], list[str]]:
    """Unique model ids; repeated names are an error unless the catalog says ``suffix``."""
    if names is None:
        width = len(str(n_rows - 1))
        ids = [f"{spec.name}_model_{i:0{width}d}" for i in range(n_rows)]
        return ids, ids
    counts = Counter(names)
    dups = sorted(n for n, c in counts.items() if c > 1)
    if dups and spec.duplicate_model_names != "suffix":
        raise DataError(
            path,
            "model names",
            f"{len(dups)} duplicate model names, e.g. {dups[:3]}",
            "remove the duplicates, or set duplicate_model_names: suffix in the catalog entry "
            "to keep them as name#2, name#3",
        )
    used = set(names)  # a repeat must not collide with a name the source already has (e.g. "m#2")
    seen: Counter[str] = Counter()
    ids = []
    for n in names:
        seen[n] += 1
        if seen[n] == 1:
            ids.append(n)
            continue
        k = seen[n]
        while f"{n}#{k}" in used:
            k += 1
        seen[n] = k
        used.add(f"{n}#{k}")
        ids.append(f"{n}#{k}")
    return ids, list(names)


def item_labels(
    spec: DatasetSpec, n_items: int, subtasks: list[str] | None = None
) -> tuple[list[str], list[str], list[int]]:
    """Item ids, subtasks and positions within the subtask: from the dump's own per-item
    ``subtasks`` where it has them, else from the catalog's ``subtasks`` sizes (in order)."""
    width = len(str(n_items - 1))
    item_ids = [f"{spec.name}/{j:0{width}d}" for j in range(n_items)]
    if subtasks is not None:
        seen: Counter[str] = Counter()
        positions = []
        for name in subtasks:
            positions.append(seen[name])
            seen[name] += 1
        return item_ids, list(subtasks), positions
    if spec.subtasks and sum(s for _, s in spec.subtasks) == n_items:
        subtasks = [name for name, size in spec.subtasks for _ in range(size)]
        positions = [k for _, size in spec.subtasks for k in range(size)]
    else:
        subtasks, positions = [spec.name] * n_items, list(range(n_items))
    return item_ids, subtasks, positions


def build_tables(
    spec: DatasetSpec, raw_dir: str | Path | Mapping, log: callable = print, harness_reader: HarnessReader | None = None
) -> dict[str, pd.DataFrame]:
    """Raw dump -> validated ``responses``, ``models``, ``items`` DataFrames (``harness_reader``: see
    :func:`read_raw_item_matrix`)."""
    raw = read_raw_item_matrix(spec, raw_dir, harness_reader)
    scores, names, paths = raw.scores, raw.names, raw.paths
    validate_binary(scores, paths[0])
    n_models, n_items = scores.shape
    for what, got, want in (("models", n_models, spec.n_models), ("items", n_items, spec.n_items)):
        if want is not None and got != want:
            log(f"WARNING {spec.name}: catalog expects {want} {what}, file has {got} (using the file)")
    model_ids, model_names = resolve_model_ids(names, n_models, spec, paths[-1])
    acc = scores.mean(axis=1)
    excluded = acc <= spec.min_accuracy
    models = pd.DataFrame(
        {
            "model_idx": np.arange(n_models, dtype=np.int32),
            "model_id": model_ids,
            "name": model_names,
            "accuracy": acc,
            "excluded": excluded,
            "exclusion_reason": np.where(excluded, f"accuracy <= {spec.min_accuracy:g}", ""),
            "file_role": raw.file_roles,
        }
    )
    models = _attach_metadata(models, spec, raw_dir, log)
    item_ids, subtasks, positions = item_labels(spec, n_items, raw.subtasks)
    if raw.harness is not None:
        columns, facts = raw.harness
    elif spec.extra.get("lm_eval") is not None:
        columns, facts = catalog_columns(spec.name, spec.extra["lm_eval"], n_items)
    else:
        columns, facts = {}, None
    if raw.subtasks is None and spec.subtasks and len(set(subtasks)) == 1 and subtasks[0] == spec.name:
        log(f"WARNING {spec.name}: subtask sizes in the catalog do not sum to {n_items}; subtasks not recorded")
    items = pd.DataFrame(
        {
            "item_idx": np.arange(n_items, dtype=np.int32),
            "item_id": item_ids,
            "subtask": subtasks,
            "subtask_position": np.asarray(positions, dtype=np.int32),
            **columns,
        }
    )
    if facts is not None:  # kept in items.parquet's metadata (write_tables)
        items.attrs[METADATA_ATTR] = facts
    responses = pd.DataFrame(
        {
            "model_idx": np.repeat(np.arange(n_models, dtype=np.int32), n_items),
            "item_idx": np.tile(np.arange(n_items, dtype=np.int32), n_models),
            "score": scores.astype(np.float32).ravel(),
        }
    )
    if raw.p_correct is not None:
        responses["p_correct"] = raw.p_correct.astype(np.float32).ravel()
    log(
        f"{spec.name}: {n_models} models x {n_items} items, {int(excluded.sum())} excluded "
        f"(accuracy <= {spec.min_accuracy:g}); read {', '.join(paths)}"
    )
    return {"responses": responses, "models": models, "items": items}


METADATA_COLUMNS = ["architecture", "params_b", "precision", "submission_date", "upload_date"]


def _attach_metadata(models: pd.DataFrame, spec: DatasetSpec, raw_dir: str | Path, log) -> pd.DataFrame:
    """Join model metadata (sloth's Open LLM v2 table) by model name, when the catalog names one.

    ``organization`` is the Hugging Face namespace of the name (``org/model``); other columns
    come from the metadata table and are NA for names it does not list.
    """
    models = models.assign(organization=[n.split("/")[0] if "/" in n else pd.NA for n in models["name"]])
    if "metadata" not in spec.files:
        return models
    from benchcast.data.aggregate import model_metadata_for, read_sloth_leaderboard

    path = spec.local_path(raw_dir, "metadata")
    if not path.exists():
        raise DataError(path, "files.metadata", "file not found", "set raw_dir to a mirror that has it, or download it")
    meta = read_sloth_leaderboard(path)
    joined = model_metadata_for(models["name"].tolist(), meta)
    cols = [c for c in METADATA_COLUMNS if c in joined.columns]
    out = pd.concat([models.reset_index(drop=True), joined[cols].reset_index(drop=True)], axis=1)
    out["metadata_matched"] = joined["match"].isin(["exact", "case_insensitive"]).to_numpy()
    log(f"{spec.name}: model metadata from {path.name} for {int(out['metadata_matched'].sum())} of {len(out)} models")
    return out


# --------------------------------------------------------------------------- parquet io


#: the DataFrame attribute holding a table's harness facts, written to its Parquet metadata
METADATA_ATTR = "lm_eval"


def write_tables(tables: dict[str, pd.DataFrame], out: dict[str, str | Path]) -> None:
    """The tables as Parquet; items.parquet keeps the dataset's harness facts, where it has them
    (:mod:`benchcast.data.harness_identity`), in its metadata."""
    for name, df in tables.items():
        facts = df.attrs.get(METADATA_ATTR)
        metadata = None if facts is None else {METADATA_KEY: json.dumps(facts, sort_keys=True).encode()}
        write_parquet_atomic(df, out[name], metadata)


CATALOG_MIN_ACCURACY = "catalog"


def load_response_matrix(
    data_dir: str | Path,
    dataset: str | None = None,
    include_excluded: bool = False,
    min_accuracy: float | None | str = CATALOG_MIN_ACCURACY,
) -> ResponseMatrix:
    """Read the three tables of one dataset back into a dense :class:`ResponseMatrix`.

    Rows are the models the ingest kept (the catalog's ``min_accuracy``), every model with
    ``include_excluded``, or -- a study's own setting -- those with accuracy above
    ``min_accuracy`` (``None``: every model; TailoredBench keeps the all-zero rows that "misses
    the mark" drops)."""
    data_dir = Path(data_dir)
    for name in ("models", "items", "responses"):
        if not (data_dir / f"{name}.parquet").exists():
            raise DataError(
                data_dir / f"{name}.parquet",
                "(file)",
                "not built yet (the workflow writes it when it ingests this dataset)",
                f"build it with: snakemake --cores all {data_dir.as_posix()}/responses.parquet "
                "(any item_binary dataset of the catalog whose files raw_dir has)",
            )
    models = pd.read_parquet(data_dir / "models.parquet")
    items = pd.read_parquet(data_dir / "items.parquet")
    resp = pd.read_parquet(data_dir / "responses.parquet")
    n_models, n_items = len(models), len(items)
    if len(resp) != n_models * n_items:
        raise DataError(
            data_dir / "responses.parquet",
            "rows",
            f"{len(resp)} rows, expected {n_models} x {n_items}",
            "re-run the ingest rule",
        )
    mi, ii = resp["model_idx"].to_numpy(np.int64), resp["item_idx"].to_numpy(np.int64)
    if np.bincount(mi * n_items + ii, minlength=n_models * n_items).max() != 1:
        raise DataError(
            data_dir / "responses.parquet",
            "model_idx, item_idx",
            "some (model, item) pairs are missing or repeated",
            "re-run the ingest rule",
        )
    scores = np.zeros((n_models, n_items), dtype=np.float64)
    scores[mi, ii] = resp["score"].to_numpy()
    if include_excluded or min_accuracy is None:
        keep = np.ones(n_models, bool)
    elif min_accuracy == CATALOG_MIN_ACCURACY:
        keep = ~models["excluded"].to_numpy()
    else:
        keep = models["accuracy"].to_numpy() > float(min_accuracy)
    roles = models["file_role"][keep].tolist() if "file_role" in models else None
    return ResponseMatrix(
        dataset=dataset or data_dir.name,
        scores=scores[keep],
        model_ids=models["model_id"][keep].tolist(),
        model_names=models["name"][keep].tolist(),
        item_ids=items["item_id"].tolist(),
        subtasks=items["subtask"].tolist(),
        file_roles=roles,
    )


def iter_item_datasets(names: Iterable[str], catalog) -> list[DatasetSpec]:
    specs = [catalog[n] for n in names]
    for s in specs:
        if s.kind != "item_binary":
            raise DataError(
                catalog.path,
                f"datasets.{s.name}.kind",
                f"'{s.name}' is an {s.kind} dataset, not item-level",
                "list only item_binary datasets in this study's config",
            )
    return specs


def dataset_tables(dataset: str) -> dict[str, str]:
    """The ingested tables of an item-level dataset, by the input names every study's jobs use."""
    return {
        "models": f"results/data/{dataset}/models.parquet",
        "responses": f"results/data/{dataset}/responses.parquet",
        "item_table": f"results/data/{dataset}/items.parquet",
    }
