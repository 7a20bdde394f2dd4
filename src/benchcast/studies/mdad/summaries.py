"""Tables the MDAD study derives from its MDAD and estimation tables: Table 5 (what changes on a new
draw of the task) and the cross-paper comparison (no paper has it): MDAD, estimation error and
Kendall's tau of every item-level method of the registry on the same trials.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

#: the paper each registry method comes from (the cross-paper table's ``paper`` column)
METHOD_PAPERS = {
    "random_sampling": "misses the mark",
    "random_sampling_learn": "misses the mark",
    "aipw": "misses the mark",
    "lasso": "misses the mark",
    "pca": "misses the mark",
    "random_search_learn": "misses the mark",
    "double_optimize": "misses the mark",
    "anchor_points_weighted": "misses the mark",
    "anchor_points_predictor": "misses the mark",
    "p_irt": "misses the mark",
    "gp_irt": "misses the mark",
    "tailoredbench": "TailoredBench",
    "clustering": "collaborative filtering",
    "random_subtask_equal": "MDAD",
    "stratified_confidence": "MDAD",
    "tinybenchmarks": "MDAD",
    "dpp": "MDAD",
}
CROSS_PAPER_COLUMNS = [
    "dataset", "method", "paper", "n_source", "k", "mdad", "mdad_lower", "mdad_upper", "trial_lower", "trial_upper",
    "error", "tau", "mdad_rank", "error_rank", "tau_rank", "methods", "trials",
]  # fmt: skip
SUMMARY_COLUMNS = [
    "method",
    "paper",
    "k",
    "datasets",
    "mean_mdad_rank",
    "best",
    "median_mdad",
    "mean_error",
    "mean_tau",
]
TABLE5_COLUMNS = [
    "dataset", "method", "n_source", "sizes", "seen_mdad", "mdad_increase", "error_increase", "tau_decrease",
]  # fmt: skip


def largest_source_count(table: pd.DataFrame) -> pd.DataFrame:
    """The rows at each dataset's largest source count (the paper's figures use 300)."""
    return table[table["n_source"] == table.groupby("dataset")["n_source"].transform("max")]


def cross_paper(mdad: pd.DataFrame, estimation: pd.DataFrame) -> pd.DataFrame:
    """Every method at each dataset's largest source count, seen half: MDAD with both intervals,
    error and tau, and each metric's rank among the methods run at that (dataset, k) (1 = best:
    smallest MDAD and error, largest tau; ties share the smaller rank)."""
    keys = ["dataset", "method", "n_source", "k"]
    m = largest_source_count(mdad[mdad["split"] == "seen"])
    e = largest_source_count(estimation[estimation["split"] == "seen"])
    out = m[[*keys, "mdad", "mdad_lower", "mdad_upper", "trial_lower", "trial_upper", "trials"]].merge(
        e[[*keys, "error", "tau"]], on=keys, how="inner", validate="one_to_one"
    )
    by_cell = out.groupby(["dataset", "k"])
    out["mdad_rank"] = by_cell["mdad"].rank(method="min").astype(int)
    out["error_rank"] = by_cell["error"].rank(method="min").astype(int)
    out["tau_rank"] = by_cell["tau"].rank(method="min", ascending=False).astype(int)
    out["methods"] = by_cell["method"].transform("size").astype(int)
    out["paper"] = out["method"].map(METHOD_PAPERS).fillna("")
    return out[CROSS_PAPER_COLUMNS].sort_values(["dataset", "k", "mdad_rank", "method"]).reset_index(drop=True)


def cross_paper_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per method and size over the datasets where it ran: mean MDAD rank, how often it has the
    smallest MDAD (ties each count), median MDAD, mean error and tau -- which method detects the
    smallest differences at each budget."""
    grouped = table.groupby(["method", "paper", "k"])
    out = pd.DataFrame(
        {
            "datasets": grouped.size(),
            "mean_mdad_rank": grouped["mdad_rank"].mean(),
            "best": grouped["mdad_rank"].apply(lambda r: int((r == 1).sum())),
            "median_mdad": grouped["mdad"].median(),
            "mean_error": grouped["error"].mean(),
            "mean_tau": grouped["tau"].mean(),
        }
    ).reset_index()
    return out[SUMMARY_COLUMNS].sort_values(["k", "mean_mdad_rank", "method"]).reset_index(drop=True)


def table5(mdad: pd.DataFrame, estimation: pd.DataFrame, methods: Sequence[str]) -> pd.DataFrame:
    """Table 5 / Appendix J: per dataset and selector at the largest source count, averaged over the
    sizes, how much MDAD and estimation error rise and Kendall's tau falls from the seen half to the
    held-out half (a new draw of the task); ``seen_mdad``: the mean seen-half MDAD, for reference."""
    keys = ["dataset", "method", "n_source", "k"]
    m = largest_source_count(mdad[mdad["method"].isin(methods)]).pivot_table(index=keys, columns="split", values="mdad")
    e = largest_source_count(estimation[estimation["method"].isin(methods)])
    err = e.pivot_table(index=keys, columns="split", values="error")
    tau = e.pivot_table(index=keys, columns="split", values="tau")
    per_k = pd.DataFrame(
        {
            "seen_mdad": m["seen"],
            "mdad_increase": m["unseen"] - m["seen"],
            "error_increase": err["unseen"] - err["seen"],
            "tau_decrease": tau["seen"] - tau["unseen"],
        }
    ).reset_index()
    grouped = per_k.groupby(["dataset", "method", "n_source"], sort=True)
    out = grouped[["seen_mdad", "mdad_increase", "error_increase", "tau_decrease"]].mean()
    out["sizes"] = grouped["k"].apply(lambda k: " ".join(str(int(v)) for v in np.sort(k.to_numpy())))
    return out.reset_index()[TABLE5_COLUMNS]
