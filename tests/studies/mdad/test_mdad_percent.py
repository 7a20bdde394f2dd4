"""Fixed-percentage micro-benchmarks (Appendix G, benchcast.studies.mdad.percent) on generated data."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from benchcast.studies.mdad.analysis import cell_counts
from benchcast.studies.mdad.percent import fraction_sizes, run_percent_cell, summarize_percent
from benchcast.studies.mdad.protocol import draw_trial

SETTINGS = {"threshold": 0.8, "resolution": 0.5, "centred": False, "arithmetic": "exact", "sentinel": 50.0}
BOOT = {**SETTINGS, "n_boot": 50, "level": 0.95}


def matrix(n_models=70, sizes=(40, 24, 10), seed=3):
    rng = np.random.default_rng(seed)
    n_items = sum(sizes)
    ability, difficulty = rng.normal(size=(n_models, 1)), rng.normal(size=(1, n_items))
    scores = (rng.random((n_models, n_items)) < 1 / (1 + np.exp(difficulty - ability))).astype(float)
    subtasks = np.repeat([f"s{i}" for i in range(len(sizes))], sizes)
    return scores, subtasks


def test_sizes_follow_the_released_rule_in_exact_arithmetic():
    assert fraction_sizes(100, [0.29, 0.005, 0.02, 0.4]) == {0.29: 29, 0.005: 2, 0.02: 2, 0.4: 40}
    assert 0.29 * 100 < 29  # the float product floors to 28
    assert fraction_sizes(2880, [0.005, 0.24]) == {0.005: 14, 0.24: 691}


def test_benchmark_scope_draws_from_the_whole_seen_half():
    scores, subtasks = matrix()
    with threadpool_limits(1):
        est, _ = run_percent_cell(
            scores, subtasks, "random_sampling", {}, 15, [0.02, 0.05, 0.25], 3, 0, "benchmark", 20
        )
    n_seen = 20 + 12 + 5
    assert dict(est.groupby("fraction").k.first()) == {0.02: 2, 0.05: 2, 0.25: 9}
    assert (est.n_seen == n_seen).all() and (est.items_queried <= est.k).all()
    assert len(est) == 3 * 3 * 20  # fractions x trials x targets (0.02 and 0.05 share k = 2's rows)
    assert np.array_equal(est[est.fraction == 0.02].estimate, est[est.fraction == 0.05].estimate)


def test_subtask_scope_runs_each_subtask_as_its_own_benchmark_with_the_trials_models():
    scores, subtasks = matrix()
    with threadpool_limits(1):
        est, timing = run_percent_cell(scores, subtasks, "random_sampling", {}, 15, [0.1, 0.4], 2, 0, "subtask", 20)
    sizes = est.groupby(["subtask", "fraction"]).k.first().to_dict()
    assert sizes == {("s0", 0.1): 2, ("s0", 0.4): 8, ("s1", 0.1): 2, ("s1", 0.4): 4, ("s2", 0.1): 2, ("s2", 0.4): 2}
    assert dict(est.groupby("subtask").n_seen.first()) == {"s0": 20, "s1": 12, "s2": 5}
    for _, trial in est.groupby("trial"):  # the same 20 targets in every subtask of a trial
        targets = {s: frozenset(g.model_idx) for s, g in trial.groupby("subtask")}
        assert len(set(targets.values())) == 1 and len(next(iter(targets.values()))) == 20
    truth = draw_trial(len(scores), subtasks, 15, 20, trial=1, base_seed=0).targets
    assert set(est[est.trial == 1].model_idx) == set(truth)
    # a subtask's halves are its own draw, not the whole benchmark's halves restricted to it
    s0 = est[(est.subtask == "s0") & (est.trial == 0) & (est.fraction == 0.1)].sort_values("model_idx")
    whole = draw_trial(len(scores), subtasks, 15, 20, trial=0, base_seed=0)
    counts = scores[np.ix_(np.sort(whole.targets), whole.seen[subtasks[whole.seen] == "s0"])].sum(axis=1)
    assert not np.array_equal(s0.seen_correct.to_numpy(), counts)
    assert set(timing.subtask) == {"s0", "s1", "s2"}


def test_subtask_scope_pools_every_subtasks_pairs_into_one_mdad():
    scores, subtasks = matrix()
    with threadpool_limits(1):
        est, _ = run_percent_cell(scores, subtasks, "random_sampling", {}, 15, [0.4], 3, 0, "subtask", 20)
    from benchcast.stats.mdad import Binning

    counts = cell_counts(est, "seen", Binning())
    assert counts.pairs.shape[0] == 3 and (counts.pairs.sum(axis=1) == 3 * 190).all()  # 3 subtasks x C(20, 2)
    rows = summarize_percent(est, "subtask", "toy", "random_sampling", 15, BOOT, 0)
    assert [(r["split"], r["fraction"]) for r in rows] == [("seen", 0.4), ("unseen", 0.4)]
    assert rows[0]["k"] == pytest.approx((8 + 4 + 2) / 3)  # the mean size over the subtasks
    assert rows[0]["mdad_lower"] <= rows[0]["mdad"] <= rows[0]["mdad_upper"] and rows[0]["trials"] == 3
    assert rows[0]["error"] > 0 and -1 <= rows[0]["tau"] <= 1


def test_unknown_scope_is_refused():
    scores, subtasks = matrix()
    with pytest.raises(ValueError, match="scope must be one of"):
        run_percent_cell(scores, subtasks, "random_sampling", {}, 15, [0.1], 1, 0, "items", 20)
