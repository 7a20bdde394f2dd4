"""Parsing and validation helpers shared by the aggregate readers.

* JSON input (BenchPress ``website/data.json``, llm-benchmark-matrix
  ``llm_benchmark_data.json``): :func:`_load_json` reads a file and turns every
  read/decode failure into a :class:`~benchcast.errors.DataError`;
  :func:`_require_keys` / :func:`_require_list` check the document's shape;
  :func:`_check_score`, :func:`_str_or_na`, :func:`_bool_or_na` and
  :func:`_parse_partial_date` validate single cells (dates at day, month or year
  precision); :func:`_records_frame` builds a typed frame from a list of JSON
  objects following a spec table (e.g. :data:`_BENCHMARK_SPEC`), passing unknown
  keys through; :func:`_scores_frame` builds the long scores table.
* CSV input (sloth leaderboards, the benchmark inventory): :func:`_csv_row`
  names a data row and its line number in error messages.

Every error names the file, the field and the fix.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchcast.errors import DataError


def _load_json(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataError(
            path,
            "(file)",
            "file does not exist",
            "check the path, or run the workflow's download rule / point raw_dir at the mirror",
        ) from None
    except OSError as exc:
        raise DataError(
            path, "(file)", f"cannot read the file ({exc.strerror})", "check the path and its permissions"
        ) from exc
    try:
        return json.loads(raw)
    except UnicodeDecodeError as exc:
        raise DataError(
            path,
            "(JSON text encoding)",
            f"not UTF-8 text ({exc.reason} at byte {exc.start})",
            "re-download the file; it is not the JSON the reader expects",
        ) from exc
    except json.JSONDecodeError as exc:
        raise DataError(
            path,
            f"(JSON syntax, line {exc.lineno} column {exc.colno})",
            exc.msg,
            "re-download the file; it is truncated or not valid JSON",
        ) from exc


def _require_keys(doc: Any, path: Path, keys: Iterable[str], what: str) -> None:
    if not isinstance(doc, dict):
        raise DataError(
            path, "(top level)", f"expected a JSON object, got {type(doc).__name__}", f"pass the {what} JSON file"
        )
    for key in keys:
        if key not in doc:
            raise DataError(
                path, key, "required key is missing", f"pass the {what} JSON file, which has keys {list(keys)}"
            )


def _require_list(value: Any, path: Path, field: str) -> list:
    if not isinstance(value, list):
        raise DataError(
            path,
            field,
            f"expected a JSON list, got {type(value).__name__}",
            "re-download the file; this key has the wrong type",
        )
    return value


def _is_number(value: Any) -> bool:
    # bool is an int subclass; a true/false in a score cell is a data bug, not 1/0.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_score(value: Any, path: Path, field: str) -> float:
    if not _is_number(value):
        raise DataError(
            path,
            field,
            f"expected a number or null, got {type(value).__name__} {value!r:.60}",
            "fix the cell to a number, or null if unknown",
        )
    out = float(value)
    if not math.isfinite(out):
        raise DataError(path, field, f"score is not finite ({value!r})", "replace NaN/Infinity with null (missing)")
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
    raise DataError(
        path, field, f"not a date: {value!r:.60}", "write the date as YYYY-MM-DD, YYYY-MM or YYYY, or null if unknown"
    )


def _str_or_na(value: Any, path: Path, field: str) -> Any:
    if value is None:
        return None
    if not isinstance(value, str):
        raise DataError(
            path,
            field,
            f"expected a string or null, got {type(value).__name__} {value!r:.60}",
            "write this field as a JSON string",
        )
    # Empty strings in provenance fields mean "unknown", same as null.
    return value if value.strip() else None


def _bool_or_na(value: Any, path: Path, field: str) -> Any:
    if value is None or isinstance(value, bool):
        return value
    raise DataError(
        path,
        field,
        f"expected true, false or null, got {value!r:.60}",
        "write this field as a JSON boolean (or null if unknown)",
    )


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
    return pd.Series(
        [None if v is None else v if isinstance(v, str) else json.dumps(v, sort_keys=True) for v in values], dtype="str"
    )


def _records_frame(
    records: list, path: Path, key: str, spec: Sequence[tuple[str, str, str, bool]], id_column: str
) -> pd.DataFrame:
    """Build a frame from a list of JSON objects.

    ``spec`` rows are (output column, source key, kind, required); kinds are
    ``id``, ``str``, ``bool``, ``date``, ``float``, ``millions_to_billions``.
    Keys not in ``spec`` pass through (one level of nested objects is flattened
    into ``<key>_<subkey>`` columns).
    """
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise DataError(
                path,
                f"{key}[{i}]",
                f"expected a JSON object, got {type(rec).__name__}",
                f"each entry of '{key}' must be an object with an 'id'",
            )
        for _out_col, src, _kind, required in spec:
            if required and src not in rec:
                raise DataError(
                    path, f"{key}[{i}].{src}", "required key is missing", f"give every entry of '{key}' a '{src}'"
                )

    columns: dict[str, pd.Series] = {}
    for out_col, src, kind, _ in spec:

        def field(i: int, src: str = src) -> str:
            return f"{key}[{i}].{src}"

        raw = [rec.get(src) for rec in records]
        if kind == "id":
            for i, v in enumerate(raw):
                if not isinstance(v, str) or not v.strip():
                    raise DataError(
                        path,
                        field(i),
                        f"expected a non-empty string id, got {v!r:.60}",
                        "give every entry a unique, non-empty string id",
                    )
            seen: dict[str, int] = {}
            for i, v in enumerate(raw):
                if v in seen:
                    raise DataError(
                        path,
                        field(i),
                        f"duplicate id {v!r} (first at {key}[{seen[v]}])",
                        "make ids unique (rename or merge the duplicate entry)",
                    )
                seen[v] = i
            columns[out_col] = pd.Series(raw, dtype="str")
        elif kind == "str":
            columns[out_col] = pd.Series([_str_or_na(v, path, field(i)) for i, v in enumerate(raw)], dtype="str")
        elif kind == "bool":
            columns[out_col] = pd.Series([_bool_or_na(v, path, field(i)) for i, v in enumerate(raw)], dtype="boolean")
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
                    raise DataError(
                        path,
                        field(i),
                        f"expected a finite number or null, got {v!r:.60}",
                        "write this field as a JSON number (or null if unknown)",
                    )
                elif kind == "int":
                    if float(v) != int(v):
                        raise DataError(
                            path, field(i), f"expected a whole number, got {v!r}", "write this field as an integer"
                        )
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
                raise DataError(
                    path,
                    f"{key}[*].{k}",
                    f"extra key maps to column '{name}', which already exists",
                    "rename the key in the source file",
                )
            columns[name] = series
    frame = pd.DataFrame(columns)
    frame.index = pd.RangeIndex(len(frame))
    assert frame.columns[0] == id_column
    return frame


def _scores_frame(
    model_ids: list, bench_ids: list, scores: list, urls: list, types: list, statuses: list
) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model_id": pd.Series(model_ids, dtype="str"),
            "benchmark_id": pd.Series(bench_ids, dtype="str"),
            "score": pd.Series(scores, dtype="float64"),
            "source_url": pd.Series(urls, dtype="str"),
            "source_type": pd.Series(types, dtype="str"),
            "audit_status": pd.Series(statuses, dtype="str"),
        }
    )


_BENCHMARK_SPEC = (
    ("benchmark_id", "id", "id", True),
    ("name", "name", "str", True),
    ("category", "category", "str", False),
    ("metric", "metric", "str", False),
)


def _csv_row(i: int) -> str:
    # +2: one for the header line, one because humans count lines from 1.
    return f"row {i} (line {i + 2})"
