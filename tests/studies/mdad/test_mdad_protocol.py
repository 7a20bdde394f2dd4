"""The MDAD trial protocol (benchcast.studies.mdad.protocol) on small generated matrices."""

import numpy as np
import pandas as pd
import pytest
from helpers import FAST
from threadpoolctl import threadpool_limits

from benchcast.methods import REGISTRY
from benchcast.studies.mdad.protocol import draw_trial, halves, run_cell, trial_metrics


def test_halves_split_every_subtask_at_floor_half():
    subtasks = np.array(["b"] * 5 + ["a"] * 4 + ["c"] * 1)
    seen, unseen = halves(subtasks, np.random.default_rng(0))
    assert sorted(np.concatenate([seen, unseen]).tolist()) == list(range(10))
    assert [list(subtasks[seen]).count(s) for s in "bac"] == [2, 2, 0]
    assert [list(subtasks[unseen]).count(s) for s in "bac"] == [3, 2, 1]
    assert list(dict.fromkeys(subtasks[seen])) == ["b", "a"]  # subtask by subtask, in order of appearance


def test_trials_are_disjoint_seeded_and_redrawn_per_source_count():
    subtasks = np.zeros(40, int)
    t = draw_trial(100, subtasks, 30, 50, trial=3, base_seed=0)
    assert len(t.targets) == 50 and len(t.sources) == 30
    assert not set(t.targets) & set(t.sources)
    assert len(t.seen) == len(t.unseen) == 20 and not set(t.seen) & set(t.unseen)
    again = draw_trial(100, subtasks, 30, 50, trial=3, base_seed=0)
    assert np.array_equal(t.targets, again.targets) and np.array_equal(t.seen, again.seen)
    other = draw_trial(100, subtasks, 40, 50, trial=3, base_seed=0)
    assert not np.array_equal(t.targets, other.targets)  # not nested: redrawn for each source count
    with pytest.raises(ValueError, match="lower n_source"):
        draw_trial(100, subtasks, 51, 50, trial=0, base_seed=0)


def test_random_cell_estimates_the_seen_half_within_budget():
    rng = np.random.default_rng(1)
    scores = (rng.random((90, 60)) < rng.random((90, 1))).astype(float)
    subtasks = np.repeat(["x", "y"], 30)
    est, timing = run_cell(scores, subtasks, "random_sampling", {}, n_source=20, sizes=[7, 3], trials=4, base_seed=0)
    assert len(est) == 4 * 2 * 50 and len(timing) == 4 * 2
    assert (est.items_queried == est.k).all()
    est = est[est.k == 7]
    assert (est.n_seen == 30).all() and (est.n_unseen == 30).all()
    for t, g in est.groupby("trial"):
        trial = draw_trial(90, subtasks, 20, 50, int(t), 0)
        assert np.array_equal(g.model_idx, trial.targets)
        assert np.array_equal(g.seen_correct, scores[np.ix_(trial.targets, trial.seen)].sum(axis=1))
        # every estimate is a mean over the same 7 seen items: a multiple of 1/7
        assert np.allclose(g.estimate * 7, np.round(g.estimate * 7))
    again, _ = run_cell(scores, subtasks, "random_sampling", {}, n_source=20, sizes=[7], trials=4, base_seed=0)
    pd.testing.assert_frame_equal(est.reset_index(drop=True), again)  # a size's draws do not depend on the others


def test_trial_metrics_known_answer():
    est = pd.DataFrame(
        {
            "trial": [0, 0, 0],
            "estimate": [0.5, 0.2, 0.1],
            "seen_correct": [4, 3, 1],
            "unseen_correct": [1, 2, 3],
            "n_seen": [10, 10, 10],
            "n_unseen": [10, 10, 10],
        }
    )
    m = trial_metrics(est).set_index("split")
    assert m.loc["seen", "error"] == pytest.approx((0.1 + 0.1 + 0.0) / 3)
    assert m.loc["seen", "tau"] == pytest.approx(1.0)
    assert m.loc["unseen", "tau"] == pytest.approx(-1.0)


@pytest.mark.parametrize("method", sorted(REGISTRY))
def test_every_registry_method_runs_in_the_protocol_within_budget(method):
    """The cross-paper use (issue: MDAD for every item-level method): any registry method is a selector."""

    rng = np.random.default_rng(2)
    scores = (rng.random((70, 60)) < rng.uniform(0.2, 0.8, (70, 1))).astype(float)
    subtasks = np.repeat(["x", "y", "z"], 20)
    params = {
        **FAST.get(method, {}),
        **({"irt": {"dims": 2}} if method in ("p_irt", "gp_irt", "tinybenchmarks") else {}),
    }
    with threadpool_limits(1):
        est, _ = run_cell(
            scores, subtasks, method, params, n_source=15, sizes=[6, 12], trials=2, base_seed=0, n_targets=20
        )
        again, _ = run_cell(
            scores, subtasks, method, params, n_source=15, sizes=[6, 12], trials=2, base_seed=0, n_targets=20
        )
    assert (est.items_queried <= est.k).all() and np.isfinite(est.estimate).all()
    assert len(est) == 2 * 2 * 20
    pd.testing.assert_frame_equal(est, again)
