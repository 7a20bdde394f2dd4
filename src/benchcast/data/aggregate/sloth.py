"""Reader for the sloth / Open LLM Leaderboard CSVs (``sloth/data/*.csv``).

:func:`read_sloth_leaderboard` reads the Open LLM Leaderboard v2 and v1 exports
and sloth's curated tables into one row of metadata plus scores per model,
keeping one evaluation per model when the export lists several precisions
(:data:`PRECISION_PREFERENCE`). :func:`model_metadata_for` looks model names up
in such a table (exact, then case-insensitive match). The conversion of a
leaderboard to :class:`~benchcast.data.aggregate.table.AggregateTables` is
:func:`benchcast.data.aggregate_ingest.sloth_as_tables`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchcast.data.aggregate.parsing import _csv_row
from benchcast.errors import DataError

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
_SLOTH_BOOL = {
    "instruct",
    "merged",
    "not_merged",
    "available_on_hub",
    "flagged",
    "moe",
    "chat_template",
    "maintainers_highlight",
}
_SLOTH_FLOAT = {"params_b", "pretraining_tokens_t", "flops_1e21"}
_SLOTH_INT = {"hub_likes"}
_SLOTH_DATE = {"release_date", "submission_date", "upload_date"}

#: Order in which duplicate leaderboard rows (same model, different precision)
#: are preferred: higher-precision evaluations first; precisions not listed come
#: after, alphabetically.
PRECISION_PREFERENCE = ("bfloat16", "float16", "float32", "8bit", "4bit", "GPTQ")


def _snake(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def _csv_bool(series: pd.Series, path: Path, column: str) -> pd.Series:
    mapping = {"true": True, "false": False, "1": True, "0": False}
    lowered = series.str.strip().str.lower()
    out = lowered.map(mapping)
    bad = series.notna() & out.isna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(
            path,
            f"column '{column}', {_csv_row(i)}",
            f"not a boolean: {series.iloc[i]!r}",
            "use True/False (or leave the cell empty if unknown)",
        )
    return out.astype("boolean")


def _csv_number(series: pd.Series, path: Path, column: str) -> pd.Series:
    out = pd.to_numeric(series.str.strip(), errors="coerce").astype("float64")
    bad = series.notna() & (out.isna() | ~np.isfinite(out.fillna(0.0)))
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(
            path,
            f"column '{column}', {_csv_row(i)}",
            f"not a finite number: {series.iloc[i]!r}",
            "fix the cell to a number (or leave it empty if unknown)",
        )
    return out


def _csv_date(series: pd.Series, path: Path, column: str) -> pd.Series:
    # Mixed forms occur ("2024-05-05T12:22:44Z" next to "2023-09-15T11:25:37.918274"):
    # read all as UTC, then drop the zone so every date column is naive UTC.
    out = pd.to_datetime(series.str.strip(), format="ISO8601", utc=True, errors="coerce")
    bad = series.notna() & out.isna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(
            path,
            f"column '{column}', {_csv_row(i)}",
            f"not an ISO date: {series.iloc[i]!r}",
            "write dates as YYYY-MM-DD (optionally with a time), or leave the cell empty",
        )
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
        raise DataError(
            path,
            "(file)",
            "file does not exist",
            "check the path, or run the workflow's download rule / point raw_dir at the mirror",
        ) from None
    except pd.errors.EmptyDataError as exc:
        raise DataError(path, "(header)", "the file is empty", "re-download the CSV") from exc
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DataError(
            path, "(CSV syntax)", f"cannot parse the CSV ({exc})", "re-download the file; it is truncated or not a CSV"
        ) from exc
    except OSError as exc:
        raise DataError(
            path, "(file)", f"cannot read the file ({exc.strerror})", "check the path and its permissions"
        ) from exc

    # An unnamed first column is a pandas index written out with the data.
    if len(raw.columns) and str(raw.columns[0]) == "Unnamed: 0":
        raw = raw.drop(columns=raw.columns[0])
    if "Model" not in raw.columns:
        raise DataError(
            path,
            "Model",
            f"required column is missing (columns: {list(raw.columns)[:12]})",
            "pass a sloth/Open LLM Leaderboard CSV whose model names are in a 'Model' column",
        )

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
        raise DataError(
            path, f"column 'Model', {_csv_row(i)}", "model name is empty", "fill in the model name or delete the row"
        )

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
            raise DataError(
                path,
                col,
                f"maps to output column {out_name!r}, already used by {origin.get(out_name)!r}",
                "rename one of the two columns in the CSV",
            )
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
                    raise DataError(
                        path,
                        f"column '{col}', {_csv_row(i)}",
                        f"not a whole number: {series.iloc[i]!r}",
                        "write a whole number",
                    )
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
            raise DataError(
                path,
                f"column 'Model', {_csv_row(i)}",
                f"duplicate model name {model.iloc[i]!r}",
                "keep one row per model (this file has no Precision column to tell the rows apart)",
            )
        pair_dup = frame.duplicated(["model", "precision"])
        if pair_dup.any():
            i = int(np.flatnonzero(pair_dup.to_numpy())[0])
            raise DataError(
                path,
                f"columns 'Model'+'Precision', {_csv_row(i)}",
                f"model {model.iloc[i]!r} is listed twice at precision {frame['precision'].iloc[i]!r}",
                "keep one row per (model, precision)",
            )
        known = {p: r for r, p in enumerate(PRECISION_PREFERENCE)}
        prec = frame["precision"].fillna("")
        rank = pd.DataFrame(
            {
                "model": model,
                "rank": prec.map(lambda p: known.get(p, len(known))).astype("int64"),
                "prec": prec,
                "first": model.map({m: i for i, m in reversed(list(enumerate(model)))}).astype("int64"),
            }
        )
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
        raise DataError(
            None, "names", "got a single string, expected a sequence of model names", "wrap the name in a list"
        )
    if "model" not in metadata.columns:
        raise DataError(None, "metadata.model", "column is missing", "pass a table from read_sloth_leaderboard")
    for col in ("query", "match"):
        if col in metadata.columns:
            raise DataError(
                None,
                f"metadata.{col}",
                "column name clashes with an output column",
                f"rename the '{col}' column before the lookup",
            )
    keys = metadata["model"].tolist()
    dup = pd.Series(keys).duplicated()
    if dup.any():
        raise DataError(
            None,
            "metadata.model",
            f"duplicate model {keys[int(np.flatnonzero(dup)[0])]!r}",
            "deduplicate the metadata first (read_sloth_leaderboard does)",
        )
    exact = {k: i for i, k in enumerate(keys) if isinstance(k, str)}
    folded: dict[str, list[int]] = {}
    for i, k in enumerate(keys):
        if isinstance(k, str):
            folded.setdefault(k.casefold(), []).append(i)

    positions: list[int] = []
    how: list[Any] = []
    for n, name in enumerate(names):
        if not isinstance(name, str):
            raise DataError(
                None,
                f"names[{n}]",
                f"expected a string, got {type(name).__name__} {name!r:.60}",
                "pass model names as strings",
            )
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
