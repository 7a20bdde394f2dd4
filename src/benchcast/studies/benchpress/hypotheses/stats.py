"""Shared statistics of the Section 6.1 tests: the tests, fitting the predictor, pooled errors.

* the two tests: :func:`spearman_test` (correlational hypotheses) and :func:`wilcoxon_test`
  on paired deltas (ablations), with :func:`grouped_wilcoxon` (one median delta per target)
  and :func:`_paired_models` (one pooled-error delta per model);
* fitting the predictor on stacks of training matrices (:func:`_predict_at`) and the
  held-out cells it is scored on: the paper's folds (:func:`fold_cells`), the model-side
  hide-half holdout (:func:`model_holdout_cells`, :func:`_model_hide_masks`) and the
  per-target hide-half split (:func:`_holdout_half`);
* errors: :func:`pooled_errors` (one MedAPE / MedAE over a group's pooled cells) and
  :func:`_pair_metrics` (baseline vs treatment on the same cells).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from functools import partial

import numpy as np
import pandas as pd
from scipy import stats

from benchcast.completion.evaluation import Fold, train_matrix
from benchcast.stats.metrics import completion_errors
from benchcast.studies.benchpress.predictor import PredictBatch, predict_default_batch

ALPHA = 0.01
"""The paper's rejection threshold (Section 6.1 "Methodology": reject when p < 0.01)."""

METRICS = ("medape", "medae")

_CHUNK = 32  # matrices handed to predict_batch at once (memory bound only; results do not depend on it)


def default_predict_batch(chunk_size: int = 4) -> PredictBatch:
    """The paper's default predictor (Logit Bias ALS, rank 2, lambda 0.1) on a stack of matrices:
    :func:`benchcast.studies.benchpress.predictor.predict_default_batch` (each matrix standardized on
    its own observed cells and fitted exactly as a separate ``predict_scores`` call)."""
    return partial(predict_default_batch, chunk_size=chunk_size)


# --------------------------------------------------------------------------- tests


def spearman_test(x, y) -> dict:
    """Two-sided Spearman rank-correlation test on the pairs where both values are finite.

    Returns ``{"statistic": rho, "effect": rho, "p_value", "n"}`` (NaN with fewer than 3
    pairs, as the paper's code ``univariate_spearman``).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    n = int(ok.sum())
    if n < 3:
        return {"statistic": np.nan, "effect": np.nan, "p_value": np.nan, "n": n}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant input -> NaN, reported as such
        res = stats.spearmanr(x[ok], y[ok])
    rho = float(res.statistic)
    return {"statistic": rho, "effect": rho, "p_value": float(res.pvalue), "n": n}


def wilcoxon_test(deltas, min_n: int = 5, method: str = "auto") -> dict:
    """Two-sided Wilcoxon signed-rank test that paired deltas are symmetric about zero.

    Parameters
    ----------
    deltas : paired differences ``treatment - baseline``; non-finite values are dropped.
    min_n : fewer finite deltas than this -> ``p_value`` NaN (the paper's code:
        ``wilcoxon_signed_rank(min_n=5)``).
    method : passed to :func:`scipy.stats.wilcoxon`.

    Returns
    -------
    dict with ``effect`` (median delta over all finite deltas, zeros included, as the paper's
    code reports it), ``statistic`` (W+, the sum of the ranks of the positive nonzero
    deltas, Appendix E.1), ``p_value``, ``n`` (finite deltas), ``n_nonzero``,
    ``n_positive`` and ``n_negative``. Zero deltas are discarded before ranking (Appendix
    E.1; scipy's ``zero_method="wilcox"``). All deltas zero -> ``p_value = 1`` (the paper's
    code ``paired_wilcoxon``: no evidence of any effect).
    """
    d = np.asarray(deltas, dtype=np.float64).ravel()
    d = d[np.isfinite(d)]
    nz = d[d != 0]
    out = {
        "effect": float(np.median(d)) if d.size else np.nan,
        "statistic": np.nan,
        "p_value": np.nan,
        "n": int(d.size),
        "n_nonzero": int(nz.size),
        "n_positive": int((nz > 0).sum()),
        "n_negative": int((nz < 0).sum()),
    }
    if d.size < min_n:
        return out
    if nz.size == 0:
        out["p_value"] = 1.0
        out["statistic"] = 0.0
        return out
    ranks = stats.rankdata(np.abs(nz))
    out["statistic"] = float(ranks[nz > 0].sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out["p_value"] = float(stats.wilcoxon(nz, alternative="two-sided", method=method).pvalue)
    return out


def grouped_wilcoxon(records: pd.DataFrame, group: str, metric: str, min_n: int = 5) -> dict:
    """Wilcoxon test on one median delta per group (median over seeds).

    The paper's code ``wilcoxon_grouped_median`` (``wilcoxon_per_benchmark`` for the
    benchmark ablations, grouped by model for model H6): per group, the median of the
    finite ``delta_<metric>`` over its seeds; then :func:`wilcoxon_test` on those medians.
    """
    col = f"delta_{metric}"
    if records.empty:
        return wilcoxon_test([], min_n=min_n)
    med = records.groupby(group)[col].median()  # NaN-skipping, as the code's finite filter
    return wilcoxon_test(med.to_numpy(), min_n=min_n)


def _paired_models(base: pd.DataFrame, treat: pd.DataFrame, metric: str) -> dict:
    """The paper's code ``paired_wilcoxon_by_metric``: deltas treat - base over models in both."""
    common = base.index.intersection(treat.index)
    return wilcoxon_test((treat.loc[common, metric] - base.loc[common, metric]).to_numpy())


