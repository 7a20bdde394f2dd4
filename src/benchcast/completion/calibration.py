"""Intervals and trust that hold for a genuinely new model: leave-models-out calibration.

The reliability layer of Section 6.2 (Appendix E.2) is fitted and calibrated on the folds'
held-out cells: missing cells of models whose other scores are in the matrix. ``benchcast
complete`` meets a different case: a model whose row is *not* in the matrix and that brings only
k known scores. Calibrated on the folds, its 90% intervals covered 81.5% of the held-out cells of
three models removed from the matrix. Here every calibration cell is made the way a
new-model cell is (the paper is silent on calibrating for new models; these choices are ours):

1. a model with at least ``k + 1`` observed scores is removed from the matrix;
2. ``k`` of its observed scores, drawn at random (seed stream ``new_model``), are its known scores;
3. its row is appended and completed exactly as :func:`~benchcast.completion.complete.complete_new_model`
   does (the point predictor and the two stacks of a
   :class:`~benchcast.completion.predictors.PredictorSet`, support features from the augmented matrix);
4. its other observed scores are the calibration cells (error of the default predictor).

The hybrid risk model is fitted on these cells with the paper's architecture selection, cross-fitted
over groups of models (a model's cells never calibrate its own risk); the split-conformal scale and
the trust calibration are computed per ``k`` on the cross-fitted risks. Trust is scale-aware:
P(|error| <= ``threshold`` % of the benchmark's scale), the scale being 100 points on percentage
benchmarks and the range of the benchmark's observed scores otherwise (Elo, dollars, ...).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from benchcast.completion.complete import benchmark_scales, new_row_predictions
from benchcast.completion.predictors import PredictorSet
from benchcast.renames import renamed_names
from benchcast.seeding import rng

MIN_CELLS = 20
"""Fewest calibration cells a k's conformal scale and trust calibration are computed from."""

__all__ = [
    "build_new_model_reliability",
    "check_new_models",
    "check_summary",
    "calibrate_for_new_models",
    "leave_model_out_cells",
    "pick_models",
]


def leave_model_out_cells(
    M: np.ndarray,
    k_known: list[int],
    *,
    predictors: PredictorSet,
    repeats: int = 1,
    groups: int = 10,
    models: np.ndarray | None = None,
    seed: int = 0,
    n_jobs: int = 1,
    log=lambda s: None,
) -> pd.DataFrame:
    """Calibration cells of the new-model case (module docstring, steps 1-4).

    Parameters
    ----------
    M : (models, benchmarks) score matrix, NaN = missing.
    k_known : numbers of known scores to simulate (each model, each k, each repeat).
    predictors : the point predictor and the two stacks that complete each model's row.
    repeats : independent draws of the known scores per (model, k).
    groups : models are dealt into this many groups (seeded shuffle); ``fold_id`` is the group, so
        cross-fitting over ``fold_id`` never calibrates a model's cells with its own.
    models : rows to use (default: every row with more than ``min(k_known)`` observed scores).
    seed : base seed; the draw of (model i, k, repeat r) uses stream ``new_model`` at trial
        ``(i, k, r)`` (:func:`benchcast.seeding.rng`), so it does not depend on the other models.
    n_jobs : models completed in parallel (joblib processes, one BLAS thread each); the cells
        do not depend on it.

    Returns
    -------
    One row per calibration cell: ``fold_id, model, k, repeat, benchmark, actual, predicted, abs_err,
    scale`` and the hybrid feature columns.
    """
    M = np.asarray(M, dtype=np.float64)
    n_obs = np.isfinite(M).sum(axis=1)
    if models is None:
        models = np.flatnonzero(n_obs > min(k_known))
    models = np.asarray(models, dtype=np.int64)
    order = rng(seed, 0, "new_model_groups").permutation(models.size)
    group = np.empty(models.size, dtype=np.int64)
    group[order] = np.arange(models.size) % max(1, int(groups))
    if n_jobs == 1:
        per_model = [_model_cells(M, int(i), int(g), k_known, repeats, seed, predictors) for g, i in zip(group, models)]
    else:
        from joblib import Parallel, delayed

        per_model = Parallel(n_jobs=n_jobs)(
            delayed(_model_cells)(M, int(i), int(g), k_known, repeats, seed, predictors) for g, i in zip(group, models)
        )
    parts = [p for p in per_model if p is not None]
    log(f"{len(parts)} models, {sum(len(p) for p in parts)} calibration cells")
    if not parts:
        raise ValueError(f"no model has more than {min(k_known)} observed scores")
    return pd.concat(parts, ignore_index=True)


