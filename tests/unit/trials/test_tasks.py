"""Task-level evaluation (benchcast.trials.tasks): budgets, the per-task oracle, splits and metrics on
hand-computed examples."""

import numpy as np
import pytest

from benchcast.data.task_matrix import task_index
from benchcast.errors import BudgetExceeded
from benchcast.oracle import TaskOracle, TaskView
from benchcast.stats.ranking import ndcg_at_k, ranks_among, task_metrics, topk_recall
from benchcast.trials.tasks import random_split, release_split, run_per_task, task_budgets


def test_budgets_follow_appendix_f():
    # 12 < 20: every item; 0.1 * 150 = 15 < 20: 20; 0.1 * 437 = 43.7: 43; 0.29 * 100 exactly 29
    assert task_budgets([12, 150, 437], 0.1).tolist() == [12, 20, 43]
    assert task_budgets([100], 0.29).tolist() == [29] and int(0.29 * 100) == 28
    assert task_budgets([500, 20], 0.5, floor=5).tolist() == [250, 10]
    assert task_budgets([150], 0.2).tolist() == [30]
    with pytest.raises(ValueError, match="ratio"):
        task_budgets([10], 0.0)


def test_task_index_keeps_the_order_of_first_appearance():
    tasks, names = task_index(["b", "b", "a", "c", "a"])
    assert tasks.tolist() == [0, 0, 1, 2, 1] and names == ["b", "a", "c"]


def test_task_oracle_enforces_each_tasks_budget():
    scores = np.arange(2 * 6).reshape(2, 6).astype(float)
    oracle = TaskOracle(scores, np.array([0, 0, 0, 1, 1, 1]), [2, 1])
    assert oracle.budget == 3
    assert oracle.query([0, 3]).tolist() == [[0.0, 3.0], [6.0, 9.0]]
    oracle.query([0, 1], rows=[1])  # item 0 again is free
    with pytest.raises(BudgetExceeded, match="items of task 1, its budget is 1"):
        oracle.query([4], rows=[0])
    with pytest.raises(BudgetExceeded, match="items of task 0"):
        oracle.query([2], rows=[1])
    assert oracle.spent_per_task.tolist() == [[1, 1], [2, 1]]
    oracle.query([1])  # target 0's second item of task 0
    with pytest.raises(BudgetExceeded, match="do not fit"):
        TaskOracle(scores, np.array([0, 0, 0, 1, 1, 1]), [4, 1])
    with pytest.raises(IndexError):
        oracle.query([6])


def test_release_split_keeps_the_oldest_three_quarters():
    split = release_split(np.array([5, 1, 3, 2, 8, 7, 4, 6]))
    assert split.initial.tolist() == [0, 1, 2, 3, 6, 7] and split.new.tolist() == [4, 5] and split.kind == "date"
    tied = release_split(np.zeros(4))
    assert tied.initial.tolist() == [0, 1, 2]  # ties keep the matrix order
    rand = random_split(8, np.random.default_rng(0))
    assert sorted([*rand.initial, *rand.new]) == list(range(8)) and len(rand.new) == 2 and rand.kind == "random"
    with pytest.raises(ValueError, match="leaves no"):
        release_split(np.arange(2))


def test_ranks_ndcg_and_recall_on_hand_computed_cases():
    pool = np.array([0.9, 0.7, 0.7, 0.5])
    assert ranks_among([0.95, 0.7, 0.6, 0.1], pool).tolist() == [1, 2, 4, 5]
    truth, guess = np.array([3.0, 2.0, 1.0]), np.array([1.0, 2.0, 3.0])  # exactly reversed
    # DCG@2 of the guess: 1/log2(2) + 2/log2(3); ideal 3 + 2/log2(3)
    assert ndcg_at_k(guess, truth, 2) == pytest.approx((1 + 2 / np.log2(3)) / (3 + 2 / np.log2(3)))
    assert ndcg_at_k(truth, truth, 3) == 1.0
    assert topk_recall(guess, truth, 2) == 0.5 and topk_recall(truth, truth, 2) == 1.0


