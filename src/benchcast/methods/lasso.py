"""Lasso with sparsity equal to the budget ("misses the mark", eqs. 16-17)."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import lasso_path

from benchcast.errors import ConfigError
from benchcast.methods.base import Method, check_budget, register


@register("lasso")
class LassoMethod(Method):
    """Lasso from all item scores to the full mean, with at most ``n`` non-zero weights.

    Follows the paper's code: over ``alphas = logspace(-4, 1, 1000)`` (ascending) keep the
    fit whose number of non-zero weights is ``<= n`` and closest to ``n``, stopping at the
    first exact match; the items with non-zero weight are the core set. The whole path is
    computed at once by ``sklearn.linear_model.lasso_path`` (coordinate descent, warm
    starts), on centered data: the same model as ``Lasso(alpha, fit_intercept=True)``.
    ``max_iter`` and ``tol`` are scikit-learn's coordinate-descent settings (paper code:
    ``max_iter=10000``, default tol).
    """

    deterministic_fit = True

    def __init__(self, alpha_min: float = 1e-4, alpha_max: float = 10.0, n_alphas: int = 1000,
                 max_iter: int = 10_000, tol: float = 1e-4):
        self.alpha_min, self.alpha_max, self.n_alphas = float(alpha_min), float(alpha_max), int(n_alphas)
        self.max_iter, self.tol = int(max_iter), float(tol)

    def params(self):
        return {"alpha_min": self.alpha_min, "alpha_max": self.alpha_max, "n_alphas": self.n_alphas,
                "max_iter": self.max_iter, "tol": self.tol}

    def fit(self, source, budget, rng):
        check_budget(source, budget)
        y = source.mean(axis=1)
        x_mean, y_mean = source.mean(axis=0), y.mean()
        Xc = np.asfortranarray(source - x_mean)
        alphas_desc = np.logspace(np.log10(self.alpha_max), np.log10(self.alpha_min), self.n_alphas)
        _, coefs, _ = lasso_path(Xc, y - y_mean, alphas=alphas_desc, max_iter=self.max_iter, tol=self.tol)
        coefs = coefs[:, ::-1]                               # ascending alphas, as the paper loops
        nnz = (coefs != 0).sum(axis=0)
        ok = nnz <= budget
        if not ok.any():
            raise ConfigError(f"lasso: no alpha in [{self.alpha_min}, {self.alpha_max}] gives <= {budget} non-zero "
                              "weights. Fix: raise the method's alpha_max")
        diff = np.where(ok, budget - nnz, np.iinfo(np.int64).max)
        exact = np.flatnonzero(diff == 0)
        k = int(exact[0]) if exact.size else int(np.argmin(diff))
        coef = coefs[:, k]
        self.alpha_ = float(alphas_desc[::-1][k])
        self.coreset_ = np.flatnonzero(coef != 0)
        self.coef_ = coef[self.coreset_]
        self.intercept_ = float(y_mean - x_mean @ coef)
        return self

    def estimate(self, oracle, rng):
        if self.coreset_.size == 0:
            return np.full(oracle.n_targets, self.intercept_)
        return oracle.query(self.coreset_) @ self.coef_ + self.intercept_
