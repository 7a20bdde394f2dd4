"""The BenchPress study, Section 6: the reliability estimators on the held-out folds (Section 6.2,
Appendix E.2, Figure 10, Table 17) and the Section 6.2 / Appendix E.1 numbers next to the paper's."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchcast.completion.evaluation import Fold, evaluate_predictor
from benchcast.studies.benchpress.settings import DEFAULT_GRID, PAPER_PREDICTORS, SEED

__all__ = ["reliability_study", "reliability_paper_vs_ours", "conformal_levels_table", "predictability_paper_vs_ours"]


def reliability_study(
    M: np.ndarray,
    folds: list[Fold],
    *,
    level: float = 0.9,
    threshold: float = 10.0,
    bins: int = 20,
    seed: int = SEED,
    n_jobs: int = 1,
) -> dict:
    """Section 6.2 / Appendix E.2 on the held-out folds: the three reliability estimators'
    risk-coverage curves (Figure 10), their leave-fold-out conformal intervals, the trust
    calibration of the hybrid risk, and the final hybrid model for new models.

    Returns a dict of DataFrames ``features, risk_coverage, conformal, trust, architectures`` and
    ``reliability_model`` (a :class:`~benchcast.completion.complete.ReliabilityModel`).
    """
    from benchcast.completion import reliability as rel
    from benchcast.completion.complete import build_reliability_model

    preds = {key: evaluate_predictor(M, folds, cfg.predict) for key, cfg in PAPER_PREDICTORS.configs().items()}
    feats = rel.fold_features(
        M,
        folds,
        preds,
        selected=PAPER_PREDICTORS.selected,
        lambda_stack=PAPER_PREDICTORS.lambda_stack,
        strong_stack=PAPER_PREDICTORS.strong_stack,
    )
    err = feats["abs_err"].to_numpy()
    fold_ids = feats["fold_id"].to_numpy()
    rc, conf_rows, arch_rows, estimates = [], [], [], {}
    for kind in ("ensemble", "support", "hybrid"):
        est = rel.leave_fold_out_risk(feats, kind, seed=seed, grid=DEFAULT_GRID, n_jobs=n_jobs)
        estimates[kind] = est
        curve = rel.risk_coverage(err, est.risk, actual=feats["actual"].to_numpy())
        curve.insert(0, "estimator", kind)
        rc.append(curve)
        c = rel.conformal_intervals(err, est.risk, fold_ids, level=level)
        conf_rows.append(
            {
                "estimator": kind,
                "level": level,
                "coverage": c.coverage,
                "median_width": c.median_width,
                "scale_median": c.scale_median,
                "cells": c.n,
            }
        )
        for f, name in sorted(est.architecture.items()):
            arch_rows.append({"estimator": kind, "fold_id": f, "architecture": name})
    model, ev = build_reliability_model(
        feats,
        "hybrid",
        predictors=PAPER_PREDICTORS,
        seed=seed,
        grid=DEFAULT_GRID,
        level=level,
        threshold=threshold,
        bins=bins,
        lfo=estimates["hybrid"],
    )
    feats = feats.assign(**{f"risk_{k}": e.risk for k, e in estimates.items()})
    return {
        "features": feats,
        "risk_coverage": pd.concat(rc, ignore_index=True),
        "conformal": pd.DataFrame(conf_rows),
        "trust": ev["trust"].table(),
        "architectures": pd.DataFrame(arch_rows),
        "reliability_model": model,
    }


def reliability_paper_vs_ours(rc: pd.DataFrame, conformal: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Figure 10 / Section 6.2 numbers the paper quotes (hybrid MedAE at 20/40/60% kept) and the
    conformal coverage (nominal 90%) next to ours, in the ``table, row, column, ours, paper`` shape."""
    recs = []
    p = paper.set_index(["table", "row", "column"])["paper"]
    hyb = rc[rc["estimator"] == "hybrid"].set_index("kept_fraction")
    for frac in (0.2, 0.4, 0.6):
        row = f"hybrid|keep={int(frac * 100)}%"
        recs.append(
            {
                "table": "fig10",
                "row": row,
                "column": "medae",
                "ours": float(hyb.loc[frac, "medae"]),
                "paper": p.get(("fig10", row, "medae"), np.nan),
            }
        )
    for r in conformal.itertuples():
        recs.append(
            {
                "table": "sec6_conformal",
                "row": r.estimator,
                "column": "coverage_pct",
                "ours": 100 * r.coverage,
                "paper": p.get(("sec6_headline", "conformal", "nominal_coverage_pct"), np.nan),
            }
        )
    return pd.DataFrame(recs)


def conformal_levels_table(features: pd.DataFrame, levels=(0.8, 0.9, 0.95)) -> pd.DataFrame:
    """Table 17: leave-fold-out conformal interval width and empirical coverage of each reliability
    estimator at several nominal levels, from the cross-fitted risks stored with the fold features
    (columns ``risk_ensemble / risk_support / risk_hybrid``)."""
    from benchcast.completion.reliability import conformal_intervals

    rows = []
    for kind in ("ensemble", "support", "hybrid"):
        col = f"risk_{kind}"
        if col not in features.columns:
            continue
        for level in levels:
            c = conformal_intervals(
                features["abs_err"].to_numpy(),
                features[col].to_numpy(),
                features["fold_id"].to_numpy(),
                level=float(level),
            )
            rows.append(
                {
                    "estimator": kind,
                    "level": float(level),
                    "coverage": c.coverage,
                    "median_width": c.median_width,
                    "cells": c.n,
                }
            )
    return pd.DataFrame(rows)


def predictability_paper_vs_ours(summary: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Appendix E.1: how many benchmarks / models are predicted below 15% MedAPE, next to the paper."""
    p = paper.set_index(["table", "row", "column"])["paper"]
    recs = []
    for r in summary.itertuples():
        row = f"per_{r.by}"
        for col, val in (
            ("n_below_15pct_medape", r.n_below),
            ("n_evaluated", r.n),
            ("pct_below_15pct_medape", 100 * r.share_below),
            ("median_medape", r.median_medape),
        ):
            recs.append(
                {
                    "table": "appE",
                    "row": row,
                    "column": col,
                    "ours": float(val),
                    "paper": p.get(("appE", row, col), np.nan),
                }
            )
    return pd.DataFrame(recs)
