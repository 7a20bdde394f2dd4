"""benchcast.methods.pam: best-improvement PAM with fixed medoids (TailoredBench's N-set clustering)."""

from __future__ import annotations

import itertools

import kmedoids
import numpy as np
import pytest

from benchcast.methods.pam import ENGINES, pam_fixed, pam_reference


def engine(name: str):
    """pam_fixed with the given engine, for the tests that run every implementation."""

    def pam(*args, **kwargs):
        return pam_fixed(*args, engine=name, **kwargs)

    pam.__name__ = f"pam_fixed[{name}]"
    return pam


ALL = (engine("numba"), engine("numpy"), pam_reference)


def manhattan(points: np.ndarray) -> np.ndarray:
    return np.abs(points[:, None, :] - points[None, :, :]).sum(axis=-1)


def total_cost(dist: np.ndarray, medoids) -> float:
    return float(dist[list(medoids)].min(axis=0).sum())


def assert_swap_local_optimum(dist: np.ndarray, medoids: np.ndarray, n_fixed: int) -> None:
    """Brute force: no swap of a free medoid for a non-medoid lowers the total distance."""
    cost = total_cost(dist, medoids)
    others = sorted(set(range(len(dist))) - set(medoids.tolist()))
    for pos, h in itertools.product(range(n_fixed, len(medoids)), others):
        trial = medoids.copy()
        trial[pos] = h
        assert total_cost(dist, trial) >= cost - 1e-9 * cost, (pos, h)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_fixed", [0, 2, 5])
def test_fixed_medoids_stay_and_the_result_is_a_swap_local_optimum(seed, n_fixed):
    rng = np.random.default_rng(seed)
    dist = manhattan(rng.normal(size=(40, 3)))
    init = rng.choice(40, 7, replace=False)
    for pam in ALL:
        result = pam(dist, init, n_fixed)
        assert np.array_equal(result.medoids[:n_fixed], init[:n_fixed])
        assert len(set(result.medoids.tolist())) == 7
        assert_swap_local_optimum(dist, result.medoids, n_fixed)
        assert result.cost == pytest.approx(total_cost(dist, result.medoids))
        assert result.cost <= total_cost(dist, init) + 1e-9


