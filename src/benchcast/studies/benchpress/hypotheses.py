"""BenchPress Section 6.1 / Appendix E.1: what affects prediction reliability.

"You Don't Need to Run Every Eval" (BenchPress, arXiv 2606.24020) asks which benchmark-side
and model-side factors are associated with the error of its default score predictor (Logit
Bias ALS, rank 2, lambda 0.1). Each factor is a no-effect hypothesis tested under both
error metrics (MedAPE, MedAE) and rejected at ``p < 0.01``:

* **Table 7 (benchmark side).** H1 low-rank fit, H2 score level, H3 score spread are
  Spearman rank correlations between a benchmark feature and the benchmark's error
  (:func:`benchmark_correlational`); H4 target coverage, H5 strong-neighbour presence,
  H6 strong-neighbour support, H7 same-category evidence are paired Wilcoxon signed-rank
  tests on hide-half ablations (:func:`bench_target_coverage`,
  :func:`bench_strong_neighbors`, :func:`bench_neighbor_support`, :func:`bench_same_category`).
  :func:`benchmark_hypotheses` runs all seven.
* **Table 8 (model side).** H1 model size, H2 model type, H3 score level, H4 low-rank fit are
  Spearman correlations against per-model hide-half errors (:func:`model_correlational`);
  H5 strong-peer presence, H6 strong-peer support, H7 same-provider evidence, H8 observation
  count are paired Wilcoxon tests on ablations (:func:`model_peer_removal`,
  :func:`model_peer_support`, :func:`model_observation_count`); H9 training-anchor recency
  compares training on the oldest vs the middle third of models by release date
  (:func:`temporal_anchor`). :func:`model_hypotheses` runs all nine.
* **Appendix E.1.1 / E.1.2 per-benchmark and per-model predictability** --
  :func:`predictability`.

The protocols follow the paper's released code (``microsoft/benchpress``,
``experiments/sec6_trust/prediction_error_analysis/{benchmark,model}_analysis`` and
``benchpress/{evaluation_harness,stats,default_predictions}.py``), read for the facts; each
fact is stated where it is used as "the paper's code ...". The random draws (which cells are
held out, which are masked) are reproduced draw for draw with the same ``RandomState``
seeds and the same order of draws, so on the paper's matrix the splits should be the
paper's. Where the code is absent or a protocol choice is ours, the docstring says so and
the choice is a parameter.

Inputs the public mirror lacks, and protocol choices exposed as parameters:

* model H1 needs parameter counts (the paper's code reads ``params_total_M`` from its own
  data JSON; the website ``data.json`` has no size field) -- ``params=None`` skips it;
* benchmark H7 needs the paper code's benchmark categories (also from its data JSON); the
  caller passes labels, e.g. the paper's Table 9 inventory categories;
* model H5 / H7 baseline (``peer_baseline``) and model H8 scored cells (``h8_cells``): the
  paper's code by default, our cleaner alternatives on request.

Tests
-----
Spearman: ``scipy.stats.spearmanr`` (two-sided, Student-t approximation with n - 2
degrees of freedom; Appendix E.1 "Spearman rank correlation tests"). Wilcoxon:
``scipy.stats.wilcoxon`` on the paired deltas ``treatment - baseline``, two-sided, zero
deltas discarded (scipy's default ``zero_method="wilcox"``, which the paper's code uses),
``method="auto"`` (exact for small n, normal approximation otherwise). The appendix text
describes only the normal approximation; the code calls scipy's default, and the paper's
H9 ``p = 0.002`` with 10 paired seeds is the exact two-sided minimum ``2 / 2**10``, so the
code's choice is followed.

Predictors
----------
Every function that fits the predictor takes ``predict_batch``: a callable mapping a stack
of training matrices ``(K, M, B)`` (NaN = missing) to completed score matrices of the same
shape. The default, :func:`default_predict_batch`, is the paper's default predictor via
:func:`benchcast.studies.benchpress.probes.predict_default_batch` (per-matrix
standardization, :func:`~benchcast.completion.completers.bias_als_batch`); tests inject
cheap stand-ins. All functions are deterministic.
"""

from __future__ import annotations

import hashlib
import warnings
from functools import partial
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from benchcast.completion.evaluation import Fold, train_matrix
from benchcast.metrics import completion_errors
from benchcast.studies.benchpress.probes import predict_default_batch

__all__ = [
    "PredictBatch",
    "ALPHA",
    "BENCH_HYPOTHESES",
    "MODEL_HYPOTHESES",
    "default_predict_batch",
    "spearman_test",
    "wilcoxon_test",
    "rank2_r2",
    "benchmark_abs_corr",
    "model_abs_corr",
    "fold_cells",
    "pooled_errors",
    "model_holdout_cells",
    "benchmark_features",
    "benchmark_correlational",
    "bench_target_coverage",
    "bench_strong_neighbors",
    "bench_neighbor_support",
    "bench_same_category",
    "grouped_wilcoxon",
    "sort_table",
    "benchmark_hypotheses",
    "model_features",
    "model_correlational",
    "model_peer_removal",
    "model_observation_count",
    "model_peer_support",
    "temporal_groups",
    "temporal_anchor",
    "model_hypotheses",
    "predictability",
    "compare_with_paper",
]

PredictBatch = Callable[[np.ndarray], np.ndarray]
"""``(K, M, B)`` training matrices (NaN = missing) -> ``(K, M, B)`` completed score matrices."""

ALPHA = 0.01
"""The paper's rejection threshold (Section 6.1 "Methodology": reject when p < 0.01)."""

METRICS = ("medape", "medae")
SEED = 42  # the paper's code: SEED = 42 in both _shared.py files

BENCH_HYPOTHESES = {
    "H1": "low_rank_fit", "H2": "score_level", "H3": "score_spread", "H4": "target_coverage",
    "H5": "strong_neighbor_presence", "H6": "strong_neighbor_support", "H7": "same_category_evidence",
}
MODEL_HYPOTHESES = {
    "H1": "model_size", "H2": "model_type", "H3": "score_level", "H4": "low_rank_fit",
    "H5": "strong_peer_presence", "H6": "strong_peer_support", "H7": "same_provider_evidence",
    "H8": "observation_count", "H9": "training_anchor_recency",
}

_CHUNK = 32  # matrices handed to predict_batch at once (memory bound only; results do not depend on it)


def default_predict_batch(chunk_size: int = 4) -> PredictBatch:
    """The paper's default predictor (Logit Bias ALS, rank 2, lambda 0.1) on a stack of matrices:
    :func:`benchcast.studies.benchpress.probes.predict_default_batch` (each matrix standardized on
    its own observed cells and fitted exactly as a separate ``predict_scores`` call)."""
    return partial(predict_default_batch, chunk_size=chunk_size)


# --------------------------------------------------------------------------- statistics


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
        warnings.simplefilter("ignore")   # constant input -> NaN, reported as such
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
    out = {"effect": float(np.median(d)) if d.size else np.nan, "statistic": np.nan, "p_value": np.nan,
           "n": int(d.size), "n_nonzero": int(nz.size), "n_positive": int((nz > 0).sum()),
           "n_negative": int((nz < 0).sum())}
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
    total = (Z ** 2).sum(axis=axis)
    resid = ((Z - Z_hat) ** 2).sum(axis=axis)
    return 1.0 - resid / np.where(total > 1e-12, total, 1.0)


