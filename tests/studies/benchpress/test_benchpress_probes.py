"""Tests for benchcast.studies.benchpress.probes (BenchPress Section 5).

Small synthetic matrices; most tests inject cheap predictors so they do not depend on the
speed of Bias ALS.
"""

from __future__ import annotations

import hashlib
import warnings

import numpy as np
import pytest

from benchcast.completion.completers import bias_als_batch, bias_als_reference
from benchcast.completion.pipeline import predict_scores
from benchcast.studies.benchpress import probes as bp
from benchcast.studies.benchpress import temporal

# --------------------------------------------------------------------------- helpers


def col_mean_predictor(Xs: np.ndarray) -> np.ndarray:
    """Fill each matrix's missing cells with that matrix's column means (NaN if a column is empty)."""
    Xs = np.asarray(Xs, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # empty column -> NaN mean
        means = np.nanmean(Xs, axis=1, keepdims=True)
    return np.where(np.isnan(Xs), np.broadcast_to(means, Xs.shape), Xs)


def row_offset_predictor(Xs: np.ndarray) -> np.ndarray:
    """Column mean + the row's mean deviation from the column means over its visible cells."""
    Xs = np.asarray(Xs, dtype=float)
    means = np.nanmean(Xs, axis=1, keepdims=True)
    dev = np.where(np.isnan(Xs), np.nan, Xs - means)
    vis = ~np.isnan(dev)
    off = np.where(
        vis.any(axis=2, keepdims=True),
        np.nansum(dev, axis=2, keepdims=True) / np.maximum(vis.sum(axis=2, keepdims=True), 1),
        0.0,
    )
    return np.where(np.isnan(Xs), means + off, Xs)


class Recorder:
    """Wraps a predictor and keeps every training matrix it was given."""

    def __init__(self, inner):
        self.inner, self.seen = inner, []

    def __call__(self, Xs):
        self.seen.extend(np.array(x, copy=True) for x in Xs)
        return self.inner(Xs)


def sparse_matrix(n=10, b=6, seed=0, p_missing=0.3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    M = np.clip(50 + rng.normal(0, 15, (n, 1)) + rng.normal(0, 10, (1, b)) + rng.normal(0, 3, (n, b)), 1, 99)
    M[rng.random((n, b)) < p_missing] = np.nan
    M[np.arange(n), rng.integers(0, b, n)] = 42.0  # every row keeps at least one observation
    return M


# --------------------------------------------------------------------------- predictor


def test_predict_default_batch_equals_predict_scores_per_matrix():
    M = sparse_matrix(12, 8, seed=1)
    Ms = np.stack([bp.mask_target_to_probes(M, i, [0, 3]) for i in (0, 4, 7)])
    out = bp.predict_default_batch(Ms, chunk_size=2)
    for k in range(len(Ms)):
        ref = predict_scores(Ms[k], "logit", "bias_als", {"rank": 2, "lam": 0.1})
        np.testing.assert_array_equal(out[k], ref)


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_bias_als_batch_matches_loop_reference(rank):
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(3, 9, 7))
    Z[rng.random(Z.shape) < 0.35] = np.nan
    Z[1, 4, :] = np.nan  # a row without observations
    Z[2, :, 5] = np.nan  # a column without observations
    got = bias_als_batch(Z, rank=rank, lam=0.1, n_iter=15, n_ensemble=3)
    for k in range(3):
        ref = bias_als_reference(Z[k], rank=rank, lam=0.1, n_iter=15, n_ensemble=3)
        np.testing.assert_allclose(got[k], ref, rtol=0, atol=1e-9)


# --------------------------------------------------------------------------- probe protocol


def test_probe_protocol_hides_exactly_the_non_probe_cells_of_the_target_row():
    M = sparse_matrix(10, 6, seed=2)
    M[5, :] = np.nan
    M[5, [1, 4]] = [30.0, 70.0]  # model 5 reported only probe columns
    obs = ~np.isnan(M)
    probes = [1, 4]
    rec = Recorder(col_mean_predictor)
    ev = bp.evaluate_probe_set(M, probes, "medae", predict_batch=rec)

    fitted_targets = []
    for X in rec.seen:
        differs = np.flatnonzero((np.isnan(X) != np.isnan(M)).any(axis=1))
        assert len(differs) <= 1
        # the target row is the one that lost cells (or, if nothing was hidden, none)
        t = int(differs[0]) if len(differs) else None
        if t is None:
            continue
        fitted_targets.append(t)
        visible = np.flatnonzero(~np.isnan(X[t]))
        np.testing.assert_array_equal(visible, [j for j in probes if obs[t, j]])
        np.testing.assert_array_equal(X[t, visible], M[t, visible])
        others = np.arange(M.shape[0]) != t
        np.testing.assert_array_equal(np.isnan(X[others]), ~obs[others])
    # every target with an unrevealed observed cell is fitted once; model 5 needs no fit
    expected = [i for i in range(M.shape[0]) if (obs[i] & ~np.isin(np.arange(6), probes)).any()]
    assert sorted(fitted_targets) == expected and 5 not in fitted_targets

    cells = ev.cells
    assert len(cells) == obs.sum() and ev.n == obs.sum()
    rev = cells[cells.revealed]
    assert set(rev.benchmark) <= set(probes)
    np.testing.assert_array_equal(rev.predicted, rev.actual)  # probe cells are exact
    hid = cells[~cells.revealed]
    for r in hid.itertuples():  # read off the target's own masked fit
        col = M[:, r.benchmark].copy()
        col[r.model] = np.nan
        assert r.predicted == pytest.approx(np.nanmean(col))
    err = np.abs(cells.predicted - cells.actual)
    assert ev.medae == pytest.approx(np.median(err))
    assert ev.score == ev.medae


def test_all_columns_as_probes_reveal_everything():
    M = sparse_matrix(8, 5, seed=4)
    rec = Recorder(col_mean_predictor)
    ev = bp.evaluate_probe_set(M, range(5), "medape", predict_batch=rec)
    assert rec.seen == [] and ev.medae == 0.0 and ev.medape == 0.0 and ev.cells.revealed.all()


def test_cache_reuses_fits_without_changing_results():
    M = sparse_matrix(12, 7, seed=5)
    cache = bp.ProbeCache()
    res = bp.greedy_probe_sets(M, steps=3, objective="medae", predict_batch=row_offset_predictor, cache=cache)
    fresh_fits = 0
    for step, row in res.steps.iterrows():
        rec = Recorder(row_offset_predictor)
        ev = bp.evaluate_probe_set(M, res.order[: step + 1], "medae", predict_batch=rec)
        fresh_fits += len(rec.seen)
        assert ev.medae == row["medae"] and ev.medape == row["medape"]
    # a candidate a target never reported does not trigger a refit for that target
    assert cache.n_fits < 3 * 7 * 12
    with pytest.raises(ValueError, match="different score matrix"):
        bp.evaluate_probe_set(M + 1.0, [0], predict_batch=row_offset_predictor, cache=cache)


# --------------------------------------------------------------------------- greedy / random


def test_greedy_picks_the_informative_column():
    rng = np.random.default_rng(7)
    n, b = 30, 8
    ability = rng.normal(0, 10, (n, 1))
    M = 50 + ability + rng.normal(0, 5, (n, b))
    M[:, 5] = 50 + ability[:, 0]  # column 5 measures ability without noise
    M[rng.random((n, b)) < 0.1] = np.nan
    M[:, 5] = 50 + ability[:, 0]
    for objective in ("medae", "medape"):
        res = bp.greedy_probe_sets(M, steps=2, objective=objective, predict_batch=row_offset_predictor)
        assert res.order[0] == 5
        assert len(res.order) == 2 and len(set(res.order)) == 2
        assert res.steps["score"].is_monotonic_decreasing
        step1 = res.candidates[res.candidates.step == 1].set_index("candidate")["score"]
        assert step1.idxmin() == 5 and (step1.drop(5) > step1[5]).all()
    # restricted candidates (cost-aware run): column 5 not allowed
    res = bp.greedy_probe_sets(M, candidates=[0, 1, 2], steps=5, predict_batch=row_offset_predictor)
    assert sorted(res.order) == [0, 1, 2]


def test_ranking_objective_is_minus_the_probe_ranking_accuracy_and_drives_greedy():
    rng = np.random.default_rng(7)
    n, b = 30, 8
    ability = rng.normal(0, 10, (n, 1))
    M = 50 + ability + rng.normal(0, 5, (n, b))
    M[rng.random((n, b)) < 0.1] = np.nan
    M[:, 5] = 50 + ability[:, 0]  # revealing column 5 orders every model correctly
    obj = bp.ranking_objective(5.0)
    ev = bp.evaluate_probe_set(M, [5], predict_batch=row_offset_predictor)
    assert obj(ev.cells) == -bp.probe_ranking_accuracy(ev, 5.0)["accuracy"]
    res = bp.greedy_probe_sets(M, steps=1, objective=obj, predict_batch=row_offset_predictor)
    assert res.order == [5]


def test_greedy_ties_go_to_the_earlier_candidate():
    M = sparse_matrix(6, 5, seed=8)

    def constant(Xs):  # every candidate gives the same errors on hidden cells
        return np.where(np.isnan(Xs), 0.0, Xs)

    res = bp.greedy_probe_sets(M, candidates=[3, 1, 2], steps=1, objective=lambda cells: 1.0, predict_batch=constant)
    assert res.order == [3]


def test_random_baseline_uses_the_papers_global_orderings():
    for s in range(3):
        perm = np.random.RandomState((42 + s) * 100000).permutation(20)
        np.testing.assert_array_equal(bp.random_probe_order(20, s), perm)
    M = sparse_matrix(9, 20, seed=9, p_missing=0.5)
    base = bp.random_probe_baseline(M, k_max=4, n_seeds=2, predict_batch=col_mean_predictor)
    assert len(base) == 8 and set(base.k) == {1, 2, 3, 4}
    for s, g in base.groupby("seed"):
        order = bp.random_probe_order(20, s)
        for r in g.itertuples():
            assert r.probes == tuple(order[: r.k])
            ev = bp.evaluate_probe_set(M, order[: r.k], predict_batch=col_mean_predictor)
            assert r.medae == ev.medae
    summary = bp.summarize_random(base)
    assert list(summary.k) == [1, 2, 3, 4] and (summary.medae_q25 <= summary.medae_q75).all()


# --------------------------------------------------------------------------- ranking


def test_pairwise_ranking_accuracy_hand_example():
    # group "a": actual 10, 12, 20, 20 ; predicted 11, 11, 25, 19 ; held out: cells 0 and 3
    # pairs (0,1) d=-2 pred 0 -> tie (wrong); (0,2) d=-10 pred -14 ok; (0,3) d=-10 pred -8 ok;
    # (1,2) both seen -> skipped; (1,3) d=-8 pred -8 ok; (2,3) true tie -> skipped.
    # group "b": actual 1, 4 ; predicted 5, 3 ; held out cell 1: d=-3, pred +2 -> wrong.
    actual = [10, 12, 20, 20, 1, 4]
    predicted = [11, 11, 25, 19, 5, 3]
    heldout = [True, False, False, True, False, True]
    groups = ["a", "a", "a", "a", "b", "b"]
    out = bp.pairwise_ranking_accuracy(actual, predicted, heldout, groups, margin=[0, 2, 5, 9])
    a = out[out.group == "a"].set_index("margin")
    assert a.loc[0.0, ["n_pairs", "n_correct", "n_predicted_ties"]].tolist() == [4, 3, 1]
    assert a.loc[2.0, ["n_pairs", "n_correct", "n_predicted_ties"]].tolist() == [4, 3, 1]  # |d| >= 2 keeps (0,1)
    assert a.loc[5.0, ["n_pairs", "n_correct", "n_predicted_ties"]].tolist() == [3, 3, 0]
    assert a.loc[9.0, ["n_pairs", "n_correct"]].tolist() == [2, 2]
    assert a.loc[0.0, "accuracy"] == 0.75
    b = out[out.group == "b"].set_index("margin")
    assert b.loc[0.0, ["n_pairs", "n_correct"]].tolist() == [1, 0]
    assert np.isnan(b.loc[5.0, "accuracy"]) and b.loc[5.0, "n_pairs"] == 0
    assert list(out.group.unique()) == ["a", "b"]
    # non-finite cells are dropped before pairing
    out2 = bp.pairwise_ranking_accuracy([1, 2, 3], [1, np.nan, 3], [True, True, True], [0, 0, 0], 0)
    assert out2.n_pairs.tolist() == [1]


def test_ranking_preservation_completes_leaderboards_per_fold():
    M = np.array([[10.0, 50.0], [20.0, np.nan], [30.0, 40.0], [40.0, 45.0]])
    cells = [np.array([[0, 0], [2, 1]]), np.array([[3, 0]])]
    pred0 = np.array([[35.0, np.nan], [np.nan, np.nan], [np.nan, 46.0], [np.nan, np.nan]])
    pred1 = np.array([[np.nan] * 2, [np.nan] * 2, [np.nan] * 2, [5.0, np.nan]])
    per, summary = bp.ranking_preservation(M, cells, [pred0, pred1], margins=(0.0, 6.0))
    # fold 0, bench 0: completed [35, 20, 30, 40], held out {0}: pairs (0,1) wrong, (0,2) wrong, (0,3) ok
    f0b0 = per[(per.fold == 0) & (per.benchmark == 0) & (per.margin == 0)].iloc[0]
    assert (f0b0.n_pairs, f0b0.n_correct) == (3, 1)
    # fold 0, bench 1: completed [50, 46, 45] (model 1 unobserved), held out {2}: (0,2) ok, (2,3) wrong
    f0b1 = per[(per.fold == 0) & (per.benchmark == 1) & (per.margin == 0)].iloc[0]
    assert (f0b1.n_pairs, f0b1.n_correct) == (2, 1)
    # fold 1, bench 0: completed [10, 20, 30, 5], held out {3}: all three pairs wrong
    f1b0 = per[(per.fold == 1) & (per.benchmark == 0) & (per.margin == 0)].iloc[0]
    assert (f1b0.n_pairs, f1b0.n_correct) == (3, 0)
    s0 = summary.set_index("margin").loc[0.0]
    # benchmark 0 pooled over folds: 1/6; benchmark 1: 1/2; median across benchmarks = 1/3
    assert s0.n_pairs == 8 and s0.accuracy == pytest.approx((1 / 6 + 1 / 2) / 2) and s0.n_benchmarks == 2
    # margin 6 drops bench 1's pair (2,3) (true gap 5): bench 0 1/6, bench 1 1/1
    s6 = summary.set_index("margin").loc[6.0]
    assert s6.n_pairs == 7 and s6.accuracy == pytest.approx((1 / 6 + 1) / 2)


def test_probe_ranking_accuracy_counts_every_observed_cell():
    M = sparse_matrix(10, 4, seed=11)
    ev = bp.evaluate_probe_set(M, [0], predict_batch=row_offset_predictor)
    res = bp.probe_ranking_accuracy(ev, margin=0.0)
    per = bp.pairwise_ranking_accuracy(
        ev.cells.actual, ev.cells.predicted, np.ones(len(ev.cells), bool), ev.cells.benchmark, 0.0
    )
    assert res["n_pairs"] == per.n_pairs.sum()
    # probe column 0 is exact, so all its pairs are correct and counted
    col0 = per[per.group == 0].iloc[0]
    assert col0.n_correct == col0.n_pairs > 0
    assert res["accuracy"] == pytest.approx(np.median(per.accuracy.dropna()))


# --------------------------------------------------------------------------- temporal


DATES = [
    "2024-12-01",
    "2025-01-20",
    "2025-02-10",
    "2025-02-10",
    "2025",
    "2025-02",
    "2025-03-05",
    None,
    "2025-01-05",
    "2026-01-01",
]


def test_temporal_training_rows_exclude_same_day_and_later_models():
    for t in (1, 2, 6):
        rows = bp.temporal_training_rows(DATES, t, partial="strict")
        for i in rows:
            assert temporal._date_bounds(DATES[i])[1] < temporal._date_bounds(DATES[t])[0]
        assert t not in rows
    assert bp.temporal_training_rows(DATES, 2, "strict").tolist() == [0, 1, 8]  # not its same-day twin 3
    assert bp.temporal_training_rows(DATES, 6, "strict").tolist() == [0, 1, 2, 3, 5, 8]  # "2025-02" < March
    # the paper's string rule: same for full dates, partial dates sort first in their period
    # "2025" and "2025-02" < "2025-02-10" as strings
    assert bp.temporal_training_rows(DATES, 2, "paper").tolist() == [0, 1, 4, 5, 8]
    assert bp.temporal_training_rows(DATES, 6, "paper").tolist() == [0, 1, 2, 3, 4, 5, 8]
    for t in (1, 2, 3, 6):
        for i in bp.temporal_training_rows(DATES, t, "paper"):
            if len(DATES[i]) == 10:
                assert DATES[i] < DATES[t]


@pytest.mark.parametrize("partial", ["paper", "strict"])
def test_temporal_deployment_trains_only_on_earlier_models(partial):
    rng = np.random.default_rng(12)
    n, b = len(DATES), 30
    M = np.clip(50 + rng.normal(0, 10, (n, 1)) + rng.normal(0, 5, (n, b)), 1, 99)
    M[rng.random((n, b)) < 0.2] = np.nan
    M[:, 29] = np.nan
    M[6, 29] = 80.0  # a benchmark only the target reported: not predictable
    ids = [f"m.{i}" for i in range(n)]
    rec = Recorder(col_mean_predictor)
    targets = [2, 6]
    out = bp.temporal_deployment(
        M, DATES, ks=(1, 5), n_seeds=3, model_ids=ids, targets=targets, partial=partial, predict_batch=rec
    )
    assert len(out) == len(targets) * 2 * 3 == len(rec.seen)
    for X, r in zip(rec.seen, out.itertuples()):
        allowed = set(bp.temporal_training_rows(DATES, r.target, partial).tolist())
        present = set(np.flatnonzero(~np.isnan(X).all(axis=1)).tolist()) - {r.target}
        assert present <= allowed
        for i in allowed:
            np.testing.assert_array_equal(np.isnan(X[i]), np.isnan(M[i]))
        vis = np.flatnonzero(~np.isnan(X[r.target]))
        assert len(vis) == r.k and tuple(vis) == r.revealed
        assert r.n_observed == (~np.isnan(M[r.target])).sum()
        assert r.n_revealed + r.n_hidden == r.n_observed
        # hidden cells on the target-only benchmark have no prediction and are dropped
        assert r.n == r.n_observed - r.n_not_predictable
        assert r.n_not_predictable == (0 if 29 in r.revealed or r.target != 6 else 1)
    # the seed does not depend on k: revealed sets are nested
    for (_t, _s), g in out.groupby(["target", "seed"]):
        k1, k5 = g.set_index("k").loc[1, "revealed"], g.set_index("k").loc[5, "revealed"]
        assert set(k1) <= set(k5)
    per_target, per_k = bp.summarize_temporal(out)
    assert len(per_target) == 4 and per_k.n_targets.tolist() == [2, 2]
    assert per_k.set_index("k").loc[1, "medae"] == pytest.approx(
        np.median(out[out.k == 1].groupby("target").medae.median())
    )


def test_temporal_targets_and_seed_follow_the_papers_rules():
    dates = ["2025-01-19", "2025-01-20", "2025-06-01", "2025-11-13", "2025-11-14", "2025", None]
    counts = [30, 21, 20, 40, 40, 40, 40]
    assert bp.temporal_targets(dates, counts) == [1, 3]  # > 20 observed, inside the window
    expected = int(hashlib.sha1(b"42:model_gpt-4_1:3").hexdigest()[:8], 16)
    assert bp.temporal_seed("gpt-4.1", 3) == expected
