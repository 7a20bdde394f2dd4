"""``benchcast check-method``'s checks (:mod:`benchcast.methods.conformance`) on every built-in method:
the contract they state is the one the built-in methods keep (the slow ones at a fast setting)."""

from __future__ import annotations

import pytest
from helpers import FAST

from benchcast.methods import REGISTRY
from benchcast.methods.conformance import check_method


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_built_in_method_passes_the_contract(name):
    checks = check_method(name, FAST.get(name))
    assert [c.name for c in checks] == [
        "settings",
        "budget",
        "seed",
        "stored fit",
        "estimates",
        "item groups",
        "partial credit",
    ]
    assert all(c.passed for c in checks), [c.line() for c in checks if not c.passed]


def test_a_method_that_declares_partial_credit_but_rounds_it_fails_that_check_alone():
    from benchcast.methods import REGISTRY
    from benchcast.methods.base import UNIT, register
    from benchcast.methods.random_sampling import RandomSampling

    @register("rounding_sampling")
    class RoundingSampling(RandomSampling):
        """Random-Sampling that rounds what it reads: wrong on partial credit, right on 0/1."""

        scores = UNIT

        def estimate(self, oracle, rng):
            return oracle.query(self.coreset_).round().mean(axis=1)

    try:
        checks = {c.name: c for c in check_method("rounding_sampling")}
    finally:
        del REGISTRY["rounding_sampling"]
    assert not checks["partial credit"].passed and checks["estimates"].passed and checks["seed"].passed
    assert "those of the same answers rounded to 0/1" in checks["partial credit"].detail
