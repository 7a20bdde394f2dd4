"""Readers for aggregate (model x benchmark score) leaderboard dumps.

Three public sources are read into one shape, :class:`AggregateTables` (models,
benchmarks, long-format observed scores), or, for the Open LLM Leaderboard CSVs, a
per-model metadata + score table:

``benchpress/website/data.json`` (:func:`read_benchpress`)
    84 models x 133 benchmarks, 2,604 observed cells. Known quirks of the pinned
    copy, all handled here:

    * ``sources`` has 2,813 non-null provenance records but only 2,586 of them sit
      on observed cells; the other 227 (174 ``dropped``, 47 ``needs_review``,
      6 ``flagged``) describe values the authors removed, so they carry no score
      and are not ingested.
    * 4 observed cells have ``audit_status == 'dropped'`` yet keep a value (all
      ``livecodebench``: gpt-oss-120b, gpt-5.1, glm-4.7, doubao-seed-2.0-pro).
      They are kept, with ``audit_status='dropped'``, so a caller can filter them.
    * 18 observed cells have no provenance record at all (source columns are NA).
    * Provenance ``type`` is ``None`` or ``''`` for some cells; both become NA.
    * Release dates come at three precisions (``2025-04-14``, ``2024-09``,
      ``2025``); a partial date is placed on the first day of its period and
      ``release_date_precision`` says which precision the source gave.
    * Scores are not all percentages: Elo ratings (Chatbot Arena, GDPval),
      a Codeforces rating, dollars (SWE-Lancer freelance earnings, up to 112,000;
      Vending-Bench 2 net worth, up to ~8,000), an index (AA Intelligence Index)
      and lower-is-better edit distances (OmniDocBench, 0.1-0.2). No rescaling is
      done here.
    * Some columns mix conventions across sources: ``omnidocbench_1.5`` holds 2
      values on the (1 - edit distance) x 100 scale (89.1, 91.2) among edit
      distances, and the three hallucination-*rate* columns (``factscore``,
      ``longfact_*``) hold the complementary higher-is-better scores (90-99) from
      some sources. They are kept as published.
    * Benchmarks only have ``id`` and ``name``; :func:`read_benchpress` leaves
      ``category``/``metric`` NA. The paper's benchmark inventory (Table 9,
      ``resources/paper/benchpress_benchmark_inventory.csv``) supplies them, plus
      ``scale``, ``is_percentage``, ``lower_is_better`` and ``items``, through
      :func:`attach_benchmark_inventory` (the ingest does this when the catalog
      entry has a ``files.inventory`` role).

``llm-benchmark-matrix/data/llm_benchmark_data.json`` (:func:`read_llm_benchmark_matrix`)
    83 models, 49 benchmarks, 1,390 score records but only 1,375 distinct
    (model, benchmark) cells: 15 cells are listed twice, 3 of them with different
    values. The first record in file order is kept (deterministic; in 2 of the 3
    conflicts it is the model's own model card) and the conflicts are marked with
    ``audit_status='conflicting_duplicate'``. ``scale``/``is_percentage``/
    ``lower_is_better`` are inferred by :func:`infer_scale` and
    :func:`infer_lower_is_better` from the metric text, the name and the
    observed range (the same rule cross-checks the BenchPress inventory).

``sloth/data/*.csv`` (:func:`read_sloth_leaderboard`)
    The Open LLM Leaderboard v2 (729 rows) and v1 (7,169 rows) exports list some
    models more than once, one row per evaluated precision (bfloat16, float16,
    4bit, ...). One row per model is kept, chosen by :data:`PRECISION_PREFERENCE`.

Nothing here unpickles anything: all inputs are JSON or CSV.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from benchcast.data.io import write_parquet_atomic
from benchcast.errors import DataError

__all__ = [
    "AggregateTables",
    "MODEL_COLUMNS",
    "BENCHMARK_COLUMNS",
    "SCORE_COLUMNS",
    "PRECISION_PREFERENCE",
    "SLOTH_COLUMN_MAP",
    "SCALES",
    "SCALE_COLUMNS",
    "INVENTORY_COLUMNS",
    "infer_scale",
    "infer_lower_is_better",
    "with_inferred_scales",
    "read_benchmark_inventory",
    "attach_benchmark_inventory",
    "read_benchpress",
    "read_llm_benchmark_matrix",
    "read_sloth_leaderboard",
    "model_metadata_for",
    "write_aggregate",
]

MODEL_COLUMNS = ("model_id", "name", "provider", "reasoning", "open_weights", "release_date")
BENCHMARK_COLUMNS = ("benchmark_id", "name", "category", "metric")
SCORE_COLUMNS = ("model_id", "benchmark_id", "score", "source_url", "source_type", "audit_status")

#: Units a benchmark column can be on. Only ``percent`` columns are on a 0-100
#: scale where logit/probit-style transforms make sense.
SCALES = ("percent", "elo", "rating", "dollars", "index", "score", "edit_distance")
#: Columns added to ``benchmarks`` by :func:`with_inferred_scales` and
#: :func:`attach_benchmark_inventory` (one schema for every aggregate source).
SCALE_COLUMNS = ("scale", "is_percentage", "lower_is_better")
#: Columns of ``resources/paper/benchpress_benchmark_inventory.csv``.
INVENTORY_COLUMNS = ("benchmark_id", "name", "category", "metric", "items", "scale", "is_percentage",
                     "lower_is_better", "link")


# --------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class AggregateTables:
    """A model x benchmark score table in normalised (tidy) form.

    Attributes
    ----------
    models : pandas.DataFrame
        One row per model, in source order. Columns ``model_id`` (str, unique),
        ``name``, ``provider`` (str or NA), ``reasoning``, ``open_weights``
        (nullable ``boolean``), ``release_date`` (``datetime64[ns]`` or NaT), then
        any extra metadata the source has (e.g. ``release_date_precision``,
        ``params_total_b``, ``canonical_setting_mode``).
    benchmarks : pandas.DataFrame
        One row per benchmark, in source order. Columns ``benchmark_id`` (str,
        unique), ``name``, ``category``, ``metric`` (str or NA), then extras.
    scores : pandas.DataFrame
        One row per observed cell, sorted by (model order, benchmark order).
        Columns ``model_id``, ``benchmark_id``, ``score`` (float64, finite),
        ``source_url``, ``source_type``, ``audit_status`` (str or NA).
    """

    models: pd.DataFrame
    benchmarks: pd.DataFrame
    scores: pd.DataFrame

    def __post_init__(self) -> None:
        # Catch hand-built tables early: every consumer relies on these columns.
        for label, frame, required in (
            ("models", self.models, MODEL_COLUMNS),
            ("benchmarks", self.benchmarks, BENCHMARK_COLUMNS),
            ("scores", self.scores, SCORE_COLUMNS),
        ):
            if not isinstance(frame, pd.DataFrame):
                raise DataError(None, label, f"expected a pandas DataFrame, got {type(frame).__name__}",
                                "build AggregateTables with one of the read_* functions")
            missing = [c for c in required if c not in frame.columns]
            if missing:
                raise DataError(None, label, f"missing columns {missing}",
                                f"provide all of {list(required)}")

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_models, n_benchmarks)``."""
        return len(self.models), len(self.benchmarks)

    def to_matrix(self) -> pd.DataFrame:
        """Return the wide models x benchmarks score matrix.

        Returns
        -------
        pandas.DataFrame
            float64, index ``model_id`` (models order), columns ``benchmark_id``
            (benchmarks order), NaN where no score was observed. Models or
            benchmarks without any score are kept as all-NaN rows/columns.

        Raises
        ------
        DataError
            If a score refers to an unknown model or benchmark, or a
            (model, benchmark) cell occurs twice.
        """
        model_index = pd.Index(self.models["model_id"], name="model_id")
        bench_index = pd.Index(self.benchmarks["benchmark_id"], name="benchmark_id")
        rows = model_index.get_indexer(self.scores["model_id"])
        cols = bench_index.get_indexer(self.scores["benchmark_id"])
        for label, pos, ids in (("model_id", rows, self.scores["model_id"]),
                                ("benchmark_id", cols, self.scores["benchmark_id"])):
            bad = np.flatnonzero(pos < 0)
            if bad.size:
                raise DataError(None, f"scores.{label}",
                                f"{bad.size} score rows refer to unknown ids, e.g. {ids.iloc[bad[0]]!r}",
                                f"add the id to the {'models' if label == 'model_id' else 'benchmarks'} table "
                                "or drop those score rows")
        flat = rows.astype(np.int64) * len(bench_index) + cols
        if len(np.unique(flat)) != len(flat):
            dup = pd.Series(flat).duplicated().to_numpy().nonzero()[0][0]
            raise DataError(None, "scores",
                            f"cell ({self.scores['model_id'].iloc[dup]!r}, "
                            f"{self.scores['benchmark_id'].iloc[dup]!r}) occurs more than once",
                            "keep one score per (model_id, benchmark_id)")
        matrix = np.full((len(model_index), len(bench_index)), np.nan, dtype=np.float64)
        matrix[rows, cols] = self.scores["score"].to_numpy(dtype=np.float64)
        return pd.DataFrame(matrix, index=model_index, columns=bench_index)


