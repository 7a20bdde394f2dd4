"""benchcast.blas: the guarded products give NumPy's bytes below the guard and the same products above
it (the faulting sizes themselves: tests/native); importing benchcast changes no thread setting."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from benchcast import blas


@pytest.mark.parametrize("shape", [(1, 5), (7, 3), (300, 50), (2000, 400)])
def test_below_the_guard_the_bytes_are_numpys(shape):
    rng = np.random.default_rng(3)
    X = rng.standard_normal(shape)
    X -= X.mean(axis=1, keepdims=True)
    assert np.array_equal(blas.rows_gram(X), X @ X.T)
    assert np.array_equal(blas.rows_gram(X), np.dot(X, X.T.conj()))  # np.cov's call
    assert np.array_equal(blas.columns_gram(X), X.T @ X)
    B = rng.integers(0, 2, size=shape).astype(np.float32)
    assert np.array_equal(blas.rows_gram(B), B @ B.T)


def test_above_the_guard_row_blocks_give_the_same_product(monkeypatch):
    """Above the guard: the product exact where every route is (integer sums), close elsewhere,
    whatever the last block's size."""
    monkeypatch.setattr(blas, "SYRK_SAFE_SIDE", 64)
    monkeypatch.setattr(blas, "_BLOCK_ROWS", 16)
    rng = np.random.default_rng(4)
    B = rng.integers(0, 2, size=(150, 40)).astype(np.float64)  # integer sums: exact on any route
    assert np.array_equal(blas.rows_gram(B), B @ B.T)
    assert np.array_equal(blas.columns_gram(B.T.copy()), B @ B.T)
    X = rng.standard_normal((150, 40))
    G = blas.rows_gram(X)
    assert G.dtype == np.float64 and G.shape == (150, 150)
    np.testing.assert_allclose(G, X @ X.T, rtol=1e-12, atol=1e-12)
    for n in (64, 65, 80, 96, 97):  # one block past the guard, a ragged last block, whole blocks
        Y = rng.standard_normal((n, 9))
        np.testing.assert_allclose(blas.rows_gram(Y), Y @ Y.T, rtol=1e-12, atol=1e-12)
        Z = rng.integers(0, 2, size=(n, 9)).astype(np.float64)
        assert np.array_equal(blas.rows_gram(Z), Z @ Z.T)
    assert np.array_equal(blas.rows_gram(X.astype(np.float32)).dtype, np.float32)
    small = rng.standard_normal((20, 300))  # 20 rows: under the guard however many columns
    assert np.array_equal(blas.rows_gram(small), small @ small.T)


def test_importing_benchcast_changes_no_thread_setting():
    """A program that imports benchcast (its methods, the new-model tools, the studies) keeps its
    BLAS threads and its environment; only the workflow's jobs and the command line pin one."""
    code = """
import json, os
from threadpoolctl import threadpool_info
import numpy
before = ([i["num_threads"] for i in threadpool_info()], {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")})
import benchcast, benchcast.methods, benchcast.new_model, benchcast.studies, benchcast.blas
from benchcast.methods import make_method
make_method("pca")
after = ([i["num_threads"] for i in threadpool_info()][: len(before[0])], {k: os.environ.get(k) for k in before[1]})
print(json.dumps([before, after]))
"""
    env_free = {k: v for k, v in __import__("os").environ.items() if k not in blas.THREAD_VARIABLES}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env_free, check=True)
    before, after = json.loads(out.stdout.splitlines()[-1])
    assert before == after


CALLER = """
import json, os, sys
import numpy as np, pandas as pd
from threadpoolctl import threadpool_info
import benchcast
rng = np.random.default_rng(0)
S = (rng.random((40, 120)) < 0.6).astype(int)
board = pd.DataFrame(S, columns=[f"i{j}" for j in range(120)])
board.insert(0, "model_id", [f"m{i}" for i in range(40)])
board.to_csv("board.csv", index=False)
benchcast.select("board.csv", "gp_irt", 10, {}, log=lambda *a: None)  # a cold fit: SciPy and OpenMP load inside
print(json.dumps({"libs": {i["internal_api"] + ":" + os.path.basename(i["filepath"]): i["num_threads"] for i in threadpool_info()},
                  "env": os.environ.get("OPENBLAS_NUM_THREADS")}))
"""

FRESH = """
import json, os
import numpy, scipy.linalg, sklearn.linear_model
from threadpoolctl import threadpool_info
print(json.dumps({i["internal_api"] + ":" + os.path.basename(i["filepath"]): i["num_threads"] for i in threadpool_info()}))
"""


@pytest.mark.parametrize("openblas_threads", [None, "3"])
def test_a_first_fit_leaves_the_callers_threads_as_they_would_be_without_it(tmp_path, openblas_threads):
    """benchcast.select builds its fit with one BLAS thread; the libraries that load during the build
    (SciPy's OpenBLAS, scikit-learn's OpenMP) end with the thread count they would have read had the
    caller loaded them, and the caller's variables are as they were."""
    import os

    env = {k: v for k, v in os.environ.items() if k not in blas.THREAD_VARIABLES}
    if openblas_threads:
        env["OPENBLAS_NUM_THREADS"] = openblas_threads
    run = dict(capture_output=True, text=True, env=env, cwd=tmp_path, check=True)
    after = json.loads(subprocess.run([sys.executable, "-c", CALLER], **run).stdout.splitlines()[-1])
    fresh = json.loads(subprocess.run([sys.executable, "-c", FRESH], **run).stdout.splitlines()[-1])
    assert after["env"] == openblas_threads
    assert len(after["libs"]) >= 2 and after["libs"] == {k: v for k, v in fresh.items() if k in after["libs"]}


def test_the_lapack_guard_limits_threads_only_at_faulting_sides(monkeypatch):
    """Below the guard's side the caller's threads (no limit at all); from it on, one thread in
    every loaded BLAS for the call, SciPy's included, and the caller's counts back afterwards."""
    code = """
import json
import scipy.linalg
from threadpoolctl import threadpool_info
from benchcast import blas
blas.LAPACK_SAFE_SIDE = 64
counts = lambda: sorted(i["num_threads"] for i in threadpool_info())
before = counts()
with blas.lapack_guard(63):
    below = counts()
with blas.lapack_guard(64):
    at = counts()
print(json.dumps([before, below, at, counts()]))
"""
    env = {k: v for k, v in __import__("os").environ.items() if k not in blas.THREAD_VARIABLES}
    env["OPENBLAS_NUM_THREADS"] = "2"  # the caller's own setting, whatever the machine's cores
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    before, below, at, after = json.loads(out.stdout.splitlines()[-1])
    assert len(before) >= 2  # NumPy's and SciPy's OpenBLAS at least
    if max(before) < 2:
        pytest.skip("OpenBLAS counts one core here: there is no thread to limit")
    assert below == before and after == before
    assert at == [1] * len(before)
