"""Random-Sampling, Random-Sampling-Learn and Random-Search-Learn ("misses the mark", Sec. 3.2, App. A.2)."""

from __future__ import annotations

import numpy as np

from benchcast.methods.base import Method, check_budget, random_coreset, register
from benchcast.methods.ridge import DEFAULT_ALPHAS, RidgeModel, ridge_cv_fit
from benchcast.oracle import Oracle


@register("random_sampling")
class RandomSampling(Method):
    """Mean score on a uniformly random core set of ``n`` items (eq. 8)."""

    uses_coreset_stream = True

    def fit(self, source, budget, rng):
        check_budget(source, budget)
        self.coreset_ = random_coreset(source.shape[1], budget, rng)
        return self

    def estimate(self, oracle: Oracle, rng):
        return oracle.query(self.coreset_).mean(axis=1)


@register("random_sampling_learn")
class RandomSamplingLearn(Method):
    """Ridge regression from the random core set's scores to the full mean (eqs. 14-15).

    The ridge is scikit-learn's ``RidgeCV()`` as in the paper's code: alphas (0.1, 1, 10)
    chosen by leave-one-out over source models (``alphas`` is configurable).
    """

    uses_coreset_stream = True

    def __init__(self, alphas=DEFAULT_ALPHAS):
        self.alphas = tuple(float(a) for a in alphas)

    def params(self):
        return {"alphas": list(self.alphas)}

    def fit(self, source, budget, rng):
        check_budget(source, budget)
        self.coreset_ = random_coreset(source.shape[1], budget, rng)
        self.model_ = ridge_cv_fit(source[:, self.coreset_], source.mean(axis=1), self.alphas)
        return self

    def estimate(self, oracle, rng):
        return self.model_.predict(oracle.query(self.coreset_))[0]


@register("random_search_learn")
class RandomSearchLearn(Method):
    """Random-Sampling-Learn repeated over ``num_search`` random subsets; keep the best by validation (App. A.2).

    As in the paper's code: source models are split once (per trial) into 75% training and
    25% validation models; for each candidate subset a ``RidgeCV`` is fit on the training
    models and scored by the mean absolute error of the full-mean prediction on the
    validation models; the best subset is refit on all source models. Candidates are
    evaluated ``batch_size`` at a time with the batched closed-form ridge, not one
    scikit-learn fit each. ``num_search`` defaults to the paper's 10,000.
    """

    def __init__(self, num_search: int = 10_000, train_fraction: float = 0.75, batch_size: int = 256,
                 alphas=DEFAULT_ALPHAS):
        self.num_search = int(num_search)
        self.train_fraction = float(train_fraction)
        self.batch_size = int(batch_size)
        self.alphas = tuple(float(a) for a in alphas)

    def params(self):
        return {"num_search": self.num_search, "train_fraction": self.train_fraction, "alphas": list(self.alphas)}

    def fit(self, source, budget, rng):
        check_budget(source, budget)
        n_models, n_items = source.shape
        order = rng.permutation(n_models)
        n_train = int(n_models * self.train_fraction)
        train, val = order[:n_train], order[n_train:]
        y = source.mean(axis=1)
        # Draw all candidates up front so the result does not depend on batch_size.
        candidates = np.stack([rng.permutation(n_items)[:budget] for _ in range(self.num_search)])
        S_train, S_val = source[train], source[val]
        best_gap, best_idx = np.inf, 0
        for start in range(0, self.num_search, self.batch_size):
            cand = candidates[start:start + self.batch_size]
            X = S_train[:, cand].transpose(1, 0, 2)           # (B, n_train, budget)
            model = ridge_cv_fit(X, np.broadcast_to(y[train], (len(cand), n_train)), self.alphas)
            Xv = S_val[:, cand].transpose(1, 0, 2)             # (B, n_val, budget)
            gaps = np.abs(model.predict(Xv) - y[val][None, :]).mean(axis=1)
            b = int(np.argmin(gaps))
            if gaps[b] < best_gap:                             # strict: earliest candidate wins ties
                best_gap, best_idx = float(gaps[b]), start + b
        self.coreset_ = candidates[best_idx]
        self.best_validation_gap_ = best_gap
        self.model_: RidgeModel = ridge_cv_fit(source[:, self.coreset_], y, self.alphas)
        return self

    def estimate(self, oracle, rng):
        return self.model_.predict(oracle.query(self.coreset_))[0]