# --------------------------------------------------------------------------- helpers


def _load_json(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataError(path, "(file)", "file does not exist",
                        "check the path, or run the workflow's download rule / point raw_dir at the mirror") from None
    except OSError as exc:
        raise DataError(path, "(file)", f"cannot read the file ({exc.strerror})",
                        "check the path and its permissions") from exc
    try:
        return json.loads(raw)
    except UnicodeDecodeError as exc:
        raise DataError(path, "(JSON text encoding)", f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                        "re-download the file; it is not the JSON the reader expects") from exc
    except json.JSONDecodeError as exc:
        raise DataError(path, f"(JSON syntax, line {exc.lineno} column {exc.colno})", exc.msg,
                        "re-download the file; it is truncated or not valid JSON") from exc


def _require_keys(doc: Any, path: Path, keys: Iterable[str], what: str) -> None:
    if not isinstance(doc, dict):
        raise DataError(path, "(top level)", f"expected a JSON object, got {type(doc).__name__}",
                        f"pass the {what} JSON file")
    for key in keys:
        if key not in doc:
            raise DataError(path, key, "required key is missing",
                            f"pass the {what} JSON file, which has keys {list(keys)}")


def _require_list(value: Any, path: Path, field: str) -> list:
    if not isinstance(value, list):
        raise DataError(path, field, f"expected a JSON list, got {type(value).__name__}",
                        "re-download the file; this key has the wrong type")
    return value


def _is_number(value: Any) -> bool:
    # bool is an int subclass; a true/false in a score cell is a data bug, not 1/0.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_score(value: Any, path: Path, field: str) -> float:
    if not _is_number(value):
        raise DataError(path, field, f"expected a number or null, got {type(value).__name__} {value!r:.60}",
                        "fix the cell to a number, or null if unknown")
    out = float(value)
    if not math.isfinite(out):
        raise DataError(path, field, f"score is not finite ({value!r})",
                        "replace NaN/Infinity with null (missing)")
    return out


_DATE_FORMS = (
    (re.compile(r"\d{4}-\d{2}-\d{2}"), "day", ""),
    (re.compile(r"\d{4}-\d{2}"), "month", "-01"),
    (re.compile(r"\d{4}"), "year", "-01-01"),
)


def _parse_partial_date(value: Any, path: Path, field: str) -> tuple[pd.Timestamp, Any]:
    """Parse ``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY``; return (timestamp, precision)."""
    if value is None:
        return pd.NaT, pd.NA
    if isinstance(value, str):
        text = value.strip()
        for pattern, precision, pad in _DATE_FORMS:
            if pattern.fullmatch(text):
                try:
                    return pd.Timestamp(text + pad), precision
                except ValueError:
                    break
    raise DataError(path, field, f"not a date: {value!r:.60}",
                    "write the date as YYYY-MM-DD, YYYY-MM or YYYY, or null if unknown")


def _str_or_na(value: Any, path: Path, field: str) -> Any:
    if value is None:
        return None
    if not isinstance(value, str):
        raise DataError(path, field, f"expected a string or null, got {type(value).__name__} {value!r:.60}",
                        "write this field as a JSON string")
    # Empty strings in provenance fields mean "unknown", same as null.
    return value if value.strip() else None


def _bool_or_na(value: Any, path: Path, field: str) -> Any:
    if value is None or isinstance(value, bool):
        return value
    raise DataError(path, field, f"expected true, false or null, got {value!r:.60}",
                    "write this field as a JSON boolean (or null if unknown)")


def _infer_extra(values: list) -> pd.Series:
    """Give a pass-through metadata column one Parquet-writable dtype."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pd.Series(values, dtype="boolean")
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pd.Series(values, dtype="Int64")
    if present and all(_is_number(v) for v in present):
        return pd.Series([np.nan if v is None else float(v) for v in values], dtype="float64")
    if all(isinstance(v, str) for v in present):
        return pd.Series(values, dtype="str")
    # Mixed or nested values (e.g. temperature given as 'default' or as 0.0): one
    # string column keeps them writable; strings stay as-is, anything else as JSON.
    return pd.Series([None if v is None else v if isinstance(v, str) else json.dumps(v, sort_keys=True)
                      for v in values], dtype="str")


def _records_frame(records: list, path: Path, key: str, spec: Sequence[tuple[str, str, str, bool]],
                   id_column: str) -> pd.DataFrame:
    """Build a frame from a list of JSON objects.

    ``spec`` rows are (output column, source key, kind, required); kinds are
    ``id``, ``str``, ``bool``, ``date``, ``float``, ``millions_to_billions``.
    Keys not in ``spec`` pass through (one level of nested objects is flattened
    into ``<key>_<subkey>`` columns).
    """
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise DataError(path, f"{key}[{i}]", f"expected a JSON object, got {type(rec).__name__}",
                            f"each entry of '{key}' must be an object with an 'id'")
        for out_col, src, kind, required in spec:
            if required and src not in rec:
                raise DataError(path, f"{key}[{i}].{src}", "required key is missing",
                                f"give every entry of '{key}' a '{src}'")

    columns: dict[str, pd.Series] = {}
    for out_col, src, kind, _ in spec:
        def field(i: int, src: str = src) -> str:
            return f"{key}[{i}].{src}"

        raw = [rec.get(src) for rec in records]
        if kind == "id":
            for i, v in enumerate(raw):
                if not isinstance(v, str) or not v.strip():
                    raise DataError(path, field(i), f"expected a non-empty string id, got {v!r:.60}",
                                    "give every entry a unique, non-empty string id")
            seen: dict[str, int] = {}
            for i, v in enumerate(raw):
                if v in seen:
                    raise DataError(path, field(i), f"duplicate id {v!r} (first at {key}[{seen[v]}])",
                                    "make ids unique (rename or merge the duplicate entry)")
                seen[v] = i
            columns[out_col] = pd.Series(raw, dtype="str")
        elif kind == "str":
            columns[out_col] = pd.Series([_str_or_na(v, path, field(i)) for i, v in enumerate(raw)], dtype="str")
        elif kind == "bool":
            columns[out_col] = pd.Series([_bool_or_na(v, path, field(i)) for i, v in enumerate(raw)],
                                         dtype="boolean")
        elif kind == "date":
            parsed = [_parse_partial_date(v, path, field(i)) for i, v in enumerate(raw)]
            columns[out_col] = pd.Series([p[0] for p in parsed], dtype="datetime64[ns]")
            columns[f"{out_col}_precision"] = pd.Series([p[1] for p in parsed], dtype="str")
        elif kind in ("float", "millions_to_billions", "int"):
            scale = 1e-3 if kind == "millions_to_billions" else 1.0
            vals = []
            for i, v in enumerate(raw):
                if v is None:
                    vals.append(None if kind == "int" else np.nan)
                elif not _is_number(v) or not math.isfinite(float(v)):
                    raise DataError(path, field(i), f"expected a finite number or null, got {v!r:.60}",
                                    "write this field as a JSON number (or null if unknown)")
                elif kind == "int":
                    if float(v) != int(v):
                        raise DataError(path, field(i), f"expected a whole number, got {v!r}",
                                        "write this field as an integer")
                    vals.append(int(v))
                else:
                    vals.append(float(v) * scale)
            columns[out_col] = pd.Series(vals, dtype="Int64" if kind == "int" else "float64")
        else:  # pragma: no cover - programming error in a spec table
            raise AssertionError(kind)

    known = {src for _, src, _, _ in spec}
    extra_keys: list[str] = []
    for rec in records:
        for k in rec:
            if k not in known and k not in extra_keys:
                extra_keys.append(k)
    for k in extra_keys:
        raw = [rec.get(k) for rec in records]
        present = [v for v in raw if v is not None]
        if present and all(isinstance(v, dict) for v in present):
            subkeys: list[str] = []
            for v in present:
                subkeys.extend(s for s in v if s not in subkeys)
            new = {f"{k}_{s}": _infer_extra([None if v is None else v.get(s) for v in raw]) for s in subkeys}
        else:
            new = {k: _infer_extra(raw)}
        for name, series in new.items():
            if name in columns:
                raise DataError(path, f"{key}[*].{k}", f"extra key maps to column '{name}', which already exists",
                                "rename the key in the source file")
            columns[name] = series
    frame = pd.DataFrame(columns)
    frame.index = pd.RangeIndex(len(frame))
    assert frame.columns[0] == id_column
    return frame


def _scores_frame(model_ids: list, bench_ids: list, scores: list, urls: list, types: list,
                  statuses: list) -> pd.DataFrame:
    return pd.DataFrame({
        "model_id": pd.Series(model_ids, dtype="str"),
        "benchmark_id": pd.Series(bench_ids, dtype="str"),
        "score": pd.Series(scores, dtype="float64"),
        "source_url": pd.Series(urls, dtype="str"),
        "source_type": pd.Series(types, dtype="str"),
        "audit_status": pd.Series(statuses, dtype="str"),
    })


_BENCHPRESS_MODEL_SPEC = (
    ("model_id", "id", "id", True),
    ("name", "name", "str", True),
    ("provider", "provider", "str", False),
    ("reasoning", "reasoning", "bool", False),
    ("open_weights", "open_weights", "bool", False),
    ("release_date", "release_date", "date", False),
)
_BENCHMARK_SPEC = (
    ("benchmark_id", "id", "id", True),
    ("name", "name", "str", True),
    ("category", "category", "str", False),
    ("metric", "metric", "str", False),
)


# --------------------------------------------------------------------------- BenchPress


def read_benchpress(path: str | os.PathLike) -> AggregateTables:
    """Read the BenchPress website dump (``website/data.json``).

    Parameters
    ----------
    path : str or path-like
        The ``data.json`` file. Keys ``models``, ``benchmarks``, ``observed`` and
        ``sources`` are required; the paper's ``predictions``,
        ``prediction_intervals``, ``trust_probabilities`` and ``meta`` are ignored
        on purpose (they are outputs of the method under comparison, not data).

    Returns
    -------
    AggregateTables
        ``models`` adds ``release_date_precision`` ('day'/'month'/'year') and the
        flattened ``canonical_setting_*`` fields; ``benchmarks`` has NA
        ``category``/``metric`` (the file has neither; :func:`attach_benchmark_inventory`
        adds them from the paper's Table 9); ``scores`` holds every
        non-null ``observed`` cell in (model, benchmark) order, with the cell's
        provenance ``url``, ``type`` and ``audit_status``.

    Raises
    ------
    DataError
        Missing key; ``observed``/``sources`` not shaped (n_models, n_benchmarks);
        a non-numeric or non-finite cell; duplicate model or benchmark id; bad
        model metadata types; unreadable or invalid JSON.

    Notes
    -----
    Cells whose provenance says ``audit_status == 'dropped'`` but whose value is
    still present (4 cells in the pinned copy) are kept with that status, so the
    choice to exclude them is made, visibly, downstream. Provenance attached to
    null cells (227 records) is not ingested: there is no score to attach it to.
    """
    path = Path(path)
    doc = _load_json(path)
    _require_keys(doc, path, ("models", "benchmarks", "observed", "sources"), "BenchPress website/data.json")
    model_recs = _require_list(doc["models"], path, "models")
    bench_recs = _require_list(doc["benchmarks"], path, "benchmarks")
    models = _records_frame(model_recs, path, "models", _BENCHPRESS_MODEL_SPEC, "model_id")
    benchmarks = _records_frame(bench_recs, path, "benchmarks", _BENCHMARK_SPEC, "benchmark_id")
    n_m, n_b = len(models), len(benchmarks)

    observed = _require_list(doc["observed"], path, "observed")
    sources = _require_list(doc["sources"], path, "sources")
    for key, grid in (("observed", observed), ("sources", sources)):
        if len(grid) != n_m:
            raise DataError(path, key, f"has {len(grid)} rows, expected {n_m} (one per model)",
                            f"'{key}' must be a list of {n_m} rows in 'models' order")
        for i, row in enumerate(grid):
            if not isinstance(row, list) or len(row) != n_b:
                got = f"{len(row)} entries" if isinstance(row, list) else f"a {type(row).__name__}"
                raise DataError(path, f"{key}[{i}]", f"row has {got}, expected {n_b} (one per benchmark)",
                                f"'{key}' must be a {n_m} x {n_b} nested list in models x benchmarks order")

    mids = models["model_id"].tolist()
    bids = benchmarks["benchmark_id"].tolist()
    out: dict[str, list] = {k: [] for k in SCORE_COLUMNS}
    for i in range(n_m):
        obs_row, src_row = observed[i], sources[i]
        for j in range(n_b):
            value = obs_row[j]
            if value is None:
                continue
            where = f"observed[{i}][{j}] (model '{mids[i]}', benchmark '{bids[j]}')"
            score = _check_score(value, path, where)
            prov = src_row[j]
            if prov is None:
                url = stype = status = None
            elif isinstance(prov, dict):
                sfield = f"sources[{i}][{j}]"
                url = _str_or_na(prov.get("url"), path, sfield + ".url")
                stype = _str_or_na(prov.get("type"), path, sfield + ".type")
                status = _str_or_na(prov.get("audit_status"), path, sfield + ".audit_status")
            else:
                raise DataError(path, f"sources[{i}][{j}]",
                                f"expected a provenance object or null, got {type(prov).__name__}",
                                "each sources cell must be null or an object with url/type/audit_status")
            out["model_id"].append(mids[i])
            out["benchmark_id"].append(bids[j])
            out["score"].append(score)
            out["source_url"].append(url)
            out["source_type"].append(stype)
            out["audit_status"].append(status)
    scores = _scores_frame(*(out[k] for k in SCORE_COLUMNS))
    return AggregateTables(models=models, benchmarks=benchmarks, scores=scores)


# --------------------------------------------------------------------------- llm-benchmark-matrix


_LLM_MATRIX_MODEL_SPEC = (
    ("model_id", "id", "id", True),
    ("name", "name", "str", True),
    ("provider", "provider", "str", False),
    ("reasoning", "is_reasoning", "bool", False),
    ("open_weights", "open_weights", "bool", False),
    ("release_date", "release_date", "date", False),
    # Stored in millions in the source; billions matches the leaderboards' params_b.
    ("params_total_b", "params_total_M", "millions_to_billions", False),
    ("params_active_b", "params_active_M", "millions_to_billions", False),
    ("architecture", "architecture", "str", False),
)
_LLM_MATRIX_BENCHMARK_SPEC = _BENCHMARK_SPEC + (
    ("num_problems", "num_problems", "int", False),
    ("source_url", "source_url", "str", False),
)


def read_llm_benchmark_matrix(path: str | os.PathLike, *, on_duplicate: str = "first") -> AggregateTables:
    """Read ``llm-benchmark-matrix/data/llm_benchmark_data.json``.

    The file is ``{"models": [...], "benchmarks": [...], "scores": [...],
    "generated": "<timestamp>"}`` where each score is ``{"model_id",
    "benchmark_id", "score", "reference_url"}``.

    Parameters
    ----------
    path : str or path-like
        The JSON file.
    on_duplicate : {'first', 'error'}
        What to do when a (model, benchmark) cell is listed more than once.
        ``'first'`` (default) keeps the first record in file order; if a later
        record disagrees on the value, the kept row gets
        ``audit_status='conflicting_duplicate'``. ``'error'`` raises DataError.

    Returns
    -------
    AggregateTables
        ``models``: ``is_reasoning`` -> ``reasoning``; ``params_total_M`` /
        ``params_active_M`` (millions) -> ``params_total_b`` / ``params_active_b``
        (billions); ``architecture``; ``release_date_precision``.
        ``benchmarks``: ``category``, ``metric``, then ``scale``,
        ``is_percentage``, ``lower_is_better`` (see :func:`with_inferred_scales`),
        ``num_problems``, ``source_url``.
        ``scores``: ``reference_url`` -> ``source_url``; ``source_type`` is NA (the
        file does not classify sources); ``audit_status`` is NA except for
        conflicting duplicates. Sorted by (model order, benchmark order).

    Raises
    ------
    DataError
        Missing key, non-numeric or non-finite score, score for an unknown model
        or benchmark id, duplicate model or benchmark id, duplicate cell with
        ``on_duplicate='error'``, unreadable or invalid JSON.
    """
    if on_duplicate not in ("first", "error"):
        raise ValueError(f"on_duplicate must be 'first' or 'error', got {on_duplicate!r}")
    path = Path(path)
    doc = _load_json(path)
    _require_keys(doc, path, ("models", "benchmarks", "scores"), "llm-benchmark-matrix llm_benchmark_data.json")
    models = _records_frame(_require_list(doc["models"], path, "models"), path, "models",
                            _LLM_MATRIX_MODEL_SPEC, "model_id")
    benchmarks = _records_frame(_require_list(doc["benchmarks"], path, "benchmarks"), path, "benchmarks",
                                _LLM_MATRIX_BENCHMARK_SPEC, "benchmark_id")
    mpos = {m: i for i, m in enumerate(models["model_id"])}
    bpos = {b: j for j, b in enumerate(benchmarks["benchmark_id"])}

    kept: dict[tuple[int, int], dict] = {}
    for k, rec in enumerate(_require_list(doc["scores"], path, "scores")):
        if not isinstance(rec, dict):
            raise DataError(path, f"scores[{k}]", f"expected a JSON object, got {type(rec).__name__}",
                            "each score must be an object with model_id, benchmark_id, score")
        for key in ("model_id", "benchmark_id", "score"):
            if key not in rec:
                raise DataError(path, f"scores[{k}].{key}", "required key is missing",
                                "each score needs model_id, benchmark_id and score")
        m, b = rec["model_id"], rec["benchmark_id"]
        if not isinstance(m, str) or m not in mpos:
            raise DataError(path, f"scores[{k}].model_id", f"unknown model id {m!r:.60}",
                            "add the model to 'models' or fix the id")
        if not isinstance(b, str) or b not in bpos:
            raise DataError(path, f"scores[{k}].benchmark_id", f"unknown benchmark id {b!r:.60}",
                            "add the benchmark to 'benchmarks' or fix the id")
        score = _check_score(rec["score"], path, f"scores[{k}].score (model '{m}', benchmark '{b}')")
        url = _str_or_na(rec.get("reference_url"), path, f"scores[{k}].reference_url")
        cell = (mpos[m], bpos[b])
        if cell in kept:
            first = kept[cell]
            if on_duplicate == "error":
                raise DataError(path, f"scores[{k}]",
                                f"cell (model '{m}', benchmark '{b}') already given at scores[{first['index']}]",
                                "remove the duplicate record, or read with on_duplicate='first'")
            if score != first["score"]:
                first["audit_status"] = "conflicting_duplicate"
            continue
        kept[cell] = {"index": k, "score": score, "url": url, "audit_status": None}

    order = sorted(kept)
    mids, bids = models["model_id"].tolist(), benchmarks["benchmark_id"].tolist()
    scores = _scores_frame(
        [mids[i] for i, _ in order],
        [bids[j] for _, j in order],
        [kept[c]["score"] for c in order],
        [kept[c]["url"] for c in order],
        [None] * len(order),
        [kept[c]["audit_status"] for c in order],
    )
    return with_inferred_scales(AggregateTables(models=models, benchmarks=benchmarks, scores=scores))


# --------------------------------------------------------------------------- sloth / Open LLM Leaderboard CSVs


#: Source column -> output column for the metadata columns of the sloth CSVs.
#: Every other column is a benchmark score: it is renamed to snake_case
#: ("MATH Lvl 5" -> "math_lvl_5", "IFEval Raw" -> "ifeval_raw",
#: "hendrycksTest-anatomy" -> "hendryckstest_anatomy", "Average ⬆️" -> "average")
#: and must be numeric. ``date`` is handled separately (see read_sloth_leaderboard).
SLOTH_COLUMN_MAP: dict[str, str] = {
    "Model": "model",
    "Family": "family",
    "Family2": "family2",
    "Instruct": "instruct",
    "#Params (B)": "params_b",
    "Pretraining Data Size (T)": "pretraining_tokens_t",
    "FLOPs (1E21)": "flops_1e21",
    "Type": "model_type",
    "Architecture": "architecture",
    "Weight type": "weight_type",
    "Precision": "precision",
    "Merged": "merged",
    "Not_Merged": "not_merged",
    "Hub License": "license",
    "Hub ❤️": "hub_likes",
    "Available on the hub": "available_on_hub",
    "Model sha": "model_sha",
    "Flagged": "flagged",
    "MoE": "moe",
    "Chat Template": "chat_template",
    "Maintainer's Highlight": "maintainers_highlight",
    "Submission Date": "submission_date",
    "Upload To Hub Date": "upload_date",
}
_SLOTH_DROP = {"T"}  # the emoji of "Type", which is kept in words
_SLOTH_BOOL = {"instruct", "merged", "not_merged", "available_on_hub", "flagged", "moe", "chat_template",
               "maintainers_highlight"}
_SLOTH_FLOAT = {"params_b", "pretraining_tokens_t", "flops_1e21"}
_SLOTH_INT = {"hub_likes"}
_SLOTH_DATE = {"release_date", "submission_date", "upload_date"}

#: Order in which duplicate leaderboard rows (same model, different precision)
#: are preferred: higher-precision evaluations first; precisions not listed come
#: after, alphabetically.
PRECISION_PREFERENCE = ("bfloat16", "float16", "float32", "8bit", "4bit", "GPTQ")


def _snake(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def _csv_row(i: int) -> str:
    # +2: one for the header line, one because humans count lines from 1.
    return f"row {i} (line {i + 2})"


def _csv_bool(series: pd.Series, path: Path, column: str) -> pd.Series:
    mapping = {"true": True, "false": False, "1": True, "0": False}
    lowered = series.str.strip().str.lower()
    out = lowered.map(mapping)
    bad = series.notna() & out.isna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(path, f"column '{column}', {_csv_row(i)}", f"not a boolean: {series.iloc[i]!r}",
                        "use True/False (or leave the cell empty if unknown)")
    return out.astype("boolean")


def _csv_number(series: pd.Series, path: Path, column: str) -> pd.Series:
    out = pd.to_numeric(series.str.strip(), errors="coerce").astype("float64")
    bad = series.notna() & (out.isna() | ~np.isfinite(out.fillna(0.0)))
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(path, f"column '{column}', {_csv_row(i)}", f"not a finite number: {series.iloc[i]!r}",
                        "fix the cell to a number (or leave it empty if unknown)")
    return out


def _csv_date(series: pd.Series, path: Path, column: str) -> pd.Series:
    # Mixed forms occur ("2024-05-05T12:22:44Z" next to "2023-09-15T11:25:37.918274"):
    # read all as UTC, then drop the zone so every date column is naive UTC.
    out = pd.to_datetime(series.str.strip(), format="ISO8601", utc=True, errors="coerce")
    bad = series.notna() & out.isna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(path, f"column '{column}', {_csv_row(i)}", f"not an ISO date: {series.iloc[i]!r}",
                        "write dates as YYYY-MM-DD (optionally with a time), or leave the cell empty")
    return out.dt.tz_convert(None).astype("datetime64[ns]")


def read_sloth_leaderboard(path: str | os.PathLike) -> pd.DataFrame:
    """Read one of the sloth aggregate CSVs as per-model metadata plus scores.

    Handles ``open-llm-leaderboard_new.csv`` (Open LLM v2), ``..._old.csv`` (v1),
    and ``data_v1.csv`` / ``data_v2.csv`` (sloth's curated tables).

    Parameters
    ----------
    path : str or path-like
        The CSV file. It must have a ``Model`` column.

    Returns
    -------
    pandas.DataFrame
        One row per model, in order of the model's first appearance in the file,
        with column ``model`` (unique str) first, then the metadata columns the
        file has, renamed by :data:`SLOTH_COLUMN_MAP`:

        * ``params_b`` (float64, billions). In the leaderboard exports the source
          is rounded to whole billions and 0 means "under 0.5 B or unknown"
          (gpt2 and a 70 B MoMo both show 0), so 0 becomes NA.
        * dates as naive-UTC ``datetime64[ns]``: ``submission_date`` and
          ``upload_date`` (v2 ``Submission Date`` / ``Upload To Hub Date``);
          the bare ``date`` column is the model's ``release_date`` in the curated
          tables (those with a ``Family`` column) and the evaluation
          ``submission_date`` in the v1 leaderboard export.
        * ``model_type`` = ``Type`` without its emoji (``T`` is dropped);
          ``architecture``, ``precision``, ``weight_type``, ``license``,
          ``model_sha``, ``family``... as str; yes/no columns as ``boolean``;
          ``hub_likes`` as ``Int64``. ``flagged`` and ``moe`` are passed through
          as-is but look unreliable (``Flagged`` is True on every v2 row; ``MoE``
          is True for dense Qwen2-72B models).
        * ``n_evaluations`` (int64): how many rows the file had for the model.
        * then every score column, snake_cased, as float64. Scales differ by
          file: v2 normalised scores are 0-100 and ``*_raw`` are 0-1; v1 scores
          are 0-100; the curated tables are 0-1.

        ``df.attrs`` holds ``layout`` ('open_llm_v2', 'open_llm_v1', 'curated'
        or 'other'), ``score_columns`` and ``source``.

    Raises
    ------
    DataError
        Missing ``Model`` column, empty model name, unparseable number/boolean/
        date cell (names the column and the row), two source columns mapping to
        one output name, or a duplicate model that the file cannot justify.

    Notes
    -----
    Duplicate model names are legitimate only in files with a ``Precision``
    column, where they are separate evaluations of one model at different
    precisions (22 models in v2, 349 in v1). One row per model is kept: the one
    whose precision comes first in :data:`PRECISION_PREFERENCE`, so the choice
    does not depend on row order. A repeated (model, precision) pair, or any
    repeated name in a file without ``Precision``, raises DataError. Names that
    differ only in letter case are distinct rows here (see
    :func:`model_metadata_for` for how lookups treat them).
    """
    path = Path(path)
    try:
        # Everything as text first, so each bad cell can be reported by row and column.
        raw = pd.read_csv(path, dtype=str)
    except FileNotFoundError:
        raise DataError(path, "(file)", "file does not exist",
                        "check the path, or run the workflow's download rule / point raw_dir at the mirror") from None
    except pd.errors.EmptyDataError as exc:
        raise DataError(path, "(header)", "the file is empty", "re-download the CSV") from exc
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DataError(path, "(CSV syntax)", f"cannot parse the CSV ({exc})",
                        "re-download the file; it is truncated or not a CSV") from exc
    except OSError as exc:
        raise DataError(path, "(file)", f"cannot read the file ({exc.strerror})",
                        "check the path and its permissions") from exc

    # An unnamed first column is a pandas index written out with the data.
    if len(raw.columns) and str(raw.columns[0]) == "Unnamed: 0":
        raw = raw.drop(columns=raw.columns[0])
    if "Model" not in raw.columns:
        raise DataError(path, "Model", f"required column is missing (columns: {list(raw.columns)[:12]})",
                        "pass a sloth/Open LLM Leaderboard CSV whose model names are in a 'Model' column")

    cols = set(raw.columns)
    if "Submission Date" in cols or "Upload To Hub Date" in cols:
        layout = "open_llm_v2"
    elif "Family" in cols:
        layout = "curated"
    elif "Merged" in cols or "date" in cols:
        layout = "open_llm_v1"
    else:
        layout = "other"
    date_target = "release_date" if layout == "curated" else "submission_date"

    names = raw["Model"]
    blank = names.isna() | (names.str.strip() == "")
    if blank.any():
        i = int(np.flatnonzero(blank.to_numpy())[0])
        raise DataError(path, f"column 'Model', {_csv_row(i)}", "model name is empty",
                        "fill in the model name or delete the row")

    meta: dict[str, pd.Series] = {}
    score: dict[str, pd.Series] = {}
    origin: dict[str, str] = {}
    for col in raw.columns:
        if col in _SLOTH_DROP:
            continue
        if col == "date":
            out_name = date_target
        elif col in SLOTH_COLUMN_MAP:
            out_name = SLOTH_COLUMN_MAP[col]
        else:
            out_name = _snake(col)
        if not out_name or out_name in origin:
            raise DataError(path, col,
                            f"maps to output column {out_name!r}, already used by {origin.get(out_name)!r}",
                            "rename one of the two columns in the CSV")
        origin[out_name] = col
        series = raw[col]
        if col == "Model":
            meta[out_name] = series.astype("str")
        elif col == "date" or col in SLOTH_COLUMN_MAP:
            if out_name in _SLOTH_BOOL:
                meta[out_name] = _csv_bool(series, path, col)
            elif out_name in _SLOTH_FLOAT:
                values = _csv_number(series, path, col)
                if out_name == "params_b" and layout in ("open_llm_v1", "open_llm_v2"):
                    values = values.mask(values == 0)
                meta[out_name] = values
            elif out_name in _SLOTH_INT:
                values = _csv_number(series, path, col)
                if ((values.dropna() % 1) != 0).any():
                    i = int(np.flatnonzero(((values % 1) != 0) & values.notna())[0])
                    raise DataError(path, f"column '{col}', {_csv_row(i)}", f"not a whole number: {series.iloc[i]!r}",
                                    "write a whole number")
                meta[out_name] = values.astype("Int64")
            elif out_name in _SLOTH_DATE:
                meta[out_name] = _csv_date(series, path, col)
            elif out_name == "model_type":
                # "💬 chat models (RLHF, DPO, IFT, ...)" -> "chat models (RLHF, DPO, IFT, ...)"
                meta[out_name] = series.str.replace(r"^[^\w(]+", "", regex=True).astype("str")
            else:
                meta[out_name] = series.astype("str")
        else:
            score[out_name] = _csv_number(series, path, col)

    frame = pd.DataFrame({**meta, **score})
    model = frame["model"]
    counts = model.map(model.value_counts()).astype("int64")
    if counts.max() > 1:
        if "precision" not in frame.columns:
            i = int(np.flatnonzero(model.duplicated().to_numpy())[0])
            raise DataError(path, f"column 'Model', {_csv_row(i)}", f"duplicate model name {model.iloc[i]!r}",
                            "keep one row per model (this file has no Precision column to tell the rows apart)")
        pair_dup = frame.duplicated(["model", "precision"])
        if pair_dup.any():
            i = int(np.flatnonzero(pair_dup.to_numpy())[0])
            raise DataError(path, f"columns 'Model'+'Precision', {_csv_row(i)}",
                            f"model {model.iloc[i]!r} is listed twice at precision {frame['precision'].iloc[i]!r}",
                            "keep one row per (model, precision)")
        known = {p: r for r, p in enumerate(PRECISION_PREFERENCE)}
        prec = frame["precision"].fillna("")
        rank = pd.DataFrame({
            "model": model,
            "rank": prec.map(lambda p: known.get(p, len(known))).astype("int64"),
            "prec": prec,
            "first": model.map({m: i for i, m in reversed(list(enumerate(model)))}).astype("int64"),
        })
        chosen = rank.sort_values(["rank", "prec"], kind="stable").drop_duplicates("model").index
        keep = pd.Index(sorted(chosen, key=lambda r: rank.at[r, "first"]))
        frame, counts = frame.loc[keep], counts.loc[keep]
    frame = frame.reset_index(drop=True)
    frame.insert(len(meta), "n_evaluations", counts.reset_index(drop=True))
    frame.attrs.update(layout=layout, score_columns=list(score), source=str(path))
    return frame


def model_metadata_for(names: Sequence[str], metadata: pd.DataFrame) -> pd.DataFrame:
    """Look up metadata rows for a list of model names (a left join that keeps order).

    Parameters
    ----------
    names : sequence of str
        Model names, e.g. HF repo ids such as ``"01-ai/Yi-1.5-34B"``. Repeats
        are allowed and give repeated rows.
    metadata : pandas.DataFrame
        A table with a unique ``model`` column, e.g. from
        :func:`read_sloth_leaderboard`.

    Returns
    -------
    pandas.DataFrame
        One row per input name, in input order: ``query`` (the input name),
        ``match`` ('exact', 'case_insensitive', 'ambiguous' or NA), then all
        columns of ``metadata`` (its ``model`` is the matched name), NA where
        unmatched.

    Raises
    ------
    DataError
        ``names`` holds a non-string, ``metadata`` lacks a unique ``model``
        column, or ``metadata`` already has a ``query``/``match`` column.

    Notes
    -----
    Matching is exact first. Otherwise the names are compared after
    ``str.casefold()`` (HF repo ids are case-insensitive on the Hub, but exports
    spell them inconsistently); if that finds exactly one metadata row it is used
    ('case_insensitive'). If it finds several rows that differ only in case
    (the v1 leaderboard has such pairs) none is guessed: the row is NA with
    ``match='ambiguous'``. No other normalisation (whitespace, revision
    suffixes) is attempted.
    """
    if isinstance(names, str):
        raise DataError(None, "names", "got a single string, expected a sequence of model names",
                        "wrap the name in a list")
    if "model" not in metadata.columns:
        raise DataError(None, "metadata.model", "column is missing", "pass a table from read_sloth_leaderboard")
    for col in ("query", "match"):
        if col in metadata.columns:
            raise DataError(None, f"metadata.{col}", "column name clashes with an output column",
                            f"rename the '{col}' column before the lookup")
    keys = metadata["model"].tolist()
    dup = pd.Series(keys).duplicated()
    if dup.any():
        raise DataError(None, "metadata.model", f"duplicate model {keys[int(np.flatnonzero(dup)[0])]!r}",
                        "deduplicate the metadata first (read_sloth_leaderboard does)")
    exact = {k: i for i, k in enumerate(keys) if isinstance(k, str)}
    folded: dict[str, list[int]] = {}
    for i, k in enumerate(keys):
        if isinstance(k, str):
            folded.setdefault(k.casefold(), []).append(i)

    positions: list[int] = []
    how: list[Any] = []
    for n, name in enumerate(names):
        if not isinstance(name, str):
            raise DataError(None, f"names[{n}]", f"expected a string, got {type(name).__name__} {name!r:.60}",
                            "pass model names as strings")
        if name in exact:
            positions.append(exact[name])
            how.append("exact")
            continue
        hits = folded.get(name.casefold(), [])
        if len(hits) == 1:
            positions.append(hits[0])
            how.append("case_insensitive")
        else:
            positions.append(-1)
            how.append("ambiguous" if hits else None)

    base = metadata.reset_index(drop=True)
    # -1 is not a label of the RangeIndex, so reindex fills those rows with NA.
    out = base.reindex(pd.Index(positions)).reset_index(drop=True)
    out.insert(0, "match", pd.Series(how, dtype="str"))
    out.insert(0, "query", pd.Series(list(names), dtype="str"))
    return out


# --------------------------------------------------------------------------- benchmark scales


# Unit words, tried in this order on the benchmark name first, then on the metric
# text: the name is the more specific of the two ("Codeforces Rating" has metric
# "Elo rating" in both BenchPress and llm-benchmark-matrix, but is a rating).
_SCALE_WORDS = (
    ("edit_distance", re.compile(r"edit[\s_-]*distance")),
    ("elo", re.compile(r"\belo\b")),
    ("rating", re.compile(r"\brating\b")),
    ("dollars", re.compile(r"\$|\bdollars?\b|\busd\b")),
    ("index", re.compile(r"\bindex\b")),
)
_LOWER_IS_BETTER = re.compile(r"lower\s*(?:is|=|-is-)?\s*better|edit[\s_-]*distance|hallucination[\s_-]*rate|"
                              r"\berror[\s_-]*rate\b")
_BLANK_METRIC = {"", "-", "\u2014", "\u2013", "n/a", "na"}


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    text = str(value).strip().lower()
    return "" if text in _BLANK_METRIC else text


def _finite_or_none(value: Any) -> float | None:
    if value is None or value is pd.NA:
        return None
    out = float(value)
    return out if math.isfinite(out) else None


def infer_scale(metric: Any, observed_min: Any = None, observed_max: Any = None, *, name: Any = None) -> str:
    """Infer a benchmark column's unit from its metric text, name and observed range.

    The one rule every aggregate source shares (llm-benchmark-matrix uses it
    directly; the hand-checked BenchPress inventory is tested against it).

    Parameters
    ----------
    metric : str or None
        The metric as the source states it (``"% correct"``, ``"Elo rating"``,
        ``"index score"``...). None, NA, ``""`` and ``"—"`` mean "not stated".
    observed_min, observed_max : float or None
        The smallest and largest observed score of the column (None/NaN: no
        scores).
    name : str or None
        The benchmark's display name, e.g. ``"Chatbot Arena Elo"``.

    Returns
    -------
    str
        One of :data:`SCALES`:

        1. a unit word in the name, else in the metric, decides: "edit
           distance" -> ``edit_distance``; "Elo" -> ``elo``; "rating" ->
           ``rating``; "$"/"dollar(s)"/"USD" -> ``dollars``; "index" -> ``index``;
        2. otherwise, a column with a score outside [0, 100] -> ``score`` (not a
           percentage, unit unknown);
        3. otherwise ``percent``: "%" metrics, and unlabelled or generic
           ("overall score") metrics whose scores all lie in [0, 100] -- the
           paper transforms every column but Codeforces, Chatbot Arena and GDPval
           as a percentage.

    Notes
    -----
    A ``percent`` verdict for a column without any observed score rests on the
    text alone. The rule cannot tell dollars from other unbounded scores when
    neither the name nor the metric says so (BenchPress ``vending_bench_2`` is
    a dollar net worth; the rule says ``score``).
    """
    for text in (_text(name), _text(metric)):
        for scale, pattern in _SCALE_WORDS:
            if pattern.search(text):
                return scale
    lo, hi = _finite_or_none(observed_min), _finite_or_none(observed_max)
    if (lo is not None and lo < 0) or (hi is not None and hi > 100):
        return "score"
    return "percent"


def infer_lower_is_better(metric: Any, *, name: Any = None, scale: Any = None) -> bool:
    """True when the name or metric says lower is better.

    That is: "lower is better" / "lower=better", an edit distance (also
    ``scale='edit_distance'``), a hallucination rate or an error rate.
    Everything else (accuracy, pass rate, Elo, dollars earned...) is higher-is-better.
    """
    if scale == "edit_distance":
        return True
    return any(_LOWER_IS_BETTER.search(t) for t in (_text(name), _text(metric)))


def _observed_ranges(tables: AggregateTables) -> pd.DataFrame:
    return tables.scores.groupby("benchmark_id", sort=False)["score"].agg(["min", "max"])


def _place_after_metric(benchmarks: pd.DataFrame, new: dict[str, pd.Series]) -> pd.DataFrame:
    """Put ``new`` columns right after ``metric`` (replacing same-named columns)."""
    out = benchmarks.drop(columns=[c for c in new if c in benchmarks.columns])
    at = list(out.columns).index("metric") + 1
    for offset, (col, values) in enumerate(new.items()):
        # .array keeps the extension dtype and drops the index (rows are aligned by position)
        out.insert(at + offset, col, values.array if isinstance(values, pd.Series) else values)
    return out


def with_inferred_scales(tables: AggregateTables) -> AggregateTables:
    """Add ``scale``, ``is_percentage`` and ``lower_is_better`` to ``tables.benchmarks``.

    Each benchmark gets :func:`infer_scale` of its metric, name and observed
    score range, ``is_percentage = scale == 'percent'`` and
    :func:`infer_lower_is_better`. The columns go right after ``metric``
    (``scale`` str, the flags nullable ``boolean``); existing columns of those
    names are replaced. The input is not modified.
    """
    ranges = _observed_ranges(tables)
    b = tables.benchmarks
    scales, lower = [], []
    for bid, name, metric in zip(b["benchmark_id"], b["name"], b["metric"]):
        lo, hi = (ranges.at[bid, "min"], ranges.at[bid, "max"]) if bid in ranges.index else (None, None)
        scale = infer_scale(metric, lo, hi, name=name)
        scales.append(scale)
        lower.append(infer_lower_is_better(metric, name=name, scale=scale))
    benchmarks = _place_after_metric(b, {
        "scale": pd.Series(scales, dtype="str"),
        "is_percentage": pd.Series([s == "percent" for s in scales], dtype="boolean"),
        "lower_is_better": pd.Series(lower, dtype="boolean"),
    })
    return AggregateTables(models=tables.models, benchmarks=benchmarks, scores=tables.scores)


# --------------------------------------------------------------------------- benchmark inventory


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
        raise DataError(path, "(file)", "file does not exist",
                        "check the path; the BenchPress inventory lives in the repository at "
                        "resources/paper/benchpress_benchmark_inventory.csv") from None
    except pd.errors.EmptyDataError as exc:
        raise DataError(path, "(header)", "the file is empty",
                        f"write a header row with columns {list(INVENTORY_COLUMNS)}") from exc
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DataError(path, "(CSV syntax)", f"cannot parse the CSV ({exc})",
                        "fix the quoting/encoding (UTF-8, comma-separated, quote fields that contain commas)") from exc
    except OSError as exc:
        raise DataError(path, "(file)", f"cannot read the file ({exc.strerror})",
                        "check the path and its permissions") from exc
    missing = [c for c in _INVENTORY_REQUIRED if c not in raw.columns]
    if missing:
        raise DataError(path, missing[0], f"required column is missing (columns: {list(raw.columns)})",
                        f"give the inventory the columns {list(INVENTORY_COLUMNS)}")
    raw = raw.fillna("").apply(lambda col: col.str.strip())  # short rows: missing trailing cells are empty

    def where(col: str, i: int) -> str:
        return f"column '{col}', {_csv_row(i)} (benchmark '{raw['benchmark_id'].iloc[i]}')"

    ids = raw["benchmark_id"]
    if (ids == "").any():
        i = int(np.flatnonzero((ids == "").to_numpy())[0])
        raise DataError(path, f"column 'benchmark_id', {_csv_row(i)}", "benchmark id is empty",
                        "fill in the matrix's benchmark id or delete the row")
    dup = ids.duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        first = int(np.flatnonzero((ids == ids.iloc[i]).to_numpy())[0])
        raise DataError(path, f"column 'benchmark_id', {_csv_row(i)}",
                        f"duplicate benchmark id {ids.iloc[i]!r} (first at {_csv_row(first)})",
                        "keep one row per benchmark id (merge or delete the repeat)")

    def booleans(col: str) -> pd.Series:
        values = []
        for i, v in enumerate(raw[col]):
            low = v.lower()
            if low not in ("true", "false", ""):
                raise DataError(path, where(col, i), f"not a boolean: {v!r}",
                                "write true or false (or leave the cell empty if unknown)")
            values.append(None if low == "" else low == "true")
        return pd.Series(values, dtype="boolean")

    scales = []
    for i, v in enumerate(raw["scale"]):
        if v and v not in SCALES:
            raise DataError(path, where("scale", i), f"unknown scale {v!r}",
                            f"use one of {', '.join(SCALES)} (or leave the cell empty if unknown)")
        scales.append(v or None)
    is_pct = booleans("is_percentage")
    lower = booleans("lower_is_better")
    for i, (scale, pct) in enumerate(zip(scales, is_pct)):
        if scale is not None and pct is not pd.NA and bool(pct) != (scale == "percent"):
            raise DataError(path, where("is_percentage", i),
                            f"is_percentage={str(bool(pct)).lower()} contradicts scale={scale!r}",
                            "is_percentage must be true exactly when scale is 'percent'")
    items = []
    for i, v in enumerate(raw["items"]):
        if v == "":
            items.append(None)
        elif re.fullmatch(r"\d+", v):
            items.append(int(v))
        else:
            raise DataError(path, where("items", i), f"not a whole number: {v!r}",
                            "write the item count as digits without separators (or leave it empty if unknown)")
    return pd.DataFrame({
        "benchmark_id": ids.astype("str"),
        "category": pd.Series([v or None for v in raw["category"]], dtype="str"),
        "metric": pd.Series([v or None for v in raw["metric"]], dtype="str"),
        "scale": pd.Series(scales, dtype="str"),
        "is_percentage": is_pct,
        "lower_is_better": lower,
        "items": pd.Series(items, dtype="Int64"),
    })


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
        raise DataError(path, f"column 'benchmark_id', {_csv_row(i)}",
                        f"{len(extra)} id(s) are not benchmarks of the matrix: {extra[:5]}",
                        "fix the id to the matrix's benchmark id (website/data.json 'benchmarks'), or delete the row")
    missing = matrix_ids[~matrix_ids.isin(inv["benchmark_id"])].tolist()
    if missing:
        raise DataError(path, "column 'benchmark_id'",
                        f"{len(missing)} benchmark(s) of the matrix have no row: {missing[:5]}",
                        "add one row per matrix benchmark (an unknown value may be left empty)")
    row = inv.set_index("benchmark_id").reindex(matrix_ids)
    b = tables.benchmarks.reset_index(drop=True)
    for col in ("category", "metric"):
        b[col] = pd.Series([own if not pd.isna(own) else new for own, new in zip(b[col], row[col])], dtype="str")
    benchmarks = _place_after_metric(b, {col: row[col] for col in ("scale", "is_percentage", "lower_is_better",
                                                                    "items")})
    return AggregateTables(models=tables.models, benchmarks=benchmarks, scores=tables.scores)


# --------------------------------------------------------------------------- writing


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
