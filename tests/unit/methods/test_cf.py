"""The collaborative-filtering estimator (benchcast.methods.collaborative_filtering) on generated data."""

import numpy as np
import pytest

from benchcast.errors import ConfigError
from benchcast.methods import make_method
from benchcast.methods.collaborative_filtering import (
    CFSettings,
    CollaborativeFiltering,
    cf_estimates,
    item_variance,
    oversample,
    probe_parts,
    signed_cosine,
    task_similarity,
)
from benchcast.oracle import Oracle, TaskOracle
from benchcast.trials.tasks import task_budgets


def matrix(n_models=120, sizes=(60, 45, 30), seed=0):
    rng = np.random.default_rng(seed)
    ability = rng.normal(size=(n_models, 1))
    skill = ability + 0.5 * rng.normal(size=(n_models, len(sizes)))
    tasks = np.repeat(np.arange(len(sizes)), sizes)
    difficulty = rng.normal(size=len(tasks))
    logits = skill[:, tasks] - difficulty
    return (rng.random(logits.shape) < 1 / (1 + np.exp(-logits))).astype(float), tasks


def test_identical_tasks_transport_identity():
    rng = np.random.default_rng(1)
    columns = (rng.random((30, 8)) < 0.5).astype(float)
    target = (rng.random(8) < 0.5).astype(float)
    perm = rng.permutation(8)
    syn, syn_target = oversample(columns, target, columns[:, perm], binary=True)
    assert np.array_equal(syn, columns[:, perm]) and np.array_equal(syn_target, target[perm])
    # the barycentric projection of a plan between two sets keeps each synthetic item a weighted mean
    soft, _ = oversample(columns[:, :4], target[:4], columns[:, 4:6], binary=False)
    assert soft.shape == (30, 2) and (soft >= 0).all() and (soft <= 1).all()


def test_helpers_on_hand_computed_cases():
    assert probe_parts(10, 3) == [3, 3, 2, 2] and probe_parts(2, 3) == [1, 1] and probe_parts(5, 0) == [5]
    assert item_variance(np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 0.0]])).tolist() == pytest.approx([1 / 3, 0.0])
    # a target that missed every item: the 0/1 cosine is undefined, the signed one is the agreement
    sim = signed_cosine(np.zeros((1, 4)), np.array([[0, 0, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0]]))
    assert sim.tolist() == [[1.0, -1.0, 0.5]]
    initial = np.array([[1, 1, 0, 0], [1, 1, 1, 1], [0, 0, 0, 1.0]])
    sim = task_similarity(initial, np.array([0, 0, 1, 1]), centre=False)
    assert sim[0, 1] == pytest.approx((1 * 0 + 1 * 1 + 0 * 0.5) / (np.sqrt(2) * np.sqrt(1.25)))


def test_budgets_are_exact_and_every_task_is_estimated():
    scores, tasks = matrix()
    budgets = task_budgets(np.bincount(tasks), 0.2, floor=10)
    est, spent = cf_estimates(scores[:90], scores[90:], tasks, budgets, CFSettings(n_similar=10), base_seed=0)
    assert (spent == budgets).all() and est.shape == (30, 3)
    truth = np.stack([scores[90:, tasks == t].mean(axis=1) for t in range(3)], axis=1)
    assert np.abs(est - truth).mean() < 0.1 and ((est >= 0) & (est <= 1)).all()
    again, _ = cf_estimates(scores[:90], scores[90:], tasks, budgets, CFSettings(n_similar=10), base_seed=0)
    assert np.array_equal(est, again)


def test_ties_are_broken_by_the_seeded_order_not_by_position():
    scores = np.tile(np.array([[1.0], [0.0]]), (10, 12))  # every item has the same variance
    tasks = np.zeros(12, dtype=np.int64)
    model = CollaborativeFiltering(CFSettings(rounds=0)).fit(scores, tasks, np.array([4]), np.random.default_rng(3))
    chosen, _, _ = model._select_row(TaskOracle(scores[:1], tasks, [4]), 0)[0]
    assert sorted(chosen) == sorted(np.argsort(model.tie_rank_[0])[:4]) and sorted(chosen) != [0, 1, 2, 3]


def _select_task_by_task(model, oracle, row, t):
    """Alg. 1 for one task on its own: the task's rounds asked one after another."""
    from benchcast.methods.collaborative_filtering import _ranked, item_variance, probe_parts, signed_cosine

    s, items = model.settings, model.items_[t]
    columns, v_all, ties = model.initial_[:, items], model.v_all_[t], model.tie_rank_[t]
    parts = probe_parts(int(model.budgets_[t]), s.rounds)
    chosen = list(_ranked(v_all, ties)[: parts[0]])
    for extra in parts[1:] + [0]:
        answers = oracle.query(items[chosen], rows=[row])[0]
        agreement = signed_cosine(answers[None, :], columns[:, chosen])[0]
        similar = np.lexsort((np.arange(len(agreement)), -agreement))[: s.n_similar]
        if not extra:
            break
        score = s.alpha * v_all + (1 - s.alpha) * item_variance(columns[similar])
        score[chosen] = -np.inf
        chosen += list(_ranked(score, ties)[:extra])
    return np.asarray(chosen), answers, similar


class _CountingOracle(TaskOracle):
    calls = 0

    def query(self, items, rows=None):
        self.calls += 1
        return super().query(items, rows)


