"""PCA imputation ("misses the mark", App. A.2, Algorithm 1)."""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigh

from benchcast.methods.base import Method, check_budget, random_coreset, register


def pca_impute(matrix: np.ndarray, missing: np.ndarray, k: int, max_iter: int = 100, tol: float = 1e-4) -> np.ndarray:
    """Algorithm 1: iterative rank-``k`` PCA imputation of the ``missing`` entries.

    Start from column means of the observed entries; repeat: centre, project on the top
    ``k`` principal components, reconstruct; stop when the norm of the change at missing
    entries is below ``tol``, else overwrite the missing entries with the reconstruction.
    This is exactly what the paper's code does with ``sklearn.decomposition.PCA`` in a loop.

    The PCA is computed from the Gram matrix of the rows: rows without missing entries
    never change, so their block of ``F Fᵀ`` is computed once and each iteration only
    updates the rows that have missing entries -- the same numbers, a fraction of the cost.
    """
    F = np.array(matrix, dtype=np.float64)
    missing = np.asarray(missing, dtype=bool)
    obs_count = (~missing).sum(axis=0)
    col_mean = np.where(obs_count > 0, np.where(missing, 0.0, F).sum(axis=0) / np.maximum(obs_count, 1), 0.0)
    F[missing] = np.broadcast_to(col_mean, F.shape)[missing]
    inc = np.flatnonzero(missing.any(axis=1))         # rows that get imputed
    com = np.flatnonzero(~missing.any(axis=1))
    R = F.shape[0]
    k = min(k, R - 1, F.shape[1])
    order = np.concatenate([com, inc])                 # complete rows first
    F = F[order]
    miss = missing[order]
    n_com = len(com)
    G = np.empty((R, R))
    G[:n_com, :n_com] = F[:n_com] @ F[:n_com].T
    for _ in range(max_iter):
        G[n_com:, :] = F[n_com:] @ F.T
        G[:n_com, n_com:] = G[n_com:, :n_com].T
        mu = F.mean(axis=0)
        Fmu = F @ mu
        Gc = G - Fmu[:, None] - Fmu[None, :] + mu @ mu
        w, U = eigh(Gc, subset_by_index=[R - k, R - 1])
        keep = w > max(w.max(), 0.0) * 1e-12
        w, U = w[keep], U[:, keep]
        # Reconstruction of the incomplete rows: Xc_I V Vᵀ with V = Xcᵀ U Λ^{-1/2}.
        P = (Gc[n_com:] @ U) / w                       # (|I|, k)
        recon = P @ (U.T @ (F - mu)) + mu              # (|I|, N)
        m = miss[n_com:]
        diff = recon[m] - F[n_com:][m]
        if np.linalg.norm(diff) < tol:
            break
        block = F[n_com:]
        block[m] = recon[m]
        F[n_com:] = block
    out = np.empty_like(F)
    out[order] = F
    return out


@register("pca")
class PCAImpute(Method):
    """Impute the target rows of ``[sources; targets-on-core-set]`` by rank-k PCA (Algorithm 1).

    The core set is the trial's shared random sample. ``k`` is chosen from ``k_grid``
    (paper: {2, 5, 10, 20}) by cross-validation: a random ``cv_fraction`` of the source
    models are masked outside the core set, imputed, and scored by the mean absolute error
    of their imputed full means. (The paper's released code intends this, but its masking
    line assigns NaN to a copy, so nothing is masked and k = 2 always wins; set
    ``k_grid: [2]`` to reproduce that behaviour.)
    """

    uses_coreset_stream = True

    def __init__(self, k_grid=(2, 5, 10, 20), cv_fraction: float = 0.25, max_iter: int = 100, tol: float = 1e-4):
        self.k_grid = tuple(int(k) for k in k_grid)
        self.cv_fraction = float(cv_fraction)
        self.max_iter, self.tol = int(max_iter), float(tol)

    def params(self):
        return {"k_grid": list(self.k_grid), "cv_fraction": self.cv_fraction, "max_iter": self.max_iter, "tol": self.tol}

    def fit(self, source, budget, rng):
        check_budget(source, budget)
        n_models, n_items = source.shape
        self.coreset_ = random_coreset(n_items, budget, rng)
        self.source_ = source
        if len(self.k_grid) == 1:
            self.k_ = self.k_grid[0]
            return self
        order = rng.permutation(n_models)
        val = order[int(n_models * (1 - self.cv_fraction)):]
        missing = np.zeros_like(source, dtype=bool)
        missing[np.ix_(val, np.setdiff1d(np.arange(n_items), self.coreset_))] = True
        truth = source[val].mean(axis=1)
        best = (np.inf, self.k_grid[0])
        for k in self.k_grid:
            filled = pca_impute(source, missing, k, self.max_iter, self.tol)
            gap = float(np.abs(filled[val].mean(axis=1) - truth).mean())
            if gap < best[0]:
                best = (gap, k)
        self.cv_gap_, self.k_ = best
        return self

    def estimate(self, oracle, rng):
        y = oracle.query(self.coreset_)
        n_targets, n_items = oracle.n_targets, self.source_.shape[1]
        target = np.zeros((n_targets, n_items))
        target[:, self.coreset_] = y
        missing = np.ones((n_targets, n_items), bool)
        missing[:, self.coreset_] = False
        stacked = np.vstack([self.source_, target])
        mask = np.vstack([np.zeros_like(self.source_, dtype=bool), missing])
        filled = pca_impute(stacked, mask, self.k_, self.max_iter, self.tol)
        return filled[-n_targets:].mean(axis=1)
