"""The twelve completion methods of BenchPress Appendix C.1.

Every completer takes the transformed, column-standardized training matrix ``Z``
(models x benchmarks, NaN = missing) and returns a full matrix of the same shape in the
same space: observed cells keep their value, missing cells get the method's prediction,
or NaN where the method cannot predict (BenchReg / ModelReg leave such cells empty, which
is what the paper's *coverage* counts).

Where the paper's equations and its released code differ, the code is followed, because
the code produced the paper's numbers; each such point is said in the function's docstring:

* Bias ALS (eq. 13) *learns* the model and benchmark offsets jointly with the rank-R
  factors, each block a ridge regression on ``[1, V_b]`` (resp. ``[1, U_m]``) with the same
  lambda, and the global level as the unregularized residual mean; eq. 13 as printed fixes
  the offsets at the observed means. Set ``offsets="observed_means"`` for the printed form.
* BenchReg / ModelReg rank candidate predictors by R^2 over >= 5 shared observations,
  take the top ``k`` and only then drop those below ``R^2_min`` (so fewer than ``k`` may
  remain).
* NMF / PMF use the code's plain gradient steps (NMF: 500 steps, lr 5e-4, L2 1e-2, shift
  ``-min + 0.1`` of columns with a negative minimum; PMF: 300 steps, lr 1e-3, L2 0.1),
  initialised from ``RandomState(42)``; Nuclear norm is proximal gradient (200 steps,
  step 0.1) from the column means.
* MLP is written in numpy (no deep-learning dependency): Linear(B, 32) - ReLU -
  Linear(32, B), torch's default uniform initialisation and Adam, masked mean squared
  error, 500 full-batch epochs, averaged over 3 seeds. Its random numbers differ from
  torch's, so it cannot match the paper bit for bit.

All loops over models or benchmarks are replaced by masked matrix products (BenchKNN / BenchReg
take their pairwise moments from :func:`benchcast.completion.correlation.pair_moments`); the Bias
ALS solver batches the per-row ridge systems over rows *and* ensemble members.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from benchcast.completion.correlation import pair_moments
from benchcast.errors import ConfigError

__all__ = [
    "Completer",
    "COMPLETERS",
    "get_completer",
    "complete",
    "benchmark_mean",
    "model_mean",
    "bench_knn",
    "model_knn",
    "bench_reg",
    "model_reg",
    "soft_impute",
    "bias_als",
    "bias_als_batch",
    "bias_als_reference",
    "nmf",
    "pmf",
    "nuclear_norm",
    "mlp",
]


# --------------------------------------------------------------------------- helpers


def _col_stats(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column nan-mean and nan-std (std < 1e-8 -> 1), as the paper code's ``col_stats``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(Z, axis=0)
        std = np.nanstd(Z, axis=0)
    return mean, np.where(std < 1e-8, 1.0, std)


def _fill_missing(Z: np.ndarray, pred: np.ndarray) -> np.ndarray:
    obs = ~np.isnan(Z)
    return np.where(obs, Z, pred)


def _col_means_or(Z: np.ndarray, empty: float) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        m = np.nanmean(Z, axis=0)
    return np.where(np.isfinite(m), m, empty)


# --------------------------------------------------------------------------- baselines


def benchmark_mean(Z: np.ndarray) -> np.ndarray:
    """Eq. 5: a missing cell is its benchmark's observed mean."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        col = np.nanmean(Z, axis=0)
    return _fill_missing(Z, np.broadcast_to(col, Z.shape))


def model_mean(Z: np.ndarray) -> np.ndarray:
    """Eq. 6: a missing cell is its model's observed mean (benchmark mean if the row is empty)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        row = np.nanmean(Z, axis=1)
        col = np.nanmean(Z, axis=0)
    pred = np.where(np.isfinite(row)[:, None], row[:, None], col[None, :])
    return _fill_missing(Z, pred)


def _stable_top(score: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores per row, ties broken by lower index (stable sort)."""
    order = np.argsort(-score, axis=1, kind="stable")
    return order[:, :k]


# --------------------------------------------------------------------------- KNN


