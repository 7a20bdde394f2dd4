"""Sort & Search (both estimators of its released code) and the low-rank completion baseline on
hand-computed and constructed cases."""

import numpy as np
import pytest

from benchcast.completion.rows import RowCompleter
from benchcast.methods import make_method
from benchcast.methods.sort_and_search import threshold_index, uniform_positions
from benchcast.oracle import Oracle


def test_uniform_positions_follow_the_released_code():
    assert uniform_positions(100, 10).tolist() == list(range(5, 100, 10))  # divides: midpoints
    assert uniform_positions(103, 10).tolist() == list(range(3, 103, 10))  # else the remainder first
    assert uniform_positions(10, 10).tolist() == list(range(10))


def test_threshold_is_the_first_peak_of_the_signed_running_sum():
    answers = np.array([[1, 1, 0, 1, 0, 0], [0, 0, 0, 0, 0, 0], [1, 0, 1, 0, 1, 1], [1, 1, 1, 1, 1, 1]])
    # running sums: 1 2 1 2 1 0 | -1 .. -6 | 1 0 1 0 1 2 | 1 .. 6
    assert threshold_index(answers).tolist() == [1, 0, 5, 5]


def guttman(n_models=40, n_items=200):
    """Model i answers exactly the easiest ``i * 5`` items (items in scrambled order)."""
    perm = np.random.default_rng(0).permutation(n_items)
    easy_first = (np.arange(n_items)[None, :] < 5 * np.arange(n_models)[:, None]).astype(float)
    return easy_first[:, np.argsort(perm)]


@pytest.mark.parametrize("estimator", ["threshold", "count"])
def test_sort_and_search_recovers_a_perfectly_sorted_benchmark(estimator):
    scores = guttman()
    source, targets = scores[0::2], scores[1:-1:2]  # targets inside the source's range of ability
    method = make_method("sort_and_search", {"estimator": estimator}).fit(source, 20, None)
    est = method.estimate(Oracle(targets, 20), None)
    truth = targets.mean(axis=1)
    # within one step of 10 positions (the source ties items in blocks of 10, ordered by index)
    assert np.abs(est - truth).max() <= 10 / 200 + 1e-12
    assert np.abs(est - truth).mean() < 0.03


def test_sort_and_search_estimators_differ_where_the_code_does():
    source = guttman()[:30]
    oracle_scores = np.zeros((1, 200))
    order = make_method("sort_and_search").fit(source, 4, None).order_
    positions = uniform_positions(200, 4)  # 25, 75, 125, 175
    oracle_scores[0, order[positions[[0, 2]]]] = 1  # right, wrong, right, wrong: running sum 1 0 1 0
    dp = make_method("sort_and_search", {"estimator": "threshold"}).fit(source, 4, None)
    count = make_method("sort_and_search", {"estimator": "count"}).fit(source, 4, None)
    assert dp.estimate(Oracle(oracle_scores, 4), None)[0] == 25 / 200  # first peak at sample 0
    assert count.estimate(Oracle(oracle_scores, 4), None)[0] == 125 / 200  # two right: S[2]


def test_row_completer_recovers_an_exact_low_rank_row():
    rng = np.random.default_rng(3)
    source = rng.normal(size=(50, 2)) @ rng.normal(size=(2, 30)) + rng.normal(size=30)
    u = rng.normal(size=(3, 2))
    completer = RowCompleter(rank=2, lam=0.0, clip=None).fit(source)
    new = completer.mean_ + u @ completer.factors_.T
    observed = np.array([0, 4, 7, 11, 20])
    rows = np.where(np.isin(np.arange(30), observed), new, 99.0)
    out = completer.complete(rows, observed)
    assert np.allclose(out, new)
    assert completer.lam_ == 0.0 and RowCompleter(rank=2).fit(source).lam_ == pytest.approx(0.0, abs=1e-20)


def test_row_completer_keeps_observed_cells_clips_and_shrinks_towards_the_mean():
    rng = np.random.default_rng(4)
    source = (rng.random((60, 40)) < 0.5).astype(float)
    completer = RowCompleter(rank=3).fit(source)
    assert completer.lam_ > 0
    rows = np.ones((2, 40))
    out = completer.complete(rows, np.arange(5))
    assert (out[:, :5] == 1).all() and (out >= 0).all() and (out <= 1).all()
    with pytest.raises(ValueError, match="fully observed"):
        RowCompleter().fit(np.where(source > 0, source, np.nan))


def test_low_rank_completion_estimate_mixes_answers_and_completed_cells():
    rng = np.random.default_rng(5)
    ability = rng.normal(size=(80, 1))
    scores = (rng.random((80, 120)) < 1 / (1 + np.exp(rng.normal(size=120) - ability))).astype(float)
    method = make_method("low_rank_completion", {"rank": 2}).fit(scores[:60], 30, np.random.default_rng(0))
    est = method.estimate(Oracle(scores[60:], 30), None)
    rows = np.tile(method.completer_.mean_, (20, 1))
    rows[:, method.coreset_] = scores[60:, method.coreset_]
    assert np.allclose(est, method.completer_.complete(rows, method.coreset_).mean(axis=1))
    assert (
        np.abs(est - scores[60:].mean(axis=1)).mean()
        < np.abs(scores[60:, method.coreset_].mean(axis=1) - scores[60:].mean(axis=1)).mean() + 0.02
    )
