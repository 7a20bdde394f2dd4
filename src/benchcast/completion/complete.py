"""Apply BenchPress to a new model: point predictions, 90% intervals and trust probabilities.

The workflow fits a :class:`ReliabilityModel` once from the held-out folds
(:func:`build_reliability_model`) and writes it as plain JSON (weights as lists: no pickles, so a
model file from anywhere is safe to load). :func:`complete_new_model` then takes a new
model's known scores, appends its row to the score matrix and returns, for every other
benchmark:

* the point prediction of the predictor the model was calibrated for (its ``predictors``: for
  BenchPress Logit Bias ALS, rank 2, lambda 0.1, with the paper's two stacks);
* a split-conformal interval ``prediction +- q * risk`` (Appendix E.2), where ``risk`` is the
  hybrid reliability model's risk for that cell and ``q`` the ``level`` quantile of
  ``|error| / risk`` over every held-out cell of the folds (leave-fold-out risks, so ``q`` is
  calibrated on out-of-sample risks); percentage benchmarks' bounds are clipped to [0, 100];
* a trust probability ``P(|error| <= threshold)`` from the monotone calibration of the risk.

Choices where the paper is silent (documented, parameters of :func:`build_reliability_model`): the
final risk model is the hybrid estimator refitted on all held-out cells with the same
architecture selection; the conformal scale pools all folds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.completion.predictors import PredictorConfig, PredictorSet
from benchcast.completion.reliability import (
    FEATURE_SETS,
    RiskEstimate,
    RiskModel,
    conformal_intervals,
    ensemble_features,
    fit_risk_model,
    leave_fold_out_risk,
    risk_target,
    support_features,
    trust_calibration,
)
from benchcast.completion.transforms import percentage_columns
from benchcast.data.io import write_text_atomic
from benchcast.errors import DataError
from benchcast.renames import renamed_names

__all__ = [
    "ReliabilityModel",
    "FORMAT_VERSION",
    "benchmark_scales",
    "build_reliability_model",
    "complete_new_model",
    "interval_floor",
    "new_row_predictions",
]

FORMAT_VERSION = 3


def _export_estimator(model: RiskModel) -> dict:
    est = model.estimator
    if hasattr(est, "coefs_"):
        layers = [
            {"weight": np.asarray(W).tolist(), "bias": np.asarray(b).tolist()}
            for W, b in zip(est.coefs_, est.intercepts_)
        ]
    else:
        layers = [
            {
                "weight": np.asarray(est.coef_, dtype=np.float64).reshape(-1, 1).tolist(),
                "bias": [float(np.ravel(est.intercept_)[0])],
            }
        ]
    return {
        "architecture": list(model.architecture),
        "layers": layers,
        "scaler_mean": model.scaler.mean_.tolist(),
        "scaler_scale": model.scaler.scale_.tolist(),
    }


@dataclass
class ReliabilityModel:
    """Everything needed to put an interval and a trust probability on a new prediction.

    The risk network is stored as its layers (ReLU between layers, identity output) on the
    features ``log1p(max(x, 0))`` standardized with ``scaler_mean / scaler_scale``.
    """

    features: list[str]
    architecture: list[int]
    layers: list[dict]
    scaler_mean: list[float]
    scaler_scale: list[float]
    conformal_scale: float
    level: float
    trust_threshold: float
    trust_risk: list[float]
    trust_probability: list[float]
    # the point predictor and the two stacks (PredictorSet.to_dict()) whose features the risk
    # network reads; a new model is completed with exactly these
    predictors: dict
    heldout: dict = field(default_factory=dict)  # coverage / width measured on the calibration cells
    # How it was calibrated: "folds" (the paper's held-out cells of known models) or "new_model"
    # (leave-models-out cells with k known scores: benchcast.completion.calibration).
    calibration: str = "folds"
    # "points": trust = P(|error| <= trust_threshold score points); "percent_of_scale":
    # P(|error| <= trust_threshold % of the benchmark's scale (benchmark_scales)).
    trust_scale: str = "points"
    # k known scores -> {"conformal_scale", "trust_risk", "trust_probability", "cells"}, calibrated
    # on that k; a new model with k known scores uses the largest calibrated k <= its k.
    by_k: dict = field(default_factory=dict)
    format_version: int = FORMAT_VERSION

    def calibration_for(self, k: int | None) -> tuple[int | None, float, list[float], list[float]]:
        """``(k_used, conformal_scale, trust_risk, trust_probability)`` for a model with ``k`` known
        scores: the largest calibrated k <= ``k`` (the smallest one if ``k`` is below them all:
        fewer known scores than calibrated, so the interval is optimistic -- the CLI says so;
        the largest one if ``k`` is None)."""
        if not self.by_k:
            return None, self.conformal_scale, self.trust_risk, self.trust_probability
        ks = sorted(int(x) for x in self.by_k)
        used = ks[-1] if k is None else max([x for x in ks if x <= k], default=ks[0])
        c = self.by_k[str(used)]
        return used, float(c["conformal_scale"]), c["trust_risk"], c["trust_probability"]

    def risk(self, X: np.ndarray) -> np.ndarray:
        h = (np.log1p(np.maximum(np.asarray(X, dtype=np.float64), 0.0)) - self.scaler_mean) / self.scaler_scale
        for k, layer in enumerate(self.layers):
            h = h @ np.asarray(layer["weight"]) + np.asarray(layer["bias"])
            if k < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        return np.maximum(np.expm1(h[:, 0]), 0.0)

    def predictor_set(self) -> PredictorSet:
        return PredictorSet.from_dict(self.predictors)

    def trust(self, risk: np.ndarray, k: int | None = None) -> np.ndarray:
        """Trust probability of cells with this ``risk`` (already divided by the benchmark's scale
        / 100 when ``trust_scale`` is ``percent_of_scale``), for a model with ``k`` known scores."""
        r = np.asarray(risk, dtype=np.float64)
        _, _, tr, tp = self.calibration_for(k)
        return np.interp(r, tr, tp, left=tp[0], right=tp[-1])

    def to_json(self, path: str | Path) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(self.__dict__, indent=1, sort_keys=True))

    @classmethod
    def from_json(cls, path: str | Path) -> ReliabilityModel:
        try:
            doc = json.loads(Path(path).read_text())
        except FileNotFoundError:
            raise DataError(
                path,
                "(file)",
                "reliability model not found",
                "build it with `snakemake results/models/benchpress/reliability.json --cores all` "
                "(rule bp_complete) or pass --reliability",
            ) from None
        except json.JSONDecodeError as exc:
            raise DataError(path, f"(JSON line {exc.lineno})", exc.msg, "rebuild the reliability model") from None
        if doc.get("format_version") != FORMAT_VERSION:
            raise DataError(
                path,
                "format_version",
                f"is {doc.get('format_version')!r}, expected {FORMAT_VERSION}",
                "rebuild the reliability model with this version of benchcast",
            )
        try:
            return cls(**doc)
        except TypeError as exc:
            raise DataError(path, "(keys)", str(exc), "rebuild the reliability model") from None


def build_reliability_model(
    features: pd.DataFrame,
    kind: str = "hybrid",
    *,
    predictors: PredictorSet,
    seed: int,
    grid: Sequence[tuple[int, ...]],
    level: float = 0.9,
    threshold: float = 10.0,
    bins: int = 20,
    n_jobs: int = 1,
    lfo: RiskEstimate | None = None,
    scale: np.ndarray | None = None,
) -> tuple[ReliabilityModel, dict]:
    """Fit the reliability model from the per-cell fold feature table.

    ``features`` is :func:`benchcast.completion.reliability.fold_features` of the held-out
    folds, computed with ``predictors``; ``seed`` and ``grid`` go to the risk model's fit
    (:func:`~benchcast.completion.reliability.fit_risk_model`). Returns the model and the leave-fold-out evaluation it was calibrated on
    (``risk``, the :class:`~benchcast.completion.reliability.ConformalResult`, the trust
    calibration). ``lfo`` reuses already cross-fitted risks of ``kind``. ``scale`` (per cell)
    makes trust scale-aware: calibrated on ``error / scale * 100`` and ``risk / scale * 100``.
    """
    names = list(FEATURE_SETS[kind])
    if lfo is None:
        lfo = leave_fold_out_risk(features, kind, seed=seed, grid=grid, n_jobs=n_jobs)
    elif lfo.kind != kind:
        raise ValueError(f"lfo risks are for {lfo.kind!r}, not {kind!r}")
    err = features["abs_err"].to_numpy(dtype=np.float64)
    conf = conformal_intervals(err, lfo.risk, features["fold_id"].to_numpy())
    ok = np.isfinite(err) & np.isfinite(lfo.risk) & (lfo.risk > 1e-8)
    q = float(np.quantile(err[ok] / lfo.risk[ok], level))
    norm = 1.0 if scale is None else 100.0 / np.asarray(scale, dtype=np.float64)
    trust = trust_calibration(err * norm, lfo.risk * norm, threshold=threshold, bins=bins)
    X = features[names].to_numpy(dtype=np.float64)
    y = risk_target(err)
    good = np.all(np.isfinite(X), axis=1) & np.isfinite(y)
    final = fit_risk_model(X[good], y[good], features["fold_id"].to_numpy()[good], seed, grid=grid)
    exported = _export_estimator(final)
    model = ReliabilityModel(
        features=names,
        architecture=exported["architecture"],
        layers=exported["layers"],
        scaler_mean=exported["scaler_mean"],
        scaler_scale=exported["scaler_scale"],
        conformal_scale=q,
        level=level,
        trust_threshold=threshold,
        trust_risk=trust.bin_risk_median.tolist(),
        trust_probability=trust.bin_calibrated.tolist(),
        predictors=predictors.to_dict(),
        trust_scale="points" if scale is None else "percent_of_scale",
        heldout={
            "coverage": conf.coverage,
            "median_width": conf.median_width,
            "cells": conf.n,
            "conformal_scale_median_per_fold": conf.scale_median,
        },
    )
    # the exported network must reproduce the fitted estimator
    check = np.maximum(np.expm1(final.predict(X[good][:200])), 0.0)
    if not np.allclose(model.risk(X[good][:200]), check, rtol=1e-8, atol=1e-8):
        raise RuntimeError("exported risk model does not reproduce the fitted estimator")
    return model, {"risk": lfo, "conformal": conf, "trust": trust}


def complete_new_model(
    M: np.ndarray,
    benchmark_ids: list[str],
    known: dict[str, float],
    reliability: ReliabilityModel | None,
    *,
    predictor: PredictorConfig | None = None,
    is_percentage: np.ndarray | None = None,
) -> pd.DataFrame:
    """Predict every benchmark a new model has no score for.

    Parameters
    ----------
    M : (models, benchmarks) score matrix of the other models, NaN = missing.
    benchmark_ids : column ids of ``M``.
    known : the new model's scores by benchmark id (validated by the caller).
    reliability : the reliability model (its predictors complete the row); None gives
        point predictions only, from ``predictor``.
    predictor : the point predictor when ``reliability`` is None.
    is_percentage : per-column percentage flags for clipping; default the observed-range rule.

    Returns
    -------
    DataFrame in column order with ``benchmark_id, known, score`` (the given score, or the
    prediction), ``lower, upper, risk, trust_probability`` (NaN for known cells) and
    ``calibrated_k`` (the k known scores the interval was calibrated for). Lower bounds stop at
    the benchmark's lowest valid score (:func:`~interval_floor`),
    upper bounds of percentage benchmarks at 100.
    """
    if reliability is None and predictor is None:
        raise ValueError("complete_new_model needs a reliability model or a point predictor")
    predictors = None if reliability is None else reliability.predictor_set()
    col = {b: k for k, b in enumerate(benchmark_ids)}
    row = np.full(M.shape[1], np.nan)
    for b, s in known.items():
        row[col[b]] = s
    M_aug = np.vstack([M, row[None, :]])
    missing = np.flatnonzero(np.isnan(row))
    if predictors is None:
        pred = predictor.predict(M_aug)[-1]
    elif missing.size == 0:
        pred = predictors.selected.predict(M_aug)[-1]
    else:
        pred, feats = new_row_predictions(M_aug, missing, predictors)
    out = pd.DataFrame(
        {"benchmark_id": benchmark_ids, "known": ~np.isnan(row), "score": np.where(np.isnan(row), pred, row)}
    )
    for c in ("lower", "upper", "risk", "trust_probability"):
        out[c] = np.nan
    out["calibrated_k"] = pd.array([pd.NA] * len(out), dtype="Int64")
    if reliability is None or missing.size == 0:
        return out
    risk = reliability.risk(feats[reliability.features].to_numpy())
    k_used, q, _, _ = reliability.calibration_for(len(known))
    half = q * risk
    pct = percentage_columns(M_aug) if is_percentage is None else np.asarray(is_percentage, bool)
    lo = np.maximum(pred[missing] - half, interval_floor(M_aug, pct)[missing])
    hi = np.where(pct[missing], np.minimum(pred[missing] + half, 100.0), pred[missing] + half)
    trust_risk = risk
    if reliability.trust_scale == "percent_of_scale":
        trust_risk = risk * 100.0 / benchmark_scales(M_aug, pct)[missing]
    out.loc[missing, "lower"] = lo
    out.loc[missing, "upper"] = hi
    out.loc[missing, "risk"] = risk
    out.loc[missing, "trust_probability"] = reliability.trust(trust_risk, len(known))
    if k_used is not None:
        out.loc[missing, "calibrated_k"] = k_used
    return out


def benchmark_scales(M: np.ndarray, is_percentage: np.ndarray | None = None) -> np.ndarray:
    """Per benchmark, the scale that trust thresholds are a percentage of: 100 on percentage
    benchmarks, the observed range (max - min, at least 1e-9) on the others."""
    M = np.asarray(M, dtype=np.float64)
    pct = percentage_columns(M) if is_percentage is None else np.asarray(is_percentage, bool)
    with np.errstate(all="ignore"):
        obs = np.isfinite(M).any(axis=0)
        span = np.where(
            obs,
            np.nanmax(np.where(np.isfinite(M), M, -np.inf), axis=0)
            - np.nanmin(np.where(np.isfinite(M), M, np.inf), axis=0),
            0.0,
        )
    return np.where(pct, 100.0, np.maximum(span, 1e-9))


def interval_floor(M: np.ndarray, is_percentage: np.ndarray | None = None) -> np.ndarray:
    """Per benchmark, the lowest valid score for an interval's lower bound: 0 on percentage
    benchmarks and on benchmarks whose observed scores are all non-negative (Elo, dollars,
    counts), -inf otherwise."""
    M = np.asarray(M, dtype=np.float64)
    pct = percentage_columns(M) if is_percentage is None else np.asarray(is_percentage, bool)
    with np.errstate(all="ignore"):
        nonneg = np.all(~np.isfinite(M) | (M >= 0), axis=0)
    return np.where(pct | nonneg, 0.0, -np.inf)


def new_row_predictions(
    M_aug: np.ndarray, cells: np.ndarray, predictors: PredictorSet
) -> tuple[np.ndarray, pd.DataFrame]:
    """Complete the last row of ``M_aug`` (the new model) and the reliability features of ``cells``.

    Returns the selected predictor's completed row and the hybrid features (ensemble features
    from the two stacks, support features from ``M_aug``) of the columns ``cells``.
    """
    target = M_aug.shape[0] - 1
    done: dict[str, np.ndarray] = {}

    def row(cfg) -> np.ndarray:  # cfg: a PredictorConfig; the selected one may also be in a stack
        if cfg.key not in done:
            done[cfg.key] = cfg.predict(M_aug)[target]
        return done[cfg.key]

    pred = row(predictors.selected)
    stack_l = np.stack([row(c)[cells] for c in predictors.lambda_stack])
    stack_s = np.stack([row(c)[cells] for c in predictors.strong_stack])
    feats = pd.concat(
        [ensemble_features(pred[cells], stack_l, stack_s), support_features(M_aug, np.full(cells.size, target), cells)],
        axis=1,
    )
    return pred, feats


__getattr__ = renamed_names(__name__)  # the names renamed in 0.3.0, for one release
