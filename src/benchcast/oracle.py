"""The only door to a target model's results: item queries, paid for, capped at the budget."""

from __future__ import annotations

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
