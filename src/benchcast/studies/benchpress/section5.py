"""The BenchPress study, Section 5: margin-aware ranking of the held-out predictions (Table 6),
temporal deployment (Section 5.3), greedy and random probe sets (Section 5.1 / 5.2), and the
Section 5 headline numbers next to the paper's."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchcast.completion.evaluation import Fold
from benchcast.errors import DataError

__all__ = ["release_date_strings", "section5_ranking", "section5_temporal", "section5_probes", "section5_paper_vs_ours"]


def release_date_strings(models: pd.DataFrame) -> list[str | None]:
    """Release dates at the precision the source gave (``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY``),
    the strings the paper's temporal code compares."""
    fmt = {"day": "%Y-%m-%d", "month": "%Y-%m", "year": "%Y"}
    out = []
    for d, p in zip(models["release_date"], models.get("release_date_precision", ["day"] * len(models))):
        out.append(None if pd.isna(d) else pd.Timestamp(d).strftime(fmt.get(p, "%Y-%m-%d")))
    return out


def section5_ranking(M: np.ndarray, folds: list[Fold], margins=(0.0, 1.0, 2.0, 5.0)) -> pd.DataFrame:
    """Table 6: margin-aware pairwise ranking accuracy of the default predictor's held-out
    predictions on the Section 4.2 folds."""
    from benchcast.completion.evaluation import train_matrix
    from benchcast.studies.benchpress import probes

    preds = list(probes.predict_default_batch(np.stack([train_matrix(M, f.cells) for f in folds])))
    _, summary = probes.ranking_preservation(M, [f.cells for f in folds], preds, margins=margins)
    return summary