def test_task_metrics_known_answers():
    initial = np.array([[0.9, 0.2], [0.5, 0.4], [0.1, 0.6]])
    truth = np.array([[0.8, 0.5], [0.3, 0.1]])  # ranks among the initial models: task 0: 2, 3; task 1: 2, 4
    estimate = np.array([[0.6, 0.5], [0.95, 0.3]])  # task 0: ranks 2, 1; task 1: 2, 3
    m = task_metrics(estimate, truth, initial, k=2)
    assert m["mae"] == pytest.approx(np.mean([(0.2 + 0.65) / 2, (0.0 + 0.2) / 2]))
    w0, w1 = np.array([1 / 2, 1 / 3]) / (1 / 2 + 1 / 3), np.array([1 / 2, 1 / 4]) / (1 / 2 + 1 / 4)
    assert m["weighted_mae"] == pytest.approx(np.mean([w0 @ [0.2, 0.65], w1 @ [0.0, 0.2]]))
    assert m["rank_mae"] == pytest.approx(np.mean([1.0, 0.5]))
    assert m["weighted_rank_mae"] == pytest.approx(np.mean([w0 @ [0, 2], w1 @ [0, 1]]))
    # task 0: truly 0.9 (initial) and 0.8 (new) on top, guessed 0.95 (new) and 0.9; task 1: both right
    assert m["recall_at_2"] == pytest.approx(np.mean([0.5, 1.0]))
    assert set(m) == {"mae", "weighted_mae", "rank_mae", "weighted_rank_mae", "recall_at_2", "ndcg_at_2"}


@pytest.mark.parametrize(
    "method, params",
    [
        ("random_sampling", {}),
        ("anchor_points_weighted", {}),
        ("tinybenchmarks", {"irt": {"dims": 2}}),
        ("aipw", {}),
        ("clustering", {"n_init": 2}),
        ("sort_and_search", {"estimator": "threshold"}),
        ("sort_and_search", {"estimator": "count"}),
        ("low_rank_completion", {}),
        ("random_sampling_learn", {}),
        ("lasso", {"n_alphas": 20}),
        ("pca", {"k_grid": [2]}),
        ("random_search_learn", {"num_search": 50}),
        ("double_optimize", {"max_steps": 50}),
        ("anchor_points_predictor", {}),
        ("p_irt", {"irt": {"dims": 2}}),
        ("gp_irt", {"irt": {"dims": 2}}),
        ("tailoredbench", {}),
        ("stratified_confidence", {}),
    ],
)
def test_any_item_level_method_runs_per_task_spending_each_budget_exactly(method, params):
    rng = np.random.default_rng(4)
    ability = rng.normal(size=(60, 1))
    tasks = np.repeat([0, 1, 2], [40, 30, 12])
    scores = (rng.random((60, 82)) < 1 / (1 + np.exp(rng.normal(size=82) - ability))).astype(float)
    budgets = task_budgets(np.bincount(tasks), 0.25, floor=15)  # 15, 15 and all 12 of the last task
    est, spent = run_per_task(
        method, params, scores[:45], scores[45:], tasks, budgets, lambda t, stage: np.random.default_rng(t)
    )
    assert est.shape == (15, 3) and (spent <= budgets).all() and (spent[:, 2] == 12).all()
    if method != "lasso":  # Lasso keeps the path's last point with at most n items: it may spend fewer
        assert (spent == budgets).all()
    assert np.allclose(est[:, 2], scores[45:, 70:].mean(axis=1))  # the whole task: exact
    truth = np.stack([scores[45:, tasks == t].mean(axis=1) for t in range(3)], axis=1)
    assert np.abs(est - truth).mean() < 0.2


def test_task_view_refuses_items_outside_its_task():
    oracle = TaskOracle(np.ones((1, 5)), np.array([0, 0, 1, 1, 1]), [1, 2])
    view = TaskView(oracle, 1)
    assert view.n_items == 3 and view.budget == 2
    view.query([0, 2])
    assert oracle.spent_per_task.tolist() == [[0, 2]] and view.spent.tolist() == [2]
    with pytest.raises(BudgetExceeded):
        view.query([1])
    with pytest.raises(IndexError):
        view.query([3])