def _abs_pearson(x: np.ndarray, y: np.ndarray) -> float:
    xc = x - x.mean()
    yc = y - y.mean()
    den = np.sqrt((xc * xc).sum() * (yc * yc).sum())
    if not den > 0:
        return np.nan                       # a constant side: correlation undefined
    return float(min(abs((xc * yc).sum() / den), 1.0))


def benchmark_abs_corr(M: np.ndarray, min_shared: int = 5) -> np.ndarray:
    """|Pearson r| between every pair of benchmark columns over their shared models.

    The paper's code ``pairwise_benchmark_corr(min_shared=5)`` on the full matrix: NaN where
    fewer than ``min_shared`` models are shared, where a side is constant, and on the
    diagonal. Used for strong neighbours (H5: ``|r| >= 0.85``) and the strongest
    neighbour (H6).
    """
    M = np.asarray(M, dtype=np.float64)
    obs = np.isfinite(M)
    B = M.shape[1]
    R = np.full((B, B), np.nan)
    for a in range(B):
        for b in range(a + 1, B):
            m = obs[:, a] & obs[:, b]
            if m.sum() < min_shared:
                continue
            R[a, b] = R[b, a] = _abs_pearson(M[m, a], M[m, b])
    return R


def model_abs_corr(M: np.ndarray, min_shared: int = 3) -> np.ndarray:
    """|Pearson r| between every pair of model rows over their shared benchmarks (raw scores).

    The paper's code ``pairwise_abs_r``: 0 where fewer than ``min_shared`` (3) benchmarks are
    shared and on the diagonal, NaN where a side is constant; computed on the full matrix.
    Used for strong peers (model H5: ``|r| >= 0.95``) and the strongest peer (model H6).
    """
    M = np.asarray(M, dtype=np.float64)
    obs = np.isfinite(M)
    n = M.shape[0]
    R = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            m = obs[i] & obs[j]
            if m.sum() < min_shared:
                continue
            R[i, j] = R[j, i] = _abs_pearson(M[i, m], M[j, m])
    return R


# --------------------------------------------------------------------------- prediction helpers


def _predict_at(jobs: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]], predict_batch: PredictBatch,
                chunk: int = _CHUNK) -> list[np.ndarray]:
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


def _errors(actual, predicted) -> dict:
    e = completion_errors(actual, predicted)
    return {"medape": e["medape"], "medae": e["medae"], "n": e["n"]}


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
        rows.append(pd.DataFrame({"seed": f.seed, "fold": f.fold, "model": i, "benchmark": j,
                                  "actual": M[i, j], "predicted": p}))
    return pd.concat(rows, ignore_index=True)


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