def _model_cells(
    M: np.ndarray, i: int, g: int, k_known: list[int], repeats: int, seed: int, predictors: PredictorSet
) -> pd.DataFrame | None:
    """The calibration cells of one model (all its k and repeats); one BLAS thread."""
    from threadpoolctl import threadpool_limits

    obs = np.flatnonzero(np.isfinite(M[i]))
    rest = np.delete(M, i, axis=0)
    parts = []
    with threadpool_limits(1):
        for k in k_known:
            if obs.size <= k:
                continue
            for r in range(repeats):
                known = np.sort(rng(seed, i * 10_000 + int(k) * 100 + r, "new_model").choice(obs, k, replace=False))
                cells = np.setdiff1d(obs, known)
                new = np.full(M.shape[1], np.nan)
                new[known] = M[i, known]
                M_aug = np.vstack([rest, new[None, :]])
                pred, feats = new_row_predictions(M_aug, cells, predictors)
                head = pd.DataFrame(
                    {
                        "fold_id": g,
                        "model": i,
                        "k": k,
                        "repeat": r,
                        "benchmark": cells,
                        "actual": M[i, cells],
                        "predicted": pred[cells],
                        "abs_err": np.abs(pred[cells] - M[i, cells]),
                        "scale": benchmark_scales(M_aug)[cells],
                    }
                )
                parts.append(pd.concat([head, feats], axis=1))
    return pd.concat(parts, ignore_index=True) if parts else None


def build_new_model_reliability(
    cells: pd.DataFrame,
    *,
    predictors: PredictorSet,
    seed: int,
    grid: Sequence[tuple[int, ...]],
    level: float = 0.9,
    threshold: float = 10.0,
    bins: int = 20,
    n_jobs: int = 1,
):
    """The reliability model from :func:`leave_model_out_cells` (made with ``predictors``;
    ``seed`` and ``grid`` go to the risk model's fit).

    The hybrid risk model is fitted on all cells (architecture selection as Appendix E.2, the
    model groups as folds); the conformal scale and the trust calibration of each ``k`` use the
    cells of that ``k`` with risks cross-fitted over the model groups. Returns the
    :class:`~benchcast.completion.complete.ReliabilityModel` and a per-k summary table.
    """
    from benchcast.completion.complete import build_reliability_model
    from benchcast.completion.reliability import leave_fold_out_risk, trust_calibration

    lfo = leave_fold_out_risk(cells, "hybrid", seed=seed, grid=grid, n_jobs=n_jobs)
    scale = cells["scale"].to_numpy(dtype=np.float64)
    model, _ = build_reliability_model(
        cells,
        "hybrid",
        predictors=predictors,
        seed=seed,
        grid=grid,
        level=level,
        threshold=threshold,
        bins=bins,
        n_jobs=n_jobs,
        lfo=lfo,
        scale=scale,
    )
    err = cells["abs_err"].to_numpy(dtype=np.float64)
    risk = lfo.risk
    norm = 100.0 / scale
    rows = []
    for k in sorted(cells["k"].unique()):
        sel = (cells["k"].to_numpy() == k) & np.isfinite(err) & np.isfinite(risk) & (risk > 1e-8)
        if sel.sum() < MIN_CELLS:
            from benchcast.errors import ConfigError

            raise ConfigError(
                f"config benchpress.complete: only {int(sel.sum())} calibration cells with a cross-fitted risk for "
                f"k = {k} known scores (need {MIN_CELLS}; each model group's risk model trains on the other groups "
                f"and needs {len(lfo.feature_names) + 50} cells). Fix: raise repeats or max_models, lower groups, or "
                "drop this k from k_known"
            )
        q = float(np.quantile(err[sel] / risk[sel], level))
        trust = trust_calibration(err[sel] * norm[sel], risk[sel] * norm[sel], threshold=threshold, bins=bins)
        model.by_k[str(int(k))] = {
            "conformal_scale": q,
            "trust_risk": trust.bin_risk_median.tolist(),
            "trust_probability": trust.bin_calibrated.tolist(),
            "cells": int(sel.sum()),
        }
        rows.append(
            {
                "k": int(k),
                "cells": int(sel.sum()),
                "models": int(cells.loc[sel, "model"].nunique()),
                "conformal_scale": q,
                "median_half_width": float(np.median(q * risk[sel])),
            }
        )
    model.calibration = "new_model"
    model.heldout = {"cells": len(cells), "level": level, "by_k": rows}
    return model, pd.DataFrame(rows)


