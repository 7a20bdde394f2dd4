"""The BenchPress study, Section 4: the transform x method grid and its tables.

* :func:`load_matrix` -- the ingested Parquet tables as the models x benchmarks matrix in
  source order (the order the paper's fold file indexes);
* :func:`run_grid_cell` -- one (transform, method) pair: every hyper-parameter setting on
  every fold, one row per held-out cell (a Snakemake job);
* :func:`grid_summary` / :func:`table11` / :func:`table3` -- median-over-folds MedAPE and
  MedAE with coverage per setting, the best setting per pair by MedAPE (the paper's
  selection rule, Section 4.2 "Hyperparameter selection"), and the top-15 by each metric;
* :func:`paper_vs_ours` / :func:`grid_acceptance` -- the comparison with Table 11.
* :func:`combined_paper_vs_ours` -- every reproduced number in one table.

The other sections' analyses are in :mod:`.matrix_description` (Section 3), :mod:`.section5`
and :mod:`.reliability_study` (Section 6); this module re-exports them for the workflow scripts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from benchcast.completion.completers import COMPLETERS, get_completer
from benchcast.completion.evaluation import Fold, evaluate_predictor, summarize_folds
from benchcast.completion.pipeline import predict_scores
from benchcast.completion.transforms import TRANSFORM_LABELS, TRANSFORMS, get_transform
from benchcast.data.aggregate import load_score_matrix
from benchcast.errors import ConfigError, DataError, check_keywords, did_you_mean
from benchcast.output.comparison import finish, mark_not_comparable, trial_factor
from benchcast.output.tables import within_tolerance
from benchcast.studies.benchpress.matrix_description import (  # noqa: F401
    geometry_paper_vs_ours,
    matrix_composition,
    matrix_paper_vs_ours,
)
from benchcast.studies.benchpress.reliability_study import (  # noqa: F401
    conformal_levels_table,
    predictability_paper_vs_ours,
    reliability_paper_vs_ours,
    reliability_study,
)
from benchcast.studies.benchpress.section5 import (  # noqa: F401
    release_date_strings,
    section5_paper_vs_ours,
    section5_probes,
    section5_ranking,
    section5_temporal,
)

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
            raise ConfigError(
                f"config benchpress.methods: unknown method {m['name']!r}{did_you_mean(m['name'], METHOD_ORDER) or '.'} "
                f"Fix: choose from {METHOD_ORDER}"
            )
        grid = m.get("grid") or comp.grid
        for setting in grid:  # hyper-parameter names, before any job runs (Z, the matrix, is not one)
            check_keywords(comp.fn, setting, f"config benchpress.methods: '{m['name']}' grid", skip=1)
        for t in transforms:
            out.append((t, m["name"], [dict(g) for g in grid]))
    return out


#: the paper's grid and samples: 84 settings, 30 held-out folds, 10 seeds of the seeded procedures
PAPER_SETTINGS, PAPER_FOLDS, PAPER_SEEDS = 84, 30, 10
#: the sources (outputs) of paper_vs_ours whose numbers come from the held-out folds / from seeds
FOLD_SOURCES = ("grid", "reliability", "predictability")
SEED_SOURCES = ("section5", "hypotheses")


def judge(
    pvo: pd.DataFrame,
    cells: Mapping,
    settings: int = PAPER_SETTINGS,
    folds: int = PAPER_FOLDS,
    seeds: int = PAPER_SEEDS,
) -> pd.DataFrame:
    """``pvo`` (:func:`combined_paper_vs_ours`) with ``abs_tolerance``, ``within_tolerance``,
    ``tolerance_factor`` and ``not_comparable``: ``|ours - paper| <= max(abs, rel x |paper|) x factor``
    (``cells``: config ``benchpress.tolerance.cells``). A run of fewer folds or seeds than the
    paper's is a slice: the numbers from the folds (Table 11, Section 6.2, Appendix E) widen by
    sqrt(30 / folds), those of the seeded procedures (Section 5, the hypothesis tests) by
    sqrt(10 / seeds) (``seeds``: the smallest seed count of the run); their counts (``n_*``) are
    counts over a smaller sample, the hypothesis tests' p-values (Tables 7-8) are p-values of noisier
    outcomes (a p-value is no mean: with the paper's 10 seeds our slice's misses there are
    reproduced) and Table 11's ranks are among fewer settings than the paper's 84: those are not
    comparable. A full run (84 settings, 30 folds, 10 seeds) is judged as before."""
    out = pvo.copy()
    source = out["source"] if "source" in out else pd.Series("", index=out.index)
    by_folds = source.isin(FOLD_SOURCES).to_numpy()
    by_seeds = source.isin(SEED_SOURCES).to_numpy()
    factor = np.where(by_folds, trial_factor(PAPER_FOLDS, folds), 1.0)
    factor = np.where(by_seeds, trial_factor(PAPER_SEEDS, seeds), factor)
    out["abs_tolerance"] = out["column"].map(cells["abs_by_column"]).fillna(cells["abs"]).astype(float)
    out["within_tolerance"] = within_tolerance(
        out.ours, out.paper, out.abs_tolerance * factor, cells["rel"] * factor
    ).astype(object)
    if settings < PAPER_SETTINGS:
        out = mark_not_comparable(
            out,
            (out["table"] == "table11") & (out["column"] == "rank"),
            f"a rank among this run's {settings} settings; the paper ranks its {PAPER_SETTINGS}",
        )
    sample = [
        f"{folds} of the paper's {PAPER_FOLDS} folds" if folds < PAPER_FOLDS else "",
        f"{seeds} of its {PAPER_SEEDS} seeds" if seeds < PAPER_SEEDS else "",
    ]
    if seeds < PAPER_SEEDS:
        out = mark_not_comparable(
            out,
            source == "hypotheses",
            f"a p-value of outcomes over {seeds} of the paper's {PAPER_SEEDS} seeds (a p-value is not a mean)",
        )
    out = mark_not_comparable(
        out,
        out["column"].astype(str).str.startswith("n_") & (factor > 1),
        "a count over this run's smaller sample (" + " and ".join(x for x in sample if x) + ")",
    )
    return finish(out, factor)