@pytest.mark.parametrize("name", ENGINES)
@pytest.mark.parametrize("seed", range(5))
def test_incremental_and_reference_make_the_same_swaps_on_exact_distances(seed, name):
    """Integer distances (Hamming on 0/1 data, with duplicate rows and exact ties) are summed
    exactly, so the incremental bookkeeping must pick the very same swaps as the full recount."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, 2, size=(60, 8))
    answers = rows[rng.integers(0, 60, size=150)]  # many duplicate items: tied distances
    dist = (answers[:, None, :] != answers[None, :, :]).sum(axis=-1).astype(float)
    init = rng.choice(150, 12, replace=False)
    fast, slow = pam_fixed(dist, init, 4, engine=name), pam_reference(dist, init, 4)
    assert np.array_equal(fast.medoids, slow.medoids)
    assert fast.swaps == slow.swaps > 0
    assert np.array_equal(fast.labels, slow.labels)


@pytest.mark.parametrize("seed", range(6))
def test_the_two_engines_give_the_same_result_on_weighted_exact_distances(seed):
    """What TailoredBench runs: weighted distinct patterns, fixed medoids, a random scan order,
    ties everywhere, and a swap cap reached mid-way in one case."""
    rng = np.random.default_rng(seed)
    patterns = rng.integers(0, 2, size=(80, 6))
    dist = (patterns[:, None, :] != patterns[None, :, :]).sum(axis=-1) * 0.375  # exact on the grid
    weights = rng.integers(1, 9, size=80)
    init = rng.choice(80, 15, replace=False)
    order = rng.permutation(80)
    cap = 3 if seed == 0 else 100_000
    a, b = (pam_fixed(dist, init, 5, weights, order, max_swaps=cap, tol=0.0, engine=e) for e in ENGINES)
    assert a.swaps == b.swaps > 0 and a.cost == b.cost
    assert np.array_equal(a.medoids, b.medoids) and np.array_equal(a.moved, b.moved)
    assert np.array_equal(a.labels, b.labels)


def test_an_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="unknown PAM engine 'cuda'; use one of numba, numpy"):
        pam_fixed(np.zeros((2, 2)), [0], engine="cuda")


def test_without_fixed_medoids_it_is_pam_as_the_kmedoids_package_runs_it():
    rng = np.random.default_rng(7)
    dist = manhattan(rng.normal(size=(150, 4)))
    init = rng.choice(150, 9, replace=False)
    theirs = kmedoids.pam(dist, init.copy(), max_iter=1000)
    for name in ENGINES:
        ours = pam_fixed(dist, init, 0, engine=name)
        assert sorted(ours.medoids.tolist()) == sorted(int(m) for m in theirs.medoids)
        assert ours.cost == pytest.approx(theirs.loss)


def test_ties_join_the_first_medoid_in_medoid_order():
    dist = np.array([[0.0, 1.0, 1.0, 2.0], [1.0, 0.0, 2.0, 1.0], [1.0, 2.0, 0.0, 1.0], [2.0, 1.0, 1.0, 0.0]])
    for pam in ALL:
        result = pam(dist, [3, 0], n_fixed=2)  # nothing may move
        assert result.swaps == 0
        # items 1 and 2 are at distance 1 from both medoids: they join position 0 (item 3)
        assert result.labels.tolist() == [1, 0, 0, 0]


def test_bad_input_is_refused():
    dist = np.zeros((4, 4))
    with pytest.raises(ValueError, match="square"):
        pam_fixed(np.zeros((3, 4)), [0])
    with pytest.raises(ValueError, match="at least one"):
        pam_fixed(dist, [])
    with pytest.raises(ValueError, match="weights"):
        pam_fixed(dist, [0], weights=[1, 1, 0, 1])
    with pytest.raises(ValueError, match="permutation"):
        pam_fixed(dist, [0], order=[0, 1, 1, 2])
    with pytest.raises(IndexError, match="outside"):
        pam_fixed(dist, [0, 4])
    with pytest.raises(ValueError, match="n_fixed"):
        pam_fixed(dist, [0, 1], n_fixed=3)


def test_every_point_a_medoid_leaves_nothing_to_swap():
    """Few distinct answer patterns and many medoids: PAM makes no swap, every point serves itself."""
    dist = manhattan(np.array([0.0, 1.0, 3.0])[:, None])
    for pam in ALL:
        result = pam(dist, [2, 0, 1, 0], n_fixed=1, weights=[3, 1, 2])
        assert result.swaps == 0 and result.cost == 0.0
        assert result.labels.tolist() == [1, 2, 0]


def test_weighted_patterns_make_the_swaps_of_the_items_they_stand_for():
    """PAM on distinct answer patterns weighted by their counts is PAM on the items: the same
    cost, the same medoid patterns, the same labels once mapped back."""
    rng = np.random.default_rng(3)
    patterns = rng.integers(0, 2, size=(30, 9))
    counts = rng.integers(1, 6, size=30)
    items = np.repeat(np.arange(30), counts)  # item -> pattern, duplicates adjacent
    pattern_dist = (patterns[:, None, :] != patterns[None, :, :]).sum(axis=-1).astype(float)
    item_dist = pattern_dist[np.ix_(items, items)]
    first_item = np.concatenate([[0], np.cumsum(counts)[:-1]])  # scan each pattern at its first item
    init_patterns = rng.choice(30, 8, replace=False)
    on_items = pam_reference(item_dist, first_item[init_patterns], 3)
    for pam in ALL:
        on_patterns = pam(pattern_dist, init_patterns, 3, weights=counts)
        assert on_patterns.cost == on_items.cost
        assert np.array_equal(first_item[on_patterns.medoids], on_items.medoids)
        assert np.array_equal(on_patterns.labels[items], on_items.labels)


def test_a_medoid_listed_twice_serves_nobody_twice_and_is_swapped_away():
    dist = manhattan(np.arange(12, dtype=float)[:, None])
    for pam in ALL:
        result = pam(dist, [0, 0, 11], n_fixed=1)
        assert result.medoids[0] == 0 and len(set(result.medoids.tolist())) == 3
        assert_swap_local_optimum(dist, result.medoids, 1)


def test_ties_between_candidates_go_to_the_first_in_scan_order():
    """Points 1 and 2 are duplicates, equally good in place of medoid 3; the scan order decides."""
    dist = manhattan(np.array([0.0, 5.0, 5.0, 6.0])[:, None])
    for pam in ALL:
        assert pam(dist, [0, 3], n_fixed=1, order=[0, 1, 2, 3]).medoids.tolist() == [0, 1]
        assert pam(dist, [0, 3], n_fixed=1, order=[3, 2, 1, 0]).medoids.tolist() == [0, 2]


@pytest.mark.parametrize("seed", range(40))
def test_tied_swaps_go_to_the_first_in_scan_order_then_medoid_position(seed):
    """Few distinct distances, so many swaps tie on their gain (also between a candidate earlier in
    the scan for a later medoid position and a later candidate for an earlier one): the compiled
    engine, which searches medoid position by position, picks the swap of the full recount."""
    rng = np.random.default_rng(1000 + seed)
    points = rng.integers(0, 2, size=(30, 3))
    dist = (points[:, None, :] != points[None, :, :]).sum(axis=-1).astype(float)
    init = rng.choice(30, 6, replace=False)
    order = rng.permutation(30)
    fast = pam_fixed(dist, init, 1, order=order, tol=0.0, engine="numba")
    slow = pam_reference(dist, init, 1, order=order, tol=0.0)
    assert np.array_equal(fast.medoids, slow.medoids) and fast.swaps == slow.swaps


@pytest.mark.parametrize("seed", range(30))
def test_the_nearest_two_after_a_swap_equal_a_full_recount(seed):
    """The compiled engine updates each point's nearest medoid, its distance and the second smallest
    after a swap from the two changed rows; on tie-heavy distances, with a medoid listed twice, it
    must equal reading every medoid again (a wrong tie rule or a missed recount fails this)."""
    from benchcast.methods.pam_numba import _nearest_two, _nearest_two_after_swap

    rng = np.random.default_rng(seed)
    n, k = 25, 6
    points = rng.integers(0, 2, size=(n, 3))
    dist = (points[:, None, :] != points[None, :, :]).sum(axis=-1).astype(float)
    med = rng.choice(n, k, replace=False)
    med[rng.integers(1, k)] = med[0]  # a repeated medoid
    nearest, near, second = np.empty(n, np.int64), np.empty(n), np.empty(n)
    _nearest_two(dist, med, nearest, near, second)
    for _ in range(20):
        p = int(rng.integers(k))
        out, med[p] = med[p], int(rng.integers(n))
        got = np.empty(n, np.int64), np.empty(n), np.empty(n)
        _nearest_two_after_swap(dist, med, p, out, nearest, near, second, *got)
        want = np.empty(n, np.int64), np.empty(n), np.empty(n)
        _nearest_two(dist, med, *want)
        for g, w in zip(got, want):
            assert np.array_equal(g, w)
        nearest, near, second = want


@pytest.mark.parametrize("n", [1, 3, 4, 7, 8, 13])
def test_the_row_minimum_is_the_first_least_value_in_scan_order(n):
    """Four running minima find the least value; the scan order alone decides among equal ones."""
    from benchcast.methods.pam_numba import _row_min

    rng = np.random.default_rng(n)
    base = rng.integers(-3, 2, size=n).astype(float)
    adj = rng.integers(-2, 2, size=n).astype(float)
    base[rng.integers(n)] = np.inf  # a medoid
    order = rng.permutation(n)
    values = base + adj
    for threshold in (-0.0, -1.0, -10.0):
        m, i = _row_min(base, adj, threshold, order)
        below = [j for j in range(n) if values[order[j]] < threshold]
        if below:
            least = min(values[order[j]] for j in below)
            assert m == least and i == min(j for j in below if values[order[j]] == least)
        else:
            assert i == n
