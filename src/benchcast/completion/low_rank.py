"""The factorization completers of BenchPress Appendix C.1 other than Bias ALS: Soft-Impute
(eq. 12), NMF, PMF and nuclear-norm minimisation (eqs. 15-17), and the MLP autoencoder (eq. 18)."""

from __future__ import annotations

import warnings

import numpy as np

from benchcast.completion.observed_entries import _col_means_or, _col_stats, _fill_missing

__all__ = ["soft_impute", "nmf", "pmf", "nuclear_norm", "mlp"]


# --------------------------------------------------------------------------- low rank


def _truncated(M: np.ndarray, rank: int) -> np.ndarray:
    U, s, Vt = np.linalg.svd(M, full_matrices=False)
    return (U[:, :rank] * s[:rank]) @ Vt[:rank]


def soft_impute(Z: np.ndarray, rank: int = 2, max_iter: int = 100, tol: float = 1e-4) -> np.ndarray:
    """Eq. 12: alternate a rank-R SVD projection with re-clamping the observed entries.

    Missing cells start at their column mean (0 for an empty column); iteration stops when
    the RMS change relative to the RMS of the previous iterate falls below ``tol``, or after
    ``max_iter`` iterations (the paper code's rule).
    """
    obs = ~np.isnan(Z)
    cur = np.where(obs, Z, _col_means_or(Z, 0.0)[None, :])
    work = np.where(obs, Z, 0.0)
    for _ in range(max_iter):
        prev = cur
        cur = np.where(obs, work, _truncated(prev, rank))
        rel = np.sqrt(np.mean((cur - prev) ** 2)) / (np.sqrt(np.mean(prev**2)) + 1e-12)
        if rel < tol:
            break
    return cur


def nmf(
    Z: np.ndarray, rank: int = 2, max_iter: int = 500, lr: float = 5e-4, reg: float = 0.01, seed: int = 42
) -> np.ndarray:
    """Eq. 15: masked non-negative factorization of the column-shifted matrix.

    Columns with a negative observed minimum are shifted by ``-min + 0.1``; ``W, H`` start at
    ``|N(0,1)| * sqrt(mean(x')/R + 0.01) + 0.1`` and take projected gradient steps (W first,
    then H with the new W), floored at 1e-10; the shift is subtracted from ``W H``.
    """
    obs = ~np.isnan(Z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        col_min = np.nanmin(Z, axis=0)
    shift = np.where(col_min < 0, -col_min + 0.1, 0.0)
    X = np.where(obs, Z + shift, 0.0)
    rs = np.random.RandomState(seed)
    scale = np.sqrt(X[obs].mean() / rank + 0.01)
    W = np.abs(rs.randn(Z.shape[0], rank)) * scale + 0.1
    H = np.abs(rs.randn(rank, Z.shape[1])) * scale + 0.1
    for _ in range(max_iter):
        err = np.where(obs, W @ H - X, 0.0)
        W = np.maximum(W - lr * (err @ H.T + reg * W), 1e-10)
        H = np.maximum(H - lr * (W.T @ err + reg * H), 1e-10)
    return _fill_missing(Z, W @ H - shift)


def pmf(
    Z: np.ndarray, rank: int = 2, max_iter: int = 300, lr: float = 1e-3, reg: float = 0.1, seed: int = 42
) -> np.ndarray:
    """Eq. 16: masked L2-regularized factorization ``U V^T`` by gradient descent (U, then V)."""
    obs = ~np.isnan(Z)
    X = np.where(obs, Z, 0.0)
    rs = np.random.RandomState(seed)
    U = rs.randn(Z.shape[0], rank) * 0.1
    V = rs.randn(Z.shape[1], rank) * 0.1
    for _ in range(max_iter):
        err = np.where(obs, U @ V.T - X, 0.0)
        U = U - lr * (err @ V + reg * U)
        V = V - lr * (err.T @ U + reg * V)
    return _fill_missing(Z, U @ V.T)


def nuclear_norm(Z: np.ndarray, lam: float = 1.0, max_iter: int = 200, lr: float = 0.1) -> np.ndarray:
    """Eq. 17 by proximal gradient: a gradient step on the observed squared error, then
    singular-value soft-thresholding at ``lam * lr``; starts from the column means."""
    obs = ~np.isnan(Z)
    X = np.where(obs, Z, 0.0)
    cur = np.where(obs, Z, _col_means_or(Z, 0.0)[None, :])
    for _ in range(max_iter):
        step = cur - lr * np.where(obs, cur - X, 0.0)
        U, s, Vt = np.linalg.svd(step, full_matrices=False)
        cur = (U * np.maximum(s - lam * lr, 0.0)) @ Vt
    return _fill_missing(Z, cur)


def mlp(Z: np.ndarray, lr: float = 1e-3, hidden: int = 32, epochs: int = 500, n_seeds: int = 3) -> np.ndarray:
    """Eq. 18: a 2-layer autoencoder (Linear-ReLU-Linear) trained on the masked reconstruction
    error of the zero-filled rows, averaged over ``n_seeds`` seeds (0, 1, 2).

    Full-batch Adam (betas 0.9/0.999, eps 1e-8), loss ``sum(o * (f(x) - x)^2) / sum(o)``,
    weights and biases initialised ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` (torch's default).
    As in the paper code the input is re-standardized by column first.
    """
    obs = ~np.isnan(Z)
    cm, cs = _col_stats(Z)
    X = np.where(obs, (Z - cm) / cs, 0.0)
    O = obs.astype(np.float64)
    n_obs = max(O.sum(), 1.0)
    n, B = X.shape
    preds = []
    for seed in range(n_seeds):
        g = np.random.default_rng(seed)
        b1 = 1.0 / np.sqrt(B)
        b2 = 1.0 / np.sqrt(hidden)
        params = [
            g.uniform(-b1, b1, (B, hidden)),
            g.uniform(-b1, b1, hidden),
            g.uniform(-b2, b2, (hidden, B)),
            g.uniform(-b2, b2, B),
        ]
        m = [np.zeros_like(p) for p in params]
        v = [np.zeros_like(p) for p in params]
        for step in range(1, epochs + 1):
            W1, c1, W2, c2 = params
            pre = X @ W1 + c1
            h = np.maximum(pre, 0.0)
            out = h @ W2 + c2
            d_out = 2.0 * O * (out - X) / n_obs
            dW2 = h.T @ d_out
            dc2 = d_out.sum(axis=0)
            d_h = (d_out @ W2.T) * (pre > 0)
            dW1 = X.T @ d_h
            dc1 = d_h.sum(axis=0)
            for p_i, grad in enumerate((dW1, dc1, dW2, dc2)):
                m[p_i] = 0.9 * m[p_i] + 0.1 * grad
                v[p_i] = 0.999 * v[p_i] + 0.001 * grad * grad
                m_hat = m[p_i] / (1.0 - 0.9**step)
                v_hat = v[p_i] / (1.0 - 0.999**step)
                params[p_i] = params[p_i] - lr * m_hat / (np.sqrt(v_hat) + 1e-8)
        W1, c1, W2, c2 = params
        preds.append((np.maximum(X @ W1 + c1, 0.0) @ W2 + c2) * cs + cm)
    return _fill_missing(Z, np.mean(preds, axis=0))
