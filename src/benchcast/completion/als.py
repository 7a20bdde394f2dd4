"""Bias ALS (BenchPress eqs. 13-14, Appendix C.1), the completer of the default predictor: the
batched solver for stacks of matrices and ensemble members, and the per-row reference loop it is
checked against."""

from __future__ import annotations

import numpy as np

from benchcast.completion.observed_entries import _fill_missing
from benchcast.errors import ConfigError

__all__ = ["bias_als", "bias_als_batch", "bias_als_reference"]


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
    ``scripts/performance/benchmark_bias_als.py``); not used by the workflow.
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