# --------------------------------------------------------------------------- fitting and held-out cells


def _predict_at(
    jobs: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]], predict_batch: PredictBatch, chunk: int = _CHUNK
) -> list[np.ndarray]:
    """Fit ``predict_batch`` on each job's training matrix; return its predictions at (rows, cols).

    Jobs are consumed lazily ``chunk`` matrices at a time, so memory stays bounded.
    """
    out: list[np.ndarray] = []
    buf: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def flush():
        if not buf:
            return
        stack = np.stack([b[0] for b in buf])
        P = np.asarray(predict_batch(stack), dtype=np.float64)
        if P.shape != stack.shape:
            raise ValueError(f"predict_batch returned shape {P.shape}, expected {stack.shape}")
        for k, (_, r, c) in enumerate(buf):
            out.append(P[k][r, c])
        buf.clear()

    for job in jobs:
        buf.append(job)
        if len(buf) >= chunk:
            flush()
    flush()
    return out


def fold_cells(M: np.ndarray, folds: Sequence[Fold], predict_batch: PredictBatch) -> pd.DataFrame:
    """Held-out predictions of the predictor on the paper's folds, one row per cell.

    Columns ``seed, fold, model, benchmark, actual, predicted``. The fold's cells are hidden
    from its training matrix (:func:`~benchcast.completion.evaluation.train_matrix`).
    """
    M = np.asarray(M, dtype=np.float64)
    folds = list(folds)
    preds = _predict_at(((train_matrix(M, f.cells), f.cells[:, 0], f.cells[:, 1]) for f in folds), predict_batch)
    rows = []
    for f, p in zip(folds, preds):
        i, j = f.cells[:, 0], f.cells[:, 1]
        rows.append(
            pd.DataFrame(
                {"seed": f.seed, "fold": f.fold, "model": i, "benchmark": j, "actual": M[i, j], "predicted": p}
            )
        )
    return pd.concat(rows, ignore_index=True)