def bench_knn(Z: np.ndarray, k: int = 5, min_shared: int = 5) -> np.ndarray:
    """Eq. 7: correlation-weighted average of the model's scores on the k benchmarks most
    correlated with the target benchmark.

    Neighbours are chosen among benchmarks with >= ``min_shared`` shared models and a defined
    Pearson correlation, from all benchmarks (not only those the model has), as in the paper
    code; each neighbour's score is first re-standardized with its column statistics and the
    result mapped back with the target's. Weights are ``max(corr, 0.01)``. No usable neighbour:
    the benchmark mean.
    """
    B = Z.shape[1]
    obs = ~np.isnan(Z)
    cm, cs = _col_stats(Z)
    ps = pair_moments(Z)
    corr = ps.pearson()
    # a constant column has no defined correlation (np.corrcoef gives NaN there)
    ok = (ps.n >= min_shared) & (ps.sxx > 1e-12) & (ps.syy > 1e-12) & np.isfinite(corr)
    np.fill_diagonal(ok, False)
    score = np.where(ok, corr, -np.inf)
    top = _stable_top(score, k)  # (B, k)
    top_ok = np.take_along_axis(ok, top, axis=1)
    top_w = np.maximum(np.take_along_axis(np.where(ok, corr, 0.0), top, axis=1), 0.01)
    zs = np.where(obs, (Z - cm) / cs, 0.0)  # re-standardized scores, 0 where missing
    pred = np.empty_like(Z)
    for t in range(B):
        cols = top[t][top_ok[t]]
        w = top_w[t][top_ok[t]]
        avail = obs[:, cols]
        wsum = avail @ w
        num = (zs[:, cols] * avail) @ w
        with np.errstate(invalid="ignore", divide="ignore"):
            p = cm[t] + (num / wsum) * cs[t]
        pred[:, t] = np.where(wsum > 0, p, cm[t])
    return _fill_missing(Z, pred)


def model_knn(Z: np.ndarray, k: int = 5, min_shared: int = 3) -> np.ndarray:
    """Eqs. 8-9: mean of the target benchmark over the k models nearest by RMS distance on
    shared benchmarks (pairs sharing fewer than ``min_shared`` benchmarks are not neighbours).

    Neighbours are chosen once per model over all candidates; a cell none of them observed
    falls back to the benchmark mean.
    """
    obs = ~np.isnan(Z)
    O = obs.astype(np.float64)
    X = np.where(obs, Z, 0.0)
    n = O @ O.T
    sq = (X * X) @ O.T + O @ (X * X).T - 2.0 * X @ X.T
    with np.errstate(invalid="ignore", divide="ignore"):
        dist = np.sqrt(np.maximum(sq, 0.0) / n)
    ok = n >= min_shared
    np.fill_diagonal(ok, False)
    top = _stable_top(np.where(ok, -dist, -np.inf), k)
    top_ok = np.take_along_axis(ok, top, axis=1)
    colmean = _col_means_or(Z, np.nan)
    pred = np.empty_like(Z)
    for m in range(Z.shape[0]):
        nb = top[m][top_ok[m]]
        cnt = O[nb].sum(axis=0)
        tot = X[nb].sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            pred[m] = np.where(cnt > 0, tot / cnt, colmean)
    return _fill_missing(Z, pred)


# --------------------------------------------------------------------------- regression ensembles


def bench_reg(Z: np.ndarray, k: int = 5, min_r2: float = 0.2, min_shared: int = 5) -> np.ndarray:
    """Eq. 10: R^2-weighted average of univariate regressions from the k best predictor benchmarks.

    For a target benchmark with >= ``min_shared`` observed models, every other benchmark
    sharing >= ``min_shared`` models is a candidate; its R^2 is that of the least-squares
    line on the shared models (candidates with a constant target or predictor score -1).
    The top ``k`` by R^2 are kept, then those with R^2 < ``min_r2`` dropped. A missing cell is
    predicted from the kept predictors the model has observed; none -> left unpredicted (NaN).
    """
    obs = ~np.isnan(Z)
    ps = pair_moments(Z)
    valid = (ps.n >= min_shared) & (ps.syy >= 1e-10) & (ps.sxx >= 1e-10)
    np.fill_diagonal(valid, False)
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = ps.sxy / ps.sxx
        r2 = np.where(valid, ps.sxy * ps.sxy / (ps.sxx * ps.syy), -1.0)
    intercept = ps.mean_y - slope * ps.mean_x
    np.fill_diagonal(r2, -np.inf)  # a benchmark never predicts itself
    top = _stable_top(r2, k)
    X = np.where(obs, Z, 0.0)
    pred = np.full_like(Z, np.nan)
    targets = np.flatnonzero(obs.sum(axis=0) >= min_shared)
    for t in targets:
        cols = top[t]
        keep = np.take(r2[t], cols) >= min_r2
        cols = cols[keep]
        if cols.size == 0:
            continue
        w = r2[t, cols]
        avail = obs[:, cols]
        yhat = slope[t, cols] * X[:, cols] + intercept[t, cols]
        wsum = avail @ w
        num = (yhat * avail) @ w
        with np.errstate(invalid="ignore", divide="ignore"):
            pred[:, t] = np.where(wsum > 0, num / wsum, np.nan)
    return _fill_missing(Z, pred)


