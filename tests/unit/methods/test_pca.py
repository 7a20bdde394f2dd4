"""PCA imputation's iterative fast path (warm-started block Davidson, rows > 128) against the
paper code's loop (``SimpleImputer(mean)`` + scikit-learn ``PCA(svd_solver="full")``).

``tests/unit/methods/test_methods.py`` checks small matrices, which use the dense eigensolver; these use
matrices large enough for :func:`benchcast.methods.pca._davidson` to run, and check that it did.
"""

from __future__ import annotations

import numpy as np
import pytest
from simdata import irt_responses
from threadpoolctl import threadpool_limits

from benchcast.methods import make_method
from benchcast.methods import pca as P
from benchcast.methods.pca import pca_impute_paper_loop
from benchcast.oracle import Oracle


@pytest.fixture(autouse=True)
def _single_blas_thread():
    with threadpool_limits(limits=1):
        yield


def low_rank_binary(n_models, n_items, rank, seed):
    """Answers of a rank-``rank`` logistic model (a multidimensional 2PL with unit-variance loadings)."""
    return irt_responses(n_models, n_items, seed=seed, dims=rank, disc=(0.0, 1.0), diff_scale=1.0).scores


@pytest.fixture
def davidson_calls(monkeypatch):
    calls = []
    real = P._davidson
    monkeypatch.setattr(P, "_davidson", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    return calls


@pytest.mark.parametrize("k", [2, 6])
@pytest.mark.parametrize("layout", ["shared", "scattered"])
def test_davidson_path_equals_sklearn_loop(davidson_calls, k, layout):
    S = low_rank_binary(180, 90, rank=4, seed=k)
    rng = np.random.default_rng(10 + k)
    missing = np.zeros_like(S, dtype=bool)
    if layout == "shared":  # PCAImpute's layout: rows observed on a core set only
        rows = rng.permutation(180)[:45]
        missing[np.ix_(rows, np.setdiff1d(np.arange(90), rng.permutation(90)[:15]))] = True
    else:
        missing = rng.random(S.shape) < 0.1
        missing[:, 0] = False
    got = P.pca_impute(S, missing, k, max_iter=40)
    assert davidson_calls, "the iterative eigensolver did not run"
    ref = pca_impute_paper_loop(S, missing, k, max_iter=40)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(got[~missing], S[~missing])


def test_pca_method_on_davidson_sizes_matches_reference_cv_and_estimate(davidson_calls):
    scores = low_rank_binary(200, 80, rank=3, seed=7)
    src, tgt = scores[:160], scores[160:]
    n, k_grid = 12, [2, 5]
    m = make_method("pca", {"k_grid": k_grid, "max_iter": 30}).fit(src, n, np.random.default_rng(3))
    # the same draws as PCAImpute.fit, then the reference loop for every k
    rng = np.random.default_rng(3)
    core = rng.permutation(80)[:n]
    val = rng.permutation(160)[int(160 * 0.75) :]
    missing = np.zeros_like(src, dtype=bool)
    missing[np.ix_(val, np.setdiff1d(np.arange(80), core))] = True
    gaps = [
        np.abs(pca_impute_paper_loop(src, missing, k, 30)[val].mean(axis=1) - src[val].mean(axis=1)).mean()
        for k in k_grid
    ]
    np.testing.assert_array_equal(m.coreset_, core)
    assert m.k_ == k_grid[int(np.argmin(gaps))]
    assert m.cv_gap_ == pytest.approx(min(gaps), abs=1e-9)
    est = m.estimate(Oracle(tgt, n), None)
    stacked = np.vstack([src, tgt])
    mask = np.zeros_like(stacked, dtype=bool)
    mask[160:] = True
    mask[160:, core] = False
    ref = pca_impute_paper_loop(stacked, mask, m.k_, 30)[160:].mean(axis=1)
    np.testing.assert_allclose(est, ref, rtol=0, atol=1e-9)
    assert davidson_calls


def shared_layout(n_rows, n_cols, n_incomplete, n_core, seed):
    """PCAImpute's layout: ``n_incomplete`` rows observed only on a random core set."""
    rng = np.random.default_rng(seed)
    missing = np.zeros((n_rows, n_cols), dtype=bool)
    rows = rng.permutation(n_rows)[:n_incomplete]
    missing[np.ix_(rows, np.setdiff1d(np.arange(n_cols), rng.permutation(n_cols)[:n_core]))] = True
    return missing


@pytest.mark.parametrize(("n_rows", "k", "iterative"), [(220, 20, True), (220, 5, True), (160, 20, False)])
def test_coefficient_form_full_run_equals_sklearn_loop(davidson_calls, n_rows, k, iterative):
    # The shared-layout loop runs on coefficients of the complete rows (never on the |M| item
    # columns) with the history-warm-started Davidson; over a full 100-iteration run (the real
    # data never meet tol) it must stay within the stated tolerance of the plain loop. With
    # 160 rows and k = 20 the dense eigensolver is used throughout (fewer than 7 rows per block
    # column) -- the same loop, exact eigenpairs.
    S = low_rank_binary(n_rows, 300, rank=6, seed=n_rows + k)
    missing = shared_layout(n_rows, 300, n_rows // 4, 40, seed=k)
    got = P.pca_impute(S, missing, k)
    assert bool(davidson_calls) == iterative
    ref = pca_impute_paper_loop(S, missing, k)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-8)
    np.testing.assert_allclose(got.mean(axis=1), ref.mean(axis=1), rtol=0, atol=1e-10)
    np.testing.assert_array_equal(got[~missing], S[~missing])


def test_coefficient_form_with_fractional_scores_equals_sklearn_loop(davidson_calls):
    # non-0/1 data: the float64 Gram products (no float32 shortcut)
    rng = np.random.default_rng(5)
    S = np.clip(low_rank_binary(200, 120, rank=3, seed=5) * 0.7 + rng.random((200, 120)) * 0.3, 0, 1)
    missing = shared_layout(200, 120, 50, 20, seed=6)
    got = P.pca_impute(S, missing, 4, max_iter=60)
    assert davidson_calls
    np.testing.assert_allclose(got, pca_impute_paper_loop(S, missing, 4, max_iter=60), rtol=0, atol=1e-8)


def test_all_rows_incomplete_equals_sklearn_loop():
    # no complete row: the coefficient form does not apply, the general loop runs
    S = low_rank_binary(60, 40, rank=2, seed=8)
    missing = np.zeros_like(S, dtype=bool)
    missing[:, 10:] = True
    missing[:, 10:15] = np.random.default_rng(8).random((60, 5)) < 0.5
    got = P.pca_impute(S, missing, 2, max_iter=30)
    np.testing.assert_allclose(got, pca_impute_paper_loop(S, missing, 2, max_iter=30), rtol=0, atol=1e-8)


def test_pca_impute_is_deterministic():
    S = low_rank_binary(220, 150, rank=5, seed=11)
    missing = shared_layout(220, 150, 55, 25, seed=12)
    a, b = P.pca_impute(S, missing, 10, max_iter=50), P.pca_impute(S, missing, 10, max_iter=50)
    np.testing.assert_array_equal(a, b)


def test_gram_float32_shortcut_is_exact():
    rng = np.random.default_rng(0)
    A = (rng.random((70, 3000)) < 0.6).astype(np.float64)
    B = (rng.random((50, 3000)) < 0.4).astype(np.float64)
    np.testing.assert_array_equal(P._gram(A, A), A @ A.T)
    np.testing.assert_array_equal(P._gram(A, B), A @ B.T)
    C = A * 0.5  # not 0/1: float64 product
    np.testing.assert_array_equal(P._gram(C, C), C @ C.T)


@pytest.mark.parametrize("shape", [(60, 200), (200, 40)])  # the row Gram and the covariance route
def test_principal_axes_span_the_top_singular_vectors(shape):
    S = irt_responses(*shape, seed=3, dims=3).scores
    mu, V = P.principal_axes(S, 3)
    _, _, Vt = np.linalg.svd(S - S.mean(axis=0), full_matrices=False)
    np.testing.assert_allclose(mu, S.mean(axis=0), rtol=0, atol=1e-15)
    np.testing.assert_allclose(V.T @ V, np.eye(3), rtol=0, atol=1e-12)
    np.testing.assert_allclose(V @ V.T, Vt[:3].T @ Vt[:3], rtol=0, atol=1e-12)


def fold_in_reference(y, observed, mu, V, max_iter, tol):
    """Algorithm 1's loop on the target rows in item space, the mean and axes held fixed."""
    F = np.tile(mu, (len(y), 1))
    F[:, observed] = y
    missing = np.ones_like(F, dtype=bool)
    missing[:, observed] = False
    for _ in range(max_iter):
        recon = mu + (F - mu) @ V @ V.T
        if np.linalg.norm(np.where(missing, recon - F, 0.0)) < tol:
            break
        F[missing] = recon[missing]
    return F.mean(axis=1)


@pytest.mark.parametrize("max_iter,tol", [(100, 1e-4), (3, 1e-4), (100, 1e-9)])
def test_fold_in_means_equal_the_item_space_loop(max_iter, tol):
    S = irt_responses(120, 300, seed=4, dims=2).scores
    src, tgt = S[:100], S[100:]
    observed = np.sort(np.random.default_rng(0).choice(300, 40, replace=False))
    mu, V = P.principal_axes(src, 4)
    got = P.fold_in_means(tgt[:, observed], observed, mu, V, max_iter, tol)
    np.testing.assert_allclose(
        got, fold_in_reference(tgt[:, observed], observed, mu, V, max_iter, tol), rtol=0, atol=1e-12
    )


def test_fold_in_is_close_to_the_joint_imputation_when_targets_are_few():
    S = irt_responses(401, 300, seed=5, dims=2).scores
    src, tgt = S[:400], S[400:]
    joint = make_method("pca", {"k_grid": [2]}).fit(src, 30, np.random.default_rng(0))
    folded = make_method("pca", {"k_grid": [2], "fold_in": True}).fit(src, 30, np.random.default_rng(0))
    np.testing.assert_array_equal(folded.coreset_, joint.coreset_)  # the same core set from the same stream
    assert folded.source_ is None and folded.axes_.shape == (300, 2)  # a stored fit holds no copy of the matrix
    a, b = joint.estimate(Oracle(tgt, 30), None), folded.estimate(Oracle(tgt, 30), None)
    assert abs(a[0] - b[0]) < 2e-3


def test_fold_in_params_and_bad_value():
    assert "fold_in" not in make_method("pca", {}).params()  # the paper's ids and stored fits as before
    assert make_method("pca", {"fold_in": True}).params()["fold_in"] is True
    with pytest.raises(Exception, match="fold_in"):
        make_method("pca", {"fold_in": "yes"})
