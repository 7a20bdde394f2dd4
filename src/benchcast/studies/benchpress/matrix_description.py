"""The BenchPress study, Section 3: the score matrix's composition (Figures 2-3, Section 3.2) and the
Section 3 numbers (matrix description, Figure 4, Tables 1-2) next to the paper's."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["matrix_composition", "matrix_paper_vs_ours", "geometry_paper_vs_ours"]


def matrix_composition(
    M: np.ndarray, models: pd.DataFrame, benchmarks: pd.DataFrame, scores: pd.DataFrame
) -> dict[str, pd.DataFrame]:
    """Figures 2-3 / Section 3.2: the matrix's size and fill, benchmarks and observed cells per
    category, releases per quarter with their observed-cell coverage, and score provenance."""
    obs = ~np.isnan(M)
    summary = pd.DataFrame(
        [
            {
                "n_models": M.shape[0],
                "n_benchmarks": M.shape[1],
                "n_observed": int(obs.sum()),
                "fill_pct": 100.0 * obs.mean(),
                "n_providers": int(models["provider"].nunique()),
                "n_reasoning": int((models["reasoning"] == True).sum()),  # noqa: E712 - nullable
                "n_open_weights": int((models["open_weights"] == True).sum()),  # noqa: E712 - nullable
            }
        ]
    )
    cat = benchmarks["category"].fillna("(none)").to_numpy()
    by_cat = (
        pd.DataFrame({"category": cat, "observed": obs.sum(axis=0)})
        .groupby("category")
        .agg(benchmarks=("observed", "size"), observed_cells=("observed", "sum"))
        .reset_index()
        .sort_values("benchmarks", ascending=False, kind="stable")
    )
    quarter = pd.to_datetime(models["release_date"]).dt.to_period("Q").astype(str)
    by_q = (
        pd.DataFrame({"quarter": quarter.to_numpy(), "observed": obs.sum(axis=1)})
        .groupby("quarter")
        .agg(models=("observed", "size"), mean_observed=("observed", "mean"))
        .reset_index()
    )
    prov = scores["source_type"].fillna("(none)").value_counts().rename_axis("source_type").reset_index(name="cells")
    prov["share_pct"] = 100.0 * prov["cells"] / prov["cells"].sum()
    return {"summary": summary, "by_category": by_cat, "by_quarter": by_q, "provenance": prov}


def matrix_paper_vs_ours(summary: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Section 3.2's description of the matrix (size, fill, providers, reasoning / open-weight
    counts) next to the ingested matrix."""
    p = paper.set_index(["table", "row", "column"])["paper"]
    r = summary.iloc[0]
    pairs = [
        ("matrix", "n_models", r.n_models),
        ("matrix", "n_benchmarks", r.n_benchmarks),
        ("matrix", "n_observed", r.n_observed),
        ("matrix", "fill_pct", round(float(r.fill_pct), 1)),
        ("models", "n_providers", r.n_providers),
        ("models", "n_reasoning", r.n_reasoning),
        ("models", "n_open_weight", r.n_open_weights),
    ]
    return pd.DataFrame(
        [
            {"table": "meta", "row": row, "column": col, "ours": float(v), "paper": p.get(("meta", row, col), np.nan)}
            for row, col, v in pairs
        ]
    )


def geometry_paper_vs_ours(
    sweep: pd.DataFrame, svd: pd.DataFrame, thresholds: pd.DataFrame, paper: pd.DataFrame
) -> pd.DataFrame:
    """Section 3 numbers in the ``table, row, column, ours, paper`` shape: Figure 4's best rank per
    space, Table 2's smallest top-2 variance share (the paper: > 90% in every submatrix), and the
    Table 1 rows reproducible from the filtered matrix."""
    p = paper.set_index(["table", "row", "column"])["paper"]
    recs = []
    for space, tr in (("raw", "identity"), ("logit", "logit")):
        g = sweep[sweep["transform"] == tr]
        if len(g):
            recs.append(
                {
                    "table": "fig4",
                    "row": space,
                    "column": "best_rank",
                    "ours": int(g.loc[g["medape"].idxmin(), "rank"]),
                    "paper": p.get(("fig4", space, "best_rank")),
                }
            )
    if len(svd):
        recs.append(
            {
                "table": "table2",
                "row": "all_submatrices",
                "column": "var_top2_pct_min",
                "ours": 100 * float(svd["var_top2"].min()),
                "paper": p.get(("table2", "all_submatrices", "var_top2_pct_min")),
            }
        )
    for r in thresholds.itertuples():
        row = (
            "unfiltered"
            if (r.min_per_model, r.min_per_bench) == (0, 0)
            else f"min_model={r.min_per_model},min_bench={r.min_per_bench}"
        )
        for col, val in (
            ("n_models", r.n_models),
            ("n_benchmarks", r.n_benchmarks),
            ("n_observed", r.n_observed),
            ("fill_pct", round(100 * r.fill, 1)),
        ):
            recs.append(
                {
                    "table": "table1",
                    "row": row,
                    "column": col,
                    "ours": val if r.reproducible else np.nan,
                    "paper": p.get(("table1", row, col), np.nan),
                }
            )
    return pd.DataFrame(recs)