def model_reg(Z: np.ndarray, k: int = 5, min_r2: float = 0.2, min_shared: int = 5) -> np.ndarray:
    """Eq. 11: ModelReg is BenchReg on the transposed matrix (predictor *models*)."""
    return bench_reg(Z.T, k=k, min_r2=min_r2, min_shared=min_shared).T


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


def _als_init(seeds: list[int], n_rows: int, n_cols: int, rank: int) -> tuple[np.ndarray, np.ndarray]:
    """Initial factors of each ensemble member: ``RandomState(seed).normal(0, 0.01)`` for U then V
    (the paper code's draws, so ensemble member s starts where the paper's seed 42 + s did)."""
    U = np.empty((len(seeds), n_rows, rank))
    V = np.empty((len(seeds), n_cols, rank))
    for e, seed in enumerate(seeds):
        rs = np.random.RandomState(seed)
        U[e] = rs.normal(0.0, 0.01, size=(n_rows, rank))
        V[e] = rs.normal(0.0, 0.01, size=(n_cols, rank))
    return U, V


def bias_als(
    Z: np.ndarray,
    rank: int = 2,
    lam: float = 0.1,
    n_iter: int = 40,
    n_ensemble: int = 10,
    base_seed: int = 42,
    offsets: str = "learned",
    return_members: bool = False,
):
    """Eqs. 13-14: global level + model offset + benchmark offset + rank-R correction, by ALS.

    ``offsets="learned"`` (default, the paper code): each row update solves the ridge
    problem for ``(a_m, U_m)`` on design ``[1, V_b]`` over the row's observed benchmarks with
    residual ``x - mu - c_b``; each column update likewise for ``(c_b, V_b)``; then ``mu`` is
    the unregularized mean residual. ``lambda`` penalizes a, c, U and V. ``offsets=
    "observed_means"`` fixes the offsets at the observed means as eq. 13 is printed and fits
    only ``U V^T`` to the residual.

    ``n_iter`` sweeps, ``n_ensemble`` random starts (``RandomState(base_seed + e)``, N(0, 0.01)),
    completed matrices averaged (the default predictor: rank 2, lambda 0.1, 10 starts, seeds
    42-51). Rows / columns without observations keep their starting values, as in the code.
    All rows of all ensemble members are solved in one batched call per block.

    Returns the averaged matrix (observed cells kept), and with ``return_members=True`` also
    the (E, M, B) member predictions (used for ensemble-spread reliability).
    """
    out = bias_als_batch(
        np.asarray(Z, dtype=np.float64)[None],
        rank=rank,
        lam=lam,
        n_iter=n_iter,
        n_ensemble=n_ensemble,
        base_seed=base_seed,
        offsets=offsets,
        return_members=return_members,
    )
    if return_members:
        return out[0][0], out[1][0]
    return out[0]


