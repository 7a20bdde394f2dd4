"""The native-fault tier: the products benchcast guards (:mod:`benchcast.blas`), each at a size and a
thread count where the unguarded call faults, each in its own process so that a crash fails one test
and not the suite.

Each case needs 5-10 GB of memory and 5-30 s, so the tier runs apart from the suite and serially
(``python -m pytest tests -m native``; ``.ci/run`` runs it after the suite). The sizes: NumPy's
OpenBLAS (0.3.31, SkylakeX kernel) faults in threaded SYRK from a side of about 24,100
(``benchcast.blas``); 24,200 x 100 faults at 2 to 32 threads and costs seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.native

SIDE, DEPTH = 24_200, 100
THREADS = ("default", "32")  # the machine's own count (OpenBLAS: one per core), and a workstation's

SETUP = f"""
import json, numpy as np
rng = np.random.default_rng(0)
X = rng.integers(0, 2, size=({SIDE}, {DEPTH})).astype(np.float64)
rows = rng.choice({SIDE}, size=40, replace=False)
"""


def run(code: str, threads: str) -> subprocess.CompletedProcess:
    env = {
        k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    }
    if threads != "default":
        env["OPENBLAS_NUM_THREADS"] = threads
    return subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", SETUP + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )


def skylakex_blas() -> bool:
    probe = "from threadpoolctl import threadpool_info; import numpy; print(threadpool_info()[0].get('architecture'))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return out.strip() == "SkylakeX"


def test_the_fault_is_real_on_this_blas():
    """What the guard is for: NumPy's own ``X @ X.T`` at this size kills the process (SIGSEGV) with
    two threads on OpenBLAS's SkylakeX kernel; elsewhere the test says why it cannot show it."""
    if not skylakex_blas():
        pytest.skip("NumPy's OpenBLAS does not run its SkylakeX kernel on this CPU: the fault does not occur here")
    proc = run("c = X @ X.T\nprint('finished')", "2")
    assert proc.returncode == -11, (proc.returncode, proc.stderr[-2000:])


@pytest.mark.parametrize("threads", THREADS)
def test_guarded_grams_at_a_faulting_size(threads):
    """rows_gram and columns_gram finish, and every sampled entry is the exact integer inner product."""
    proc = run(
        """
        from benchcast.blas import columns_gram, rows_gram
        G = rows_gram(X)
        H = columns_gram(np.ascontiguousarray(X.T))
        want = X[rows] @ X.T  # 40 rows: a GEMM, far from the fault
        print(json.dumps({"rows": bool(np.array_equal(G[rows], want)), "columns": bool(np.array_equal(H[rows], want)),
                          "symmetric": bool(np.array_equal(G[rows][:, rows], G[rows][:, rows].T))}))
        """,
        threads,
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert json.loads(proc.stdout.splitlines()[-1]) == {"rows": True, "columns": True, "symmetric": True}


@pytest.mark.parametrize("threads", THREADS)
def test_anchor_points_correlations_at_a_faulting_size(threads):
    """The reported crash (Anchor Points' item correlations, ``np.cov``'s product) at 24,200 items:
    it finishes, and sampled entries are ``np.corrcoef`` of those two items."""
    proc = run(
        """
        from benchcast.methods.anchors import item_correlations
        source = np.ascontiguousarray(X.T)  # models x items
        C = item_correlations(source)
        cols = rows[:8]
        want = np.nan_to_num(np.corrcoef(source[:, cols], rowvar=False))
        print(json.dumps({"shape": list(C.shape), "close": bool(np.allclose(C[np.ix_(cols, cols)], want, atol=1e-12))}))
        """,
        threads,
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert json.loads(proc.stdout.splitlines()[-1]) == {"shape": [SIDE, SIDE], "close": True}


# Threaded LAPACK faults too: Cholesky (dpotrf) from a side between 15,000 and 16,000, LU (dgesv) by
# 24,200 (benchcast.blas); lapack_guard runs such a factorisation on one thread.
FACTOR_SIDE = 16_000

FACTOR_SETUP = f"""
import json, numpy as np
from benchcast.blas import lapack_guard, rows_gram
rng = np.random.default_rng(0)
X = rng.integers(0, 2, size=({FACTOR_SIDE}, 100)).astype(np.float64)
K = rows_gram(X)
K[np.diag_indices_from(K)] += 1.0
rows = rng.choice({FACTOR_SIDE}, size=40, replace=False)
"""


def test_threaded_cholesky_faults_unguarded_on_this_blas():
    if not skylakex_blas():
        pytest.skip("NumPy's OpenBLAS does not run its SkylakeX kernel on this CPU: the fault does not occur here")
    proc = run(FACTOR_SETUP + "np.linalg.cholesky(K)\nprint('finished')", "2")
    assert proc.returncode == -11, (proc.returncode, proc.stderr[-2000:])


@pytest.mark.native_long
def test_a_guarded_cholesky_at_a_faulting_side_finishes_and_is_right():
    """Through lapack_guard, with a workstation's 32 threads asked for: it finishes, and sampled
    rows of ``L Lᵀ`` are ``K``'s (45 s on one thread: by hand, with the others below)."""
    proc = run(
        FACTOR_SETUP
        + """
with lapack_guard(K.shape[0]):
    L = np.linalg.cholesky(K)
print(json.dumps({"close": bool(np.allclose(L[rows] @ L.T, K[rows], rtol=1e-10, atol=1e-8))}))
""",
        "32",
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert json.loads(proc.stdout.splitlines()[-1]) == {"close": True}


@pytest.mark.native_long
@pytest.mark.parametrize("threads", THREADS)
def test_the_guarded_factorisations_at_the_sides_where_each_faults(threads):
    """Minutes each on one thread (so not in CI: ``python -m pytest tests -m native_long``): ridge's
    LU solve at 24,200 and a Cholesky there, through the guard, with the default threads and 32."""
    proc = run(
        """
from benchcast.blas import lapack_guard, rows_gram
K = rows_gram(X)
K[np.diag_indices_from(K)] += 1.0
b = np.ones(len(K))
with lapack_guard(len(K)):
    x = np.linalg.solve(K, b)
    L = np.linalg.cholesky(K)
print(json.dumps({"solve": bool(np.allclose(K[rows] @ x, b[rows], atol=1e-6)),
                  "cholesky": bool(np.allclose(L[rows] @ L.T, K[rows], rtol=1e-10, atol=1e-8))}))
""",
        threads,
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert json.loads(proc.stdout.splitlines()[-1]) == {"solve": True, "cholesky": True}
