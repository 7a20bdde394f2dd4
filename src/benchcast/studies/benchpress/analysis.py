"""The BenchPress study, Section 4: the transform x method grid and its tables.

* :func:`load_matrix` -- the ingested Parquet tables as the models x benchmarks matrix in
  source order (the order the paper's fold file indexes);
* :func:`run_grid_cell` -- one (transform, method) pair: every hyper-parameter setting on
  every fold, one row per held-out cell (a Snakemake job);
* :func:`grid_summary` / :func:`table11` / :func:`table3` -- median-over-folds MedAPE and
  MedAE with coverage per setting, the best setting per pair by MedAPE (the paper's
  selection rule, Section 4.2 "Hyperparameter selection"), and the top-15 by each metric;
* :func:`paper_vs_ours` / :func:`grid_acceptance` -- the comparison with Table 11.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from benchcast.completion.completers import COMPLETERS, get_completer
from benchcast.completion.evaluation import Fold, evaluate_predictor, summarize_folds
from benchcast.completion.pipeline import predict_scores
from benchcast.completion.transforms import TRANSFORM_LABELS, TRANSFORMS, get_transform
from benchcast.data.aggregate import load_score_matrix
from benchcast.errors import ConfigError, DataError
from benchcast.studies.benchpress.settings import DEFAULT_GRID, PAPER_PREDICTORS, SEED

__all__ = [
    "load_matrix",
    "percentage_flags",
    "hp_key",
    "run_grid_cell",
    "grid_summary",
    "table11",
    "table3",
    "paper_vs_ours",
    "grid_acceptance",
    "METHOD_ORDER",
    "TRANSFORM_ORDER",
]

load_matrix = load_score_matrix  # the study's matrix: the data layer's reader

TRANSFORM_ORDER = ["identity", "log", "logit", "arcsinh", "sqrt", "probit", "quantile"]
METHOD_ORDER = list(COMPLETERS)


def load_study_inputs(inputs, max_folds: int | None = None):
    """The workflow jobs' common inputs: ``(M, models, benchmarks, folds)`` from a Snakemake input
    object with ``scores, models, benchmarks, folds``. The folds are checked against the matrix
    (every held-out cell observed) and cut to the first ``max_folds`` when that is set."""
    from benchcast.completion.evaluation import load_folds, validate_folds

    M, models, benchmarks = load_matrix(inputs.scores, inputs.models, inputs.benchmarks)
    folds = load_folds(inputs.folds, M.shape)
    validate_folds(folds, ~np.isnan(M), inputs.folds)
    return M, models, benchmarks, (folds[:max_folds] if max_folds else folds)


def percentage_flags(M: np.ndarray, benchmarks: pd.DataFrame, rule: str) -> np.ndarray | None:
    """Which columns are percentages: ``range`` (None: the pipeline applies the paper code's
    observed-range rule to each training matrix) or ``inventory`` (the ingested
    ``is_percentage`` column from the paper's benchmark inventory)."""
    if rule == "range":
        return None
    if rule == "inventory":
        if "is_percentage" not in benchmarks.columns or benchmarks["is_percentage"].isna().any():
            raise DataError(
                "benchmarks.parquet",
                "is_percentage",
                "missing or incomplete",
                "ingest the benchpress dataset with its benchmark inventory, or use percentage_rule: range",
            )
        return benchmarks["is_percentage"].to_numpy(dtype=bool)
    raise ConfigError(f"benchpress.percentage_rule must be 'range' or 'inventory', got {rule!r}")


def hp_key(params: dict) -> str:
    """Canonical text of a hyper-parameter setting (sorted JSON), used as its id in tables."""
    return json.dumps(params, sort_keys=True)


def run_grid_cell(
    M: np.ndarray,
    folds: list[Fold],
    transform: str,
    method: str,
    grid: list[dict],
    is_percentage: np.ndarray | None = None,
) -> pd.DataFrame:
    """Every setting of ``grid`` for one (transform, method) pair on every fold.

    Returns one row per (setting, held-out cell): ``transform, method, hp, seed, fold, model,
    benchmark, actual, predicted``.
    """
    get_transform(transform)
    get_completer(method)
    if not grid:
        raise ConfigError(f"benchpress grid for {method!r} is empty")
    frames = []
    for params in grid:
        cells = evaluate_predictor(
            M, folds, lambda train: predict_scores(train, transform, method, params, is_percentage)
        )
        cells.insert(0, "hp", hp_key(params))
        cells.insert(0, "method", method)
        cells.insert(0, "transform", transform)
        frames.append(cells)
    return pd.concat(frames, ignore_index=True)


def grid_summary(cells: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-fold metrics and, per (transform, method, hp), median-over-folds MedAPE / MedAE and coverage."""
    return summarize_folds(cells, by=["transform", "method", "hp"])


def table11(summary: pd.DataFrame) -> pd.DataFrame:
    """Best setting per (transform, method) by MedAPE (ties: first in grid order), ranked by MedAPE."""
    s = summary.copy()
    s["_order"] = s.groupby(["transform", "method"]).cumcount()
    best = (
        s.sort_values(["transform", "method", "medape", "_order"], kind="stable")
        .groupby(["transform", "method"], sort=False)
        .head(1)
    )
    best = best.sort_values(["medape", "medae"], kind="stable").reset_index(drop=True)
    best.insert(0, "rank", np.arange(1, len(best) + 1))
    best["transform_label"] = best["transform"].map(TRANSFORM_LABELS)
    best["method_label"] = best["method"].map(lambda m: COMPLETERS[m].label)
    return best.drop(columns="_order")[
        [
            "rank",
            "transform",
            "method",
            "transform_label",
            "method_label",
            "hp",
            "medape",
            "medae",
            "coverage",
            "n_folds",
        ]
    ]


def table3(t11: pd.DataFrame, top: int = 15) -> pd.DataFrame:
    """Top-``top`` configurations ranked independently by MedAPE and by MedAE (Table 3)."""
    out = []
    for metric in ("medape", "medae"):
        ranked = t11.sort_values([metric, "rank"], kind="stable").head(top).reset_index(drop=True)
        out.append(
            pd.DataFrame(
                {
                    "metric": metric,
                    "position": np.arange(1, len(ranked) + 1),
                    "transform": ranked["transform"],
                    "method": ranked["method"],
                    "hp": ranked["hp"],
                    "value": ranked[metric],
                    "coverage": ranked.coverage,
                }
            )
        )
    return pd.concat(out, ignore_index=True)


def _paper_table11(paper: pd.DataFrame) -> pd.DataFrame:
    p = paper[paper["table"] == "table11"]
    wide = p.pivot_table(index="row", columns="column", values="paper", aggfunc="first")
    hp = p[p["column"] == "hyperparameter"].set_index("row")["note"]
    wide["paper_hp"] = hp
    wide = wide.reset_index()
    wide[["transform", "method"]] = wide["row"].str.split("|", expand=True)
    return wide.rename(
        columns={"rank": "paper_rank", "medape": "paper_medape", "medae": "paper_medae", "coverage": "paper_coverage"}
    ).drop(columns="row")


def paper_vs_ours(t11: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Long table ``table, row, column, ours, paper`` for every Table 11 number (rank, MedAPE,
    MedAE, coverage per transform|method)."""
    merged = t11.merge(_paper_table11(paper), on=["transform", "method"], how="outer")
    recs = []
    for r in merged.itertuples():
        row = f"{r.transform}|{r.method}"
        for col in ("rank", "medape", "medae", "coverage"):
            recs.append(
                {
                    "table": "table11",
                    "row": row,
                    "column": col,
                    "ours": getattr(r, col),
                    "paper": getattr(r, f"paper_{col}"),
                }
            )
    return pd.DataFrame(recs)


def grid_acceptance(
    t11: pd.DataFrame, paper: pd.DataFrame, default: dict, medape_tol: float = 0.5, medae_tol: float = 0.3
) -> pd.DataFrame:
    """Issue acceptance 1: the default predictor's MedAPE / MedAE / coverage against Table 11, and the
    Spearman correlation of MedAPE over every configuration both tables have."""
    merged = t11.merge(_paper_table11(paper), on=["transform", "method"], how="inner")
    d = merged[(merged["transform"] == default["transform"]) & (merged["method"] == default["method"])]
    rows = []
    if len(d):
        r = d.iloc[0]
        rows += [
            {
                "check": "default MedAPE",
                "ours": r.medape,
                "paper": r.paper_medape,
                "tolerance": medape_tol,
                "pass": abs(r.medape - r.paper_medape) <= medape_tol,
            },
            {
                "check": "default MedAE",
                "ours": r.medae,
                "paper": r.paper_medae,
                "tolerance": medae_tol,
                "pass": abs(r.medae - r.paper_medae) <= medae_tol,
            },
            {
                "check": "default coverage",
                "ours": r.coverage,
                "paper": r.paper_coverage,
                "tolerance": 0.0,
                "pass": r.coverage == 1.0,
            },
            {"check": "default selected hp", "ours": r.hp, "paper": r.paper_hp, "tolerance": None, "pass": None},
        ]
    if len(merged) >= 3:
        rho = spearmanr(merged.medape, merged.paper_medape).statistic
        rows.append(
            {
                "check": f"Spearman MedAPE over {len(merged)} configurations",
                "ours": rho,
                "paper": None,
                "tolerance": 0.8,
                "pass": bool(rho >= 0.8),
            }
        )
        rho_ae = spearmanr(merged.medae, merged.paper_medae).statistic
        rows.append(
            {
                "check": f"Spearman MedAE over {len(merged)} configurations",
                "ours": rho_ae,
                "paper": None,
                "tolerance": None,
                "pass": None,
            }
        )
        rows.append(
            {
                "check": "mean |MedAPE ours - paper|",
                "ours": float((merged.medape - merged.paper_medape).abs().mean()),
                "paper": None,
                "tolerance": None,
                "pass": None,
            }
        )
        rows.append(
            {
                "check": "same best hp",
                "ours": int((merged.hp.map(_hp_text) == merged.paper_hp).sum()),
                "paper": len(merged),
                "tolerance": None,
                "pass": None,
            }
        )
    return pd.DataFrame(rows)


def _hp_text(hp: str) -> str:
    """Our hp JSON in the paper's Table 11 spelling (e.g. ``min_r2=0.2,k=7``, ``lambda=0.1,r=2``)."""
    d = json.loads(hp)
    if not d:
        return "none"
    if "min_r2" in d:
        return f"min_r2={d['min_r2']},k={d['k']}"
    if "lam" in d and "rank" in d:
        return f"lambda={d['lam']},r={d['rank']}"
    if "lam" in d:
        return f"lambda={d['lam']}"
    if "rank" in d:
        return f"r={d['rank']}"
    return ",".join(f"{k}={v}" for k, v in d.items())


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
    calibration of the hybrid risk, and the deployable hybrid model for new models.

    Returns a dict of DataFrames ``features, risk_coverage, conformal, trust, architectures`` and
    ``deployed`` (a :class:`~benchcast.new_model.complete.DeployedReliability`).
    """
    from benchcast.completion import reliability as rel
    from benchcast.new_model.complete import build_deployed

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
    deployed, ev = build_deployed(
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
        "deployed": deployed,
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


# --------------------------------------------------------------------------- Section 5


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


def combined_paper_vs_ours(parts: dict[str, pd.DataFrame], hypotheses: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every reproduced number in one ``table, row, column, ours, paper`` table (plus ``source``,
    the output it comes from): Table 11, Section 3 geometry, Section 5, Section 6.2 and the
    Tables 7 / 8 p-values (``row`` = ``H<k>|<name>``, ``column`` = ``medape_p`` / ``medae_p``)."""
    frames = []
    for source, df in parts.items():
        if df is not None and len(df):
            frames.append(df[["table", "row", "column", "ours", "paper"]].assign(source=source))
    if hypotheses is not None and len(hypotheses):
        h = hypotheses
        frames.append(
            pd.DataFrame(
                {
                    "table": np.where(h["side"] == "benchmark", "table7", "table8"),
                    "row": h["hypothesis"] + "|" + h["name"],
                    "column": h["metric"] + "_p",
                    "ours": h["our_p"],
                    "paper": h["paper_p"],
                    "source": "hypotheses",
                }
            )
        )
    out = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=["table", "row", "column", "ours", "paper", "source"])
    )
    return out


def validate_grid_config(transforms: list[str], methods: list[dict]) -> list[tuple[str, str, list[dict]]]:
    """``[(transform, method, grid)]`` from the study config; unknown names stop with the fix."""
    out = []
    for t in transforms:
        if t not in TRANSFORMS:
            raise ConfigError(f"config benchpress.transforms: unknown transform {t!r}; choose from {TRANSFORM_ORDER}")
    for m in methods:
        comp = COMPLETERS.get(m["name"])
        if comp is None:
            raise ConfigError(f"config benchpress.methods: unknown method {m['name']!r}; choose from {METHOD_ORDER}")
        grid = m.get("grid") or comp.grid
        for t in transforms:
            out.append((t, m["name"], [dict(g) for g in grid]))
    return out
