"""PAM (k-medoids, best-improvement swaps) with fixed medoids, for TailoredBench's N-set.

TailoredBench (Yuan et al., Section 3.4, Eqs. 6-7) extends a target's G-set to its N-set by
k-medoids in which the G-set items are medoids that never move. The paper's text describes
alternating assignment and medoid updates; its released code (marvelcell/TailoredBench @ e33061e,
``models/prediction.py`` with its fork of scikit-learn-extra) runs PAM instead: from the G-set plus
random extra medoids, it repeatedly applies the single swap (medoid out, non-medoid in) that lowers
the total distance of the items to their nearest medoid the most, never swapping out a G-set
medoid, until no swap lowers it. The code made the published numbers, so this module does that.
The ``kmedoids`` package has no fixed medoids.

Weighted points. ``weights[o]`` counts how many items point ``o`` stands for: PAM on the distinct
answer patterns of a benchmark, each weighted by how many items share it, makes the same swaps as
PAM on the items (a duplicate of a medoid never lowers the cost), on a matrix several times
smaller. For the same reason a medoid may be listed twice (two initial items with one pattern):
its second copy serves nobody, as in the item-level run, until a swap replaces it.

How it is fast. The cost change of swapping the medoid at position ``k`` for point ``h`` is
(FastPAM1, Schubert & Rousseeuw 2019)

    delta(h, k) = base(h) + adj(k, h),
    base(h)     = sum_o w_o min(d(h, o) - near_o, 0),
    adj(k, h)   = sum_{o: nearest(o) = k} w_o [min(d(h, o), second_o) - min(d(h, o), near_o)],

with ``near_o`` / ``second_o`` the distances of point ``o`` to its nearest and second-nearest
medoid. Both sums are kept between swaps and updated only for the points whose nearest medoid or
either distance changed (about two clusters' worth), in a compiled (numba) loop, instead of being
recomputed over all N x N pairs every swap. :func:`pam_reference` is the straightforward numpy
version (every swap's table from scratch), kept for tests and for the speed comparison. On
distances that are sums of exactly representable numbers (as :mod:`benchcast.methods.tailored_bench`
makes them) both are exact, so they make the very same swaps.

Ties. The best swap is the first minimum in the scan order of the candidates ``h`` (``order``,
default ascending; TailoredBench passes its random item order, as the released code scans a random
permutation of the items), then medoid position ``k`` ascending; a swap counts only if it lowers
the cost by more than ``tol`` times the current cost. Points join the first medoid, in medoid order
(fixed ones first), among those at the smallest distance -- the code's ``argmin``. When every point
is a medoid (few distinct patterns, many medoids) there is nothing to swap in: no swap is made.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np


@dataclass(frozen=True)
class PamResult:
    medoids: np.ndarray  # (K,) point indices, in the initial order: the fixed ones first
    labels: np.ndarray  # (N,) position in ``medoids`` of each point's nearest medoid
    cost: float  # sum over points of weight x distance to the nearest medoid
    swaps: int
    moved: np.ndarray  # (K,) bool: the medoid at this position was swapped at least once


def _prepare(dist, medoids, n_fixed, weights, order):
    dist = np.ascontiguousarray(dist, dtype=np.float64)
    med = np.array(medoids, dtype=np.int64)
    if dist.ndim != 2 or dist.shape[0] != dist.shape[1]:
        raise ValueError(f"distances must be a square matrix, got shape {dist.shape}")
    n = dist.shape[0]
    if med.ndim != 1 or len(med) == 0:
        raise ValueError("give at least one initial medoid, as a 1-D array of point indices")
    if med.min() < 0 or med.max() >= n:
        raise IndexError(f"a medoid index is outside [0, {n})")
    if not 0 <= n_fixed <= len(med):
        raise ValueError(f"n_fixed = {n_fixed} must be between 0 and the {len(med)} medoids")
    w = np.ones(n) if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
    if w.shape != (n,) or not (w > 0).all():
        raise ValueError(f"weights must be {n} positive numbers")
    o = np.arange(n, dtype=np.int64) if order is None else np.ascontiguousarray(order, dtype=np.int64)
    if o.shape != (n,) or not np.array_equal(np.sort(o), np.arange(n)):
        raise ValueError(f"order must be a permutation of range({n})")
    return dist, med, w, o


@numba.njit(cache=True)
def _nearest_two(dist, med, nearest, near, second):  # pragma: no cover - compiled
    for o in range(dist.shape[0]):
        best, runner_up, pos = np.inf, np.inf, -1
        for p in range(med.shape[0]):
            d = dist[med[p], o]
            if d < best:
                runner_up, best, pos = best, d, p
            elif d < runner_up:
                runner_up = d
        nearest[o], near[o], second[o] = pos, best, runner_up


@numba.njit(cache=True)
def _account(row, weight, near_o, second_o, base, adj_k):  # pragma: no cover - compiled
    """Add point o's terms of base(h) and adj(nearest(o), h), for all h (``row`` = d(o, .))."""
    for h in range(row.shape[0]):
        d = row[h]
        base[h] += weight * (d - near_o if d < near_o else 0.0)
        adj_k[h] += weight * ((d if d < second_o else second_o) - (d if d < near_o else near_o))