def bias_als_batch(
    Zs: np.ndarray,
    rank: int = 2,
    lam: float = 0.1,
    n_iter: int = 40,
    n_ensemble: int = 10,
    base_seed: int = 42,
    offsets: str = "learned",
    return_members: bool = False,
):
    """:func:`bias_als` on a stack of K matrices (K, M, B) with different missing cells at once.

    Each matrix is fitted independently (same starts for every matrix); batching them turns
    K small fits into one sequence of batched solves, which is what makes leave-one-model-out
    protocols (probe sets, temporal deployment) affordable.
    """
    if offsets not in ("learned", "observed_means"):
        raise ConfigError(f"bias_als offsets must be 'learned' or 'observed_means', got {offsets!r}")
    Zs = np.asarray(Zs, dtype=np.float64)
    K, n_rows, n_cols = Zs.shape
    obs = ~np.isnan(Zs)
    O = obs.astype(np.float64)[:, None]  # (K, 1, n, m)
    OT = np.swapaxes(O, -1, -2)
    work = np.where(obs, Zs, 0.0)[:, None]  # (K, 1, n, m)
    seeds = [base_seed + e for e in range(n_ensemble)]
    U0, V0 = _als_init(seeds, n_rows, n_cols, rank)
    U = np.broadcast_to(U0, (K,) + U0.shape).copy()  # (K, E, n, r)
    V = np.broadcast_to(V0, (K,) + V0.shape).copy()
    has_row = obs.any(axis=2)[:, None, :, None]  # (K, 1, n, 1)
    has_col = obs.any(axis=1)[:, None, :, None]  # (K, 1, m, 1)
    n_obs = np.maximum(O.sum(axis=(2, 3)), 1.0)  # (K, 1)
    if offsets == "observed_means":
        mu0 = work.sum(axis=(2, 3), keepdims=True) / n_obs[..., None, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            a0 = np.where(has_row[..., 0], work.sum(3) / O.sum(3) - mu0[..., 0], 0.0)
            c0 = np.where(has_col[..., 0], work.sum(2) / O.sum(2) - mu0[..., 0], 0.0)
        base = mu0 + a0[..., :, None] + c0[..., None, :]  # (K, 1, n, m)
        resid = (work - base) * O
        eye = lam * np.eye(rank)
        for _ in range(n_iter):
            A = O @ (V[..., :, None] * V[..., None, :]).reshape(V.shape[:-1] + (rank * rank,))
            A = A.reshape(A.shape[:-1] + (rank, rank)) + eye
            U = np.where(has_row, np.linalg.solve(A, (resid @ V)[..., None])[..., 0], U)
            A = OT @ (U[..., :, None] * U[..., None, :]).reshape(U.shape[:-1] + (rank * rank,))
            A = A.reshape(A.shape[:-1] + (rank, rank)) + eye
            V = np.where(has_col, np.linalg.solve(A, (np.swapaxes(resid, -1, -2) @ U)[..., None])[..., 0], V)
        members = base + U @ np.swapaxes(V, -1, -2)
    else:
        mu, a, c, U, V = _bias_als_learned(Zs, obs, rank, lam, n_iter, U, V)
        # (K, E, n, m) member completions: mu + a_i + c_j + U_i . V_j
        members = (
            mu[:, :, None, None]
            + np.moveaxis(a, 2, 1)[..., :, None]
            + np.moveaxis(c, 2, 1)[..., None, :]
            + np.moveaxis(U, 2, 1) @ np.moveaxis(V, 2, 1).swapaxes(-1, -2)
        )
    avg = members.mean(axis=1)
    out = np.where(obs, Zs, avg)
    if return_members:
        return out, np.where(obs[:, None], Zs[:, None], members)
    return out


def _solve_sym3(u: np.ndarray, b: np.ndarray, lam: float) -> np.ndarray:
    """Solve batched symmetric 3 x 3 systems ``(S + lam I) x = b`` in closed form (adjugate).

    ``u`` (..., 6) holds S's upper triangle in ``np.triu_indices(3)`` order; ``b`` is (..., 3).
    """
    a00, a01, a02 = u[..., 0] + lam, u[..., 1], u[..., 2]
    a11, a12, a22 = u[..., 3] + lam, u[..., 4], u[..., 5] + lam
    c00, c01, c02 = a11 * a22 - a12 * a12, a02 * a12 - a01 * a22, a01 * a12 - a02 * a11
    c11, c12, c22 = a00 * a22 - a02 * a02, a01 * a02 - a00 * a12, a00 * a11 - a01 * a01
    det = a00 * c00 + a01 * c01 + a02 * c02
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack(
        [
            (c00 * b0 + c01 * b1 + c02 * b2) / det,
            (c01 * b0 + c11 * b1 + c12 * b2) / det,
            (c02 * b0 + c12 * b1 + c22 * b2) / det,
        ],
        axis=-1,
    )


def _bias_als_learned(Zs, obs, rank, lam, n_iter, U_init, V_init):
    """The learned-offsets ALS sweeps for a (K, n, m) stack, all ensemble members at once.

    Every per-row (per-column) ridge system on design ``[1, F]`` is assembled from products
    of the *fixed* mask / data matrices with the current factors -- ``A = O [1, V]^(x2)``,
    ``b = (O * Z) [1, V] - O ((mu + c) [1, V])`` -- so no dense (K, E, n, m) residual array is
    built, and rank-2 systems are solved in closed form. Same updates, same order (rows, then
    columns with the previous level, then the level), same "rows / columns without
    observations keep their values" rule as :func:`bias_als_reference`; only the order of the
    floating-point sums differs.

    Returns ``mu`` (K, E), ``a`` (K, n, E), ``c`` (K, m, E), ``U`` (K, n, E, r), ``V`` (K, m, E, r).
    """
    K, n, m = Zs.shape
    E = U_init.shape[1]
    r1 = rank + 1
    O = obs.astype(np.float64)
    W = np.where(obs, Zs, 0.0)
    OT = np.swapaxes(O, 1, 2)
    OWr = np.concatenate([W, O], axis=2)  # (K, n, 2m)
    OWc = np.concatenate([np.swapaxes(W, 1, 2), OT], axis=2)  # (K, m, 2n)
    U = np.moveaxis(U_init, 1, 2).copy()  # (K, n, E, r)
    V = np.moveaxis(V_init, 1, 2).copy()
    a, c = np.zeros((K, n, E)), np.zeros((K, m, E))
    n_row, n_col = O.sum(2), O.sum(1)
    has_row, has_col = (n_row > 0)[:, :, None], (n_col > 0)[:, :, None]
    n_obs = np.maximum(n_row.sum(1), 1.0)
    sum_w = W.sum(axis=(1, 2))
    mu = np.broadcast_to((sum_w / n_obs)[:, None], (K, E)).copy()
    iu = np.triu_indices(r1)

    def ridge(Ob, OWb, F, off):
        q = F.shape[1]
        X = np.concatenate([np.ones(F.shape[:-1] + (1,)), F], axis=-1)  # (K, q, E, r1)
        prods = np.stack([X[..., p] * X[..., t] for p, t in zip(*iu)], axis=-1)
        Au = (Ob @ prods.reshape(K, q, -1)).reshape(K, Ob.shape[1], E, -1)  # upper triangles of X^T O X
        shift = -(mu[:, None, :] + off)[..., None] * X  # -(mu + offset) X
        b = (OWb @ np.concatenate([X, shift], axis=1).reshape(K, 2 * q, -1)).reshape(K, Ob.shape[1], E, r1)
        if r1 == 3:
            return _solve_sym3(Au, b, lam)
        A = np.empty(Au.shape[:-1] + (r1, r1))
        A[..., iu[0], iu[1]] = Au
        A[..., iu[1], iu[0]] = Au
        return np.linalg.solve(A + lam * np.eye(r1), b[..., None])[..., 0]

    for _ in range(n_iter):
        sol = ridge(O, OWr, V, c)
        a = np.where(has_row, sol[..., 0], a)
        U = np.where(has_row[..., None], sol[..., 1:], U)
        sol = ridge(OT, OWc, U, a)
        c = np.where(has_col, sol[..., 0], c)
        V = np.where(has_col[..., None], sol[..., 1:], V)
        OV = (O @ V.reshape(K, m, E * rank)).reshape(K, n, E, rank)
        mu = (
            sum_w[:, None] - (a * n_row[:, :, None]).sum(1) - (c * n_col[:, :, None]).sum(1) - (U * OV).sum(axis=(1, 3))
        ) / n_obs[:, None]
    return mu, a, c, U, V


def bias_als_reference(
    Z: np.ndarray, rank: int = 2, lam: float = 0.1, n_iter: int = 40, n_ensemble: int = 10, base_seed: int = 42
) -> np.ndarray:
    """Straightforward per-row / per-column loop version of :func:`bias_als` (learned offsets).

    The baseline the vectorized solver is checked and timed against (tests,
    ``scripts/benchmark_bias_als.py``); not used by the workflow.
    """
    obs = ~np.isnan(Z)
    n_rows, n_cols = Z.shape
    row_obs = [np.flatnonzero(obs[i]) for i in range(n_rows)]
    col_obs = [np.flatnonzero(obs[:, j]) for j in range(n_cols)]
    oi, oj = np.nonzero(obs)
    vals = Z[oi, oj]
    eye = lam * np.eye(rank + 1)
    total = np.zeros_like(Z)
    for e in range(n_ensemble):
        rs = np.random.RandomState(base_seed + e)
        U = rs.normal(0.0, 0.01, size=(n_rows, rank))
        V = rs.normal(0.0, 0.01, size=(n_cols, rank))
        mu = float(vals.mean()) if vals.size else 0.0
        a = np.zeros(n_rows)
        c = np.zeros(n_cols)
        for _ in range(n_iter):
            for i in range(n_rows):
                js = row_obs[i]
                if js.size == 0:
                    continue
                X = np.column_stack([np.ones(js.size), V[js]])
                sol = np.linalg.solve(X.T @ X + eye, X.T @ (Z[i, js] - mu - c[js]))
                a[i], U[i] = sol[0], sol[1:]
            for j in range(n_cols):
                is_ = col_obs[j]
                if is_.size == 0:
                    continue
                Y = np.column_stack([np.ones(is_.size), U[is_]])
                sol = np.linalg.solve(Y.T @ Y + eye, Y.T @ (Z[is_, j] - mu - a[is_]))
                c[j], V[j] = sol[0], sol[1:]
            mu = float(np.mean(vals - a[oi] - c[oj] - np.einsum("ij,ij->i", U[oi], V[oj])))
        total += mu + a[:, None] + c[None, :] + U @ V.T
    return _fill_missing(Z, total / n_ensemble)


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


# --------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class Completer:
    """A completion method: its function, the paper's label and hyper-parameter grid (Sec. 4.2)."""

    name: str
    label: str
    fn: Callable[..., np.ndarray]
    grid: list[dict] = field(default_factory=lambda: [{}])


COMPLETERS: dict[str, Completer] = {
    c.name: c
    for c in [
        Completer("benchmark_mean", "Bench-Mean", benchmark_mean),
        Completer("model_mean", "Model-Mean", model_mean),
        Completer("bench_knn", "Bench-KNN", bench_knn, [{"k": k} for k in (3, 5, 7, 10)]),
        Completer("model_knn", "Model-KNN", model_knn, [{"k": k} for k in (3, 5, 7, 10)]),
        Completer(
            "bench_reg", "BenchReg", bench_reg, [{"k": k, "min_r2": r} for k in (3, 5, 7) for r in (0.1, 0.2, 0.3)]
        ),
        Completer(
            "model_reg", "ModelReg", model_reg, [{"k": k, "min_r2": r} for k in (3, 5, 7) for r in (0.1, 0.2, 0.3)]
        ),
        Completer("soft_impute", "Soft-Impute", soft_impute, [{"rank": 2}]),
        Completer("bias_als", "Bias ALS", bias_als, [{"rank": 2, "lam": lam} for lam in (0.01, 0.1, 1.0)]),
        Completer("nmf", "NMF", nmf, [{"rank": r} for r in (1, 2, 3, 5)]),
        Completer("pmf", "PMF", pmf, [{"rank": r} for r in (1, 2, 3, 5)]),
        Completer("nuclear_norm", "Nuclear", nuclear_norm, [{"lam": lam} for lam in (0.1, 0.5, 1.0, 5.0)]),
        Completer("mlp", "MLP", mlp, [{"lr": lr} for lr in (1e-4, 1e-3, 1e-2)]),
    ]
}


def get_completer(name: str) -> Completer:
    try:
        return COMPLETERS[name]
    except KeyError:
        raise ConfigError(f"unknown completion method {name!r}; choose one of {sorted(COMPLETERS)}") from None


def complete(name: str, Z: np.ndarray, **params) -> np.ndarray:
    """Run completer ``name`` on the standardized matrix ``Z`` with hyper-parameters ``params``."""
    comp = get_completer(name)
    try:
        return comp.fn(Z, **params)
    except TypeError as exc:
        raise ConfigError(f"bad hyper-parameters {params} for completion method {name!r}: {exc}") from None
