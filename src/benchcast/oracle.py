"""The only door to a target model's results: item queries, paid for, capped at the budget."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from benchcast.errors import BudgetExceeded


class Oracle:
    """Answers item queries for a batch of target models and refuses past ``budget`` distinct items.

    ``query(items)`` asks every target for the same items (static core sets);
    ``query(items, rows=...)`` asks only some targets (adaptive methods). Re-asking an item
    a target has already answered is free: the budget counts distinct items per target.
    """

    def __init__(self, scores: np.ndarray, budget: int):
        if scores.ndim != 2:
            raise ValueError("oracle scores must be (targets, items)")
        n_items = scores.shape[1]
        if budget > n_items:
            raise BudgetExceeded(
                f"budget n={budget} exceeds the benchmark's {n_items} items; fix: choose n <= number of items"
            )
        self._scores = scores
        self.budget = int(budget)
        self._seen = np.zeros(scores.shape, dtype=bool)

    @property
    def n_targets(self) -> int:
        return self._scores.shape[0]

    @property
    def n_items(self) -> int:
        return self._scores.shape[1]

    @property
    def answered(self) -> np.ndarray:
        """Which items each target has answered so far (a copy: targets x items, bool)."""
        return self._seen.copy()

    @property
    def spent(self) -> np.ndarray:
        """Distinct items answered so far, per target."""
        return self._seen.sum(axis=1)

    def query(self, items, rows=None) -> np.ndarray:
        items = np.asarray(items, dtype=np.int64)
        if items.ndim != 1:
            raise ValueError("items must be a 1-D array of item indices")
        if items.size and (items.min() < 0 or items.max() >= self.n_items):
            raise IndexError(f"item index out of range [0, {self.n_items})")
        rows = np.arange(self.n_targets) if rows is None else np.asarray(rows, dtype=np.int64)
        seen = self._seen[rows].copy()
        seen[:, items] = True
        over = seen.sum(axis=1) > self.budget
        if over.any():
            raise BudgetExceeded(
                f"target row {int(rows[over][0])} would see {int(seen[over][0].sum())} distinct items, "
                f"budget is {self.budget}"
            )
        self._seen[rows] = seen
        return self._scores[np.ix_(rows, items)].copy()


class TaskOracle(Oracle):
    """An :class:`~benchcast.oracle.Oracle` whose budget is per task: a target may see at most
    ``budgets[t]`` distinct items of task ``t`` (the overall budget is their sum)."""

    def __init__(self, scores: np.ndarray, tasks: np.ndarray, budgets: Sequence[int]):
        tasks = np.asarray(tasks, dtype=np.int64)
        budgets = np.asarray(budgets, dtype=np.int64)
        if tasks.shape != (scores.shape[1],):
            raise ValueError(f"tasks has {tasks.shape} labels for {scores.shape[1]} items")
        sizes = np.bincount(tasks, minlength=len(budgets))
        if len(sizes) != len(budgets) or (budgets > sizes).any() or (budgets < 0).any():
            raise BudgetExceeded(f"task budgets {budgets.tolist()} do not fit the task sizes {sizes.tolist()}")
        super().__init__(scores, int(budgets.sum()))
        self.tasks, self.budgets = tasks, budgets
        self._onehot = np.zeros((len(tasks), len(budgets)), dtype=np.int64)
        self._onehot[np.arange(len(tasks)), tasks] = 1

    @property
    def spent_per_task(self) -> np.ndarray:
        """Distinct items answered so far, per target and task."""
        return self._seen.astype(np.int64) @ self._onehot

    def query(self, items, rows=None) -> np.ndarray:
        items = np.asarray(items, dtype=np.int64)
        rows_idx = np.arange(self.n_targets) if rows is None else np.asarray(rows, dtype=np.int64)
        if items.ndim == 1 and items.size and items.min() >= 0 and items.max() < self.n_items:
            seen = self._seen[rows_idx].copy()
            seen[:, items] = True
            over = seen.astype(np.int64) @ self._onehot > self.budgets
            if over.any():
                r, t = np.argwhere(over)[0]
                raise BudgetExceeded(
                    f"target row {int(rows_idx[r])} would see {int((seen[r] & (self.tasks == t)).sum())} distinct "
                    f"items of task {int(t)}, its budget is {int(self.budgets[t])}"
                )
        return super().query(items, rows)


class TaskView:
    """The :class:`~benchcast.oracle.Oracle` interface onto one task of a :class:`TaskOracle`: an
    item-level method queries the task's items by their position in the task, and the task oracle
    counts them against the task's budget."""

    def __init__(self, oracle: TaskOracle, task: int):
        self._oracle, self._task = oracle, task
        self._items = np.flatnonzero(oracle.tasks == task)
        self.budget = int(oracle.budgets[task])

    @property
    def n_targets(self) -> int:
        return self._oracle.n_targets

    @property
    def n_items(self) -> int:
        return len(self._items)

    @property
    def answered(self) -> np.ndarray:
        """Which items each target has answered so far (a copy: targets x items, bool)."""
        return self._seen.copy()

    @property
    def spent(self) -> np.ndarray:
        return self._oracle.spent_per_task[:, self._task]

    def query(self, items, rows=None) -> np.ndarray:
        items = np.asarray(items, dtype=np.int64)
        if items.size and (items.min() < 0 or items.max() >= len(self._items)):
            raise IndexError(f"item index out of range [0, {len(self._items)})")
        return self._oracle.query(self._items[items], rows)