@numba.njit(cache=True)
def _reaccount(
    row, weight, near_old, second_old, near_new, second_new, base, adj_old, adj_new, same
):  # pragma: no cover - compiled
    """Replace point o's terms after its nearest/second-nearest changed, in one pass over ``row``
    (``same``: its nearest medoid's position did not change, so ``adj_old is adj_new``)."""
    for h in range(row.shape[0]):
        d = row[h]
        gain_old = d - near_old if d < near_old else 0.0
        gain_new = d - near_new if d < near_new else 0.0
        term_old = (d if d < second_old else second_old) - (d if d < near_old else near_old)
        term_new = (d if d < second_new else second_new) - (d if d < near_new else near_new)
        base[h] += weight * (gain_new - gain_old)
        if same:
            adj_new[h] += weight * (term_new - term_old)
        else:
            adj_old[h] -= weight * term_old
            adj_new[h] += weight * term_new


@numba.njit(cache=True)
def _pam_swaps(dist, med, n_fixed, weights, order, max_swaps, tol):  # pragma: no cover - compiled
    n, k = dist.shape[0], med.shape[0]
    nearest, near, second = np.empty(n, np.int64), np.empty(n), np.empty(n)
    _nearest_two(dist, med, nearest, near, second)
    base, adj = np.zeros(n), np.zeros((k, n))
    for o in range(n):
        _account(dist[o], weights[o], near[o], second[o], base, adj[nearest[o]])
    is_medoid = np.zeros(n, np.bool_)
    for p in range(k):
        is_medoid[med[p]] = True
    new_nearest, new_near, new_second = np.empty(n, np.int64), np.empty(n), np.empty(n)
    moved = np.zeros(k, np.bool_)
    swaps = 0
    while swaps < max_swaps:
        cost = 0.0
        for o in range(n):
            cost += weights[o] * near[o]
        best, best_h, best_p = -tol * max(cost, 1.0), -1, -1
        for i in range(n):
            h = order[i]
            if is_medoid[h]:
                continue
            for p in range(n_fixed, k):
                value = base[h] + adj[p, h]
                if value < best:
                    best, best_h, best_p = value, h, p
        if best_h < 0:
            break
        out = med[best_p]
        med[best_p] = best_h
        moved[best_p] = True
        is_medoid[best_h] = True
        is_medoid[out] = False
        for p in range(k):  # a repeated medoid may still hold the point swapped out
            if med[p] == out:
                is_medoid[out] = True
        swaps += 1
        _nearest_two(dist, med, new_nearest, new_near, new_second)
        for o in range(n):
            if new_nearest[o] != nearest[o] or new_near[o] != near[o] or new_second[o] != second[o]:
                _reaccount(
                    dist[o],
                    weights[o],
                    near[o],
                    second[o],
                    new_near[o],
                    new_second[o],
                    base,
                    adj[nearest[o]],
                    adj[new_nearest[o]],
                    nearest[o] == new_nearest[o],
                )
                nearest[o], near[o], second[o] = new_nearest[o], new_near[o], new_second[o]
    cost = 0.0
    for o in range(n):
        cost += weights[o] * near[o]
    return nearest, cost, swaps, moved


def pam_fixed(
    dist: np.ndarray, medoids, n_fixed: int = 0, weights=None, order=None, max_swaps: int = 100_000, tol: float = 1e-12
) -> PamResult:
    """Best-improvement PAM with the first ``n_fixed`` medoids fixed (see the module docstring):
    the swaps of :func:`pam_reference`, with the cost-change table updated incrementally."""
    dist, med, w, o = _prepare(dist, medoids, n_fixed, weights, order)
    labels, cost, swaps, moved = _pam_swaps(dist, med, int(n_fixed), w, o, int(max_swaps), float(tol))
    return PamResult(med, labels, float(cost), int(swaps), moved)


def _nearest_two_np(dist: np.ndarray, med: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    to_medoids = dist[med]  # (K, N)
    nearest = np.argmin(to_medoids, axis=0)
    cols = np.arange(dist.shape[0])
    near = to_medoids[nearest, cols]
    masked = to_medoids.copy()
    masked[nearest, cols] = np.inf
    return nearest, near, masked.min(axis=0)


def pam_reference(
    dist: np.ndarray, medoids, n_fixed: int = 0, weights=None, order=None, max_swaps: int = 100_000, tol: float = 1e-12
) -> PamResult:
    """Best-improvement PAM with the first ``n_fixed`` medoids fixed, every swap's cost change
    computed from scratch as the new total cost minus the old (O(N^2 K) per swap)."""
    dist, med, w, o = _prepare(dist, medoids, n_fixed, weights, order)
    n, k = dist.shape[0], len(med)
    rank = np.empty(n, np.int64)
    rank[o] = np.arange(n)
    moved = np.zeros(k, bool)
    swaps = 0
    while True:
        nearest, near, second = _nearest_two_np(dist, med)
        cost = float(w @ near)
        delta = np.full((n, k), np.inf)  # rows in scan order
        candidates = np.setdiff1d(np.arange(n), med)
        for pos in range(n_fixed, k):
            others = np.delete(dist[med], pos, axis=0).min(axis=0)  # (N,) without medoid pos
            new = np.minimum(others[None, :], dist[candidates])  # (candidates, N)
            delta[rank[candidates], pos] = new @ w - cost
        flat = int(np.argmin(delta))
        r, pos = divmod(flat, k)
        if swaps == max_swaps or not delta[r, pos] < -tol * max(cost, 1.0):
            break
        med[pos] = o[r]
        moved[pos] = True
        swaps += 1
    return PamResult(med, nearest, cost, swaps, moved)
