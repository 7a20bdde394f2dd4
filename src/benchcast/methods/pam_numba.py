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
