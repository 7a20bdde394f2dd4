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
either distance changed (about two clusters' worth), instead of being
recomputed over all N x N pairs every swap. Two engines keep those sums: compiled loops (numba,
:mod:`benchcast.methods.pam_numba`; the fastest per swap, for jobs that cluster for many targets) and
array operations (numpy; no compile or cache load, for the one clustering of a new model on the
command line). :func:`pam_reference` is the straightforward version (every swap's table from
scratch), kept for tests and for the speed comparison. On distances that are sums of exactly
representable numbers (as :mod:`benchcast.methods.tailored` makes them) every sum is exact in any
order, so all three make the very same swaps.

Ties. The best swap is the first minimum in the scan order of the candidates ``h`` (``order``,
default ascending; TailoredBench passes its random item order, as the released code scans a random
permutation of the items), then medoid position ``k`` ascending; a swap counts only if it lowers
the cost by more than ``tol`` times the current cost. Points join the first medoid, in medoid order
(fixed ones first), among those at the smallest distance -- the code's ``argmin``. When every point
is a medoid (few distinct patterns, many medoids) there is nothing to swap in: no swap is made.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the engines of :func:`pam_fixed`: the same swaps, different costs (module docstring)
ENGINES = ("numba", "numpy")
#: rows of an N x N array formed at a time, here (the numpy engine's cost terms: two blocks x N
#: instead of two N x N arrays) and in TailoredBench's distances; a fixed number, so results never
#: depend on memory, and exact distances make the sums' order immaterial
BLOCK_ROWS = 512


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


def pam_fixed(
    dist: np.ndarray,
    medoids,
    n_fixed: int = 0,
    weights=None,
    order=None,
    max_swaps: int = 100_000,
    tol: float = 1e-12,
    engine: str = "numba",
) -> PamResult:
    """Best-improvement PAM with the first ``n_fixed`` medoids fixed (see the module docstring):
    the swaps of :func:`pam_reference`, with the cost-change table updated incrementally.

    ``engine`` "numba" runs the compiled loops (:mod:`benchcast.methods.pam_numba`), "numpy" the
    same bookkeeping as array operations: 4-6x slower per clustering, but free of numba's start-up
    (about a second per process), so faster for a single clustering in a new process
    (``scripts/performance/benchmark_tailored_pam.py`` measures both)."""
    if engine not in ENGINES:
        raise ValueError(f"unknown PAM engine '{engine}'; use one of {', '.join(ENGINES)}")
    dist, med, w, o = _prepare(dist, medoids, n_fixed, weights, order)
    if engine == "numba":
        from benchcast.methods.pam_numba import _pam_swaps
    else:
        _pam_swaps = _pam_swaps_numpy
    labels, cost, swaps, moved = _pam_swaps(dist, med, int(n_fixed), w, o, int(max_swaps), float(tol))
    return PamResult(med, labels, float(cost), int(swaps), moved)


def _terms(rows: np.ndarray, near: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each point's (row's) terms of base(h), min(d - near, 0), and of adj(k, h),
    min(d, second) - min(d, near), for all h."""
    gain = np.minimum(rows - near[:, None], 0.0)
    term = np.minimum(rows, second[:, None]) - np.minimum(rows, near[:, None])
    return gain, term


def _add_rows(adj: np.ndarray, positions: np.ndarray, values: np.ndarray) -> None:
    """``adj[positions[i]] += values[i]`` for every i, one matrix product per distinct position."""
    rows, of_value = np.unique(positions, return_inverse=True)
    onehot = np.zeros((len(rows), len(positions)))
    onehot[of_value, np.arange(len(positions))] = 1.0
    adj[rows] += onehot @ values


def _pam_swaps_numpy(dist, med, n_fixed, weights, order, max_swaps, tol):
    """The compiled engine's swaps as array operations (the same sums in another order: equal
    results on exact distances, see the module docstring)."""
    n, k = dist.shape[0], med.shape[0]
    nearest, near, second = _nearest_two_np(dist, med)
    base, adj = np.zeros(n), np.zeros((k, n))
    for start in range(0, n, BLOCK_ROWS):  # each point's terms, a block of points at a time
        block = slice(start, start + BLOCK_ROWS)
        gain, term = _terms(dist[block], near[block], second[block])
        base += weights[block] @ gain
        _add_rows(adj, nearest[block], weights[block, None] * term)
    is_medoid = np.zeros(n, bool)
    is_medoid[med] = True
    moved = np.zeros(k, bool)
    swaps = 0
    while swaps < max_swaps and k > n_fixed:
        cost = float(weights @ near)
        candidates = order[~is_medoid[order]]  # in scan order
        if len(candidates) == 0:
            break
        table = base[candidates][:, None] + adj[n_fixed:, candidates].T
        i, p = divmod(int(np.argmin(table)), k - n_fixed)  # the first minimum: scan order, then position
        if not table[i, p] < -tol * max(cost, 1.0):
            break
        h, p = candidates[i], p + n_fixed
        out = med[p]
        med[p] = h
        moved[p] = True
        is_medoid[h] = True
        is_medoid[out] = bool((med == out).any())  # a repeated medoid may still hold it
        swaps += 1
        new_nearest, new_near, new_second = _nearest_two_np(dist, med)
        changed = np.flatnonzero((new_nearest != nearest) | (new_near != near) | (new_second != second))
        if len(changed):
            rows, w = dist[changed], weights[changed]
            gain_old, term_old = _terms(rows, near[changed], second[changed])
            gain_new, term_new = _terms(rows, new_near[changed], new_second[changed])
            base += w @ (gain_new - gain_old)
            _add_rows(adj, nearest[changed], -(w[:, None] * term_old))
            _add_rows(adj, new_nearest[changed], w[:, None] * term_new)
            nearest, near, second = new_nearest, new_near, new_second
    return nearest, float(weights @ near), swaps, moved


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
