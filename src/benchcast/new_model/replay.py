"""A new model's answers as an :class:`~benchcast.oracle.Oracle`, replayed.

A method estimates a new model exactly as it estimates a target in the workflow's trials: its
``estimate(oracle, rng)`` asks the oracle for items. Here the oracle holds the answers the user has
so far; when the method asks for an item without an answer, the oracle stops it with
:class:`NeedAnswers` carrying the items of that request that are still unanswered -- the next batch
to run. With every asked item answered the method runs to the end and returns its estimate.
Because the estimate's random stream is re-created for every replay, each replay asks the same
items in the same order, so an adaptive method (TailoredBench's G-set, then its tailored N-set)
resumes where the last batch ended; and the estimate equals the trial runner's for the same fit.
"""

from __future__ import annotations

import numpy as np

from benchcast.oracle import Oracle


class NeedAnswers(Exception):
    """The method asked for items the user has not answered yet (``items``: item indices, in the
    order asked)."""

    def __init__(self, items: np.ndarray, requested: list[int]):
        self.items = items
        self.requested = requested  # every item of the request, answered or not
        super().__init__(f"{len(items)} items need answers")


class ReplayOracle(Oracle):
    """One target whose answers are known for some items (``answers``: item index -> score)."""

    def __init__(self, n_items: int, budget: int, answers: dict[int, float]):
        scores = np.full((1, n_items), np.nan)
        if answers:
            scores[0, list(answers)] = list(answers.values())
        super().__init__(scores, budget)
        self.asked: list[int] = []  # distinct items, in the order first asked

    def query(self, items, rows=None) -> np.ndarray:
        items = np.asarray(items, dtype=np.int64)
        if rows is not None and not np.array_equal(np.unique(np.asarray(rows)), [0]):
            raise IndexError("a new model is target row 0 only")
        if items.size and (items.min() < 0 or items.max() >= self.n_items):
            raise IndexError(f"item index out of range [0, {self.n_items})")
        seen = self._seen[0].copy()
        seen[items] = True
        if seen.sum() <= self.budget:  # past the budget, the parent raises BudgetExceeded
            new = [int(i) for i in dict.fromkeys(items.tolist()) if not self._seen[0, i]]
            missing = [i for i in new if np.isnan(self._scores[0, i])]
            if missing:
                raise NeedAnswers(np.asarray(missing, dtype=np.int64), new)
            self.asked.extend(new)
        return super().query(items, rows)


def replay(method, n_items: int, budget: int, answers: dict[int, float], rng_factory):
    """Run ``method.estimate`` on the answers: ``(estimate, selected, None)`` when it finishes, or
    ``(None, selected, next_items)`` when it needs more answers; ``selected``: every item asked so
    far, the unanswered request included. ``rng_factory()`` makes the estimate's random generator
    afresh for each replay."""
    oracle = ReplayOracle(n_items, budget, answers)
    try:
        est = np.asarray(method.estimate(oracle, rng_factory()), dtype=np.float64)
    except NeedAnswers as need:
        return None, oracle.asked + need.requested, need.items
    if est.shape != (1,):
        raise RuntimeError(f"{method.name} returned shape {est.shape} for one model")
    return float(est[0]), oracle.asked, None
