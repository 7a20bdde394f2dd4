"""PAM (k-medoids, best-improvement swaps) with fixed medoids, for TailoredBench's N-set.

TailoredBench (Yuan et al., Section 3.4, Eqs. 6-7) extends a target's G-set to its N-set by
k-medoids in which the G-set items are medoids that never move. The paper's text describes
alternating assignment and medoid updates; its released code (marvelcell/TailoredBench @ e33061e,
``models/prediction.py`` with its fork of scikit-learn-extra) runs PAM instead: from the G-set plus
random extra medoids, it repeatedly applies the single swap (medoid out, non-medoid in) that lowers
the total distance of the items to their nearest medoid the most, never swapping out a G-set
medoid, until no swap lowers it. The code made the published numbers, so this module does that.
The ``kmedoids`` package has no fixed medoids.

How it is fast. The cost change of swapping the medoid at position ``k`` for item ``h`` is
(FastPAM1, Schubert & Rousseeuw 2019)

    delta(h, k) = base(h) + adj(h, k),
    base(h)     = sum_o min(d(h, o) - near_o, 0),
    adj(h, k)   = sum_{o: nearest(o) = k} [min(d(h, o), second_o) - min(d(h, o), near_o)],

with ``near_o`` / ``second_o`` the distances of item ``o`` to its nearest and second-nearest
medoid. Both sums are kept between swaps and updated only for the items whose nearest medoid or
either distance changed (about two clusters' worth), instead of being recomputed over all N x N
pairs every swap. :func:`pam_reference` is the straightforward version, kept for tests and for
the speed comparison.

Ties. The best swap is the first minimum in the order (item ``h`` ascending, then medoid position
``k``), as the released code's loop order (``h`` outer, position inner); a swap counts only if it
lowers the cost by more than ``tol`` times the current cost, so rounding noise never makes the
search cycle. Items join the first medoid, in medoid order (fixed ones first), among those at the
smallest distance -- the code's ``argmin``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PamResult:
    medoids: np.ndarray  # (K,) item indices, in the initial order: the fixed ones first
    labels: np.ndarray  # (N,) position in ``medoids`` of each item's nearest medoid
    cost: float  # sum over items of the distance to their nearest medoid
    swaps: int


def _check(dist: np.ndarray, medoids: np.ndarray, n_fixed: int) -> None:
    if dist.ndim != 2 or dist.shape[0] != dist.shape[1]:
        raise ValueError(f"distances must be a square matrix, got shape {dist.shape}")
    n = dist.shape[0]
    if medoids.ndim != 1 or len(np.unique(medoids)) != len(medoids):
        raise ValueError("initial medoids must be distinct item indices")
    if len(medoids) and (medoids.min() < 0 or medoids.max() >= n):
        raise IndexError(f"a medoid index is outside [0, {n})")
    if not 0 <= n_fixed <= len(medoids):
        raise ValueError(f"n_fixed = {n_fixed} must be between 0 and the {len(medoids)} medoids")
    if len(medoids) >= n:
        raise ValueError(f"{len(medoids)} medoids leave no item to swap in among {n}")


def _nearest_two(dist: np.ndarray, medoids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item: position of its nearest medoid (first on ties), that distance, the second-nearest."""
    to_medoids = dist[medoids]  # (K, N)
    nearest = np.argmin(to_medoids, axis=0)
    cols = np.arange(dist.shape[0])
    near = to_medoids[nearest, cols]
    if len(medoids) == 1:
        return nearest, near, np.full_like(near, np.inf)
    masked = to_medoids.copy()
    masked[nearest, cols] = np.inf
    return nearest, near, masked.min(axis=0)


