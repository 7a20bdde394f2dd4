"""Completing new rows against a fully observed source matrix (a low-rank baseline for a new
model that answered a few items).

The rank-``R`` item loadings come from the source alone: ``L = V_R diag(s_R) / sqrt(B)`` from the
SVD of the ``B`` source rows centred per column, so that the source rows' coefficients have unit
variance. A new row's coefficients are the posterior mean under that prior,
``u = (L_o^T L_o + lam I)^{-1} L_o^T (y_o - mu_o)`` on its observed cells ``o``, with ``lam`` the
source's residual variance per cell after rank ``R`` (or a given value), and its missing cells are
``mu + L u``. Without the shrinkage this is where Eq. 12's iterative SVD imputation
(:func:`.completers.soft_impute`) ends when the source is complete and the new rows' weight in the
SVD is neglected; solved in closed form it costs one SVD per source instead of one iterative
completion per new model, and a new model's completion never depends on the other new models.
"""

from __future__ import annotations

import numpy as np

from benchcast.blas import lapack_guard

__all__ = ["RowCompleter"]


class RowCompleter:
    """``fit(source)`` learns the column means and rank-``rank`` item loadings; ``complete(rows,
    observed)`` fills the rows' unobserved cells (``lam``: the ridge, ``None`` for the source's
    residual variance; ``clip`` bounds the predictions, e.g. to [0, 1] for 0/1 items)."""

    def __init__(self, rank: int = 2, lam: float | None = None, clip: tuple[float, float] | None = (0.0, 1.0)):
        if rank < 1:
            raise ValueError(f"rank must be >= 1, got {rank}")
        if lam is not None and lam < 0:
            raise ValueError(f"lam must be >= 0 or None, got {lam}")
        self.rank, self.lam, self.clip = int(rank), lam, clip

    def fit(self, source: np.ndarray) -> RowCompleter:
        source = np.asarray(source, dtype=np.float64)
        if np.isnan(source).any():
            raise ValueError("the source matrix must be fully observed")
        self.mean_ = source.mean(axis=0)
        centred = source - self.mean_
        with lapack_guard(min(centred.shape)):
            _, s, vt = np.linalg.svd(centred, full_matrices=False)
        self.factors_ = vt[: self.rank].T * (s[: self.rank] / np.sqrt(len(source)))  # (items, rank)
        residual = float((s[self.rank :] ** 2).sum() / centred.size)
        self.lam_ = residual if self.lam is None else float(self.lam)
        return self

    def complete(self, rows: np.ndarray, observed: np.ndarray) -> np.ndarray:
        """``rows`` (n, items) with values where ``observed`` (a column index array shared by
        every row) and anything elsewhere; returns the rows with the other cells predicted."""
        rows = np.asarray(rows, dtype=np.float64)
        observed = np.asarray(observed, dtype=np.int64)
        v = self.factors_[observed]
        gram = v.T @ v + self.lam_ * np.eye(v.shape[1])
        coef = np.linalg.solve(gram, v.T @ (rows[:, observed] - self.mean_[observed]).T).T  # (n, rank)
        out = self.mean_ + coef @ self.factors_.T
        if self.clip is not None:
            out = np.clip(out, *self.clip)
        out[:, observed] = rows[:, observed]
        return out
