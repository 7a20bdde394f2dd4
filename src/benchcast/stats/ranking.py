"""Ranking metrics of estimated scores against true ones, per task (the collaborative-filtering
study's task-level metrics, Zhong, Yi & Ye, Section 5 and Appendix G): ranks among a pool of models,
NDCG@k, top-k recall, and the paper's six task-level metrics together."""

from __future__ import annotations

import numpy as np


def ranks_among(values: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """Each value's rank among the ``pool`` (e.g. the initial models' accuracies on a task): one plus
    the number of pool members strictly better (a tie shares the better rank)."""
    pool = np.sort(np.asarray(pool, dtype=np.float64))
    return 1 + len(pool) - np.searchsorted(pool, np.asarray(values, dtype=np.float64), side="right")


def ndcg_at_k(predicted: np.ndarray, truth: np.ndarray, k: int) -> float:
    """NDCG@k of ranking models by ``predicted``: gains are the true accuracies, discount
    ``1/log2(position + 1)``, normalised by the ideal ranking by ``truth``."""
    k = min(int(k), len(truth))
    discount = 1 / np.log2(np.arange(2, k + 2))
    order = np.argsort(-np.asarray(predicted, dtype=np.float64), kind="stable")[:k]
    ideal = np.sort(np.asarray(truth, dtype=np.float64))[::-1][:k]
    best = float(ideal @ discount)
    return float(np.asarray(truth)[order] @ discount) / best if best > 0 else 0.0


def topk_recall(predicted: np.ndarray, truth: np.ndarray, k: int) -> float:
    """Share of the true top-k models (by ``truth``) among the predicted top-k (ties broken by
    position)."""
    k = min(int(k), len(truth))
    top = set(np.argsort(-np.asarray(truth, dtype=np.float64), kind="stable")[:k].tolist())
    guess = set(np.argsort(-np.asarray(predicted, dtype=np.float64), kind="stable")[:k].tolist())
    return len(top & guess) / k


def task_metrics(estimate: np.ndarray, truth: np.ndarray, initial: np.ndarray, k: int = 10) -> dict[str, float]:
    """The paper's task-level metrics (Section 5, Appendix G), each averaged over tasks:

    - ``mae``: mean over new models of ``|p - p_hat|`` (accuracy, 0-1);
    - ``weighted_mae``: the same weighted by ``1 / r`` (``r`` the true rank among the initial
      models), weights normalised to sum to one per task -- strong models count most;
    - ``rank_mae`` / ``weighted_rank_mae``: the same for the rank among the initial models;
    - ``recall_at_k`` / ``ndcg_at_k``: the initial models (their true accuracies) and the new
      models (estimated) ranked together against the true ranking; NDCG's gains are the true
      accuracies.

    ``estimate``, ``truth``: (new models, tasks); ``initial``: (initial models, tasks)."""
    estimate, truth, initial = (np.asarray(a, dtype=np.float64) for a in (estimate, truth, initial))
    per_task = {name: [] for name in ("mae", "weighted_mae", "rank_mae", "weighted_rank_mae", "recall", "ndcg")}
    for t in range(truth.shape[1]):
        r_true = ranks_among(truth[:, t], initial[:, t])
        r_hat = ranks_among(estimate[:, t], initial[:, t])
        w = 1 / r_true
        w = w / w.sum()
        err, rank_err = np.abs(estimate[:, t] - truth[:, t]), np.abs(r_hat - r_true)
        per_task["mae"].append(err.mean())
        per_task["weighted_mae"].append(w @ err)
        per_task["rank_mae"].append(rank_err.mean())
        per_task["weighted_rank_mae"].append(w @ rank_err)
        pooled_truth = np.concatenate([initial[:, t], truth[:, t]])
        pooled_guess = np.concatenate([initial[:, t], estimate[:, t]])
        per_task["recall"].append(topk_recall(pooled_guess, pooled_truth, k))
        per_task["ndcg"].append(ndcg_at_k(pooled_guess, pooled_truth, k))
    out = {name: float(np.mean(v)) for name, v in per_task.items()}
    return {
        "mae": out["mae"],
        "weighted_mae": out["weighted_mae"],
        "rank_mae": out["rank_mae"],
        "weighted_rank_mae": out["weighted_rank_mae"],
        f"recall_at_{k}": out["recall"],
        f"ndcg_at_{k}": out["ndcg"],
    }
