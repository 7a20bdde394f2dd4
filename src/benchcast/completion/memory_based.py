"""The memory-based completers of BenchPress Appendix C.1: benchmark / model means (eqs. 5-6),
Bench-KNN / Model-KNN (eqs. 7-9) and BenchReg / ModelReg (eqs. 10-11), which predict a cell
from the observed scores of neighbouring benchmarks or models."""

from __future__ import annotations

import warnings

import numpy as np

from benchcast.blas import rows_gram
from benchcast.completion.correlation import pair_moments
from benchcast.completion.observed_entries import _col_means_or, _col_stats, _fill_missing

__all__ = ["benchmark_mean", "model_mean", "bench_knn", "model_knn", "bench_reg", "model_reg"]


# --------------------------------------------------------------------------- baselines


def benchmark_mean(Z: np.ndarray) -> np.ndarray:
    """Eq. 5: a missing cell is its benchmark's observed mean."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        col = np.nanmean(Z, axis=0)
    return _fill_missing(Z, np.broadcast_to(col, Z.shape))


def model_mean(Z: np.ndarray) -> np.ndarray:
    """Eq. 6: a missing cell is its model's observed mean (benchmark mean if the row is empty)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        row = np.nanmean(Z, axis=1)
        col = np.nanmean(Z, axis=0)
    pred = np.where(np.isfinite(row)[:, None], row[:, None], col[None, :])
    return _fill_missing(Z, pred)


def _stable_top(score: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores per row, ties broken by lower index (stable sort)."""
    order = np.argsort(-score, axis=1, kind="stable")
    return order[:, :k]


# --------------------------------------------------------------------------- KNN


def bench_knn(Z: np.ndarray, k: int = 5, min_shared: int = 5) -> np.ndarray:
    """Eq. 7: correlation-weighted average of the model's scores on the k benchmarks most
    correlated with the target benchmark.

    Neighbours are chosen among benchmarks with >= ``min_shared`` shared models and a defined
    Pearson correlation, from all benchmarks (not only those the model has), as in the paper
    code; each neighbour's score is first re-standardized with its column statistics and the
    result mapped back with the target's. Weights are ``max(corr, 0.01)``. No usable neighbour:
    the benchmark mean.
    """
    B = Z.shape[1]
    obs = ~np.isnan(Z)
    cm, cs = _col_stats(Z)
    ps = pair_moments(Z)
    corr = ps.pearson()
    # a constant column has no defined correlation (np.corrcoef gives NaN there)
    ok = (ps.n >= min_shared) & (ps.sxx > 1e-12) & (ps.syy > 1e-12) & np.isfinite(corr)
    np.fill_diagonal(ok, False)
    score = np.where(ok, corr, -np.inf)
    top = _stable_top(score, k)  # (B, k)
    top_ok = np.take_along_axis(ok, top, axis=1)
    top_w = np.maximum(np.take_along_axis(np.where(ok, corr, 0.0), top, axis=1), 0.01)
    zs = np.where(obs, (Z - cm) / cs, 0.0)  # re-standardized scores, 0 where missing
    pred = np.empty_like(Z)
    for t in range(B):
        cols = top[t][top_ok[t]]
        w = top_w[t][top_ok[t]]
        avail = obs[:, cols]
        wsum = avail @ w
        num = (zs[:, cols] * avail) @ w
        with np.errstate(invalid="ignore", divide="ignore"):
            p = cm[t] + (num / wsum) * cs[t]
        pred[:, t] = np.where(wsum > 0, p, cm[t])
    return _fill_missing(Z, pred)


def model_knn(Z: np.ndarray, k: int = 5, min_shared: int = 3) -> np.ndarray:
    """Eqs. 8-9: mean of the target benchmark over the k models nearest by RMS distance on
    shared benchmarks (pairs sharing fewer than ``min_shared`` benchmarks are not neighbours).

    Neighbours are chosen once per model over all candidates; a cell none of them observed
    falls back to the benchmark mean.
    """
    obs = ~np.isnan(Z)
    O = obs.astype(np.float64)
    X = np.where(obs, Z, 0.0)
    n = rows_gram(O)
    sq = (X * X) @ O.T + O @ (X * X).T - 2.0 * rows_gram(X)
    with np.errstate(invalid="ignore", divide="ignore"):
        dist = np.sqrt(np.maximum(sq, 0.0) / n)
    ok = n >= min_shared
    np.fill_diagonal(ok, False)
    top = _stable_top(np.where(ok, -dist, -np.inf), k)
    top_ok = np.take_along_axis(ok, top, axis=1)
    colmean = _col_means_or(Z, np.nan)
    pred = np.empty_like(Z)
    for m in range(Z.shape[0]):
        nb = top[m][top_ok[m]]
        cnt = O[nb].sum(axis=0)
        tot = X[nb].sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            pred[m] = np.where(cnt > 0, tot / cnt, colmean)
    return _fill_missing(Z, pred)


# --------------------------------------------------------------------------- regression ensembles


def bench_reg(Z: np.ndarray, k: int = 5, min_r2: float = 0.2, min_shared: int = 5) -> np.ndarray:
    """Eq. 10: R^2-weighted average of univariate regressions from the k best predictor benchmarks.

    For a target benchmark with >= ``min_shared`` observed models, every other benchmark
    sharing >= ``min_shared`` models is a candidate; its R^2 is that of the least-squares
    line on the shared models (candidates with a constant target or predictor score -1).
    The top ``k`` by R^2 are kept, then those with R^2 < ``min_r2`` dropped. A missing cell is
    predicted from the kept predictors the model has observed; none -> left unpredicted (NaN).
    """
    obs = ~np.isnan(Z)
    ps = pair_moments(Z)
    valid = (ps.n >= min_shared) & (ps.syy >= 1e-10) & (ps.sxx >= 1e-10)
    np.fill_diagonal(valid, False)
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = ps.sxy / ps.sxx
        r2 = np.where(valid, ps.sxy * ps.sxy / (ps.sxx * ps.syy), -1.0)
    intercept = ps.mean_y - slope * ps.mean_x
    np.fill_diagonal(r2, -np.inf)  # a benchmark never predicts itself
    top = _stable_top(r2, k)
    X = np.where(obs, Z, 0.0)
    pred = np.full_like(Z, np.nan)
    targets = np.flatnonzero(obs.sum(axis=0) >= min_shared)
    for t in targets:
        cols = top[t]
        keep = np.take(r2[t], cols) >= min_r2
        cols = cols[keep]
        if cols.size == 0:
            continue
        w = r2[t, cols]
        avail = obs[:, cols]
        yhat = slope[t, cols] * X[:, cols] + intercept[t, cols]
        wsum = avail @ w
        num = (yhat * avail) @ w
        with np.errstate(invalid="ignore", divide="ignore"):
            pred[:, t] = np.where(wsum > 0, num / wsum, np.nan)
    return _fill_missing(Z, pred)


def model_reg(Z: np.ndarray, k: int = 5, min_r2: float = 0.2, min_shared: int = 5) -> np.ndarray:
    """Eq. 11: ModelReg is BenchReg on the transposed matrix (predictor *models*)."""
    return bench_reg(Z.T, k=k, min_r2=min_r2, min_shared=min_shared).T
