"""Sort & Search (Prabhu et al., "Lifelong Benchmarks: Efficient Model Evaluation in an Era of
Rapid Progress", 2024), as its released code (``bethgelab/sort-and-search``,
``src/sort_and_search.py``) computes it; the code made the published numbers, so it is followed
where it is more specific than the text:

- **Sort**: items by descending number of source models answering them correctly (the code's
  default ``sum`` ranking; its ``recursive_sum`` refinement reads the evaluated models' answers
  and is not implemented). The code leaves ties to NumPy's unstable sort; here they keep the
  item order (a stable sort), so the order is reproducible.
- **Search**: the model answers ``n`` items at evenly spaced positions of the sorted order (the
  code's ``uniform_sampling``): step ``s = N // n``, first position ``s // 2`` when ``n`` divides
  ``N``, else ``N - s n``; positions ``start + k s``.
- **Estimate**: a threshold position ``T`` in the sorted order; every item before ``T`` is
  predicted correct, the rest wrong, so the accuracy estimate is ``T / N`` (the sampled answers
  are not put back, as in the code). Two estimators (``estimator``):

  - ``threshold`` -- the code's dynamic-programming threshold (its ``*_sample`` results): ``T``
    is the sampled position ``S[k*]`` where the running sum of the answers coded ``+1 / -1``
    peaks (the first peak); it minimises the sampled answers' Hamming error of a step
    prediction;
  - ``count`` -- the code's count-based threshold (its ``*_global`` results): ``T = S[min(k,
    n - 1)]`` with ``k`` the number of correct sampled answers.

  Both keep the code's strict ``j < T``: the item at the threshold is predicted wrong, and a
  model that misses every sampled item is still estimated at ``S[0] / N``.
"""

from __future__ import annotations

import numpy as np

from benchcast.data.item_level import is_binary
from benchcast.methods.base import Method, check_budget, check_scores, register
from benchcast.oracle import Oracle

ESTIMATORS = ("threshold", "count")


def uniform_positions(n_items: int, budget: int) -> np.ndarray:
    """The released code's ``uniform_sampling``: ``budget`` evenly spaced positions."""
    step = n_items // budget
    start = step // 2 if n_items == step * budget else n_items - step * budget
    return start + step * np.arange(budget)


def threshold_index(answers: np.ndarray) -> np.ndarray:
    """Per row of 0/1 ``answers`` (in sorted order), the first argmax of the running sum of
    ``2 a - 1``: the dynamic-programming threshold."""
    return np.argmax(np.cumsum(2 * np.asarray(answers, dtype=np.int64) - 1, axis=1), axis=1)


@register("sort_and_search")
class SortAndSearch(Method):
    """Items sorted by difficulty on the source models, a threshold found from ``n`` evenly
    spaced answers (module docstring; ``estimator``: ``threshold`` or ``count``)."""

    deterministic_fit = True

    def __init__(self, estimator: str = "threshold"):
        if estimator not in ESTIMATORS:
            raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
        self.estimator = estimator

    def params(self):
        return {"estimator": self.estimator}

    def fit(self, source, budget, rng):
        check_budget(source, budget)
        check_scores(self.name, is_binary(source), "the source matrix")  # a right-then-wrong order
        correct = np.asarray(source, dtype=np.float64).sum(axis=0)
        self.order_ = np.argsort(-correct, kind="stable")
        self.positions_ = uniform_positions(source.shape[1], budget)
        return self

    def estimate(self, oracle: Oracle, rng):
        answers = oracle.query(self.order_[self.positions_])
        if self.estimator == "threshold":
            k = threshold_index(answers)
        else:
            k = np.minimum(np.rint(answers.sum(axis=1)).astype(np.int64), len(self.positions_) - 1)
        return self.positions_[k] / len(self.order_)