def _holdout_half_per_benchmark(obs_rows: np.ndarray, rng: np.random.RandomState, min_test: int):
    """The paper's code ``holdout_half_per_benchmark``: one ``rng.permutation`` of the column's
    observed rows; the first ``max(min_test, n // 2)`` are test, the rest train."""
    perm = rng.permutation(len(obs_rows))
    n_test = max(min_test, len(obs_rows) // 2)
    return obs_rows[perm[:n_test]], obs_rows[perm[n_test:]]


def _model_hide_masks(observed: np.ndarray, seed: int, fraction: float = 0.5,
                      min_obs: int = 4) -> dict[int, np.ndarray]:
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
        masks[i] = obs_j[:max(1, int(len(obs_j) * fraction))]
    return masks


def model_holdout_cells(M: np.ndarray, predict_batch: PredictBatch, n_seeds: int = 10, fraction: float = 0.5,
                        min_obs: int = 4) -> pd.DataFrame:
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
    return pd.concat([pd.DataFrame({"seed": s, "model": r, "benchmark": c, "actual": M[r, c], "predicted": p})
                      for (s, r, c), p in zip(cells, preds)], ignore_index=True)


def _row(side: str, hyp: str, name: str, metric: str, test: str, res: Mapping, alpha: float, note: str = "") -> dict:
    p = res.get("p_value", np.nan)
    return {"side": side, "hypothesis": hyp, "name": name, "metric": metric, "test": test,
            "effect": res.get("effect", np.nan), "statistic": res.get("statistic", np.nan), "p_value": p,
            "n": res.get("n", 0), "n_nonzero": res.get("n_nonzero", np.nan),
            "reject": bool(np.isfinite(p) and p < alpha), "note": note}


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


def grouped_wilcoxon(records: pd.DataFrame, group: str, metric: str, min_n: int = 5) -> dict:
    """Wilcoxon test on one median delta per group (median over seeds).

    The paper's code ``wilcoxon_grouped_median`` (``wilcoxon_per_benchmark`` for the
    benchmark ablations, grouped by model for model H6): per group, the median of the
    finite ``delta_<metric>`` over its seeds; then :func:`wilcoxon_test` on those medians.
    """
    col = f"delta_{metric}"
    if records.empty:
        return wilcoxon_test([], min_n=min_n)
    med = records.groupby(group)[col].median()     # NaN-skipping, as the code's finite filter
    return wilcoxon_test(med.to_numpy(), min_n=min_n)


# --------------------------------------------------------------------------- benchmark side


def benchmark_features(M: np.ndarray) -> pd.DataFrame:
    """Benchmark features of Table 7 H1-H3 from the full observed matrix.

    ``rank2_r2`` (H1; :func:`rank2_r2` axis 0), ``med_score`` (H2; median observed score),
    ``std_score`` (H3; sample standard deviation, ``ddof=1``, the paper's code
    ``np.std(obs, ddof=1)``), and ``n_obs``. Benchmarks with fewer than 2 observed scores get
    NaN (the paper's code skips them).
    """
    M = np.asarray(M, dtype=np.float64)
    r2 = rank2_r2(M, axis=0)
    recs = []
    for j in range(M.shape[1]):
        col = M[:, j][np.isfinite(M[:, j])]
        ok = len(col) >= 2
        recs.append({"benchmark": j, "n_obs": len(col), "rank2_r2": float(r2[j]) if ok else np.nan,
                     "med_score": float(np.median(col)) if ok else np.nan,
                     "std_score": float(np.std(col, ddof=1)) if ok else np.nan})
    return pd.DataFrame(recs).set_index("benchmark")


def benchmark_correlational(M: np.ndarray, folds: Sequence[Fold] | None = None,
                            predict_batch: PredictBatch | None = None,
                            *, cells: pd.DataFrame | None = None) -> tuple[pd.DataFrame, dict]:
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
    err = pooled_errors(cells, "benchmark")
    feat = benchmark_features(M).join(err, how="inner")
    tests = {}
    for hyp, feature in (("H1", "rank2_r2"), ("H2", "med_score"), ("H3", "std_score")):
        for m in METRICS:
            tests[(hyp, m)] = spearman_test(feat[feature].to_numpy(), feat[m].to_numpy())
    return feat, tests


def bench_target_coverage(M: np.ndarray, predict_batch: PredictBatch, *, n_seeds: int = 5,
                          draw_rates: Sequence[float] = (0.0, 0.25, 0.5, 0.75), fit_rates: Sequence[float] = (0.75,),
                          seed: int = SEED, min_obs: int = 6, min_test: int = 3) -> pd.DataFrame:
    """Benchmark H4 target coverage: drop training cells of the target benchmark.

    The paper's code (``H4_target_coverage/ablation.py``): ``rng = RandomState(42)``; for
    each benchmark with at least 6 observed scores and each of 5 seeds, a hide-half split of
    its observed models (``holdout_half_per_benchmark``, ``n_test = max(3, n // 2)``), then
    for each drop rate ``d`` in ``[0, 0.25, 0.5, 0.75]`` (in that order, all drawn from the
    same ``rng``) keep ``max(1, int(n_train * (1 - d)))`` of the training models, chosen by
    ``rng.permutation(n_train)`` -- independent draws, not nested. The target column keeps
    only those models (``keep_only_benchmark_rows``); every other column is complete. The
    baseline is drop rate 0 (all training models kept). Cells scored: the held-out models,
    where both predictions are finite (at least 2). The table uses drop rate 0.75 (Section
    6.1 "three quarters of those training cells are removed").

    ``draw_rates`` fixes the random stream (the paper's four rates); ``fit_rates`` the drop
    rates actually refitted (default: the headline 0.75 only).

    Returns one record per (benchmark, seed, drop_rate) with ``base_*``, ``treat_*`` and
    ``delta_*`` for MedAPE / MedAE and ``n_test``.
    """
    M = np.asarray(M, dtype=np.float64)
    observed = np.isfinite(M)
    rng = np.random.RandomState(seed)
    units = []
    for j in range(M.shape[1]):
        obs_rows = np.flatnonzero(observed[:, j])
        if len(obs_rows) < min_obs:
            continue
        for s in range(n_seeds):
            test, train = _holdout_half_per_benchmark(obs_rows, rng, min_test)
            keeps = {}
            for d in draw_rates:
                if len(train) < 2:
                    keeps[d] = None
                    continue
                n_keep = max(1, int(len(train) * (1.0 - d)))
                keeps[d] = train[rng.permutation(len(train))[:n_keep]]
            if len(train) < 2:          # the paper's code: no baseline -> no records
                continue
            units.append((j, s, test, train, keeps))

    def matrix(j, keep):
        X = M.copy()
        X[:, j] = np.nan
        X[keep, j] = M[keep, j]
        return X

    def jobs():
        for j, s, test, train, keeps in units:
            cols = np.full(len(test), j)
            yield matrix(j, train), test, cols          # drop rate 0: every training model kept
            for d in fit_rates:
                if keeps.get(d) is not None:
                    yield matrix(j, keeps[d]), test, cols

    preds = iter(_predict_at(jobs(), predict_batch))
    recs = []
    for j, s, test, train, keeps in units:
        base = next(preds)
        actual = M[test, j]
        for d in fit_rates:
            if keeps.get(d) is None:
                continue
            treat = next(preds)
            if np.isfinite(base).sum() < 2:
                continue
            rec = _pair_metrics(actual, base, treat, min_valid=2)
            if rec is not None:
                recs.append({"benchmark": j, "seed": s, "drop_rate": d, "n_train_kept": len(keeps[d]), **rec})
    return pd.DataFrame(recs)


def bench_strong_neighbors(M: np.ndarray, predict_batch: PredictBatch, *, thresholds: Sequence[float] = (0.85,),
                           n_seeds: int = 5, seed: int = SEED + 6000, min_obs: int = 6, min_test: int = 3,
                           min_shared: int = 5, corr: np.ndarray | None = None) -> pd.DataFrame:
    """Benchmark H5 strong-neighbour presence: mask every benchmark with ``|r| >= threshold``.

    The paper's code (``H5_strong_neighbor_presence/ablation.py``): ``rng = RandomState(42 +
    6000)``; for each benchmark with at least 6 observed scores and each of 5 seeds, one
    hide-half split (``n_test = max(3, n // 2)``); baseline = full matrix with the target's
    test cells hidden; treatment = baseline with every column whose |Pearson r| with the
    target (:func:`benchmark_abs_corr`, full matrix, >= 5 shared models) is ``>= threshold``
    hidden entirely. Thresholds 0.95 / 0.90 / 0.85 share the splits; the table reports 0.85
    (Section 6.1). A benchmark without strong neighbours has treatment == baseline, delta 0
    (recorded without refitting; the predictor is deterministic). Cells: test cells with both
    predictions finite (at least 2).
    """
    M = np.asarray(M, dtype=np.float64)
    observed = np.isfinite(M)
    R = benchmark_abs_corr(M, min_shared) if corr is None else corr
    rng = np.random.RandomState(seed)
    units = []
    for j in range(M.shape[1]):
        obs_rows = np.flatnonzero(observed[:, j])
        if len(obs_rows) < min_obs:
            continue
        for s in range(n_seeds):
            test, _ = _holdout_half_per_benchmark(obs_rows, rng, min_test)
            units.append((j, s, test))

    def strong(j, thr):
        with np.errstate(invalid="ignore"):
            nb = np.flatnonzero(R[j] >= thr)
        return nb[nb != j]

    def jobs():
        for j, s, test in units:
            cols = np.full(len(test), j)
            X = M.copy()
            X[test, j] = np.nan
            yield X, test, cols
            for thr in thresholds:
                nb = strong(j, thr)
                if len(nb):
                    Y = X.copy()
                    Y[:, nb] = np.nan
                    yield Y, test, cols

    preds = iter(_predict_at(jobs(), predict_batch))
    recs = []
    for j, s, test in units:
        base = next(preds)
        actual = M[test, j]
        for thr in thresholds:
            nb = strong(j, thr)
            treat = next(preds) if len(nb) else base
            if np.isfinite(base).sum() < 2:
                continue
            rec = _pair_metrics(actual, base, treat, min_valid=2)
            if rec is not None:
                recs.append({"benchmark": j, "seed": s, "threshold": thr, "n_strong": len(nb), **rec})
    return pd.DataFrame(recs)


def _best_neighbors(R: np.ndarray) -> list[int | None]:
    out = []
    for j in range(R.shape[0]):
        row = R[j].copy()
        row[j] = np.nan
        out.append(int(np.nanargmax(row)) if np.isfinite(row).any() else None)
    return out


def bench_neighbor_support(M: np.ndarray, predict_batch: PredictBatch, *, drop_rates: Sequence[float] = (0.75,),
                           n_seeds: int = 5, seed: int = SEED, min_obs: int = 6, min_overlap: int = 4,
                           min_test: int = 3, min_shared: int = 5, corr: np.ndarray | None = None) -> pd.DataFrame:
    """Benchmark H6 strong-neighbour support: remove nested shares of the best neighbour's cells.

    The paper's code (``H6_strong_neighbor_support/ablation.py``, nested-mask version): the
    strongest neighbour is the column with the highest |Pearson r| (:func:`benchmark_abs_corr`,
    >= 5 shared models; no minimum |r|). Eligible: at least 6 observed scores and at least 4
    models observed on both. Per (benchmark ``j``, seed ``s`` in 0..4): the hide-half split
    from ``RandomState(42 + 10000 + 1000 s + j)`` (``n_test = max(3, n // 2)``) and a
    permutation of the overlap models from ``RandomState(42 + 20000 + 1000 s + j)``; the
    treatment at rate ``f`` additionally hides the neighbour's cells on the first
    ``int(round(f * n_overlap))`` models of that permutation (Python's round, half to even).
    The overlap is taken on the full matrix, so it includes the target's test models.
    Baseline: the target's test cells hidden. The table compares ``f = 0`` with ``f = 0.75``.
    """
    M = np.asarray(M, dtype=np.float64)
    observed = np.isfinite(M)
    R = benchmark_abs_corr(M, min_shared) if corr is None else corr
    nbrs = _best_neighbors(R)
    units = []
    for j in range(M.shape[1]):
        obs_rows = np.flatnonzero(observed[:, j])
        nb = nbrs[j]
        if len(obs_rows) < min_obs or nb is None:
            continue
        overlap = np.flatnonzero(observed[:, j] & observed[:, nb])
        if len(overlap) < min_overlap:
            continue
        for s in range(n_seeds):
            split_rng = np.random.RandomState(seed + 10_000 + 1_000 * s + j)
            mask_rng = np.random.RandomState(seed + 20_000 + 1_000 * s + j)
            test, _ = _holdout_half_per_benchmark(obs_rows, split_rng, min_test)
            perm = overlap[mask_rng.permutation(len(overlap))]
            units.append((j, nb, s, test, perm))

    def jobs():
        for j, nb, s, test, perm in units:
            cols = np.full(len(test), j)
            X = M.copy()
            X[test, j] = np.nan
            yield X, test, cols
            for f in drop_rates:
                Y = X.copy()
                Y[perm[:int(round(len(perm) * f))], nb] = np.nan
                yield Y, test, cols

    preds = iter(_predict_at(jobs(), predict_batch))
    recs = []
    for j, nb, s, test, perm in units:
        base = next(preds)
        actual = M[test, j]
        for f in drop_rates:
            treat = next(preds)
            if np.isfinite(base).sum() < 2:
                continue
            rec = _pair_metrics(actual, base, treat, min_valid=2)
            if rec is not None:
                recs.append({"benchmark": j, "neighbor": nb, "seed": s, "drop_rate": f,
                             "n_overlap": len(perm), "neighbor_abs_r": float(R[j, nb]), **rec})
    return pd.DataFrame(recs)


def bench_same_category(M: np.ndarray, categories: Sequence, predict_batch: PredictBatch, *, n_seeds: int = 10,
                        seed: int = SEED, min_obs: int = 6, min_test: int = 0, min_valid: int = 3) -> pd.DataFrame:
    """Benchmark H7 same-category evidence: mask every other benchmark of the target's category.

    The paper's code (``H7_same_category_evidence/ablation.py``): ``rng = RandomState(42)``;
    for each benchmark with at least 6 observed scores *and* at least one other benchmark in
    its category (no draws otherwise), 10 seeds of a hide-half split with ``min_test=0``
    (``n_test = n // 2``); baseline = target's test cells hidden; treatment = also every
    same-category column hidden. Cells: both predictions finite, at least 3.

    ``categories`` : one label per benchmark column. The paper's code reads the category
    field of its own data JSON (not in the public mirror); the paper's table has n = 78
    benchmarks for H7 (its text says 43), so its categories leave some benchmarks without
    a same-category peer. With the paper's Table 9 inventory categories every benchmark has
    one (n = 133 on the 84 x 133 matrix).
    """
    M = np.asarray(M, dtype=np.float64)
    observed = np.isfinite(M)
    cats = np.asarray(list(categories), dtype=object)
    if len(cats) != M.shape[1]:
        raise ValueError(f"categories has {len(cats)} labels for {M.shape[1]} benchmarks")
    rng = np.random.RandomState(seed)
    units = []
    for j in range(M.shape[1]):
        obs_rows = np.flatnonzero(observed[:, j])
        same = np.array([c for c in range(M.shape[1]) if c != j and cats[c] == cats[j]], dtype=np.int64)
        if len(obs_rows) < min_obs or len(same) == 0:
            continue
        for s in range(n_seeds):
            test, _ = _holdout_half_per_benchmark(obs_rows, rng, min_test)
            units.append((j, s, test, same))

    def jobs():
        for j, s, test, same in units:
            cols = np.full(len(test), j)
            X = M.copy()
            X[test, j] = np.nan
            yield X, test, cols
            Y = X.copy()
            Y[:, same] = np.nan
            yield Y, test, cols

    preds = iter(_predict_at(jobs(), predict_batch))
    recs = []
    for j, s, test, same in units:
        base, treat = next(preds), next(preds)
        rec = _pair_metrics(M[test, j], base, treat, min_valid=min_valid)
        if rec is not None:
            recs.append({"benchmark": j, "seed": s, "category": cats[j], "n_same_category": len(same), **rec})
    return pd.DataFrame(recs)


def benchmark_hypotheses(M: np.ndarray, folds: Sequence[Fold], categories: Sequence, *,
                         predict_batch: PredictBatch | None = None, alpha: float = ALPHA,
                         neighbor_threshold: float = 0.85, coverage_drop: float = 0.75, support_drop: float = 0.75,
                         n_seeds_h4: int = 5, n_seeds_h5: int = 5, n_seeds_h6: int = 5, n_seeds_h7: int = 10,
                         hypotheses: Sequence[str] = tuple(BENCH_HYPOTHESES), fold_cells_df: pd.DataFrame | None = None,
                         return_details: bool = False):
    """Table 7: the seven benchmark-side hypotheses under MedAPE and MedAE.

    Parameters
    ----------
    M : (models, benchmarks) score matrix, NaN = missing (the paper's 84 x 133 matrix).
    folds : the paper's 30 folds (H1-H3 errors).
    categories : one category label per benchmark (H7).
    predict_batch : default :func:`default_predict_batch`.
    alpha : rejection threshold (the paper: 0.01).
    neighbor_threshold : H5's |r| cutoff (the paper's table: 0.85).
    coverage_drop, support_drop : the headline drop rates of H4 and H6 (the paper: 0.75).
    n_seeds_h4 ... n_seeds_h7 : the paper's code uses 5, 5, 5, 10 seeds.
    hypotheses : subset to run.
    fold_cells_df : precomputed :func:`fold_cells` (skips the 30 fits).
    return_details : also return the per-target tables and ablation records.

    Returns
    -------
    DataFrame with one row per (hypothesis, metric): ``side, hypothesis, name, metric, test,
    effect`` (Spearman rho, or the median paired delta ``treatment - baseline``; positive =
    the intervention raised the error), ``statistic`` (rho or W+), ``p_value, n, n_nonzero,
    reject, note``; with ``return_details`` also a dict of the underlying tables.
    """
    predict_batch = predict_batch or default_predict_batch()
    M = np.asarray(M, dtype=np.float64)
    rows, details = [], {}
    hyps = set(hypotheses)
    if hyps & {"H1", "H2", "H3"}:
        if fold_cells_df is None:
            fold_cells_df = fold_cells(M, folds, predict_batch)
        feat, tests = benchmark_correlational(M, cells=fold_cells_df)
        details["per_benchmark"] = feat
        details["fold_cells"] = fold_cells_df
        for (hyp, m), res in tests.items():
            if hyp in hyps:
                rows.append(_row("benchmark", hyp, BENCH_HYPOTHESES[hyp], m, "spearman", res, alpha))
    corr = benchmark_abs_corr(M) if hyps & {"H5", "H6"} else None
    ablations = {
        "H4": lambda: (bench_target_coverage(M, predict_batch, n_seeds=n_seeds_h4, fit_rates=(coverage_drop,)),
                       "drop_rate", coverage_drop, f"drop {coverage_drop:.0%} of the target's training cells"),
        "H5": lambda: (bench_strong_neighbors(M, predict_batch, thresholds=(neighbor_threshold,), n_seeds=n_seeds_h5,
                                              corr=corr),
                       "threshold", neighbor_threshold, f"mask neighbours with |r| >= {neighbor_threshold}"),
        "H6": lambda: (bench_neighbor_support(M, predict_batch, drop_rates=(support_drop,), n_seeds=n_seeds_h6,
                                              corr=corr),
                       "drop_rate", support_drop, f"drop {support_drop:.0%} of best-neighbour overlap"),
        "H7": lambda: (bench_same_category(M, categories, predict_batch, n_seeds=n_seeds_h7),
                       None, None, "mask same-category benchmarks"),
    }
    for hyp, run in ablations.items():
        if hyp not in hyps:
            continue
        recs, key, val, note = run()
        details[f"{hyp}_records"] = recs
        sel = recs[recs[key] == val] if (key is not None and not recs.empty) else recs
        for m in METRICS:
            rows.append(_row("benchmark", hyp, BENCH_HYPOTHESES[hyp], m, "wilcoxon",
                             grouped_wilcoxon(sel, "benchmark", m), alpha, note))
    table = sort_table(pd.DataFrame(rows))
    return (table, details) if return_details else table


def sort_table(table: pd.DataFrame) -> pd.DataFrame:
    """Rows of a hypothesis table in the paper's order: H1..H9, MedAPE before MedAE."""
    if table.empty:
        return table
    key = table["hypothesis"].str[1:].astype(int) * 10 + table["metric"].map({"medape": 0, "medae": 1})
    return table.assign(_k=key).sort_values("_k", kind="stable").drop(columns="_k").reset_index(drop=True)


# --------------------------------------------------------------------------- model side


def model_features(M: np.ndarray, reasoning: Sequence | None = None, params: Sequence | None = None) -> pd.DataFrame:
    """Model features of Table 8 H1-H4 from the full observed matrix.

    ``log_params`` (H1; log10 of a positive finite parameter count, else NaN -- the paper's
    code uses ``params_total_M``), ``is_reasoning`` (H2; 0/1, NaN where unannotated),
    ``med_true`` (H3; median observed score), ``rank2_r2`` (H4; :func:`rank2_r2` axis 1),
    ``n_obs``. Models with fewer than 2 observed scores get NaN.
    """
    M = np.asarray(M, dtype=np.float64)
    r2 = rank2_r2(M, axis=1)
    n = M.shape[0]
    reasoning = [None] * n if reasoning is None else list(reasoning)
    params = [None] * n if params is None else list(params)
    if len(reasoning) != n or len(params) != n:
        raise ValueError("reasoning and params need one entry per model")
    recs = []
    for i in range(n):
        row = M[i][np.isfinite(M[i])]
        ok = len(row) >= 2
        p = params[i]
        p = float(p) if p is not None and not pd.isna(p) else np.nan
        r = reasoning[i]
        recs.append({"model": i, "n_obs": len(row),
                     "log_params": float(np.log10(p)) if np.isfinite(p) and p > 0 else np.nan,
                     "is_reasoning": float(bool(r)) if r is not None and not pd.isna(r) else np.nan,
                     "med_true": float(np.median(row)) if ok else np.nan,
                     "rank2_r2": float(r2[i]) if ok else np.nan})
    return pd.DataFrame(recs).set_index("model")


def model_correlational(M: np.ndarray, cells: pd.DataFrame, reasoning: Sequence | None = None,
                        params: Sequence | None = None, min_params: int = 3) -> tuple[pd.DataFrame, dict]:
    """Model H1-H4: Spearman between a model feature and its hide-half error.

    The per-model error: the paper's code ``benchpress_half_holdout_per_model`` -- the 10
    hide-half seeds of :func:`model_holdout_cells` (not the 30 folds), all of a model's test
    cells pooled, models with fewer than 3 cells skipped. H1 uses only models with a
    parameter count (the paper: n = 25); with fewer than ``min_params`` it is skipped
    (NaN, ``note``).
    """
    err = pooled_errors(cells, "model", min_cells=3)
    feat = model_features(M, reasoning, params).join(err, how="inner")
    tests = {}
    for hyp, feature in (("H1", "log_params"), ("H2", "is_reasoning"), ("H3", "med_true"), ("H4", "rank2_r2")):
        for m in METRICS:
            if hyp == "H1" and np.isfinite(feat[feature]).sum() < min_params:
                tests[(hyp, m)] = {"statistic": np.nan, "effect": np.nan, "p_value": np.nan,
                                   "n": int(np.isfinite(feat[feature]).sum()), "skipped": True}
            else:
                tests[(hyp, m)] = spearman_test(feat[feature].to_numpy(), feat[m].to_numpy())
    return feat, tests


def _paired_models(base: pd.DataFrame, treat: pd.DataFrame, metric: str) -> dict:
    """The paper's code ``paired_wilcoxon_by_metric``: deltas treat - base over models in both."""
    common = base.index.intersection(treat.index)
    return wilcoxon_test((treat.loc[common, metric] - base.loc[common, metric]).to_numpy())


def model_peer_removal(M: np.ndarray, remove: Sequence[Sequence[int]], predict_batch: PredictBatch, *,
                       n_seeds: int = 10, min_obs: int = 4, skip_empty: bool = False) -> pd.DataFrame:
    """Model H5 / H7 treatment: per target, hide half of its row and blank the listed rows.

    The paper's code (``H5_neighbor_quality/ablation.py`` ``run_h5``,
    ``H7_family_peers/ablation.py`` ``run_h7``): per seed, the hide-half masks of
    :func:`_model_hide_masks` (``RandomState(seed * 2000)``); for each target model a
    separate fit of the *full* matrix with only the target's hidden cells removed and every
    row in ``remove[target]`` (its peers / same-provider models) blanked entirely; the
    target's hidden cells are scored. Per-model errors pool the 10 seeds
    (:func:`pooled_errors`, at least 3 cells).

    ``remove`` : one sequence of row indices per model (may be empty: then the fit is the
    target-only hide-half, which is also the ``peer_baseline="target_only"`` baseline).
    ``skip_empty`` : leave out targets with nothing to remove (their treatment equals that
    baseline, so a caller holding the baseline need not refit them).

    Returns cells ``seed, model, benchmark, actual, predicted``.
    """
    M = np.asarray(M, dtype=np.float64)
    observed = np.isfinite(M)
    remove = [np.asarray(list(r), dtype=np.int64) for r in remove]
    units = []
    for seed in range(n_seeds):
        for i, js in _model_hide_masks(observed, seed, 0.5, min_obs).items():
            rm = remove[i][remove[i] != i]
            if skip_empty and len(rm) == 0:
                continue
            units.append((seed, i, js, rm))

    def jobs():
        for seed, i, js, rm in units:
            X = M.copy()
            X[i, js] = np.nan
            if len(rm):
                X[rm, :] = np.nan
            yield X, np.full(len(js), i), js

    preds = _predict_at(jobs(), predict_batch)
    if not units:
        return pd.DataFrame(columns=["seed", "model", "benchmark", "actual", "predicted"])
    return pd.concat([pd.DataFrame({"seed": s, "model": i, "benchmark": js, "actual": M[i, js], "predicted": p})
                      for (s, i, js, _), p in zip(units, preds)], ignore_index=True)


def model_observation_count(M: np.ndarray, predict_batch: PredictBatch, *, hide_fraction: float = 0.75,
                            n_seeds: int = 10, cells: str = "own", baseline_cells: pd.DataFrame | None = None
                            ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Model H8 observation count: hide 75% instead of 50% of every model's observed scores.

    The paper's code (``H8_observation_count/ablation.py``): the baseline is the standard
    hide-half (``run_baseline``) and the treatment the same procedure with ``n_hide =
    max(1, int(n * 0.75))`` for every model at once (one fit per seed; the same
    ``RandomState(seed * 2000)`` shuffles, so the hidden sets are nested). Each condition is
    scored on its *own* hidden cells (``cells="own"``, the paper's code); ``cells="common"``
    scores the treatment only on the baseline's hidden cells (a subset of its own), so both
    conditions are compared on identical cells -- our alternative, a parameter.

    Returns ``(baseline_cells, treatment_cells)``.
    """
    if cells not in ("own", "common"):
        raise ValueError("cells must be 'own' or 'common'")
    base = model_holdout_cells(M, predict_batch, n_seeds, 0.5) if baseline_cells is None else baseline_cells
    treat = model_holdout_cells(M, predict_batch, n_seeds, hide_fraction)
    if cells == "common":
        key = ["seed", "model", "benchmark"]
        treat = treat.merge(base[key], on=key, how="inner")
    return base, treat


def _strongest_peers(R: np.ndarray, threshold: float) -> list[int | None]:
    peers = []
    for i in range(R.shape[0]):
        row = R[i].copy()
        row[i] = np.nan
        with np.errstate(invalid="ignore"):
            elig = np.flatnonzero(row >= threshold)
        peers.append(int(elig[np.nanargmax(row[elig])]) if len(elig) else None)
    return peers


def model_peer_support(M: np.ndarray, predict_batch: PredictBatch, *, threshold: float = 0.95,
                       drop_rates: Sequence[float] = (0.75,), n_seeds: int = 10, seed: int = SEED, min_obs: int = 4,
                       corr: np.ndarray | None = None) -> pd.DataFrame:
    """Model H6 strong-peer support: remove nested shares of the strongest peer's overlapping cells.

    The paper's code (``H6_neighbor_evidence/ablation.py``): the strongest peer is the model
    with the highest |r| (:func:`model_abs_corr`, full matrix) among those with ``|r| >=
    0.95``; models with fewer than 4 observed scores, no such peer or no shared benchmark are
    skipped. Per (model ``i``, seed ``s`` in 0..9): ``RandomState(42 + 10000 + 1000 s + i)``
    shuffles the model's observed benchmarks and the first ``n // 2`` are hidden (only this
    row; every other row complete); ``RandomState(42 + 20000 + 1000 s + i)`` permutes the
    benchmarks observed by both model and peer (on the full matrix, so including the
    target's hidden benchmarks), and the treatment at rate ``f`` hides the peer's cells on
    the first ``max(1, int(round(f * n_overlap)))``. Cells: the target's hidden cells with
    both predictions finite (at least 2). The table compares ``f = 0`` with ``f = 0.75``;
    the test uses one median delta per model over its seeds.
    """
    M = np.asarray(M, dtype=np.float64)
    observed = np.isfinite(M)
    R = model_abs_corr(M) if corr is None else corr
    peers = _strongest_peers(R, threshold)
    units = []
    for i in range(M.shape[0]):
        obs_j = np.flatnonzero(observed[i])
        pr = peers[i]
        if len(obs_j) < min_obs or pr is None:
            continue
        overlap = np.flatnonzero(observed[i] & observed[pr])
        if len(overlap) == 0:
            continue
        for s in range(n_seeds):
            split_rng = np.random.RandomState(seed + 10_000 + s * 1_000 + i)
            mask_rng = np.random.RandomState(seed + 20_000 + s * 1_000 + i)
            perm_obs = obs_j.copy()
            split_rng.shuffle(perm_obs)
            test = perm_obs[:len(perm_obs) // 2]
            perm = overlap[mask_rng.permutation(len(overlap))]
            units.append((i, pr, s, test, perm))

    def jobs():
        for i, pr, s, test, perm in units:
            rows = np.full(len(test), i)
            X = M.copy()
            X[i, test] = np.nan
            yield X, rows, test
            for f in drop_rates:
                Y = X.copy()
                Y[pr, perm[:max(1, int(round(len(perm) * f)))]] = np.nan
                yield Y, rows, test

    preds = iter(_predict_at(jobs(), predict_batch))
    recs = []
    for i, pr, s, test, perm in units:
        base = next(preds)
        for f in drop_rates:
            treat = next(preds)
            if np.isfinite(base).sum() < 2:
                continue
            rec = _pair_metrics(M[i, test], base, treat, min_valid=2)
            if rec is not None:
                recs.append({"model": i, "peer": pr, "seed": s, "drop_rate": f, "peer_abs_r": float(R[i, pr]),
                             "n_overlap": len(perm), **rec})
    return pd.DataFrame(recs)


def _condition_offset(name: str) -> int:
    """The paper's code H9: ``int(md5(name).hexdigest()[:8], 16) % 10000`` (``short_text_hash``)."""
    return int(hashlib.md5(name.encode("utf-8")).hexdigest()[:8], 16) % 10_000


def temporal_groups(release_dates: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Oldest, middle and newest thirds of the models by release date (model H9).

    The paper's code (``H9_temporal/analyze.py``): models with a release date, sorted by the
    date *string* (a stable sort, so ties keep matrix order; a year-only date such as
    ``"2025"`` sorts before every ``"2025-.."``); cuts at ``N // 3`` and ``2 N // 3``.
    Pass the dates as the ISO strings of the source for the paper's order.
    """
    dated = [(str(d), i) for i, d in enumerate(release_dates) if d is not None and not pd.isna(d) and str(d)]
    order = [i for _, i in sorted(dated, key=lambda t: t[0])]
    n = len(order)
    c1, c2 = n // 3, 2 * n // 3
    return np.array(order[:c1]), np.array(order[c1:c2]), np.array(order[c2:])


def temporal_anchor(M: np.ndarray, release_dates: Sequence, predict_batch: PredictBatch, *, ks: Sequence[int] = (3,),
                    k_schedule: Sequence[int] = (1, 3, 5, 8, 10, 15), n_seeds: int = 10,
                    conditions: Sequence[str] = ("A_oldest", "B_middle")) -> pd.DataFrame:
    """Model H9 training-anchor recency: train on the oldest or the middle third, predict the newest.

    The paper's code (``H9_temporal/analyze.py``), per condition (training group A = oldest
    third, B = middle third; targets C = newest third, :func:`temporal_groups`) and seed
    ``s`` in 0..9: ``rng = RandomState(500 s + offset(condition))`` (:func:`_condition_offset`;
    the two conditions draw different reveals); for each ``k`` of ``[1, 3, 5, 8, 10, 15]``
    in order, a training matrix with only the training group's rows, and for each target
    (in date order) with at least ``k + 2`` observed scores a shuffled copy of its observed
    benchmarks whose first ``k`` are revealed; the rest are test cells. One fit per
    (condition, seed, k) predicts all targets; the record is the pooled MedAPE / MedAE over
    all the targets' test cells (skipped with fewer than 3). The table reports k = 3
    (Section 6.1). ``k_schedule`` fixes the random stream; ``ks`` are the budgets fitted.

    Returns one record per (condition, seed, k): ``medape, medae, n``.
    """
    M = np.asarray(M, dtype=np.float64)
    observed = np.isfinite(M)
    A, B, C = temporal_groups(release_dates)
    train_rows = {conditions[0]: A, conditions[1]: B}
    units = []
    for cond in conditions:
        off = _condition_offset(cond)
        for s in range(n_seeds):
            rng = np.random.RandomState(s * 500 + off)
            for k in k_schedule:
                X = np.full_like(M, np.nan)
                X[train_rows[cond]] = M[train_rows[cond]]
                rows, cols = [], []
                for i in C:
                    obs_j = np.flatnonzero(observed[i])
                    if len(obs_j) < k + 2:
                        continue
                    shuf = obs_j.copy()
                    rng.shuffle(shuf)
                    X[i, shuf[:k]] = M[i, shuf[:k]]
                    rows.append(np.full(len(shuf) - k, i))
                    cols.append(shuf[k:])
                if k not in ks or not rows:
                    continue
                r, c = np.concatenate(rows), np.concatenate(cols)
                if len(r) < 3:
                    continue
                units.append((cond, s, k, X, r, c))
    preds = _predict_at(((X, r, c) for *_, X, r, c in units), predict_batch)
    recs = []
    for (cond, s, k, _, r, c), p in zip(units, preds):
        recs.append({"condition": cond, "seed": s, "k": k, **_errors(M[r, c], p)})
    return pd.DataFrame(recs)


def _temporal_test(records: pd.DataFrame, k: int, metric: str, conditions=("A_oldest", "B_middle")) -> dict:
    """The paper's code ``paired_wilcoxon(va, vb)``: diffs ``A - B`` over seeds (finite values,
    truncated to the shorter list), two-sided; all-zero -> p = 1."""
    sel = records[records["k"] == k]
    va = sel[sel["condition"] == conditions[0]].sort_values("seed")[metric].to_numpy()
    vb = sel[sel["condition"] == conditions[1]].sort_values("seed")[metric].to_numpy()
    va, vb = va[np.isfinite(va)], vb[np.isfinite(vb)]
    n = min(len(va), len(vb))
    res = wilcoxon_test(va[:n] - vb[:n], min_n=3)
    res["median_A"] = float(np.median(va[:n])) if n else np.nan
    res["median_B"] = float(np.median(vb[:n])) if n else np.nan
    return res


def model_hypotheses(M: np.ndarray, providers: Sequence, reasoning: Sequence, release_dates: Sequence,
                     params: Sequence | None = None, *, predict_batch: PredictBatch | None = None, alpha: float = ALPHA,
                     n_seeds: int = 10, peer_threshold: float = 0.95, support_drop: float = 0.75,
                     hide_fraction: float = 0.75, temporal_k: int = 3, peer_baseline: str = "paper",
                     h8_cells: str = "own", hypotheses: Sequence[str] = tuple(MODEL_HYPOTHESES),
                     holdout_cells_df: pd.DataFrame | None = None, return_details: bool = False):
    """Table 8: the nine model-side hypotheses under MedAPE and MedAE.

    Parameters
    ----------
    M : (models, benchmarks) score matrix, NaN = missing.
    providers, reasoning, release_dates : one entry per model (H7, H2, H9). Release dates as
        the source's ISO strings (see :func:`temporal_groups`).
    params : parameter counts (H1), None/NaN where undisclosed. None -> H1 is skipped (the
        rows are reported with NaN p-values and a note).
    predict_batch : default :func:`default_predict_batch`.
    n_seeds : hide-half seeds (the paper: 10) for H1-H8 and H9.
    peer_threshold : strong-peer |r| cutoff for H5 and H6 (the paper: 0.95).
    support_drop : H6 headline drop rate (0.75). hide_fraction : H8 treatment (0.75).
    temporal_k : H9 revealed benchmarks per target (the paper's table: 3).
    peer_baseline : baseline of H5 / H7. ``"paper"`` (the paper's code): the standard
        hide-half with *all* models hiding half their scores in one fit, while the treatment
        refits per target with only the target's half hidden -- so the two conditions also
        differ in how much of the other rows is visible. ``"target_only"`` (our alternative):
        the same per-target fit without the removal, so the removal is the only difference.
    h8_cells : ``"own"`` (the paper's code) or ``"common"``; see :func:`model_observation_count`.
    hypotheses : subset to run.
    holdout_cells_df : precomputed :func:`model_holdout_cells` (10-seed hide-half).
    return_details : also return per-model tables and records.

    Returns
    -------
    DataFrame like :func:`benchmark_hypotheses` (``side="model"``); for H9 ``effect`` is the
    median over seeds of ``error(oldest) - error(middle)``.
    """
    if peer_baseline not in ("paper", "target_only"):
        raise ValueError("peer_baseline must be 'paper' or 'target_only'")
    predict_batch = predict_batch or default_predict_batch()
    M = np.asarray(M, dtype=np.float64)
    n = M.shape[0]
    for name, arr in (("providers", providers), ("reasoning", reasoning), ("release_dates", release_dates)):
        if len(arr) != n:
            raise ValueError(f"{name} has {len(arr)} entries for {n} models")
    hyps = set(hypotheses)
    rows, details = [], {}
    need_base = bool(hyps & {"H1", "H2", "H3", "H4", "H8"}) or (peer_baseline == "paper" and bool(hyps & {"H5", "H7"}))
    base_cells = None
    if need_base:
        base_cells = (holdout_cells_df if holdout_cells_df is not None
                      else model_holdout_cells(M, predict_batch, n_seeds))
        details["holdout_cells"] = base_cells
    if hyps & {"H1", "H2", "H3", "H4"}:
        feat, tests = model_correlational(M, base_cells, reasoning, params)
        details["per_model"] = feat
        for (hyp, m), res in tests.items():
            if hyp not in hyps:
                continue
            note = ""
            if res.get("skipped"):
                note = f"skipped: parameter counts for only {res['n']} models"
            elif hyp == "H1":
                note = f"log10 params, n = {res['n']}"
            rows.append(_row("model", hyp, MODEL_HYPOTHESES[hyp], m, "spearman", res, alpha, note))
    corr = model_abs_corr(M) if hyps & {"H5", "H6"} else None
    if hyps & {"H5", "H7"}:
        base_err = None
        if peer_baseline == "paper":
            base_err = pooled_errors(base_cells, "model", min_cells=3)
        else:
            tcells = model_peer_removal(M, [[] for _ in range(n)], predict_batch, n_seeds=n_seeds)
            details["target_only_cells"] = tcells
            base_err = pooled_errors(tcells, "model", min_cells=3)
        prov = np.asarray(list(providers), dtype=object)
        removals = {}
        if "H5" in hyps:
            with np.errstate(invalid="ignore"):
                removals["H5"] = [np.flatnonzero(corr[i] >= peer_threshold) for i in range(n)]
        if "H7" in hyps:
            removals["H7"] = [np.flatnonzero(prov == prov[i]) for i in range(n)]
        for hyp, rm in removals.items():
            rm = [r[r != i] for i, r in enumerate(rm)]
            if peer_baseline == "target_only":
                # models with nothing to remove: treatment == baseline; reuse the baseline fits
                cells_t = model_peer_removal(M, rm, predict_batch, n_seeds=n_seeds, skip_empty=True)
                empty = [i for i, r in enumerate(rm) if len(r) == 0]
                cells_t = pd.concat([cells_t, tcells[tcells["model"].isin(empty)]], ignore_index=True)
            else:
                cells_t = model_peer_removal(M, rm, predict_batch, n_seeds=n_seeds)
            details[f"{hyp}_cells"] = cells_t
            treat_err = pooled_errors(cells_t, "model", min_cells=3)
            details[f"{hyp}_per_model"] = base_err.add_suffix("_base").join(treat_err.add_suffix("_treat"), how="inner")
            n_rm = sum(len(r) > 0 for r in rm)
            note = (f"{n_rm} models have rows to remove; baseline={peer_baseline}"
                    + (f"; |r| >= {peer_threshold}" if hyp == "H5" else ""))
            for m in METRICS:
                rows.append(_row("model", hyp, MODEL_HYPOTHESES[hyp], m, "wilcoxon",
                                 _paired_models(base_err, treat_err, m), alpha, note))
    if "H6" in hyps:
        recs = model_peer_support(M, predict_batch, threshold=peer_threshold, drop_rates=(support_drop,),
                                  n_seeds=n_seeds, corr=corr)
        details["H6_records"] = recs
        for m in METRICS:
            rows.append(_row("model", "H6", MODEL_HYPOTHESES["H6"], m, "wilcoxon", grouped_wilcoxon(recs, "model", m),
                             alpha, f"drop {support_drop:.0%} of strongest-peer overlap (|r| >= {peer_threshold})"))
    if "H8" in hyps:
        b, t = model_observation_count(M, predict_batch, hide_fraction=hide_fraction, n_seeds=n_seeds, cells=h8_cells,
                                       baseline_cells=base_cells)
        details["H8_cells"] = t
        be, te = pooled_errors(b, "model", min_cells=3), pooled_errors(t, "model", min_cells=3)
        for m in METRICS:
            rows.append(_row("model", "H8", MODEL_HYPOTHESES["H8"], m, "wilcoxon", _paired_models(be, te, m), alpha,
                             f"hide {hide_fraction:.0%} vs 50%, cells={h8_cells}"))
    if "H9" in hyps:
        recs = temporal_anchor(M, release_dates, predict_batch, ks=(temporal_k,), n_seeds=n_seeds)
        details["H9_records"] = recs
        for m in METRICS:
            res = _temporal_test(recs, temporal_k, m)
            rows.append(_row("model", "H9", MODEL_HYPOTHESES["H9"], m, "wilcoxon", res, alpha,
                             f"k = {temporal_k}; effect = oldest - middle; median A {res['median_A']:.3g}, "
                             f"B {res['median_B']:.3g}"))
    table = sort_table(pd.DataFrame(rows))
    return (table, details) if return_details else table


# --------------------------------------------------------------------------- predictability + paper comparison


def predictability(cells: pd.DataFrame, by: str, threshold: float = 15.0,
                   min_cells: int = 3) -> tuple[pd.DataFrame, dict]:
    """Per-benchmark (E.1.1, Figure 13) or per-model (E.1.2, Figure 15) predictability.

    From a per-model hide-half holdout (:func:`model_holdout_cells`, 10 seeds): all of a
    benchmark's (``by="benchmark"``) or model's (``by="model"``) test cells pooled into one
    MedAPE / MedAE (the paper's code ``per_model_predictability/run.py``; groups with fewer
    than 3 cells skipped), sorted by MedAPE. The per-benchmark script of the paper is not in
    the public code; we use the same 10-seed holdout for both (its per-model script says the
    two share predictor, holdout and seeds).

    Returns ``(table, summary)``; summary: ``n``, ``n_below`` (MedAPE < ``threshold``),
    ``share_below``, ``median_medape``.
    """
    tab = pooled_errors(cells, by, min_cells=min_cells).sort_values("medape", kind="stable")
    below = int((tab["medape"] < threshold).sum())
    return tab, {"n": int(len(tab)), "n_below": below, "share_below": below / len(tab) if len(tab) else np.nan,
                 "median_medape": float(tab["medape"].median()) if len(tab) else np.nan}


def compare_with_paper(table: pd.DataFrame, paper: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """Our p-values next to the paper's Tables 7 / 8 (``resources/paper/benchpress_paper_values.csv``).

    ``paper`` has columns ``table, row, column, paper``; rows ``H<k>|<name>`` of tables
    ``table7`` / ``table8``, columns ``medape_p`` / ``medae_p`` (``p < 0.001`` transcribed as
    0.001). Returns one row per (side, hypothesis, metric) with ``paper_p, our_p``,
    ``paper_reject, our_reject`` (p < alpha) and ``agree``, plus per hypothesis
    ``paper_both`` / ``our_both`` (rejected under both metrics, the paper's pink rows).
    """
    recs = []
    tabs = {"benchmark": "table7", "model": "table8"}
    for _, r in table.iterrows():
        key = f"{r['hypothesis']}|{r['name']}"
        sel = paper[(paper["table"] == tabs[r["side"]]) & (paper["row"] == key)
                    & (paper["column"] == f"{r['metric']}_p")]
        pp = float(sel["paper"].iloc[0]) if len(sel) else np.nan
        ours = r["p_value"]
        recs.append({"side": r["side"], "hypothesis": r["hypothesis"], "name": r["name"], "metric": r["metric"],
                     "paper_p": pp, "our_p": ours, "effect": r["effect"], "n": r["n"],
                     "paper_reject": bool(np.isfinite(pp) and pp < alpha),
                     "our_reject": bool(np.isfinite(ours) and ours < alpha),
                     "agree": bool(np.isfinite(ours) and np.isfinite(pp) and (pp < alpha) == (ours < alpha))})
    out = pd.DataFrame(recs)
    if out.empty:
        return out
    both = out.groupby(["side", "hypothesis"]).agg(paper_both=("paper_reject", "all"), our_both=("our_reject", "all"))
    return out.merge(both.reset_index(), on=["side", "hypothesis"], how="left")