def _holdout_half(observed: np.ndarray, rng: np.random.RandomState, min_test: int = 0):
    """The paper's code ``holdout_half_per_benchmark``: one ``rng.permutation`` of a target's
    observed entries (indices); the first ``max(min_test, n // 2)`` are test, the rest train.

    With ``min_test=0`` the test half is the first ``n // 2`` of the target's entries after
    ``rng.shuffle`` (the same draws), the model-side split of the paper's code.
    """
    perm = rng.permutation(len(observed))
    n_test = max(min_test, len(observed) // 2)
    return observed[perm[:n_test]], observed[perm[n_test:]]


def _model_hide_masks(
    observed: np.ndarray, seed: int, fraction: float = 0.5, min_obs: int = 4
) -> dict[int, np.ndarray]:
    """Per-model hidden benchmarks of one hide-fraction split (paper's code, model side).

    ``RandomState(seed * 2000)``; for each model in row order with at least ``min_obs``
    (4) observed scores, ``rng.shuffle`` its observed benchmark indices and hide the first
    ``max(1, int(n * fraction))`` (= ``n // 2`` at 0.5, ``holdout_half_per_model``). The
    same seed gives the same shuffles at every fraction, so the 50% and 75% hidden sets are
    nested (the paper's code H8 ``run_h8_fraction``).
    """
    rng = np.random.RandomState(seed * 2000)
    masks = {}
    for i in range(observed.shape[0]):
        obs_j = np.flatnonzero(observed[i])
        if len(obs_j) < min_obs:
            continue
        rng.shuffle(obs_j)
        masks[i] = obs_j[: max(1, int(len(obs_j) * fraction))]
    return masks


def model_holdout_cells(
    M: np.ndarray, predict_batch: PredictBatch, n_seeds: int = 10, fraction: float = 0.5, min_obs: int = 4
) -> pd.DataFrame:
    """Per-model hide-fraction holdout, all models at once: one fit per seed.

    The paper's code ``benchpress_half_holdout_per_model`` / ``run_baseline`` (seeds 0..9,
    :func:`_model_hide_masks`): every model hides ``fraction`` of its observed scores in the
    same training matrix and the hidden cells are scored. Section 6.1: "10 random splits
    with the full Logit Bias ALS pipeline".

    Returns columns ``seed, model, benchmark, actual, predicted``.
    """
    M = np.asarray(M, dtype=np.float64)
    observed = np.isfinite(M)
    jobs, cells = [], []
    for seed in range(n_seeds):
        masks = _model_hide_masks(observed, seed, fraction, min_obs)
        rows = np.concatenate([np.full(len(js), i) for i, js in masks.items()]).astype(np.int64)
        cols = np.concatenate(list(masks.values())).astype(np.int64)
        X = M.copy()
        X[rows, cols] = np.nan
        jobs.append((X, rows, cols))
        cells.append((seed, rows, cols))
    preds = _predict_at(iter(jobs), predict_batch)
    return pd.concat(
        [
            pd.DataFrame({"seed": s, "model": r, "benchmark": c, "actual": M[r, c], "predicted": p})
            for (s, r, c), p in zip(cells, preds)
        ],
        ignore_index=True,
    )


# --------------------------------------------------------------------------- errors


def _errors(actual, predicted) -> dict:
    e = completion_errors(actual, predicted)
    return {"medape": e["medape"], "medae": e["medae"], "n": e["n"]}


def pooled_errors(cells: pd.DataFrame, by: str, min_cells: int = 1) -> pd.DataFrame:
    """Pooled MedAPE / MedAE of all of a group's held-out cells (every seed and fold together).

    The paper's code pools before taking medians: ``default_predictions.py`` computes each
    benchmark's (and model's) MedAPE / MedAE over all its held-out predictions from the 30
    folds; the model-side ``benchpress_half_holdout_per_model`` over all its test cells from
    the 10 hide-half seeds, skipping models with fewer than 3 cells (``min_cells=3``).

    Returns one row per group (index ``by``) with ``medape, medae, n``.
    """
    recs = {}
    for key, g in cells.groupby(by, sort=True):
        e = _errors(g["actual"].to_numpy(), g["predicted"].to_numpy())
        if e["n"] >= min_cells:
            recs[key] = e
    out = pd.DataFrame.from_dict(recs, orient="index")
    out.index.name = by
    return out


def _pair_metrics(actual: np.ndarray, base: np.ndarray, treat: np.ndarray, min_valid: int) -> dict | None:
    """Base and treatment MedAPE / MedAE on the cells where both predictions are finite."""
    ok = np.isfinite(base) & np.isfinite(treat)
    if ok.sum() < min_valid:
        return None
    mb = _errors(actual[ok], base[ok])
    mt = _errors(actual[ok], treat[ok])
    rec = {"n_test": int(ok.sum())}
    for m in METRICS:
        rec[f"base_{m}"] = mb[m]
        rec[f"treat_{m}"] = mt[m]
        rec[f"delta_{m}"] = mt[m] - mb[m]
    return rec
