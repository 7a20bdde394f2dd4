"""Ablations of the Section 6.1 tests: refit the predictor with evidence removed, pair the errors.

Benchmark side (Table 7): H4 target coverage (:func:`bench_target_coverage`), H5
strong-neighbour presence (:func:`bench_strong_neighbors`), H6 strong-neighbour support
(:func:`bench_neighbor_support`) and H7 same-category evidence (:func:`bench_same_category`).
Model side (Table 8): H5 / H7 strong-peer / same-provider presence
(:func:`model_peer_removal`), H6 strong-peer support (:func:`model_peer_support`) and H8
observation count (:func:`model_observation_count`). The two H6 ablations are one protocol
over columns or rows, :func:`partner_support`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from benchcast.studies.benchpress.hypotheses.correlational import (
    _strongest_partners,
    benchmark_abs_corr,
    model_abs_corr,
)
from benchcast.studies.benchpress.hypotheses.stats import (
    PredictBatch,
    _holdout_half,
    _model_hide_masks,
    _pair_metrics,
    _predict_at,
    model_holdout_cells,
)
from benchcast.studies.benchpress.settings import SEED

# --------------------------------------------------------------------------- benchmark side


def bench_target_coverage(
    M: np.ndarray,
    predict_batch: PredictBatch,
    *,
    n_seeds: int = 5,
    draw_rates: Sequence[float] = (0.0, 0.25, 0.5, 0.75),
    fit_rates: Sequence[float] = (0.75,),
    seed: int = SEED,
    min_obs: int = 6,
    min_test: int = 3,
) -> pd.DataFrame:
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
            test, train = _holdout_half(obs_rows, rng, min_test)
            keeps = {}
            for d in draw_rates:
                if len(train) < 2:
                    keeps[d] = None
                    continue
                n_keep = max(1, int(len(train) * (1.0 - d)))
                keeps[d] = train[rng.permutation(len(train))[:n_keep]]
            if len(train) < 2:  # the paper's code: no baseline -> no records
                continue
            units.append((j, s, test, train, keeps))

    def matrix(j, keep):
        X = M.copy()
        X[:, j] = np.nan
        X[keep, j] = M[keep, j]
        return X

    def jobs():
        for j, _s, test, train, keeps in units:
            cols = np.full(len(test), j)
            yield matrix(j, train), test, cols  # drop rate 0: every training model kept
            for d in fit_rates:
                if keeps.get(d) is not None:
                    yield matrix(j, keeps[d]), test, cols

    preds = iter(_predict_at(jobs(), predict_batch))
    recs = []
    for j, s, test, _train, keeps in units:
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


def bench_strong_neighbors(
    M: np.ndarray,
    predict_batch: PredictBatch,
    *,
    thresholds: Sequence[float] = (0.85,),
    n_seeds: int = 5,
    seed: int = SEED + 6000,
    min_obs: int = 6,
    min_test: int = 3,
    min_shared: int = 5,
    corr: np.ndarray | None = None,
) -> pd.DataFrame:
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
            test, _ = _holdout_half(obs_rows, rng, min_test)
            units.append((j, s, test))

    def strong(j, thr):
        with np.errstate(invalid="ignore"):
            nb = np.flatnonzero(R[j] >= thr)
        return nb[nb != j]

    def jobs():
        for j, _s, test in units:
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


def bench_same_category(
    M: np.ndarray,
    categories: Sequence,
    predict_batch: PredictBatch,
    *,
    n_seeds: int = 10,
    seed: int = SEED,
    min_obs: int = 6,
    min_test: int = 0,
    min_valid: int = 3,
) -> pd.DataFrame:
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
            test, _ = _holdout_half(obs_rows, rng, min_test)
            units.append((j, s, test, same))

    def jobs():
        for j, _s, test, same in units:
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


# --------------------------------------------------------------------------- H6, both sides


def partner_support(
    M: np.ndarray,
    predict_batch: PredictBatch,
    axis: int,
    *,
    drop_rates: Sequence[float] = (0.75,),
    n_seeds: int = 5,
    seed: int = SEED,
    min_obs: int = 6,
    min_overlap: int = 4,
    min_test: int = 3,
    min_drop: int = 0,
    threshold: float = -np.inf,
    min_shared: int = 5,
    corr: np.ndarray | None = None,
) -> pd.DataFrame:
    """H6 of either side: remove nested shares of the strongest partner's cells that overlap the target.

    Targets and partners are the benchmark columns (``axis=0``, benchmark H6,
    :func:`bench_neighbor_support`) or the model rows (``axis=1``, model H6,
    :func:`model_peer_support`); the paper's two ablation scripts are the same protocol:

    * the strongest partner: the highest |r| with the target (``corr``, by default
      :func:`benchmark_abs_corr` / :func:`model_abs_corr` of the full matrix with
      ``min_shared``) among the partners with ``|r| >= threshold``;
    * eligible targets: at least ``min_obs`` observed entries, a partner and at least
      ``min_overlap`` entries observed by both (the overlap, on the full matrix, so it
      includes the target's test entries);
    * per (target ``t``, seed ``s`` in ``0..n_seeds-1``): a hide-half split of the target's
      observed entries from ``RandomState(seed + 10000 + 1000 s + t)`` (:func:`_holdout_half`,
      ``n_test = max(min_test, n // 2)``) and a permutation of the overlap from
      ``RandomState(seed + 20000 + 1000 s + t)``; baseline: the target's test cells hidden,
      every other cell observed; treatment at rate ``f``: also the partner's cells on the first
      ``max(min_drop, int(round(f * n_overlap)))`` entries of that permutation (Python's
      round, half to even);
    * cells: the target's test cells with both predictions finite (at least 2).

    Returns one record per (target, seed, drop rate): ``target, partner, seed, drop_rate,
    n_overlap, partner_abs_r`` and ``n_test``, ``base_*``, ``treat_*``, ``delta_*`` for MedAPE /
    MedAE.
    """
    M = np.asarray(M, dtype=np.float64)
    observed = np.isfinite(M)
    if corr is None:
        corr = benchmark_abs_corr(M, min_shared) if axis == 0 else model_abs_corr(M, min_shared)
    partners = _strongest_partners(corr, threshold)
    obs_v = observed.T if axis == 0 else observed  # one row per variable

    def at(v, entries):  # the cells of variable v at its entries
        return (entries, v) if axis == 0 else (v, entries)

    units = []
    for t in range(obs_v.shape[0]):
        entries = np.flatnonzero(obs_v[t])
        p = partners[t]
        if len(entries) < min_obs or p is None:
            continue
        overlap = np.flatnonzero(obs_v[t] & obs_v[p])
        if len(overlap) < min_overlap:
            continue
        for s in range(n_seeds):
            split_rng = np.random.RandomState(seed + 10_000 + 1_000 * s + t)
            mask_rng = np.random.RandomState(seed + 20_000 + 1_000 * s + t)
            test, _ = _holdout_half(entries, split_rng, min_test)
            units.append((t, p, s, test, overlap[mask_rng.permutation(len(overlap))]))

    def jobs():
        for t, p, _s, test, perm in units:
            cells = at(np.full(len(test), t), test)
            X = M.copy()
            X[cells] = np.nan
            yield X, *cells
            for f in drop_rates:
                Y = X.copy()
                Y[at(p, perm[: max(min_drop, int(round(len(perm) * f)))])] = np.nan
                yield Y, *cells

    preds = iter(_predict_at(jobs(), predict_batch))
    recs = []
    for t, p, s, test, perm in units:
        base = next(preds)
        actual = M[at(t, test)]
        for f in drop_rates:
            treat = next(preds)
            if np.isfinite(base).sum() < 2:
                continue
            rec = _pair_metrics(actual, base, treat, min_valid=2)
            if rec is not None:
                recs.append(
                    {
                        "target": t,
                        "partner": p,
                        "seed": s,
                        "drop_rate": f,
                        "n_overlap": len(perm),
                        "partner_abs_r": float(corr[t, p]),
                        **rec,
                    }
                )
    return pd.DataFrame(recs)


def _named(recs: pd.DataFrame, target: str, partner: str, order: Sequence[str]) -> pd.DataFrame:
    """:func:`partner_support` records with one side's column names, its leading columns in ``order``."""
    if recs.empty:
        return recs
    recs = recs.rename(columns={"target": target, "partner": partner, "partner_abs_r": f"{partner}_abs_r"})
    return recs[[*order, *recs.columns[len(order) :]]]


def bench_neighbor_support(
    M: np.ndarray,
    predict_batch: PredictBatch,
    *,
    drop_rates: Sequence[float] = (0.75,),
    n_seeds: int = 5,
    seed: int = SEED,
    min_obs: int = 6,
    min_overlap: int = 4,
    min_test: int = 3,
    min_shared: int = 5,
    corr: np.ndarray | None = None,
) -> pd.DataFrame:
    """Benchmark H6 strong-neighbour support: remove nested shares of the best neighbour's cells.

    The paper's code (``H6_strong_neighbor_support/ablation.py``, nested-mask version), as
    :func:`partner_support` over benchmark columns: the strongest neighbour is the column with
    the highest |Pearson r| (:func:`benchmark_abs_corr`, >= 5 shared models; no minimum |r|).
    Eligible: at least 6 observed scores and at least 4 models observed on both. Per
    (benchmark ``j``, seed ``s`` in 0..4): the hide-half split from ``RandomState(42 + 10000 +
    1000 s + j)`` (``n_test = max(3, n // 2)``) and a permutation of the overlap models from
    ``RandomState(42 + 20000 + 1000 s + j)``; the treatment at rate ``f`` additionally hides
    the neighbour's cells on the first ``int(round(f * n_overlap))`` models of that
    permutation. Baseline: the target's test cells hidden. The table compares ``f = 0`` with
    ``f = 0.75``.

    Records: ``benchmark, neighbor, seed, drop_rate, n_overlap, neighbor_abs_r`` and the pair
    metrics.
    """
    recs = partner_support(
        M,
        predict_batch,
        0,
        drop_rates=drop_rates,
        n_seeds=n_seeds,
        seed=seed,
        min_obs=min_obs,
        min_overlap=min_overlap,
        min_test=min_test,
        min_drop=0,
        min_shared=min_shared,
        corr=corr,
    )
    return _named(
        recs, "benchmark", "neighbor", ["benchmark", "neighbor", "seed", "drop_rate", "n_overlap", "neighbor_abs_r"]
    )


def model_peer_support(
    M: np.ndarray,
    predict_batch: PredictBatch,
    *,
    threshold: float = 0.95,
    drop_rates: Sequence[float] = (0.75,),
    n_seeds: int = 10,
    seed: int = SEED,
    min_obs: int = 4,
    corr: np.ndarray | None = None,
) -> pd.DataFrame:
    """Model H6 strong-peer support: remove nested shares of the strongest peer's overlapping cells.

    The paper's code (``H6_neighbor_evidence/ablation.py``), as :func:`partner_support` over
    model rows: the strongest peer is the model with the highest |r| (:func:`model_abs_corr`,
    full matrix) among those with ``|r| >= 0.95``; models with fewer than 4 observed scores,
    no such peer or no shared benchmark are skipped. Per (model ``i``, seed ``s`` in 0..9):
    ``RandomState(42 + 10000 + 1000 s + i)`` shuffles the model's observed benchmarks and the
    first ``n // 2`` are hidden (only this row; every other row complete);
    ``RandomState(42 + 20000 + 1000 s + i)`` permutes the benchmarks observed by both model and
    peer (on the full matrix, so including the target's hidden benchmarks), and the treatment
    at rate ``f`` hides the peer's cells on the first ``max(1, int(round(f * n_overlap)))``.
    Cells: the target's hidden cells with both predictions finite (at least 2). The table
    compares ``f = 0`` with ``f = 0.75``; the test uses one median delta per model over its
    seeds.

    Records: ``model, peer, seed, drop_rate, peer_abs_r, n_overlap`` and the pair metrics.
    """
    recs = partner_support(
        M,
        predict_batch,
        1,
        drop_rates=drop_rates,
        n_seeds=n_seeds,
        seed=seed,
        min_obs=min_obs,
        min_overlap=1,
        min_test=0,
        min_drop=1,
        threshold=threshold,
        min_shared=3,
        corr=corr,
    )
    return _named(recs, "model", "peer", ["model", "peer", "seed", "drop_rate", "peer_abs_r", "n_overlap"])


# --------------------------------------------------------------------------- model side


def model_peer_removal(
    M: np.ndarray,
    remove: Sequence[Sequence[int]],
    predict_batch: PredictBatch,
    *,
    n_seeds: int = 10,
    min_obs: int = 4,
    skip_empty: bool = False,
) -> pd.DataFrame:
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
        for _seed, i, js, rm in units:
            X = M.copy()
            X[i, js] = np.nan
            if len(rm):
                X[rm, :] = np.nan
            yield X, np.full(len(js), i), js

    preds = _predict_at(jobs(), predict_batch)
    if not units:
        return pd.DataFrame(columns=["seed", "model", "benchmark", "actual", "predicted"])
    return pd.concat(
        [
            pd.DataFrame({"seed": s, "model": i, "benchmark": js, "actual": M[i, js], "predicted": p})
            for (s, i, js, _), p in zip(units, preds)
        ],
        ignore_index=True,
    )


def model_observation_count(
    M: np.ndarray,
    predict_batch: PredictBatch,
    *,
    hide_fraction: float = 0.75,
    n_seeds: int = 10,
    cells: str = "own",
    baseline_cells: pd.DataFrame | None = None,
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