def test_each_round_asks_every_task_at_once_with_the_task_by_task_selections():
    scores, tasks = matrix(sizes=(30, 45, 25, 60))
    budgets = np.array([7, 3, 12, 9])  # 3: fewer parts than rounds + 1 (probe_parts drops empty ones)
    model = CollaborativeFiltering(CFSettings(n_similar=10, rounds=3)).fit(
        scores[:90], tasks, budgets, np.random.default_rng(5)
    )
    for row in (0, 7):
        oracle = _CountingOracle(scores[90:], tasks, budgets)
        picks = model._select_row(oracle, row)
        assert oracle.calls == 4  # rounds + 1 queries, however many tasks
        for t in range(4):
            ref = _select_task_by_task(model, TaskOracle(scores[90:], tasks, budgets), row, t)
            for got, want in zip(picks[t], ref, strict=True):
                assert np.array_equal(got, want)


def test_a_task_without_unselected_items_is_its_mean():
    scores, tasks = matrix(sizes=(15, 40))
    budgets = task_budgets(np.bincount(tasks), 0.1)  # 15 < 20: every item of task 0
    est, spent = cf_estimates(scores[:90], scores[90:], tasks, budgets, CFSettings(), base_seed=0)
    assert budgets.tolist() == [15, 20] and np.allclose(est[:, 0], scores[90:, :15].mean(axis=1))


def test_estimate_holds_one_augmented_task_at_a_time():
    """Each target's augmented task holds the models' columns of its unselected items: estimating
    ten targets must take no more memory than estimating one (it held one copy of the matrix per
    target), and the estimates are predict's of augment's of select's (the tuning path's)."""
    import tracemalloc

    from benchcast.scaling.synthetic import leaderboard

    board = leaderboard(100, 2000, seed=4)
    scores, groups = board.scores.astype(float), board.subtasks
    m = make_method("cf_probe", {}).fit(scores[:80], 60, np.random.default_rng(0), groups=groups)
    m.estimate(Oracle(scores[80:81], 60), np.random.default_rng(1))  # imports and caches first
    peaks = []
    for targets in (scores[80:81], scores[80:90]):
        tracemalloc.start()
        try:
            est = m.estimate(Oracle(targets, 60), np.random.default_rng(1))
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    cf, sizes = m.cf_, m.sizes_
    picks = cf.select(TaskOracle(scores[80:90], cf.tasks_, cf.budgets_))
    assert np.array_equal(est, cf.predict(picks, cf.augment(picks)) @ sizes / sizes.sum())
    one_copy = 80 * 2000 * 8
    assert peaks[1] < peaks[0] + 2 * one_copy, [f"{p / 2**20:.1f} MB" for p in peaks]


def test_initial_max_keeps_a_random_subset_of_the_sources_as_initial_models_and_changes_nothing_unset():
    from benchcast.scaling.synthetic import leaderboard

    board = leaderboard(120, 600, seed=5)
    scores, groups = board.scores.astype(float), board.subtasks
    source, targets = scores[:100], scores[100:]

    def fitted(params):
        return make_method("cf_probe", params).fit(source, 40, np.random.default_rng(0), groups=groups)

    def estimate(m):
        return m.estimate(Oracle(targets, 40), np.random.default_rng(1))

    plain, roomy, capped = fitted({}), fitted({"initial_max": 100}), fitted({"initial_max": 50})
    assert np.array_equal(estimate(plain), estimate(roomy))  # no more sources than the cap: untouched
    assert len(capped.cf_.initial_) == 50 and len(plain.cf_.initial_) == 100
    rows = [int(np.flatnonzero((source == r).all(axis=1))[0]) for r in capped.cf_.initial_]
    assert rows == sorted(rows) and len(set(rows)) == 50  # source rows, in their order, no repeats
    again = fitted({"initial_max": 50})
    assert np.array_equal(again.cf_.initial_, capped.cf_.initial_) and np.array_equal(estimate(again), estimate(capped))
    assert plain.params()["initial_max"] is None and capped.params()["initial_max"] == 50
    with pytest.raises(ConfigError, match="initial_max must exceed n_similar"):
        make_method("cf_probe", {"initial_max": 20})


def test_oversampling_changes_estimates_exactly_where_a_task_has_a_similar_one():
    """Eq. 9 acts on a task only through the tasks at least ``tau0`` similar to it: tasks 0 and 1
    share one skill, task 2 has its own, so with a ``tau0`` between their similarities the
    oversampling changes estimates on tasks 0 and 1 and none on task 2; above every similarity it
    changes none (the CF study's OT claim is judged only where it acts)."""
    rng = np.random.default_rng(3)
    n_models, sizes = 160, (60, 60, 60)
    shared, own = rng.normal(size=(n_models, 1)), rng.normal(size=(n_models, 1))
    skill = np.hstack([shared, shared + 0.1 * rng.normal(size=(n_models, 1)), own])
    tasks = np.repeat(np.arange(3), sizes)
    logits = 2 * skill[:, tasks] - rng.normal(size=len(tasks))
    scores = (rng.random(logits.shape) < 1 / (1 + np.exp(-logits))).astype(float)
    initial, targets = scores[:120], scores[120:]
    sim = task_similarity(initial, tasks, centre=True)
    assert sim[0, 1] > 0.8 and max(sim[0, 2], sim[1, 2]) < 0.5
    budgets = task_budgets(np.bincount(tasks), 0.2, floor=10)

    def run(tau0, oversample):
        settings = CFSettings(n_similar=10, tau0=tau0, oversample=oversample)
        return cf_estimates(initial, targets, tasks, budgets, settings, base_seed=0)[0]

    without = run(0.6, False)
    changed = run(0.6, True) != without
    assert changed[:, 0].any() and changed[:, 1].any() and not changed[:, 2].any()
    assert np.array_equal(run(0.99, True), without)
