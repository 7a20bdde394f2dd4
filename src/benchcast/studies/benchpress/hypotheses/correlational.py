"""Correlational features of the Section 6.1 tests (benchmark H1-H3, model H1-H4) and |r| partners.

Per-benchmark and per-model features of the full observed matrix (:func:`benchmark_features`,
:func:`model_features`, one computation along either axis) and their Spearman correlation
with the default predictor's pooled error (:func:`benchmark_correlational`,
:func:`model_correlational`). The pairwise |Pearson r| between benchmarks
(:func:`benchmark_abs_corr`) and between models (:func:`model_abs_corr`) and each one's
strongest partner (:func:`_strongest_partners`) feed the ablations H5 / H6.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from benchcast.completion.correlation import pairwise_abs_pearson
from benchcast.completion.evaluation import Fold
from benchcast.studies.benchpress.hypotheses.stats import (
    METRICS,
    PredictBatch,
    fold_cells,
    pooled_errors,
    spearman_test,
)

# --------------------------------------------------------------------------- matrix features


def rank2_r2(M: np.ndarray, axis: int) -> np.ndarray:
    """R^2 of the best rank-2 reconstruction of the standardized, zero-imputed matrix.

    The paper's code ``rank2_r2``: z-score each column on its observed entries (population
    std; std < 1e-8 -> 1), set missing entries to 0, truncated SVD to rank 2, and
    ``1 - resid_ss / total_ss`` summed along ``axis`` (``axis=0``: per benchmark column,
    benchmark H1; ``axis=1``: per model row, model H4). ``total_ss <= 1e-12`` -> divided by 1.
    """
    M = np.asarray(M, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(M, axis=0)
        std = np.nanstd(M, axis=0)
    std = np.where(np.isfinite(std) & (std >= 1e-8), std, 1.0)
    Z = np.where(np.isnan(M), 0.0, (M - mean) / std)
    U, s, Vt = np.linalg.svd(Z, full_matrices=False)
    Z_hat = (U[:, :2] * s[:2]) @ Vt[:2]
    total = (Z**2).sum(axis=axis)
    resid = ((Z - Z_hat) ** 2).sum(axis=axis)
    return 1.0 - resid / np.where(total > 1e-12, total, 1.0)


def benchmark_abs_corr(M: np.ndarray, min_shared: int = 5) -> np.ndarray:
    """|Pearson r| between every pair of benchmark columns over their shared models.

    The paper's code ``pairwise_benchmark_corr(min_shared=5)`` on the full matrix: NaN where
    fewer than ``min_shared`` models are shared, where a side is constant, and on the
    diagonal (:func:`~benchcast.completion.correlation.pairwise_abs_pearson`, exact). Used for
    strong neighbours (H5: ``|r| >= 0.85``) and the strongest neighbour (H6).
    """
    return pairwise_abs_pearson(M, axis=0, min_shared=min_shared, below=np.nan, constant=np.nan)


def model_abs_corr(M: np.ndarray, min_shared: int = 3) -> np.ndarray:
    """|Pearson r| between every pair of model rows over their shared benchmarks (raw scores).

    The paper's code ``pairwise_abs_r``: 0 where fewer than ``min_shared`` (3) benchmarks are
    shared and on the diagonal, NaN where a side is constant; computed on the full matrix
    (:func:`~benchcast.completion.correlation.pairwise_abs_pearson`, exact). Used for strong
    peers (model H5: ``|r| >= 0.95``) and the strongest peer (model H6).
    """
    return pairwise_abs_pearson(M, axis=1, min_shared=min_shared, below=0.0, constant=np.nan)


def _strongest_partners(R: np.ndarray, threshold: float = -np.inf) -> list[int | None]:
    """Each variable's partner with the highest |r| in ``R`` (the first on ties, NaN skipped) among
    those with ``|r| >= threshold``; None without one. The variable itself is never its partner.

    Benchmark H6 takes the strongest neighbour whatever its |r| (the default); model H6 the
    strongest peer with ``|r| >= 0.95``.
    """
    out = []
    for v in range(R.shape[0]):
        row = R[v].copy()
        row[v] = np.nan
        with np.errstate(invalid="ignore"):
            elig = np.flatnonzero(row >= threshold)
        out.append(int(elig[np.nanargmax(row[elig])]) if len(elig) else None)
    return out


def _per_variable(M: np.ndarray, axis: int, name: str) -> pd.DataFrame:
    """``n_obs``, ``rank2_r2`` (:func:`rank2_r2`), ``median`` and sample ``std`` (``ddof=1``) of the
    observed entries of each column (``axis=0``) or row (``axis=1``), index ``name``; NaN for a
    variable with fewer than 2 observed entries (the paper's code skips it)."""
    M = np.asarray(M, dtype=np.float64)
    r2 = rank2_r2(M, axis=axis)
    recs = []
    for v in range(M.shape[1 - axis]):
        x = M[:, v] if axis == 0 else M[v]
        x = x[np.isfinite(x)]
        ok = len(x) >= 2
        recs.append(
            {
                name: v,
                "n_obs": len(x),
                "rank2_r2": float(r2[v]) if ok else np.nan,
                "median": float(np.median(x)) if ok else np.nan,
                "std": float(np.std(x, ddof=1)) if ok else np.nan,
            }
        )
    return pd.DataFrame(recs).set_index(name)


def benchmark_features(M: np.ndarray) -> pd.DataFrame:
    """Benchmark features of Table 7 H1-H3 from the full observed matrix.

    ``rank2_r2`` (H1; :func:`rank2_r2` axis 0), ``med_score`` (H2; median observed score),
    ``std_score`` (H3; sample standard deviation, ``ddof=1``, the paper's code
    ``np.std(obs, ddof=1)``), and ``n_obs``. Benchmarks with fewer than 2 observed scores get
    NaN (the paper's code skips them).
    """
    feat = _per_variable(M, 0, "benchmark").rename(columns={"median": "med_score", "std": "std_score"})
    return feat[["n_obs", "rank2_r2", "med_score", "std_score"]]


def model_features(M: np.ndarray, reasoning: Sequence | None = None, params: Sequence | None = None) -> pd.DataFrame:
    """Model features of Table 8 H1-H4 from the full observed matrix.

    ``log_params`` (H1; log10 of a positive finite parameter count, else NaN -- the paper's
    code uses ``params_total_M``), ``is_reasoning`` (H2; 0/1, NaN where unannotated),
    ``med_true`` (H3; median observed score), ``rank2_r2`` (H4; :func:`rank2_r2` axis 1),
    ``n_obs``. Models with fewer than 2 observed scores get NaN.
    """
    n = np.shape(M)[0]
    reasoning = [None] * n if reasoning is None else list(reasoning)
    params = [None] * n if params is None else list(params)
    if len(reasoning) != n or len(params) != n:
        raise ValueError("reasoning and params need one entry per model")
    p = [float(v) if v is not None and not pd.isna(v) else np.nan for v in params]
    feat = _per_variable(M, 1, "model")
    feat["log_params"] = [float(np.log10(v)) if np.isfinite(v) and v > 0 else np.nan for v in p]
    feat["is_reasoning"] = [float(bool(r)) if r is not None and not pd.isna(r) else np.nan for r in reasoning]
    return feat.rename(columns={"median": "med_true"})[["n_obs", "log_params", "is_reasoning", "med_true", "rank2_r2"]]


# --------------------------------------------------------------------------- Spearman tests


def _spearman_tests(feat: pd.DataFrame, features: Mapping[str, str], min_n: Mapping[str, int]) -> dict:
    """``{(hyp, metric): spearman_test(feature, pooled error)}`` for each hypothesis' feature; a
    hypothesis whose feature is finite for fewer than ``min_n[hyp]`` targets is skipped (NaN)."""
    tests = {}
    for hyp, feature in features.items():
        n_finite = int(np.isfinite(feat[feature]).sum())
        for m in METRICS:
            if n_finite < min_n.get(hyp, 0):
                tests[(hyp, m)] = {
                    "statistic": np.nan,
                    "effect": np.nan,
                    "p_value": np.nan,
                    "n": n_finite,
                    "skipped": True,
                }
            else:
                tests[(hyp, m)] = spearman_test(feat[feature].to_numpy(), feat[m].to_numpy())
    return tests


def benchmark_correlational(
    M: np.ndarray,
    folds: Sequence[Fold] | None = None,
    predict_batch: PredictBatch | None = None,
    *,
    cells: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, dict]:
    """Benchmark H1-H3: Spearman between a benchmark feature and its default-predictor error.

    The error is the paper's "official default BenchPress" per-benchmark error: the paper's
    code (``benchmark_analysis/_shared.py`` ``load_benchpress_default_errors`` ->
    ``default_predictions.py``) pools every held-out prediction of the benchmark from the
    30 folds of ``folds_s10_f3_bs42_ms1.json`` (each observed cell is held out once per fold
    seed, so 10 times) and takes one MedAPE and one MedAE over them. Features:
    :func:`benchmark_features`. Pass precomputed fold ``cells`` (from :func:`fold_cells`) to
    skip the 30 fits.

    Returns
    -------
    (per_benchmark, tests) : the feature + error table (index benchmark) and
    ``{(hyp, metric): spearman result}``.
    """
    if cells is None:
        if folds is None or predict_batch is None:
            raise ValueError("pass either cells or folds and predict_batch")
        cells = fold_cells(M, folds, predict_batch)
    feat = benchmark_features(M).join(pooled_errors(cells, "benchmark"), how="inner")
    return feat, _spearman_tests(feat, {"H1": "rank2_r2", "H2": "med_score", "H3": "std_score"}, {})


def model_correlational(
    M: np.ndarray,
    cells: pd.DataFrame,
    reasoning: Sequence | None = None,
    params: Sequence | None = None,
    min_params: int = 3,
) -> tuple[pd.DataFrame, dict]:
    """Model H1-H4: Spearman between a model feature and its hide-half error.

    The per-model error: the paper's code ``benchpress_half_holdout_per_model`` -- the 10
    hide-half seeds of :func:`model_holdout_cells` (not the 30 folds), all of a model's test
    cells pooled, models with fewer than 3 cells skipped. H1 uses only models with a
    parameter count (the paper: n = 25); with fewer than ``min_params`` it is skipped
    (NaN, ``note``).
    """
    feat = model_features(M, reasoning, params).join(pooled_errors(cells, "model", min_cells=3), how="inner")
    features = {"H1": "log_params", "H2": "is_reasoning", "H3": "med_true", "H4": "rank2_r2"}
    return feat, _spearman_tests(feat, features, {"H1": min_params})