def _onehot(positions: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros((len(positions), k))
    out[np.arange(len(positions)), positions] = 1.0
    return out


def _labels_cost(dist: np.ndarray, medoids: np.ndarray) -> tuple[np.ndarray, float]:
    to_medoids = dist[medoids]
    labels = np.argmin(to_medoids, axis=0)
    return labels, float(to_medoids[labels, np.arange(dist.shape[0])].sum())


def _pick(delta: np.ndarray, is_medoid: np.ndarray, n_fixed: int, threshold: float) -> tuple[int, int] | None:
    """The best swap (item h, medoid position k) of a (N, K) cost-change table, or None."""
    delta = delta.copy()
    delta[is_medoid] = np.inf
    delta[:, :n_fixed] = np.inf
    flat = int(np.argmin(delta))  # row-major: h first, then k
    h, k = divmod(flat, delta.shape[1])
    return (h, k) if delta[h, k] < threshold else None


def pam_reference(
    dist: np.ndarray, medoids, n_fixed: int = 0, max_swaps: int = 100_000, tol: float = 1e-12
) -> PamResult:
    """Best-improvement PAM with the first ``n_fixed`` medoids fixed, every swap's cost change
    computed over all items from scratch (O(N^2 K) per swap)."""
    dist = np.asarray(dist, dtype=np.float64)
    med = np.array(medoids, dtype=np.int64)
    _check(dist, med, n_fixed)
    n, k = dist.shape[0], len(med)
    swaps = 0
    for swaps in range(max_swaps + 1):
        nearest, near, second = _nearest_two(dist, med)
        delta = np.empty((n, k))
        gain = np.minimum(dist - near[None, :], 0.0)  # (h, o)
        for pos in range(k):
            in_k = nearest == pos
            removed = np.minimum(dist[:, in_k], second[in_k][None, :]) - near[in_k][None, :]
            delta[:, pos] = gain[:, ~in_k].sum(axis=1) + removed.sum(axis=1)
        is_medoid = np.zeros(n, bool)
        is_medoid[med] = True
        best = _pick(delta, is_medoid, n_fixed, -tol * max(float(near.sum()), 1.0))
        if best is None or swaps == max_swaps:
            break
        med[best[1]] = best[0]
    labels, cost = _labels_cost(dist, med)
    return PamResult(med, labels, cost, swaps)


def pam_fixed(dist: np.ndarray, medoids, n_fixed: int = 0, max_swaps: int = 100_000, tol: float = 1e-12) -> PamResult:
    """Best-improvement PAM with the first ``n_fixed`` medoids fixed (see the module docstring):
    the same swaps as :func:`pam_reference` up to rounding, with the cost-change table updated
    incrementally."""
    dist = np.asarray(dist, dtype=np.float64)
    med = np.array(medoids, dtype=np.int64)
    _check(dist, med, n_fixed)
    n, k = dist.shape[0], len(med)
    nearest, near, second = _nearest_two(dist, med)
    base = np.minimum(dist - near[None, :], 0.0).sum(axis=1)
    contrib = np.minimum(dist, second[None, :]) - np.minimum(dist, near[None, :])  # (h, o)
    adj = contrib @ _onehot(nearest, k)  # (h, k)
    is_medoid = np.zeros(n, bool)
    is_medoid[med] = True
    swaps = 0
    while swaps < max_swaps:
        best = _pick(base[:, None] + adj, is_medoid, n_fixed, -tol * max(float(near.sum()), 1.0))
        if best is None:
            break
        h, pos = best
        is_medoid[med[pos]], is_medoid[h] = False, True
        med[pos] = h
        swaps += 1
        new_nearest, new_near, new_second = _nearest_two(dist, med)
        changed = np.flatnonzero((new_nearest != nearest) | (new_near != near) | (new_second != second))
        if changed.size:
            cols = dist[:, changed]  # (N, |changed|)
            base += (np.minimum(cols - new_near[changed], 0.0) - np.minimum(cols - near[changed], 0.0)).sum(axis=1)
            old = np.minimum(cols, second[changed]) - np.minimum(cols, near[changed])
            new = np.minimum(cols, new_second[changed]) - np.minimum(cols, new_near[changed])
            adj += new @ _onehot(new_nearest[changed], k) - old @ _onehot(nearest[changed], k)
        nearest, near, second = new_nearest, new_near, new_second
    return PamResult(med, nearest, float(near.sum()), swaps)  # kept current with every swap
