"""Tests for the budget-enforcing Oracle, the source/target splits and the seed scheme."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from benchcast import seeding
from benchcast.errors import BenchcastError, BudgetExceeded, ConfigError
from benchcast.oracle import Oracle
from benchcast.trials.splits import Split, extrapolation_split, interpolation_split, make_split

# --------------------------------------------------------------------------- Oracle

S = np.arange(30, dtype=np.float64).reshape(3, 10)  # value = 10*row + item: easy to check


def test_oracle_answers_correct_values():
    o = Oracle(S, budget=4)
    got = o.query([7, 2, 5])
    np.testing.assert_array_equal(got, [[7, 2, 5], [17, 12, 15], [27, 22, 25]])
    assert o.n_targets == 3 and o.n_items == 10 and o.budget == 4
    # the answer is a copy: modifying it does not change the oracle's scores
    got[:] = -1
    np.testing.assert_array_equal(o.query([7]), [[7], [17], [27]])


def test_oracle_counts_distinct_items_per_target_and_reasking_is_free():
    o = Oracle(S, budget=4)
    assert o.spent.tolist() == [0, 0, 0]
    o.query([1, 1, 2])  # duplicates inside one query count once
    assert o.spent.tolist() == [2, 2, 2]
    o.query([2, 1])  # re-asking: free
    assert o.spent.tolist() == [2, 2, 2]
    o.query([3, 4])  # exactly at budget
    assert o.spent.tolist() == [4, 4, 4]
    for _ in range(3):
        np.testing.assert_array_equal(o.query([4, 3, 2, 1]), S[:, [4, 3, 2, 1]])
    assert o.spent.tolist() == [4, 4, 4]


def test_oracle_refuses_past_budget_and_state_is_unchanged():
    o = Oracle(S, budget=3)
    o.query([0, 1])
    before = o._seen.copy()
    with pytest.raises(BudgetExceeded) as info:
        o.query([2, 3])  # would make 4 distinct
    assert isinstance(info.value, BenchcastError) and isinstance(info.value, RuntimeError)
    assert "budget is 3" in str(info.value)
    np.testing.assert_array_equal(o._seen, before)
    assert o.spent.tolist() == [2, 2, 2]
    # item 2 alone still fits, and the refused item 3 was not charged
    np.testing.assert_array_equal(o.query([2]), S[:, [2]])
    assert o.spent.tolist() == [3, 3, 3]
    with pytest.raises(BudgetExceeded):
        o.query([3])
    assert o.spent.tolist() == [3, 3, 3]
    o.query([0, 1, 2])  # everything already seen stays free
    assert o.spent.tolist() == [3, 3, 3]


def test_oracle_refuses_single_oversized_query():
    o = Oracle(S, budget=2)
    with pytest.raises(BudgetExceeded):
        o.query(np.arange(3))
    assert o.spent.tolist() == [0, 0, 0]


def test_oracle_per_row_queries():
    o = Oracle(S, budget=2)
    np.testing.assert_array_equal(o.query([5], rows=[1]), [[15]])
    assert o.spent.tolist() == [0, 1, 0]
    np.testing.assert_array_equal(o.query([6, 9], rows=[0, 2]), [[6, 9], [26, 29]])
    assert o.spent.tolist() == [2, 1, 2]
    # row 1 can still take one more item; rows 0 and 2 cannot
    np.testing.assert_array_equal(o.query([0], rows=[1]), [[10]])
    assert o.spent.tolist() == [2, 2, 2]
    with pytest.raises(BudgetExceeded) as info:
        o.query([7], rows=[2])
    assert "target row 2" in str(info.value)
    # a refused multi-row query charges no row at all
    o2 = Oracle(S, budget=2)
    o2.query([0, 1], rows=[0])
    with pytest.raises(BudgetExceeded):
        o2.query([2], rows=[1, 0])
    assert o2.spent.tolist() == [2, 0, 0]


def test_oracle_budget_larger_than_items_refused_at_construction():
    with pytest.raises(BudgetExceeded, match="11"):
        Oracle(S, budget=11)
    Oracle(S, budget=10)  # equal is allowed


def test_oracle_rejects_bad_input():
    with pytest.raises(ValueError):
        Oracle(np.zeros(5), budget=1)
    o = Oracle(S, budget=3)
    with pytest.raises(IndexError):
        o.query([10])
    with pytest.raises(IndexError):
        o.query([-1])
    with pytest.raises(ValueError):
        o.query([[1, 2]])
    assert o.spent.tolist() == [0, 0, 0]


# --------------------------------------------------------------------------- splits


@pytest.mark.parametrize("m", [4, 7, 40, 41, 83, 448])
def test_interpolation_split_sizes_disjoint_cover(m):
    split = interpolation_split(m, np.random.default_rng(m))
    assert isinstance(split, Split)
    assert len(split.target) == int(0.25 * m)
    assert len(split.source) == m - int(0.25 * m)
    assert np.intersect1d(split.source, split.target).size == 0
    np.testing.assert_array_equal(np.sort(np.concatenate([split.source, split.target])), np.arange(m))
    assert np.all(np.diff(split.source) > 0) and np.all(np.diff(split.target) > 0)


def test_interpolation_split_known_answer_from_permutation():
    perm = np.random.default_rng(5).permutation(20)
    split = interpolation_split(20, np.random.default_rng(5))
    np.testing.assert_array_equal(split.target, np.sort(perm[:5]))
    np.testing.assert_array_equal(split.source, np.sort(perm[5:]))
    other = interpolation_split(20, np.random.default_rng(6))
    assert not np.array_equal(split.target, other.target)


def test_make_split_interpolation_uses_rng_and_params():
    acc = np.linspace(0, 1, 40)
    a = make_split("interpolation", acc, np.random.default_rng(1))
    b = interpolation_split(40, np.random.default_rng(1))
    np.testing.assert_array_equal(a.target, b.target)
    c = make_split("interpolation", acc, np.random.default_rng(1), {"target_fraction": 0.5})
    assert len(c.target) == 20


def test_extrapolation_split_bottom_half_sources_top_30pct_targets():
    rng = np.random.default_rng(0)
    m = 47
    acc = rng.random(m)
    split = extrapolation_split(acc)
    order = np.argsort(acc)
    assert len(split.source) == int(0.5 * m) == 23
    assert len(split.target) == int(0.3 * m) == 14
    np.testing.assert_array_equal(split.source, np.sort(order[:23]))
    np.testing.assert_array_equal(split.target, np.sort(order[-14:]))
    assert acc[split.source].max() < acc[split.target].min()
    assert np.intersect1d(split.source, split.target).size == 0


def test_extrapolation_split_stable_tie_breaking_known_answer():
    acc = np.array([0.5, 0.1, 0.5, 0.9, 0.1, 0.5, 0.5, 0.3, 0.7, 0.5])
    # stable order: 1, 4 (0.1), 7 (0.3), 0, 2, 5, 6, 9 (0.5), 8 (0.7), 3 (0.9)
    split = extrapolation_split(acc)
    assert split.source.tolist() == [0, 1, 2, 4, 7]
    assert split.target.tolist() == [3, 8, 9]
    # all tied: bottom = first rows, top = last rows
    flat = extrapolation_split(np.full(10, 0.4))
    assert flat.source.tolist() == [0, 1, 2, 3, 4]
    assert flat.target.tolist() == [7, 8, 9]


def test_make_split_extrapolation_ignores_rng():
    acc = np.random.default_rng(3).random(30)
    a = make_split("extrapolation", acc, np.random.default_rng(0))
    b = make_split("extrapolation", acc, np.random.default_rng(99))
    np.testing.assert_array_equal(a.source, b.source)
    np.testing.assert_array_equal(a.target, b.target)
    c = make_split("extrapolation", acc, np.random.default_rng(0), {"source_fraction": 0.4, "target_fraction": 0.2})
    assert len(c.source) == 12 and len(c.target) == 6


def test_given_split_takes_the_file_roles_in_every_trial():
    roles = ["source", "target", "source", "target", "target"]
    for seed in (0, 1):
        split = make_split("given", np.zeros(5), np.random.default_rng(seed), None, roles)
        assert split.source.tolist() == [0, 2] and split.target.tolist() == [1, 3, 4]
    for bad in (None, ["scores"] * 5):
        with pytest.raises(ConfigError, match="npy_pair"):
            make_split("given", np.zeros(5), np.random.default_rng(0), None, bad)


def test_unknown_split_is_config_error():
    with pytest.raises(ConfigError) as info:
        make_split("random", np.zeros(10), np.random.default_rng(0))
    msg = str(info.value)
    assert "random" in msg and "interpolation" in msg and "extrapolation" in msg


# --------------------------------------------------------------------------- seeding


def test_stream_id_is_crc32():
    assert seeding.stream_id("coreset") == zlib.crc32(b"coreset")
    assert seeding.stream_id("split") != seeding.stream_id("coreset")


def test_same_key_identical_draws():
    a = seeding.rng(42, 3, "coreset").permutation(1000)
    b = seeding.rng(42, 3, "coreset").permutation(1000)
    np.testing.assert_array_equal(a, b)
    expected = np.random.default_rng(np.random.SeedSequence([42, 3, zlib.crc32(b"coreset")])).permutation(1000)
    np.testing.assert_array_equal(a, expected)


@pytest.mark.parametrize(
    "other",
    [
        (42, 3, "split"),
        (42, 4, "coreset"),
        (43, 3, "coreset"),
        (42, 3, "method:random_search_learn"),
        (42, 0, "coreset"),
    ],
)
def test_different_key_different_draws(other):
    a = seeding.rng(42, 3, "coreset").random(50)
    b = seeding.rng(*other).random(50)
    assert not np.array_equal(a, b)


def test_numpy_integer_arguments_are_accepted():
    a = seeding.rng(np.int64(7), np.int32(2), "split").random(5)
    b = seeding.rng(7, 2, "split").random(5)
    np.testing.assert_array_equal(a, b)
