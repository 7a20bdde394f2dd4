#!/usr/bin/env python3
"""Sanity checks for ``resources/paper/benchpress_paper_values.csv``.

The CSV holds the numbers transcribed from "You Don't Need to Run Every Eval" (BenchPress,
arXiv 2606.24020); ``resources/paper/benchpress_paper_values.md`` explains the layout.  This
script verifies the structural invariants the comparison workflow relies on.

Usage (from the repo root):
    .venv/bin/python resources/paper/check_benchpress_paper_values.py [CSV]

Exits non-zero (AssertionError) on the first failed check; prints a per-table row count on
success.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pandas as pd

from benchcast.studies.benchpress.analysis import METHOD_ORDER, TRANSFORM_ORDER

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CSV = REPO_ROOT / "resources/paper/benchpress_paper_values.csv"

TRANSFORMS = TRANSFORM_ORDER  # the paper's Section 4.2 grid
METHODS = METHOD_ORDER
T11_COLUMNS = {"rank", "medape", "medae", "coverage", "hyperparameter"}
# Tables whose body is an image in the text-extracted paper: they must carry a "(missing)" row.
IMAGE_TABLES = [
    "table2",
    "table3_medape",
    "table3_medae",
    "table4",
    "table5",
    "table6",
    "table12",
    "table13",
    "table14",
    "table15",
    "table16",
    "table17",
]


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=0, abs_tol=1e-9)


def check(path: Path) -> pd.DataFrame:
    df = pd.read_csv(path, dtype={"table": str, "row": str, "column": str, "note": str})
    assert list(df.columns) == ["table", "row", "column", "paper", "note"], list(df.columns)
    assert df[["table", "row", "column"]].notna().all().all(), "empty key field"

    dup = df[df.duplicated(["table", "row", "column"], keep=False)]
    assert dup.empty, f"duplicate (table,row,column):\n{dup}"

    # `paper` must be numeric or empty; empty only for hyperparameter / (missing) rows.
    paper = pd.to_numeric(df["paper"], errors="raise")
    empty = paper.isna()
    allowed_empty = (df["column"] == "hyperparameter") | (df["row"] == "(missing)")
    assert not (empty & ~allowed_empty).any(), f"empty paper value:\n{df[empty & ~allowed_empty]}"
    assert not (~empty & (df["row"] == "(missing)")).any(), "(missing) rows must have empty paper"

    # ---- Table 11: the full 7 x 12 transform x method grid ----
    t11 = df[df["table"] == "table11"].copy()
    t11["paper"] = pd.to_numeric(t11["paper"])
    wide = t11.pivot(index="row", columns="column", values="paper")
    notes = t11[t11["column"] == "hyperparameter"].set_index("row")["note"]
    assert set(t11["column"]) == T11_COLUMNS, set(t11["column"])
    assert t11.groupby("row").size().eq(len(T11_COLUMNS)).all(), "each config needs 5 rows"
    expected = {f"{t}|{m}" for t in TRANSFORMS for m in METHODS}
    assert set(wide.index) == expected, (
        f"missing={sorted(expected - set(wide.index))} extra={sorted(set(wide.index) - expected)}"
    )
    assert len(wide) == 84, len(wide)
    ranks = sorted(int(r) for r in wide["rank"])
    assert ranks == list(range(1, 85)), ranks
    assert (wide["rank"] == wide["rank"].round()).all(), "non-integer rank"
    by_rank = wide.sort_values("rank")
    assert by_rank["medape"].is_monotonic_increasing, "table11 medape not sorted by rank"
    assert wide["coverage"].between(0, 1).all(), "coverage must be a fraction"
    assert (wide["medae"] > 0).all() and (wide["medape"] > 0).all()
    assert notes.notna().all() and (notes.str.len() > 0).all(), "hyperparameter note missing"

    ba = wide.loc["logit|bias_als"]
    assert close(ba["medape"], 7.77), ba["medape"]
    assert close(ba["medae"], 4.63), ba["medae"]
    assert close(ba["coverage"], 1.0), ba["coverage"]
    assert int(ba["rank"]) == 5, ba["rank"]
    assert notes["logit|bias_als"] == "lambda=0.1,r=2", notes["logit|bias_als"]

    # ---- other spot checks ----
    def val(table: str, row: str, column: str) -> float:
        hit = df[(df["table"] == table) & (df["row"] == row) & (df["column"] == column)]
        assert len(hit) == 1, (table, row, column)
        return float(hit["paper"].iloc[0])

    assert close(val("sec5_headline", "probe5|cost_unaware", "pooled_medae"), 3.93)
    assert close(val("sec5_headline", "probe5|cost_aware", "pooled_medae"), 4.55)
    assert close(val("sec5_headline", "pairwise_ranking|margin=2", "accuracy_pct"), 88.0)
    assert close(val("sec5_headline", "pairwise_ranking|margin=5", "accuracy_pct"), 92.1)
    assert close(val("sec5_headline", "pairwise_ranking|margin=2", "n_pairs"), 531498)
    for k, ae in ((1, 9.20), (5, 4.83), (10, 2.57)):
        assert close(val("sec5_headline", f"temporal|k={k}", "medae"), ae), k
    assert close(val("table1", "min_model=15,min_bench=8", "n_observed"), 2604)

    for tid, n_hyp in (("table7", 7), ("table8", 9)):
        t = df[df["table"] == tid]
        assert t["row"].nunique() == n_hyp, (tid, t["row"].nunique())
        p = pd.to_numeric(t.loc[t["column"].str.endswith("_p"), "paper"])
        assert p.between(0, 1).all(), tid

    for tid in IMAGE_TABLES:
        assert ((df["table"] == tid) & (df["row"] == "(missing)")).any(), f"{tid}: no (missing) row"

    return df


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CSV
    df = check(path)
    print(f"OK: {path} ({len(df)} rows)")
    print(df.groupby("table", sort=False).size().to_string())


if __name__ == "__main__":
    main()
