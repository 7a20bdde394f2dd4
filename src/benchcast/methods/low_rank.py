"""A low-rank completion baseline (in place of the collaborative-filtering paper's UCBE-LRF, its
Table 5): the target answers a uniformly random core set; its other items are completed from the
source models' rank-``R`` item factors (:class:`benchcast.completion.rows.RowCompleter`), and the
estimate is the mean of its answers and the completed cells."""

from __future__ import annotations

from benchcast.completion.rows import RowCompleter
from benchcast.methods.base import UNIT, Method, check_budget, random_coreset, register
from benchcast.oracle import Oracle


@register("low_rank_completion")
class LowRankCompletion(Method):
    """Random core set + low-rank completion of the rest (``rank``; ridge ``lam``, ``None``: the
    source's residual variance per cell)."""

    scores = UNIT

    uses_coreset_stream = True

    def __init__(self, rank: int = 2, lam: float | None = None):
        self.rank, self.lam = int(rank), None if lam is None else float(lam)
        RowCompleter(self.rank, self.lam)  # checks the settings

    def params(self):
        return {"rank": self.rank, "lam": self.lam}

    def fit(self, source, budget, rng):
        check_budget(source, budget)
        self.coreset_ = random_coreset(source.shape[1], budget, rng)
        self.completer_ = RowCompleter(self.rank, self.lam).fit(source)
        self.n_items_ = source.shape[1]
        return self

    def estimate(self, oracle: Oracle, rng):
        answers = oracle.query(self.coreset_)
        rows = self.completer_.mean_[None, :].repeat(len(answers), axis=0)
        rows[:, self.coreset_] = answers
        return self.completer_.complete(rows, self.coreset_).mean(axis=1)
