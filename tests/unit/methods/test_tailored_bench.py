"""TailoredBench: exact-grid distances, pattern-level PAM = item-level PAM, native sources, the
calibrated estimate, and the method's budget and batching invariants."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from benchcast.errors import ConfigError
from benchcast.methods import make_method
from benchcast.methods.pam import pam_reference
from benchcast.methods.tailored import (
    calibrated_estimate,
    cluster_items,
    cluster_items_clara,
    consistency,
    distinct_patterns,
    embedding_distances,
    hamming_weights,
    native_sources,
    zscore_columns,
)
from benchcast.oracle import Oracle


def binary_answers(seed: int, models: int = 30, items: int = 120, distinct: int = 50) -> np.ndarray:
    """Models x items 0/1 answers with many duplicate item columns (as real benchmarks have)."""
    rng = np.random.default_rng(seed)
    ability = rng.normal(size=(models, 1))
    easiness = rng.normal(size=(1, distinct))
    base = (rng.random((models, distinct)) < 1 / (1 + np.exp(-(ability + easiness)))).astype(float)
    return base[:, rng.integers(0, distinct, size=items)]


@pytest.mark.parametrize("metric", ["manhattan", "correlation", "cosine"])
def test_distances_are_scipy_on_z_scored_columns(metric):
    x = binary_answers(0).T  # items x models
    ours = embedding_distances(x, metric)
    scipy_metric = {"manhattan": "cityblock"}.get(metric, metric)
    z = zscore_columns(x)
    assert np.allclose(ours, np.nan_to_num(cdist(z, z, scipy_metric), nan=1.0), atol=1e-9)
    some = np.array([5, 1, 40])
    assert np.array_equal(embedding_distances(x, metric, points=some), ours[np.ix_(some, some)])
    assert np.array_equal(embedding_distances(x, metric, to=some), ours[:, some])


def test_binary_manhattan_distances_tie_exactly():
    """Two pairs that differ on the same multiset of equally weighted columns are at exactly the
    same distance, whatever order the columns are summed in."""
    x = np.array([[0, 0, 1, 1], [1, 1, 1, 1], [0, 0, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1]], dtype=float)
    d = embedding_distances(x)  # columns 0 and 1 have the same weight, 2 and 3 too
    assert d[0, 3] == d[0, 4]  # differ on {0, 3} and on {1, 2}... both one of each weight
    assert d[1, 2] == d[0, 1] + d[0, 2]


def test_blocked_distances_are_the_one_shot_formula_bit_for_bit():
    """Across several 512-row blocks, square (computed on and above the diagonal, then mirrored)
    and rectangular: every entry equals sum_s w_s |x_is - x_js| formed in one shot."""
    x = (np.random.default_rng(3).random((1500, 60)) < 0.3).astype(float)
    sd = x.std(axis=0)
    w = np.where(sd > 0, 1.0 / np.where(sd > 0, sd, 1.0), 0.0)
    step = 2.0 ** (int(np.ceil(np.log2(len(x) * w.sum()))) + 2 - 52)
    w = np.round(w / step) * step

    def one_shot(r, c):
        return np.maximum((r @ w)[:, None] + (c @ w)[None, :] - 2.0 * ((r * w) @ c.T), 0.0)

    square = embedding_distances(x)
    assert np.array_equal(square, one_shot(x, x)) and np.array_equal(square, square.T)
    rows, to = np.arange(1499, 200, -2), np.array([7, 1200, 3])
    assert np.array_equal(embedding_distances(x, points=rows), one_shot(x[rows], x[rows]))
    assert np.array_equal(embedding_distances(x, points=rows, to=to), one_shot(x[rows], x[to]))


def test_patterns_group_identical_items_and_keep_the_item_level_scaling():
    x = binary_answers(1).T
    p = distinct_patterns(x)
    assert p.counts.sum() == len(x) and len(p.counts) == len(np.unique(x, axis=0))
    full = embedding_distances(x)
    assert np.array_equal(p.dist[np.ix_(p.of_item, p.of_item)], full)


@pytest.mark.parametrize("seed", range(6))
def test_clustering_distinct_patterns_makes_the_item_level_pam_swaps(seed):
    """cluster_items (weighted patterns, first item of a pattern in scan order) gives the very
    medoid items that best-improvement PAM on the items themselves, scanning that order, gives."""
    x = binary_answers(seed).T
    fixed = np.array([3, 77, 15])
    ours = cluster_items(distinct_patterns(x), fixed, 7, np.random.default_rng(seed), max_swaps=10_000)
    rng = np.random.default_rng(seed)  # the same draws, in cluster_items' order
    scan = rng.permutation(len(x))
    init = rng.choice(np.setdiff1d(np.arange(len(x)), fixed), size=7, replace=False)
    items = pam_reference(embedding_distances(x), np.concatenate([fixed, init]), 3, order=scan, tol=0.0)
    assert np.array_equal(ours.medoids, items.medoids)
    assert np.array_equal(ours.labels, items.labels)
    assert np.array_equal(ours.medoids[:3], fixed)
    assert len(set(ours.medoids.tolist())) == 10


def test_native_sources_follow_the_threshold_and_the_count():
    rng = np.random.default_rng(4)
    src, tgt = rng.integers(0, 2, size=(20, 8)).astype(float), rng.integers(0, 2, size=(6, 8)).astype(float)
    cons = consistency(src, tgt)
    models = zscore_columns(np.vstack([src, tgt]))
    d = cdist(models, models, "cityblock")
    assert cons.threshold == pytest.approx(d[np.triu_indices(26, 1)].mean())
    within = d[20:, :20] <= cons.threshold + 1e-9
    assert cons.n_bar == int(within.sum(axis=1).mean())
    for t in range(6):
        adaptive = native_sources(cons, t)
        order = np.argsort(cons.dist[t], kind="stable")
        assert np.array_equal(adaptive, np.sort(order[: cons.n_bar]))
        assert len(native_sources(cons, t, "dynamic")) == max(cons.n_bar, int(within[t].sum()))
        assert np.array_equal(native_sources(cons, t, "top", 3), np.sort(order[:3]))
        assert np.array_equal(native_sources(cons, t, "band", (0.2, 0.4)), np.sort(order[4:8]))
        part = native_sources(cons, t, "fraction", 0.5, np.random.default_rng(t))
        assert len(part) == round(0.5 * cons.n_bar) and set(part) <= set(adaptive)


def test_native_max_keeps_the_nearest_of_the_chosen_sources_and_nothing_else_when_it_does_not_bind():
    rng = np.random.default_rng(5)
    src, tgt = rng.integers(0, 2, size=(40, 12)).astype(float), rng.integers(0, 2, size=(6, 12)).astype(float)
    cons = consistency(src, tgt)
    assert cons.n_bar > 4
    for t in range(6):
        order = np.argsort(cons.dist[t], kind="stable")
        assert np.array_equal(native_sources(cons, t, most=cons.n_bar), native_sources(cons, t))
        assert np.array_equal(native_sources(cons, t, most=4), np.sort(order[:4]))
        dynamic = native_sources(cons, t, "dynamic", most=3)
        assert np.array_equal(dynamic, np.sort(order[:3]))
        band = native_sources(cons, t, "band", (0.5, 1.0), most=2)
        assert np.array_equal(band, np.sort(order[20:22]))  # the nearest of the band, not of all
    assert make_method("tailoredbench", {"native_max": 4}).params()["native_max"] == 4
    assert make_method("tailoredbench").params()["native_max"] is None
    with pytest.raises((ValueError, ConfigError), match="native_max must be >= 1"):
        make_method("tailoredbench", {"native_max": 0})


def test_native_max_changes_an_estimate_only_where_it_binds():
    rng = np.random.default_rng(6)
    scores = (rng.random((60, 300)) < rng.random(300)).astype(float)
    source, target = scores[:50], scores[50:]
    est = {}
    for cap in (None, 1000, 3):
        m = make_method("tailoredbench", {"native_max": cap}).fit(source, 30, np.random.default_rng(0))
        est[cap] = m.estimate(Oracle(target, 30), np.random.default_rng(1))
    assert np.array_equal(est[None], est[1000])
    assert not np.array_equal(est[None], est[3])


def test_targets_far_from_every_source_still_get_one_native_source():
    """Sources that all agree with each other and targets that disagree with them: no target has a
    source within the mean distance, int(mean) would be 0 -- n_bar is 1, the nearest source."""
    src = np.tile(np.array([1.0, 1.0, 0.0, 0.0, 1.0, 0.0]), (8, 1))
    src[0, 5] = 1.0  # not all identical, so distances differ
    tgt = 1.0 - src[:3]
    cons = consistency(src, tgt)
    assert (cons.dist > cons.threshold).all() and cons.n_bar == 1
    assert len(native_sources(cons, 0)) == 1


def test_calibrated_estimate_by_hand():
    # items 0..3; medoids 0 (answer 1) and 2 (answer 0); native means per item
    native_mean = np.array([0.5, 0.25, 0.5, 1.0])
    labels = np.array([0, 0, 1, 1])
    got = calibrated_estimate(np.array([1.0, 0.0]), np.array([0, 2]), labels, native_mean)
    # item 1: (1.5)(0.75)/(1.0) - 0.5 = 0.625; item 3: (0.5)(1.5)/(1.0) - 0.5 = 0.25
    assert got == pytest.approx((1.0 + 0.625 + 0.0 + 0.25) / 4)
    capped = calibrated_estimate(np.array([1.0, 1.0]), np.array([1, 2]), np.array([0, 0, 1, 1]), native_mean)
    assert capped == pytest.approx((1.0 + 1.0 + 1.0 + 1.0) / 4)  # item 0 would be 1.5 / 0.75 * 1 - 0.5 > 1
    assert calibrated_estimate(np.array([1.0, 0.0]), np.array([0, 2]), labels, native_mean, False) == 0.5


@pytest.mark.parametrize("budget", [11, 20])
def test_method_pays_exactly_its_budget_per_target_and_beats_random_items(budget):
    answers = binary_answers(7, models=40, items=200, distinct=120)
    src, tgt = answers[::2], answers[1::2]
    truth = tgt.mean(axis=1)
    errors = []
    for run in range(8):  # the G-set and every PAM start are random: judge the method over runs
        m = make_method("tailoredbench", {"g_size": 4}).fit(src, budget, np.random.default_rng(run))
        oracle = Oracle(tgt, budget)
        est = m.estimate(oracle, np.random.default_rng(100 + run))
        assert (oracle.spent == budget).all()
        assert all(len(set(c.tolist())) == budget and np.array_equal(c[:4], m.g_set_) for c in m.core_sets_)
        assert (np.diff(m.g_set_) > 0).all()  # ascending, as the released code sorts it
        errors.append(np.abs(est - truth).mean())
    subsets = [np.random.default_rng(k).choice(200, budget, replace=False) for k in range(50)]
    random_mae = np.mean([np.abs(tgt[:, s].mean(axis=1) - truth).mean() for s in subsets])
    # at 11 (4 G-set items + 7) it is on par with random items on this one-ability toy; at 20 better
    assert np.mean(errors) < (1.1 if budget == 11 else 0.9) * random_mae


def test_each_target_gets_the_same_core_set_however_targets_share_work():
    """A target's core set depends on its own random stream, not on which targets share a
    distance matrix with it: rerunning with the shared matrices dropped changes nothing."""
    answers = binary_answers(8, models=40, items=150)
    src, tgt = answers[::2], answers[1::2]
    m = make_method("tailoredbench", {"g_size": 4}).fit(src, 10, np.random.default_rng(0))
    first = m.estimate(Oracle(tgt, 10), np.random.default_rng(5))
    cores = [c.copy() for c in m.core_sets_]
    m.share_distances = False
    assert np.array_equal(m.estimate(Oracle(tgt, 10), np.random.default_rng(5)), first)
    assert all(np.array_equal(a, b) for a, b in zip(cores, m.core_sets_, strict=True))


def test_bad_settings_are_refused():
    with pytest.raises(ConfigError, match="native"):
        make_method("tailoredbench", {"native": "top"})
    with pytest.raises(ConfigError, match="metric"):
        make_method("tailoredbench", {"metric": "euclid"})
    m = make_method("tailoredbench", {"g_size": 10})
    with pytest.raises(ConfigError, match="must exceed the G-set"):
        m.fit(binary_answers(0), 10, np.random.default_rng(0))


def test_fewer_distinct_patterns_than_medoids_still_pays_the_budget():
    """Two native sources give at most four answer patterns for 11 medoids: no swap is possible,
    the N-set keeps its random initial items, and every target still pays exactly n."""
    answers = binary_answers(9, models=40, items=150)
    src, tgt = answers[::2], answers[1::2]
    m = make_method("tailoredbench", {"g_size": 4, "native": "top", "native_value": 2}).fit(
        src, 11, np.random.default_rng(0)
    )
    oracle = Oracle(tgt, 11)
    est = m.estimate(oracle, np.random.default_rng(1))
    assert (oracle.spent == 11).all() and np.isfinite(est).all()


def test_clara_keeps_the_cheapest_sample_and_labels_every_item():
    """Three far-apart groups of items: CLARA on small samples still puts one medoid in each, keeps
    the G-set first, and every item joins its nearest medoid over all items."""
    rng = np.random.default_rng(0)
    centers = rng.integers(0, 2, size=(3, 40)).astype(float)
    centers[1], centers[2] = 1 - centers[0], np.r_[centers[0, :20], 1 - centers[0, 20:]]
    groups = np.repeat(np.arange(3), 100)
    x = centers[groups]
    flips = rng.random(x.shape) < 0.03
    x[flips] = 1 - x[flips]
    fixed = np.array([5])  # an item of group 0
    c = cluster_items_clara(x, fixed, 2, np.random.default_rng(1), 1000, sample=40, iterations=5)
    assert c.medoids[0] == 5 and len(set(c.medoids.tolist())) == 3
    assert sorted(groups[c.medoids].tolist()) == [0, 1, 2]
    d = embedding_distances(x, to=c.medoids)
    assert np.array_equal(c.labels, d.argmin(axis=1))
    assert np.array_equal(groups[c.medoids][c.labels], groups)
    # the kept result is the cheapest of the samples drawn: more samples never cost more
    kept = [
        cluster_items_clara(x, fixed, 2, np.random.default_rng(1), 1000, sample=40, iterations=k) for k in (1, 2, 5)
    ]
    costs = [embedding_distances(x, to=k.medoids).min(axis=1).sum() for k in kept]
    assert costs[0] >= costs[1] >= costs[2]


def test_clara_works_out_the_weights_once_with_the_same_distances(monkeypatch):
    """CLARA measures every sample in one embedding: its Hamming weights (a pass over every item,
    most of a sample's time at 25,000 items) are worked out once, and distances given them are
    bit for bit those worked out afresh."""
    import benchcast.methods.tailored as tailored

    x = binary_answers(3, models=30, items=400, distinct=300).T.copy()
    w = hamming_weights(x)
    to = np.array([3, 50, 77])
    assert np.array_equal(embedding_distances(x, to=to, weights=w), embedding_distances(x, to=to))
    assert np.array_equal(distinct_patterns(x, rows=to, weights=w).dist, distinct_patterns(x, rows=to).dist)
    assert hamming_weights(x + 0.5) is None and hamming_weights(x, "cosine") is None
    calls = []
    monkeypatch.setattr(tailored, "hamming_weights", lambda *a: calls.append(1) or hamming_weights(*a))
    tailored.cluster_items_clara(x, np.array([0]), 3, np.random.default_rng(1), 1000, sample=60, iterations=4)
    assert len(calls) == 1


def test_method_with_clara_pays_its_budget_and_repeats_itself():
    answers = binary_answers(10, models=40, items=300, distinct=200)
    src, tgt = answers[::2], answers[1::2]
    params = {"g_size": 4, "clara": {"min_items": 100, "sample": 60, "iterations": 3}}
    m = make_method("tailoredbench", params).fit(src, 15, np.random.default_rng(0))
    oracle = Oracle(tgt, 15)
    est = m.estimate(oracle, np.random.default_rng(2))
    assert (oracle.spent == 15).all() and np.isfinite(est).all()
    assert all(len(set(c.tolist())) == 15 and np.array_equal(c[:4], m.g_set_) for c in m.core_sets_)
    again = make_method("tailoredbench", params).fit(src, 15, np.random.default_rng(0))
    assert np.array_equal(again.estimate(Oracle(tgt, 15), np.random.default_rng(2)), est)
    plain = make_method("tailoredbench", {"g_size": 4}).fit(src, 15, np.random.default_rng(0))
    assert not np.array_equal(plain.estimate(Oracle(tgt, 15), np.random.default_rng(2)), est)  # CLARA ran
    with pytest.raises(ConfigError, match="CLARA sample"):
        make_method("tailoredbench", {"clara": {"min_items": 10, "sample": 15}}).fit(src, 15, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="clara takes"):
        make_method("tailoredbench", {"clara": {"min_items": 10, "size": 15}})


@pytest.mark.parametrize("params", [{"g_size": 4}, {"g_size": 4, "clara": {"min_items": 100, "sample": 60}}])
def test_a_target_alone_gets_what_it_gets_among_others_without_numba(params, monkeypatch):
    """A single target (a new model on the command line) is clustered by the numpy engine, many
    (a workflow job) by the compiled one: the same core set and estimate either way. The target is
    listed twice in the batch so that the consistency threshold, a mean over targets, is its own."""
    answers = binary_answers(11, models=41, items=300, distinct=160)
    src, row = answers[:40], answers[40:]
    m = make_method("tailoredbench", params).fit(src, 16, np.random.default_rng(0))
    among = m.estimate(Oracle(np.vstack([row, row]), 16), np.random.default_rng(3))
    core = m.core_sets_[0].copy()
    monkeypatch.setitem(sys.modules, "benchcast.methods.pam_numba", None)  # import fails
    alone = m.estimate(Oracle(row, 16), np.random.default_rng(3))
    assert alone[0] == among[0] and np.array_equal(m.core_sets_[0], core)
    with pytest.raises(ImportError):
        m.estimate(Oracle(np.vstack([row, row]), 16), np.random.default_rng(3))


def test_one_distance_matrix_at_a_time():
    """Targets with different native sources each need an items x items distance matrix; they are
    clustered one group after another, so the peak holds one (2,000 items: 32 MB), not one per
    target (20 targets: 640 MB) -- what made 10,000 items take 12 GB."""
    import tracemalloc

    from benchcast.scaling.synthetic import leaderboard

    scores = leaderboard(140, 2000, seed=1).scores.astype(float)
    src, tgt = scores[:120], scores[120:]
    m = make_method("tailoredbench", {}).fit(src, 30, np.random.default_rng(0))
    peaks = []
    for targets in (tgt, tgt[:1]):  # many targets: the numba engine; one (a new model): numpy's
        tracemalloc.start()
        try:
            m.estimate(Oracle(targets, 30), np.random.default_rng(1))
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        if len(targets) > 1:
            assert len({c[10:].tobytes() for c in m.core_sets_}) > 10  # the targets did differ
    # the distances (32 MB) and their blocks; the numpy engine formed two more such matrices at once
    assert max(peaks) < 2.5 * 2000**2 * 8, [f"{p / 2**20:.0f} MB" for p in peaks]


def test_one_target_clusters_on_the_engine_that_is_faster_for_its_size(monkeypatch):
    """A new model's N-set: numpy's engine for a few distinct patterns (numba's start-up would cost
    more), the compiled one above NUMBA_WORTH_POINTS; the same core set either way."""
    import benchcast.methods.tailored_bench as tb

    engines = []
    real = tb.cluster_items
    monkeypatch.setattr(tb, "cluster_items", lambda *a: engines.append(a[-1]) or real(*a))
    answers = binary_answers(8, models=40, items=150)
    m = make_method("tailoredbench", {"g_size": 4}).fit(answers[:30], 10, np.random.default_rng(0))
    small = m.estimate(Oracle(answers[30:31], 10), np.random.default_rng(5))
    cores = m.core_sets_[0]
    monkeypatch.setattr(tb, "NUMBA_WORTH_POINTS", 3)
    large = m.estimate(Oracle(answers[30:31], 10), np.random.default_rng(5))
    assert engines == ["numpy", "numba"]
    assert np.array_equal(small, large) and np.array_equal(cores, m.core_sets_[0])
