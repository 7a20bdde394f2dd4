"""Write tables as CSV and GitHub Markdown (no tabulate dependency); the paper-vs-ours tolerance rule."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.data.io import write_csv_atomic, write_text_atomic


def _fmt(v, digits: int) -> str:
    if isinstance(v, (float, np.floating)):
        return "" if np.isnan(v) else f"{v:.{digits}f}"
    return str(v)


def to_markdown(df: pd.DataFrame, digits: int = 2, index: bool = False) -> str:
    d = df.reset_index() if index else df
    head = "| " + " | ".join(str(c) for c in d.columns) + " |"
    sep = "|" + "|".join("---" for _ in d.columns) + "|"
    body = ["| " + " | ".join(_fmt(v, digits) for v in row) + " |" for row in d.itertuples(index=False)]
    return "\n".join([head, sep, *body]) + "\n"


def write_table(
    df: pd.DataFrame,
    csv: str | Path | None = None,
    md: str | Path | None = None,
    digits: int = 2,
    index: bool = False,
    title: str | None = None,
) -> None:
    if csv is not None:
        write_csv_atomic(df, csv, index=index, float_format="%.4f")
    if md is not None:
        write_text_atomic(md, (f"# {title}\n\n" if title else "") + to_markdown(df, digits, index))


def within_tolerance(ours: pd.Series, paper: pd.Series, abs_tol, rel_tol) -> pd.Series:
    """|ours - paper| <= max(abs_tol, rel_tol * |paper|) (tolerances scalars or per-row Series);
    False where either number is missing."""
    ok = (ours - paper).abs() <= np.maximum(abs_tol, rel_tol * paper.abs())
    return ok & ours.notna() & paper.notna()