def section5_temporal(
    M: np.ndarray,
    models: pd.DataFrame,
    ks=(1, 5, 10),
    n_seeds: int = 10,
    partial: str = "paper",
    window: tuple[str, str] | None = None,
    min_observed: int | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Section 5.3: ``(per_seed, per_target (Table 16), per_k (Figure 7 medians))``. ``window`` and
    ``min_observed`` choose the targets (default: the paper's 2025-01-20..2025-11-13, > 20 scores)."""
    from benchcast.studies.benchpress import probes

    dates = release_date_strings(models)
    targets = probes.temporal_targets(
        dates,
        (~np.isnan(M)).sum(1),
        names=models["name"].tolist(),
        window=tuple(window or probes.TEMPORAL_WINDOW),
        min_observed=probes.TEMPORAL_MIN_OBSERVED if min_observed is None else min_observed,
    )
    if not targets:
        raise DataError(
            "models.parquet",
            "release_date",
            "no model falls in the temporal target window",
            "set benchpress.section5.temporal_window / temporal_min_observed",
        )
    per_seed = probes.temporal_deployment(
        M, dates, ks, n_seeds, model_ids=models["model_id"].tolist(), targets=targets, partial=partial
    )
    per_target, per_k = probes.summarize_temporal(per_seed)
    return per_seed, per_target, per_k


def section5_probes(
    M: np.ndarray,
    benchmark_ids: list[str],
    allowlist: list[str],
    steps: int = 10,
    runs=(("medae", "any"), ("medae", "low_cost"), ("medape", "any"), ("medape", "low_cost")),
    n_random_seeds: int = 10,
    ranking_margin: float = 5.0,
) -> dict[str, pd.DataFrame]:
    """Section 5.1 / 5.2: greedy probe sets (Table 5, Figure 5, Figure 1(b)), the random-prefix
    baseline, and margin-aware ranking accuracy along every prefix (Figure 6). One fit cache is
    shared by all runs."""
    from benchcast.studies.benchpress import probes

    unknown = [b for b in allowlist if b not in benchmark_ids]
    if unknown:
        raise DataError(
            "allow-list",
            "benchmark_ids",
            f"ids not in the matrix: {unknown}",
            "use the allow-list that belongs to this score matrix",
        )
    cache = probes.ProbeCache()
    greedy_rows, fig6_rows = [], []
    for objective, pool in runs:
        cands = None if pool == "any" else [benchmark_ids.index(b) for b in allowlist]
        # "ranking": Table 15's greedy on margin-aware pairwise ranking accuracy (App. D.2)
        target = probes.ranking_objective(ranking_margin) if objective == "ranking" else objective
        res = probes.greedy_probe_sets(M, cands, steps, target, cache=cache)
        evs = probes.evaluate_probe_order(M, res.order, len(res.order), cache=cache)
        accuracy = [probes.probe_ranking_accuracy(ev, ranking_margin)["accuracy"] for ev in evs]
        for rec, acc in zip(res.steps.to_dict("records"), accuracy):
            greedy_rows.append(
                {
                    "objective": objective,
                    "pool": pool,
                    "step": int(rec["step"]),
                    "added": benchmark_ids[int(rec["added"])],
                    "medape": rec["medape"],
                    "medae": rec["medae"],
                    "ranking_accuracy": acc,
                }
            )
        for k, acc in enumerate(accuracy, 1):
            fig6_rows.append({"curve": f"{objective}/{pool}", "k": k, "accuracy": acc})
    base = probes.random_probe_baseline(M, k_max=steps, n_seeds=n_random_seeds, cache=cache)
    for seed, g in base.groupby("seed"):
        order = list(g.sort_values("k").probes.iloc[-1])
        for k, ev in enumerate(probes.evaluate_probe_order(M, order, len(order), cache=cache), 1):
            fig6_rows.append(
                {
                    "curve": f"random/seed{seed}",
                    "k": k,
                    "accuracy": probes.probe_ranking_accuracy(ev, ranking_margin)["accuracy"],
                }
            )
    return {
        "greedy": pd.DataFrame(greedy_rows),
        "random": probes.summarize_random(base),
        "figure6": pd.DataFrame(fig6_rows),
    }


def section5_paper_vs_ours(
    greedy: pd.DataFrame | None, ranking: pd.DataFrame | None, temporal_k: pd.DataFrame | None, paper: pd.DataFrame
) -> pd.DataFrame:
    """The Section 5 headline numbers (``sec5_headline`` rows of the paper values) next to ours."""
    p = paper.set_index(["table", "row", "column"])["paper"]
    recs = []
    if greedy is not None and len(greedy):
        for pool, row in (("any", "probe5|cost_unaware"), ("low_cost", "probe5|cost_aware")):
            g = greedy[(greedy["objective"] == "medae") & (greedy["pool"] == pool) & (greedy["step"] == 5)]
            recs.append(
                {
                    "table": "sec5_headline",
                    "row": row,
                    "column": "pooled_medae",
                    "ours": float(g["medae"].iloc[0]) if len(g) else np.nan,
                    "paper": p.get(("sec5_headline", row, "pooled_medae"), np.nan),
                }
            )
        for pool, row in (("any", "k=10|cost_unaware"), ("low_cost", "k=10|cost_aware")):
            g = greedy[(greedy["objective"] == "ranking") & (greedy["pool"] == pool) & (greedy["step"] == 10)]
            if len(g):
                recs.append(
                    {
                        "table": "table15",
                        "row": row,
                        "column": "pairwise_acc_margin5_pct",
                        "ours": 100 * float(g["ranking_accuracy"].iloc[0]),
                        "paper": p.get(("table15", row, "pairwise_acc_margin5_pct"), np.nan),
                    }
                )
    if ranking is not None:
        for r in ranking.itertuples():
            row = f"pairwise_ranking|margin={r.margin:g}"
            recs.append(
                {
                    "table": "sec5_headline",
                    "row": row,
                    "column": "accuracy_pct",
                    "ours": 100 * r.accuracy,
                    "paper": p.get(("sec5_headline", row, "accuracy_pct"), np.nan),
                }
            )
            recs.append(
                {
                    "table": "sec5_headline",
                    "row": row,
                    "column": "n_pairs",
                    "ours": r.n_pairs,
                    "paper": p.get(("sec5_headline", row, "n_pairs"), np.nan),
                }
            )
    if temporal_k is not None:
        for r in temporal_k.itertuples():
            for col in ("medae", "medape"):
                recs.append(
                    {
                        "table": "sec5_headline",
                        "row": f"temporal|k={r.k}",
                        "column": col,
                        "ours": getattr(r, col),
                        "paper": p.get(("sec5_headline", f"temporal|k={r.k}", col), np.nan),
                    }
                )
    return pd.DataFrame(recs)
