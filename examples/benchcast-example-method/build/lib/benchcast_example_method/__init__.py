"""Random-Sampling ("misses the mark", eq. 8), written from the paper as an outside package would:
the mean of a model's scores on ``budget`` items drawn uniformly without replacement.

The method contract (docs: "Your method"): hyper-parameters in ``__init__`` (and ``params()``),
learned state set in ``fit`` from the source models only, every random choice from the ``rng``
benchcast passes, the target's scores only through ``oracle.query`` (which refuses more than the
budget), fitted state in arrays and numbers (so a fit can be stored without pickle).
"""

from __future__ import annotations

import numpy as np

from benchcast.methods import Method
from benchcast.oracle import Oracle


class UniformSample(Method):
    """Mean score on ``budget`` items drawn uniformly at random (an outside reimplementation)."""

    def fit(self, source: np.ndarray, budget: int, rng: np.random.Generator) -> UniformSample:
        n_items = source.shape[1]
        if not 1 <= budget < n_items:
            raise ValueError(f"budget {budget} must be between 1 and the {n_items - 1} items")
        self.items_ = np.sort(rng.choice(n_items, size=budget, replace=False))
        return self

    def estimate(self, oracle: Oracle, rng: np.random.Generator) -> np.ndarray:
        return oracle.query(self.items_).mean(axis=1)
