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
    assert [c.name for c in checks] == ["settings", "budget", "seed", "stored fit", "estimates", "item groups"]
    assert all(c.passed for c in checks), [c.line() for c in checks if not c.passed]