def check_new_models(
    M: np.ndarray, benchmark_ids: list[str], held_out: np.ndarray, k: int, reliability, draws: int = 1, seed: int = 0
) -> pd.DataFrame:
    """Complete each held-out model from ``k`` of its scores with ``reliability`` (built without
    them) and compare with its other observed scores; ``draws`` independent draws of the known
    scores per model (seed stream ``new_model_check``).

    ``M`` holds the held-out rows; they are removed before completing. Returns one row per
    evaluated cell: ``model, draw, benchmark_id, actual, predicted, lower, upper, covered, trust,
    within`` (``within``: |error| <= the trust threshold, on the benchmark's scale when the model's
    trust is scale-aware).
    """
    from benchcast.completion.complete import complete_new_model

    M = np.asarray(M, dtype=np.float64)
    held_out = np.asarray(held_out, dtype=np.int64)
    rest = np.delete(M, held_out, axis=0)
    rows = []
    for i in held_out:
        obs = np.flatnonzero(np.isfinite(M[i]))
        for d in range(draws):
            known = np.sort(rng(seed, int(i) * 100 + d, "new_model_check").choice(obs, k, replace=False))
            table = complete_new_model(
                rest, benchmark_ids, {benchmark_ids[j]: float(M[i, j]) for j in known}, reliability
            )
            cells = np.setdiff1d(obs, known)
            t = table.iloc[cells]
            row = np.full(M.shape[1], np.nan)
            row[known] = M[i, known]
            scale = benchmark_scales(np.vstack([rest, row[None, :]]))[cells]
            err = np.abs(t["score"].to_numpy() - M[i, cells])
            thr = reliability.trust_threshold * (
                scale / 100.0 if reliability.trust_scale == "percent_of_scale" else 1.0
            )
            lower, upper = t["lower"].to_numpy(), t["upper"].to_numpy()
            rows.append(
                pd.DataFrame(
                    {
                        "model": int(i),
                        "draw": d,
                        "benchmark_id": t["benchmark_id"].to_numpy(),
                        "actual": M[i, cells],
                        "predicted": t["score"].to_numpy(),
                        "lower": lower,
                        "upper": upper,
                        "covered": (M[i, cells] >= lower) & (M[i, cells] <= upper),
                        "trust": t["trust_probability"].to_numpy(),
                        "within": err <= thr,
                    }
                )
            )
    return pd.concat(rows, ignore_index=True)


def check_summary(cells: pd.DataFrame, level: float, trust_bins=(0.0, 0.5, 0.7, 0.8, 0.9, 1.0)) -> pd.DataFrame:
    """Coverage and trust calibration of :func:`check_new_models`: overall, per model, per trust bin."""
    rows = [
        {
            "group": "all",
            "cells": len(cells),
            "coverage": cells["covered"].mean(),
            "nominal": level,
            "stated_trust": cells["trust"].mean(),
            "observed_within": cells["within"].mean(),
        }
    ]
    for m, g in cells.groupby("model", sort=True):
        rows.append(
            {
                "group": f"model {m}",
                "cells": len(g),
                "coverage": g["covered"].mean(),
                "nominal": level,
                "stated_trust": g["trust"].mean(),
                "observed_within": g["within"].mean(),
            }
        )
    b = pd.cut(cells["trust"], list(trust_bins), include_lowest=True)
    for interval, g in cells.groupby(b, observed=True, sort=True):
        rows.append(
            {
                "group": f"trust {interval}",
                "cells": len(g),
                "coverage": g["covered"].mean(),
                "nominal": level,
                "stated_trust": g["trust"].mean(),
                "observed_within": g["within"].mean(),
            }
        )
    return pd.DataFrame(rows)


def pick_models(M: np.ndarray, n: int | None, min_observed: int, seed: int, stream: str) -> np.ndarray:
    """``n`` rows (all when None) with at least ``min_observed`` scores, a seeded uniform choice, sorted."""
    eligible = np.flatnonzero(np.isfinite(np.asarray(M, dtype=np.float64)).sum(axis=1) >= min_observed)
    if n is None or n >= eligible.size:
        return eligible
    return np.sort(rng(seed, 0, stream).choice(eligible, n, replace=False))


def calibrate_for_new_models(
    M: np.ndarray,
    *,
    k_known: list[int],
    repeats: int,
    groups: int,
    max_models: int | None,
    seed: int,
    level: float,
    threshold: float,
    bins: int,
    risk_seed: int,
    predictors: PredictorSet,
    risk_grid: Sequence[tuple[int, ...]],
    n_jobs: int = 1,
    log=lambda s: None,
):
    """Calibration cells and the final model for new models, from the settings of config
    ``benchpress.complete`` (and ``benchpress.reliability`` for level, threshold, bins, risk_seed),
    the predictors that complete a row and the risk model's architecture grid."""
    models = pick_models(M, max_models, min(k_known) + 1, seed, "new_model_models")
    cells = leave_model_out_cells(
        M,
        k_known,
        predictors=predictors,
        repeats=repeats,
        groups=groups,
        models=models,
        seed=seed,
        n_jobs=n_jobs,
        log=log,
    )
    model, by_k = build_new_model_reliability(
        cells,
        predictors=predictors,
        seed=risk_seed,
        grid=risk_grid,
        level=level,
        threshold=threshold,
        bins=bins,
        n_jobs=n_jobs,
    )
    return cells, model, by_k


__getattr__ = renamed_names(__name__)  # the names renamed in 0.3.0, for one release
