"""Task-level evaluation, shared by the studies that estimate a model on every task of a benchmark
(the collaborative-filtering study, Zhong, Yi & Ye): per-task budgets, an oracle that enforces them,
a release-order split, and a registry method run task by task; the task-level metrics are
:mod:`benchcast.stats.ranking`'s.

A *task* is a group of a matrix's items (a subject, a scenario); ``tasks`` gives each item's task
as an integer ``0 .. n_tasks - 1``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from benchcast.methods import make_method
from benchcast.oracle import TaskOracle, TaskView


def task_budgets(task_sizes: Sequence[int], ratio: float, floor: int = 20) -> np.ndarray:
    """Items each task may spend (Appendix F): ``floor(ratio * |T_i|)``, at least ``floor`` items,
    and every item of a task with fewer. The paper does not say how ``ratio * |T_i|`` is rounded:
    down, in exact arithmetic (``floor(0.29 * 100)`` is 29, not the float's 28)."""
    if not 0 < ratio <= 1:
        raise ValueError(f"ratio must be in (0, 1], got {ratio}")
    sizes = np.asarray(task_sizes, dtype=np.int64)
    scaled = np.array([int(Fraction(str(ratio)) * int(n)) for n in sizes], dtype=np.int64)
    return np.minimum(sizes, np.maximum(scaled, floor))


@dataclass(frozen=True)
class ReleaseSplit:
    """Initial models (full results known) and new models, as row indices."""

    initial: np.ndarray
    new: np.ndarray
    kind: str  # "date" or "random"


def release_split(order: np.ndarray, initial_share: float = 0.75) -> ReleaseSplit:
    """The oldest ``round(initial_share * n)`` models are the initial ones (the paper's 3:1 split
    by release date). ``order``: a release key per model (a date, or an addition index); ties
    keep the matrix order."""
    order = np.asarray(order)
    n_initial = int(round(initial_share * len(order)))
    if not 1 < n_initial < len(order):
        raise ValueError(f"an initial share of {initial_share} leaves no initial or no new models of {len(order)}")
    ranked = np.argsort(order, kind="stable")
    return ReleaseSplit(np.sort(ranked[:n_initial]), np.sort(ranked[n_initial:]), "date")


def random_split(n_models: int, rng: np.random.Generator, initial_share: float = 0.75) -> ReleaseSplit:
    """The 3:1 split at random, where release dates are missing."""
    n_initial = int(round(initial_share * n_models))
    perm = rng.permutation(n_models)
    return ReleaseSplit(np.sort(perm[:n_initial]), np.sort(perm[n_initial:]), "random")


def run_per_task(
    method: str,
    params: dict | None,
    initial: np.ndarray,
    targets: np.ndarray,
    tasks: np.ndarray,
    budgets: np.ndarray,
    rng_for,
    prefits: dict | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Any item-level method of the registry at task level: per task, ``fit`` on the initial models'
    answers to its items with the task's budget and ``estimate`` every target through a
    :class:`TaskView` of one :class:`TaskOracle` (budgets enforced by construction). A task whose
    budget covers all its items is measured exactly. ``rng_for(task, stage)`` gives each task's
    ``fit`` / ``estimate`` generator; ``prefits[task]``, when given, is handed to a method with
    ``needs_prefit`` as ``fit(..., prefit=)`` (an IRT fit shared across budgets and methods).
    Returns the (targets, tasks) estimates and the items spent per target and task."""
    oracle = TaskOracle(targets, tasks, budgets)
    out = np.empty((len(targets), len(budgets)))
    for t, budget in enumerate(budgets):
        view, items = TaskView(oracle, t), np.flatnonzero(tasks == t)
        if budget >= len(items):
            out[:, t] = view.query(np.arange(len(items))).mean(axis=1)
            continue
        model = make_method(method, params)
        fit_kwargs = {"groups": np.zeros(len(items), dtype=np.int64)} if model.uses_item_groups else {}
        if prefits is not None and model.needs_prefit:
            fit_kwargs["prefit"] = prefits[t]
        model.fit(initial[:, items], int(budget), rng_for(t, "fit"), **fit_kwargs)
        out[:, t] = model.estimate(view, rng_for(t, "estimate"))
    return out, oracle.spent_per_task
