"""benchcast.workflow.schedule: critical path and the list-scheduling projection, on graphs with known answers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from benchcast.workflow.schedule import critical_path, remaining_path, simulate


def test_chain_takes_its_sum_on_any_number_of_cores():
    seconds = {"a": 3.0, "b": 4.0, "c": 5.0}
    deps = {"b": {"a"}, "c": {"b"}}
    assert critical_path(seconds, deps) == (12.0, ["a", "b", "c"])
    assert simulate(seconds, deps, 1) == simulate(seconds, deps, 8) == 12.0


def test_independent_jobs_longest_first():
    # LPT on 2 cores: 7 | 5, then 4 -> core 2 (5+4=9), 3 -> core 1 (7+3=10)
    seconds = {"a": 7.0, "b": 5.0, "c": 4.0, "d": 3.0}
    assert simulate(seconds, {}, 2) == 10.0
    assert simulate(seconds, {}, 1) == 19.0
    assert simulate(seconds, {}, 4) == 7.0


def test_critical_path_rule_starts_the_long_chain_first():
    # a (1 s) gates a 10 s job; b, c are 5 s each and independent. Starting a first: 11 s on 2 cores;
    # a scheduler by own duration (b, c first) would take 16 s.
    seconds = {"a": 1.0, "long": 10.0, "b": 5.0, "c": 5.0}
    deps = {"long": {"a"}}
    assert remaining_path(seconds, deps)["a"] == 11.0
    assert simulate(seconds, deps, 2) == 11.0
    assert critical_path(seconds, deps) == (11.0, ["a", "long"])


def test_bounds_on_random_graphs():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = 30
        seconds = {f"j{i}": float(rng.integers(1, 50)) for i in range(n)}
        deps = {f"j{i}": {f"j{k}" for k in range(i) if rng.random() < 0.1} for i in range(n)}
        cp, chain = critical_path(seconds, deps)
        assert all(b in deps[a] for b, a in itertools.pairwise(chain))
        total = sum(seconds.values())
        for cores in (1, 2, 4, 64):
            span = simulate(seconds, deps, cores)
            assert span >= max(cp, total / cores) - 1e-9
            assert span <= cp + total / cores + 1e-9  # Graham's bound for list schedules
        assert simulate(seconds, deps, 1) == pytest.approx(total)
        assert simulate(seconds, deps, 64) == pytest.approx(cp)


def test_bad_graphs_are_refused():
    with pytest.raises(ValueError, match="no measured time"):
        simulate({"a": 1.0}, {"a": {"ghost"}}, 2)
    with pytest.raises(ValueError, match="cycle"):
        simulate({"a": 1.0, "b": 1.0}, {"a": {"b"}, "b": {"a"}}, 2)
    with pytest.raises(ValueError, match="cores"):
        simulate({"a": 1.0}, {}, 0)


def test_snakemake_priorities_replace_the_critical_path_rule():
    # the same graph as above: with priorities that put b and c first, the chain a -> long ends last
    seconds = {"a": 1.0, "long": 10.0, "b": 5.0, "c": 5.0}
    deps = {"long": {"a"}}
    assert simulate(seconds, deps, 2, priority={"b": 5, "c": 5}) == 16.0
    # priorities that agree with the chain give the critical-path schedule; absent = 0, ties by name
    assert simulate(seconds, deps, 2, priority={"a": 10, "long": 10}) == 11.0
    # all 0: a and b start (names); at 1 s c goes before long (names), long starts at 5 s, ends at 15 s
    assert simulate(seconds, deps, 2, priority={}) == 15.0
    assert simulate(seconds, deps, 1, priority={"b": 1}) == 21.0
