"""The compiled certified bounds of Random-Search-Learn's pruning (benchcast.methods.ridge_numba):
lower bounds on the exact fixed-alpha validation gaps on both of its Gram routes, the float64
answer where a float32 factorisation fails, and the same bounds with the BLAS's default threads on
a large input (in a subprocess, so that a crash fails this test only)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from benchcast.methods.ridge import (
    DEFAULT_ALPHAS,
    FLOAT32_MIN_COLUMNS,
    CandidateProducts,
    ridge_validation_gaps_per_alpha,
)


def _problem(m_train, n_items, p, n_cand, binary, seed):
    rng = np.random.default_rng(seed)
    A = rng.random((m_train + 30, n_items))
    A = (A < rng.random(n_items)).astype(float) if binary else A
    S, V = A[:m_train], A[m_train:]
    cands = np.stack([rng.permutation(n_items)[:p] for _ in range(n_cand)])
    return S, S.mean(axis=1), V, V.mean(axis=1), cands


@pytest.mark.parametrize(
    "m_train,binary,gathered",
    [(200, True, True), (200, False, True), (100, True, False)],  # from the all-columns Gram / per candidate
)
def test_certified_bounds_lie_just_below_the_exact_gaps_on_both_gram_routes(m_train, binary, gathered):
    p = FLOAT32_MIN_COLUMNS + 10
    S, y, V, yv, cands = _problem(m_train, 260, p, 12, binary, seed=m_train + binary)
    assert CandidateProducts(S, V).gather_gram == gathered
    exact = ridge_validation_gaps_per_alpha(S, y, V, yv, cands, DEFAULT_ALPHAS, batch_size=5, form="primal")
    bound = ridge_validation_gaps_per_alpha(
        S, y, V, yv, cands, DEFAULT_ALPHAS, batch_size=5, form="primal", certified_float32=True
    )
    assert (bound <= exact + 1e-13).all()
    np.testing.assert_allclose(bound, exact, rtol=1e-2)
    assert (bound < exact).any()  # the float32 route ran
    # batching does not change a bound (the compiled loop solves candidate by candidate)
    again = ridge_validation_gaps_per_alpha(
        S, y, V, yv, cands, DEFAULT_ALPHAS, batch_size=64, form="primal", certified_float32=True
    )
    np.testing.assert_array_equal(again, bound)


def test_a_failed_float32_factorisation_gets_the_exact_float64_gaps():
    """A negative alpha makes every regularised Gram matrix indefinite: ``spotrf`` fails, and the
    candidate's gaps come from the float64 route (LU there) for every alpha, not a wrong bound."""
    S, y, V, yv, cands = _problem(200, 260, FLOAT32_MIN_COLUMNS + 10, 4, True, seed=3)
    alphas = (-1e6, 1.0)
    exact = ridge_validation_gaps_per_alpha(S, y, V, yv, cands, alphas, form="primal")
    bound = ridge_validation_gaps_per_alpha(S, y, V, yv, cands, alphas, form="primal", certified_float32=True)
    assert np.isfinite(bound).all()
    np.testing.assert_array_equal(bound, exact)


_LARGE = """
import json, sys
import numpy as np
from benchcast.methods.ridge import DEFAULT_ALPHAS, ridge_validation_gaps_per_alpha
rng = np.random.default_rng(8)
A = (rng.random((330, 2000)) < rng.random(2000)).astype(float)
S, V = A[:300], A[300:]
cands = np.stack([rng.permutation(2000)[:200] for _ in range(60)])
args = (S, S.mean(axis=1), V, V.mean(axis=1), cands, DEFAULT_ALPHAS)
exact = ridge_validation_gaps_per_alpha(*args, form="primal")
bound = ridge_validation_gaps_per_alpha(*args, form="primal", certified_float32=True)
print(json.dumps({"below": bool((bound <= exact + 1e-13).all()), "rel": float(np.max(1 - bound / exact))}))
"""


def test_certified_bounds_at_scale_with_the_blas_default_threads():
    """300 models x 2,000 items, 200-item candidates, the BLAS's own thread count (a workstation's
    default), in a fresh process."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    proc = subprocess.run([sys.executable, "-c", _LARGE], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["below"] and 0 <= result["rel"] < 1e-2
