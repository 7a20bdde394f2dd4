"""Metrics shared by the studies: estimation gap, its standard error, reduction over a
baseline, Kendall's tau over target models (TailoredBench Section 4.1), model similarity
(eq. 4 of "misses the mark") and normalized gap (eq. 6)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def estimation_gap(estimates: pd.DataFrame) -> tuple[float, float, int]:
    """Mean absolute gap |truth - estimate| in percentage points (eq. 1), its standard error, count.

    Eq. 1 averages over target models; averaging that over trials equals the pooled mean
    over all (trial, target) pairs because every trial has the same number of targets.
    The standard error is the pooled one over (trial, target) pairs, which is what the
    paper's ± values correspond to (e.g. ±0.04 for a 2.4-point gap over 100 x 20 pairs).
    """
    gap = 100.0 * (estimates["estimate"] - estimates["truth"]).abs().to_numpy()
    n = len(gap)
    se = float(gap.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
    return float(gap.mean()), se, n


def kendall_tau(estimate: np.ndarray, truth: np.ndarray) -> float:
    """Kendall's tau-b between estimated and true scores (``scipy.stats.kendalltau``).

    NaN -- constant estimates or truths, or fewer than two models -- counts as 0, as in
    TailoredBench's released code (``experiments/score_cc_set.py``).
    """
    if len(truth) < 2:
        return 0.0
    from scipy import stats  # on use: scipy.stats costs every workflow job that imports this ~1 s

    tau = stats.kendalltau(estimate, truth).statistic
    return 0.0 if np.isnan(tau) else float(tau)


def rank_agreement(estimates: pd.DataFrame) -> tuple[float, float]:
    """Mean over trials of Kendall's tau between the estimates and truths of each trial's target
    models, and its standard error over trials (``trial, estimate, truth`` rows)."""
    taus = np.array(
        [kendall_tau(g["estimate"].to_numpy(), g["truth"].to_numpy()) for _, g in estimates.groupby("trial")]
    )
    se = float(taus.std(ddof=1) / np.sqrt(len(taus))) if len(taus) > 1 else float("nan")
    return float(taus.mean()), se


def trial_errors(estimates: pd.DataFrame, trial: str = "trial") -> pd.DataFrame:
    """Per trial of ``trial, estimate, truth`` rows (one row per target model): ``score``, the mean
    absolute error in points (eq. 1 of "misses the mark" for one trial; TailoredBench's MAE x 100),
    and ``tau``, Kendall's tau-b of the estimates against the truths."""
    rows = []
    for t, g in estimates.groupby(trial, sort=True):
        est, truth = g["estimate"].to_numpy(), g["truth"].to_numpy()
        rows.append((int(t), 100.0 * float(np.abs(est - truth).mean()), kendall_tau(est, truth)))
    return pd.DataFrame(rows, columns=["trial", "score", "tau"])


def reduction(gap: float, baseline_gap: float) -> float:
    """Estimation-gap reduction over the baseline in percent (negative = better), as in Fig. 2."""
    return 100.0 * (gap / baseline_gap - 1.0)


def model_similarity(target_rows: np.ndarray, source_rows: np.ndarray) -> np.ndarray:
    """Eq. 4: mean over sources of Cohen's-kappa-style agreement (c_obs - c_exp) / (1 - c_exp).

    ``target_rows`` (T, N) and ``source_rows`` (M, N) are binary. ``c_obs`` is the share of
    items where the two models agree; ``c_exp = p_f p_f' + (1 - p_f)(1 - p_f')`` is the
    agreement expected if their errors were independent. Pairs with ``c_exp == 1`` (both
    models constant and equal) contribute 0 rather than 0/0.
    """
    t = target_rows.astype(np.float64)
    s = source_rows.astype(np.float64)
    n = t.shape[1]
    agree = (t @ s.T + (1 - t) @ (1 - s).T) / n  # c_obs, (T, M)
    pt, ps = t.mean(axis=1)[:, None], s.mean(axis=1)[None, :]
    c_exp = pt * ps + (1 - pt) * (1 - ps)
    denom = 1.0 - c_exp
    kappa = np.divide(agree - c_exp, denom, out=np.zeros_like(agree), where=denom > 1e-12)
    return kappa.mean(axis=1)


def normalized_gap(estimate: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Eq. 6: |truth - estimate| / sigma_f with sigma_f = sqrt(p_f (1 - p_f)), p_f = truth.

    Undefined (NaN) for a model with accuracy exactly 0 or 1.
    """
    sigma = np.sqrt(truth * (1.0 - truth))
    return np.divide(np.abs(truth - estimate), sigma, out=np.full_like(sigma, np.nan), where=sigma > 0)


APE_ZERO = 1e-6
"""|actual| at or below this has no defined percentage error and is left out of MedAPE."""


def completion_errors(actual: np.ndarray, predicted: np.ndarray) -> dict[str, float]:
    """Pooled MedAPE (%), MedAE (score points) and counts of one set of held-out cells
    (BenchPress Section 4.2, "Metrics").

    Cells without a finite prediction are not scored (they lower *coverage*, which the
    caller computes as ``n / n_total``); MedAPE leaves out cells with ``|actual| <= 1e-6``.
    """
    actual = np.asarray(actual, dtype=np.float64)
    predicted = np.asarray(predicted, dtype=np.float64)
    ok = np.isfinite(actual) & np.isfinite(predicted)
    a, p = actual[ok], predicted[ok]
    abs_err = np.abs(p - a)
    nz = np.abs(a) > APE_ZERO
    medape = float(np.median(abs_err[nz] / np.abs(a[nz])) * 100.0) if nz.any() else float("nan")
    medae = float(np.median(abs_err)) if abs_err.size else float("nan")
    return {"medape": medape, "medae": medae, "n": int(ok.sum()), "n_total": int(len(actual))}
