"""The compiled (numba) engine of :func:`benchcast.methods.pam.pam_fixed`: the incremental swaps
of FastPAM1 as plain loops (see :mod:`benchcast.methods.pam` for the algorithm and its tie rules).

Imported only when that engine is asked for: importing numba and loading the compiled code from its
cache costs about a second in every new process, which a one-off call does not recover.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _nearest_two(dist, med, nearest, near, second):  # pragma: no cover - compiled
    """Each point's nearest medoid (the first of equals, in medoid order), its distance and the
    second smallest. Medoid by medoid, each pass reading one row of ``dist`` in order (the same
    comparisons per point as point by point, which read K scattered rows per point)."""
    near[:] = np.inf
    second[:] = np.inf
    nearest[:] = -1
    for p in range(med.shape[0]):
        row = dist[med[p]]
        for o in range(row.shape[0]):
            d = row[o]
            if d < near[o]:
                second[o], near[o], nearest[o] = near[o], d, p
            elif d < second[o]:
                second[o] = d


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
def _nearest_two_after_swap(
    dist, med, p, out, nearest, near, second, new_nearest, new_near, new_second
):  # pragma: no cover - compiled
    """:func:`_nearest_two` after position ``p``'s medoid ``out`` became ``med[p]``, without
    reading every medoid for every point (the same values, by the same comparisons).

    A point whose distance to ``out`` is above its second smallest lost neither of its two
    smallest distances, so only the new medoid can change them (a tie with the nearest goes to
    the lower position, as :func:`_nearest_two`'s medoid order does). A point with
    ``d(out, o) <= second`` may have lost one of them (or a tie): recounted over every medoid."""
    k = med.shape[0]
    row_out, row_new = dist[out], dist[med[p]]
    for o in range(nearest.shape[0]):
        if row_out[o] <= second[o]:
            a, b, c = np.inf, np.inf, -1
            for q in range(k):
                d = dist[med[q], o]
                if d < a:
                    b, a, c = a, d, q
                elif d < b:
                    b = d
        else:
            d = row_new[o]
            a, b, c = near[o], second[o], nearest[o]
            if d < a:
                b, a, c = a, d, p
            elif d == a:
                b = a
                if p < c:
                    c = p
            elif d < b:
                b = d
        new_near[o], new_second[o], new_nearest[o] = a, b, c


@numba.njit(cache=True)
def _row_min(base_m, adj_p, threshold, order):  # pragma: no cover - compiled
    """The least ``base_m[h] + adj_p[h]`` below ``threshold`` and the first scan position
    ``i`` (``h = order[i]``) holding it, or ``(value, n)`` if none is below.

    The least value does not depend on the order it is found in, so it is found in four
    independent running minima over the points in memory order (which the compiler pipelines:
    ~2.5x faster than one running minimum in scan order); the scan order then only decides which
    of equal values is first. ``base_m`` is +inf at the medoids (never a candidate)."""
    m0 = m1 = m2 = m3 = threshold
    n = base_m.shape[0]
    i = 0
    while i + 4 <= n:
        v0 = base_m[i] + adj_p[i]
        v1 = base_m[i + 1] + adj_p[i + 1]
        v2 = base_m[i + 2] + adj_p[i + 2]
        v3 = base_m[i + 3] + adj_p[i + 3]
        m0 = v0 if v0 < m0 else m0
        m1 = v1 if v1 < m1 else m1
        m2 = v2 if v2 < m2 else m2
        m3 = v3 if v3 < m3 else m3
        i += 4
    while i < n:
        v = base_m[i] + adj_p[i]
        m0 = v if v < m0 else m0
        i += 1
    m0 = m1 if m1 < m0 else m0
    m2 = m3 if m3 < m2 else m2
    m = m2 if m2 < m0 else m0
    if not m < threshold:
        return m, n
    for i in range(n):
        h = order[i]
        if base_m[h] + adj_p[h] == m:
            return m, i
    return m, n


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
    base_m = np.empty(n)  # base, +inf at the medoids
    swaps = 0
    while swaps < max_swaps:
        cost = 0.0
        for o in range(n):
            cost += weights[o] * near[o]
        # the first best swap in (scan position, medoid position) order: per medoid position the
        # first minimum in scan order, reading one row of adj, then the least value, the earliest
        # scan position, the lowest medoid position (what a scan position-major loop finds)
        threshold = -tol * max(cost, 1.0)  # a swap must lower the cost by more than this
        for h in range(n):
            base_m[h] = np.inf if is_medoid[h] else base[h]
        best, best_i, best_h, best_p = threshold, n, -1, -1
        for p in range(n_fixed, k):
            row_best, row_i = _row_min(base_m, adj[p], threshold, order)
            if row_i < n and (row_best < best or (row_best == best and row_i < best_i)):
                best, best_i, best_h, best_p = row_best, row_i, order[row_i], p
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
        _nearest_two_after_swap(dist, med, best_p, out, nearest, near, second, new_nearest, new_near, new_second)
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
