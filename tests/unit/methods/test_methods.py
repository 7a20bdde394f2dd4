"""Tests for the estimation methods against direct scikit-learn references of the paper's code.

All data are small random matrices generated here (a logistic ability/difficulty model so
that the learned methods have signal to find).
"""

from __future__ import annotations

import numpy as np
import pytest
from simdata import logistic_scores
from sklearn.decomposition import PCA
from sklearn.impute import SimpleImputer
from sklearn.linear_model import Lasso, Ridge, RidgeCV
from threadpoolctl import threadpool_limits

from benchcast.errors import BudgetExceeded, ConfigError
from benchcast.methods import REGISTRY, make_method
from benchcast.methods.base import Method, random_coreset, random_subsets
from benchcast.methods.pca import pca_impute
from benchcast.methods.ridge import (
    DEFAULT_ALPHAS,
    FLOAT32_MIN_COLUMNS,
    CandidateProducts,
    bound_uses_gathered_gram,
    ridge_cv_fit,
    ridge_fit,
    ridge_validation_gaps_per_alpha,
)
from benchcast.oracle import Oracle


@pytest.fixture(autouse=True)
def _single_blas_thread():
    """Tiny matrices: multi-threaded BLAS only spins (100x slower on a loaded 2-core box)."""
    with threadpool_limits(limits=1):
        yield


# --------------------------------------------------------------------------- data


def source_target(n_src=40, n_tgt=10, n_items=60, seed=0):
    s = logistic_scores(n_src + n_tgt, n_items, seed)
    return s[:n_src], s[n_src:]


# --------------------------------------------------------------------------- ridge


def _ridge_problems(B, m, p, seed, binary=False):
    rng = np.random.default_rng(seed)
    if binary:
        X = (rng.random((B, m, p)) < 0.5).astype(np.float64)
    else:
        X = rng.normal(size=(B, m, p))
    w = rng.normal(size=(B, p))
    strength = 3.0 * np.linspace(0.0, 1.0, B) ** 3  # pure noise ... strong signal
    y = np.einsum("bmp,bp->bm", X, w) * strength[:, None] + 0.3 * rng.normal(size=(B, m))
    return X, y


@pytest.mark.parametrize(
    "B,m,p,binary",
    [
        (12, 30, 5, False),
        (12, 8, 20, False),
        (12, 40, 40, False),
        (6, 25, 3, True),
        (6, 7, 15, True),
        (5, 3, 4, False),
        (5, 50, 1, False),
    ],
    ids=["m>p", "m<p", "m=p", "binary m>p", "binary m<p", "m=3", "p=1"],
)
def test_ridge_cv_fit_equals_sklearn_ridgecv(B, m, p, binary):
    X, y = _ridge_problems(B, m, p, seed=B * 1000 + m * 10 + p, binary=binary)
    model = ridge_cv_fit(X, y)
    assert model.coef.shape == (B, p) and model.intercept.shape == (B,) and model.alpha.shape == (B,)
    for b in range(B):
        ref = RidgeCV().fit(X[b], y[b])
        assert model.alpha[b] == ref.alpha_, b
        np.testing.assert_allclose(model.coef[b], ref.coef_, rtol=0, atol=1e-10)
        assert abs(model.intercept[b] - ref.intercept_) <= 1e-10
        # predictions on fresh rows, batched and shared design
        Xn = np.random.default_rng(b).normal(size=(4, p))
        np.testing.assert_allclose(model.predict(Xn)[b], ref.predict(Xn), rtol=0, atol=1e-10)
    Xn = np.random.default_rng(7).normal(size=(B, 3, p))
    pred = model.predict(Xn)
    for b in range(B):
        np.testing.assert_allclose(pred[b], model.coef[b] @ Xn[b].T + model.intercept[b], atol=1e-12)


@pytest.mark.parametrize("m,p,seed", [(30, 5, 0), (8, 20, 9)], ids=["m>p", "m<p"])
def test_ridge_cv_each_alpha_wins_at_least_once(m, p, seed):
    X, y = _ridge_problems(12, m, p, seed=seed)
    model = ridge_cv_fit(X, y)
    ref_alphas = [RidgeCV().fit(X[b], y[b]).alpha_ for b in range(12)]
    assert set(ref_alphas) == set(DEFAULT_ALPHAS)
    assert model.alpha.tolist() == ref_alphas
    # pure noise (problem 0) -> strongest penalty; strong signal (last) -> weakest
    assert model.alpha[0] == 10.0
    assert model.alpha[-1] == 0.1


def test_ridge_cv_fit_2d_input_and_custom_alphas():
    X, y = _ridge_problems(1, 20, 4, seed=3)
    m2 = ridge_cv_fit(X[0], y[0], alphas=(0.01, 3.0, 100.0))
    ref = RidgeCV(alphas=(0.01, 3.0, 100.0)).fit(X[0], y[0])
    assert m2.alpha[0] == ref.alpha_
    np.testing.assert_allclose(m2.coef[0], ref.coef_, atol=1e-10)


def test_ridge_cv_constant_column_and_duplicate_columns():
    rng = np.random.default_rng(11)
    X = (rng.random((15, 6)) < 0.5).astype(float)
    X[:, 2] = 1.0
    X[:, 4] = X[:, 1]
    y = X @ rng.normal(size=6) + 0.05 * rng.normal(size=15)
    model = ridge_cv_fit(X, y)
    ref = RidgeCV().fit(X, y)
    assert model.alpha[0] == ref.alpha_
    np.testing.assert_allclose(model.coef[0], ref.coef_, atol=1e-10)
    assert abs(model.intercept[0] - ref.intercept_) < 1e-10


@pytest.mark.parametrize("m,p", [(30, 6), (6, 30), (12, 12)])
@pytest.mark.parametrize("alpha", [0.1, 10.0])
def test_ridge_fit_equals_sklearn_ridge_multi_output(m, p, alpha):
    rng = np.random.default_rng(m + p)
    X = rng.normal(size=(m, p))
    Y = rng.normal(size=(m, 4)) + X[:, :1]
    coef, intercept = ridge_fit(X, Y, alpha)
    ref = Ridge(alpha=alpha).fit(X, Y)
    assert coef.shape == (p, 4) and intercept.shape == (4,)
    np.testing.assert_allclose(coef.T, ref.coef_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(intercept, ref.intercept_, rtol=0, atol=1e-10)


# --------------------------------------------------------------------------- random sampling


def test_random_sampling_mean_over_coreset():
    src, tgt = source_target()
    m = make_method("random_sampling").fit(src, 7, np.random.default_rng(3))
    expected_core = np.random.default_rng(3).permutation(60)[:7]
    np.testing.assert_array_equal(m.coreset_, expected_core)
    assert len(np.unique(m.coreset_)) == 7
    oracle = Oracle(tgt, 7)
    est = m.estimate(oracle, np.random.default_rng(0))
    np.testing.assert_allclose(est, tgt[:, expected_core].mean(axis=1), rtol=0, atol=1e-15)
    assert oracle.spent.tolist() == [7] * 10


def test_random_coreset_is_prefix_of_permutation():
    c = random_coreset(100, 30, np.random.default_rng(9))
    np.testing.assert_array_equal(c, np.random.default_rng(9).permutation(100)[:30])
    assert len(set(c.tolist())) == 30


def test_random_sampling_learn_equals_sklearn_ridgecv():
    src, tgt = source_target(seed=1)
    m = make_method("random_sampling_learn").fit(src, 7, np.random.default_rng(5))
    core = np.random.default_rng(5).permutation(60)[:7]
    np.testing.assert_array_equal(m.coreset_, core)
    ref = RidgeCV().fit(src[:, core], src.mean(axis=1))
    est = m.estimate(Oracle(tgt, 7), np.random.default_rng(0))
    assert m.model_.alpha[0] == ref.alpha_
    np.testing.assert_allclose(est, ref.predict(tgt[:, core]), rtol=0, atol=1e-10)


# --------------------------------------------------------------------------- AIPW


def aipw_reference(src, tgt, core, alpha=10.0):
    """Eq. 3 per target with sklearn Ridge, as the paper's code."""
    N = src.shape[1]
    rest = np.array([i for i in range(N) if i not in set(core.tolist())])
    out = []
    for f in range(tgt.shape[0]):
        x_train, y_train, x_test = src[:, core].T, tgt[f, core], src[:, rest].T
        g = Ridge(alpha=alpha).fit(x_train, y_train)
        n, n_rest = len(core), len(rest)
        h = y_train.mean() + 1.0 / (1.0 + n / n_rest) * (g.predict(x_test).mean() - g.predict(x_train).mean())
        out.append(h)
    return np.array(out)


@pytest.mark.parametrize("n", [5, 7, 30, 45])
def test_aipw_equals_per_target_reference(n):
    src, tgt = source_target(seed=2)
    m = make_method("aipw").fit(src, n, np.random.default_rng(n))
    core = np.random.default_rng(n).permutation(60)[:n]
    np.testing.assert_array_equal(m.coreset_, core)
    oracle = Oracle(tgt, n)
    est = m.estimate(oracle, np.random.default_rng(0))
    np.testing.assert_allclose(est, aipw_reference(src, tgt, core), rtol=0, atol=1e-10)
    assert oracle.spent.tolist() == [n] * 10
    # with an intercept the in-sample mean of the predictions equals the core-set mean, so
    # eq. 3 reduces to (sum_C s + sum_{D\C} s_hat) / N
    N = 60
    rest = np.setdiff1d(np.arange(N), core)
    expect = []
    for f in range(10):
        g = Ridge(alpha=10).fit(src[:, core].T, tgt[f, core])
        expect.append((tgt[f, core].sum() + g.predict(src[:, rest].T).sum()) / N)
    np.testing.assert_allclose(est, expect, atol=1e-10)


def test_aipw_custom_alpha_equals_reference():
    src, tgt = source_target(seed=3)
    m = make_method("aipw", {"alpha": 0.5}).fit(src, 9, np.random.default_rng(1))
    est = m.estimate(Oracle(tgt, 9), None)
    np.testing.assert_allclose(est, aipw_reference(src, tgt, m.coreset_, alpha=0.5), atol=1e-10)


def test_aipw_constant_predictor_gives_sample_mean_huge_alpha():
    src, tgt = source_target(seed=4)
    m = make_method("aipw", {"alpha": 1e12}).fit(src, 8, np.random.default_rng(2))
    est = m.estimate(Oracle(tgt, 8), None)
    np.testing.assert_allclose(est, tgt[:, m.coreset_].mean(axis=1), rtol=0, atol=1e-9)


def test_aipw_constant_predictor_gives_sample_mean_identical_source_columns():
    # every item has the same source-score vector -> the ridge can only predict a constant
    rng = np.random.default_rng(5)
    col = (rng.random(30) < 0.5).astype(float)
    src = np.repeat(col[:, None], 50, axis=1)
    tgt = (rng.random((6, 50)) < 0.6).astype(float)
    m = make_method("aipw").fit(src, 10, np.random.default_rng(3))
    est = m.estimate(Oracle(tgt, 10), None)
    np.testing.assert_allclose(est, tgt[:, m.coreset_].mean(axis=1), rtol=0, atol=1e-12)


def test_aipw_is_approximately_unbiased_over_core_sets():
    scores = logistic_scores(45, 150, seed=6, spread=1.0)
    src, tgt = scores[:40], scores[40:]
    truth = tgt.mean(axis=1)
    n, draws = 15, 300
    ests = np.empty((draws, len(tgt)))
    rs = np.empty((draws, len(tgt)))
    for d in range(draws):
        m = make_method("aipw").fit(src, n, np.random.default_rng(1000 + d))
        ests[d] = m.estimate(Oracle(tgt, n), None)
        rs[d] = tgt[:, m.coreset_].mean(axis=1)
    bias = ests.mean(axis=0) - truth
    se = ests.std(axis=0, ddof=1) / np.sqrt(draws)
    assert np.all(np.abs(bias) < 4 * se + 0.005), (bias, se)
    # the random-sampling estimate on the same core sets is unbiased too (sanity of the trial runner)
    assert np.all(np.abs(rs.mean(axis=0) - truth) < 4 * rs.std(axis=0, ddof=1) / np.sqrt(draws) + 0.005)
    # and AIPW's debiasing with an informative predictor reduces the spread here
    assert ests.std(axis=0).mean() < rs.std(axis=0).mean()


# --------------------------------------------------------------------------- Lasso


def lasso_reference(X, y, n, n_alphas, tol=1e-4, max_iter=10000):
    """The paper code's train_lasso_with_specific_sparsity, with an alpha grid of K values."""
    best, best_diff, best_alpha = None, np.inf, None
    for alpha in np.logspace(-4, 1, n_alphas):
        las = Lasso(alpha=alpha, max_iter=max_iter, tol=tol).fit(X, y)
        nnz = int(np.sum(las.coef_ != 0))
        diff = abs(nnz - n)
        if nnz <= n and diff < best_diff:
            best, best_diff, best_alpha = las, diff, alpha
        if diff == 0:
            break
    return best, best_alpha


@pytest.mark.parametrize("seed,n", [(0, 3), (0, 8), (1, 5), (3, 5), (5, 8)])
def test_lasso_selection_matches_paper_rule(seed, n):
    scores = logistic_scores(50, 30, seed)
    src, tgt = scores[:40], scores[40:]
    tight = dict(tol=1e-10, max_iter=100000)
    ref, ref_alpha = lasso_reference(src, src.mean(axis=1), n, 60, **tight)
    m = make_method("lasso", {"n_alphas": 60, **tight}).fit(src, n, np.random.default_rng(0))
    assert m.alpha_ == pytest.approx(ref_alpha, rel=1e-12)
    np.testing.assert_array_equal(m.coreset_, np.flatnonzero(ref.coef_))
    assert 1 <= len(m.coreset_) <= n
    oracle = Oracle(tgt, n)
    est = m.estimate(oracle, None)
    np.testing.assert_allclose(est, ref.predict(tgt), rtol=0, atol=1e-6)
    assert oracle.spent.max() == len(m.coreset_) <= n


@pytest.mark.parametrize("seed,n", [(0, 5), (1, 8), (4, 3)])
def test_lasso_paper_solver_settings(seed, n):
    # With the paper's own solver settings (max_iter=10000, default tol) the selected alpha
    # and core set are the paper's; the fits agree to the solver's tolerance (the path uses
    # warm starts, the paper cold-starts each alpha).
    scores = logistic_scores(50, 30, seed)
    src, tgt = scores[:40], scores[40:]
    ref, ref_alpha = lasso_reference(src, src.mean(axis=1), n, 60)
    m = make_method("lasso", {"n_alphas": 60}).fit(src, n, np.random.default_rng(0))
    assert m.alpha_ == pytest.approx(ref_alpha, rel=1e-12)
    np.testing.assert_array_equal(m.coreset_, np.flatnonzero(ref.coef_))
    np.testing.assert_allclose(m.estimate(Oracle(tgt, n), None), ref.predict(tgt), rtol=0, atol=1e-4)


def test_lasso_is_deterministic_and_ignores_rng():
    src, _ = source_target(seed=7)
    a = make_method("lasso", {"n_alphas": 50}).fit(src, 6, np.random.default_rng(0))
    b = make_method("lasso", {"n_alphas": 50}).fit(src, 6, np.random.default_rng(123))
    np.testing.assert_array_equal(a.coreset_, b.coreset_)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert type(a).deterministic_fit is True


# --------------------------------------------------------------------------- PCA


def pca_reference(matrix_with_nan, k, max_iter=100, tol=1e-4):
    """Algorithm 1 exactly as the paper's code (SimpleImputer + sklearn PCA in a loop)."""
    mask = np.isnan(matrix_with_nan)
    filled = SimpleImputer(strategy="mean").fit_transform(matrix_with_nan).copy()
    for _ in range(max_iter):
        pca = PCA(n_components=k, svd_solver="full")
        recon = pca.inverse_transform(pca.fit_transform(filled))
        diff = recon[mask] - filled[mask]
        if np.linalg.norm(diff) < tol:
            break
        filled[mask] = recon[mask]
    return filled


@pytest.mark.parametrize("k", [1, 2, 5])
@pytest.mark.parametrize("layout", ["targets", "scattered"])
def test_pca_impute_equals_sklearn_reference(k, layout):
    rng = np.random.default_rng(k)
    S = logistic_scores(38, 40, seed=10 + k)
    missing = np.zeros_like(S, dtype=bool)
    if layout == "targets":
        core = rng.permutation(40)[:7]
        missing[30:] = True
        missing[30:, core] = False
    else:
        missing = rng.random(S.shape) < 0.15
        missing[:, 0] = False  # no fully missing column (SimpleImputer drops those)
    X = S.copy()
    X[missing] = np.nan
    got = pca_impute(S, missing, k)
    ref = pca_reference(X, k)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(got[~missing], S[~missing])  # observed entries untouched


def test_pca_impute_ignores_values_under_the_mask():
    S = logistic_scores(20, 15, seed=3)
    missing = np.random.default_rng(0).random(S.shape) < 0.2
    garbage = S.copy()
    garbage[missing] = 1e6
    np.testing.assert_allclose(pca_impute(S, missing, 2), pca_impute(garbage, missing, 2), atol=1e-12)


def test_pca_impute_recovers_exact_rank_2_matrix():
    rng = np.random.default_rng(1)
    L = rng.normal(size=(25, 2)) @ rng.normal(size=(2, 30)) + 3.0
    missing = rng.random(L.shape) < 0.2
    assert missing.sum() > 100
    got = pca_impute(L, missing, 2, max_iter=2000, tol=1e-12)
    np.testing.assert_allclose(got, L, rtol=0, atol=1e-6)
    # rank 1 cannot represent it
    assert np.abs(pca_impute(L, missing, 1, max_iter=2000, tol=1e-12) - L).max() > 1e-2


def _pca_cv_reference(src, n, k_grid, seed, cv_fraction=0.25):
    rng = np.random.default_rng(seed)
    M, N = src.shape
    core = rng.permutation(N)[:n]
    order = rng.permutation(M)
    val = order[int(M * (1 - cv_fraction)) :]
    X = src.copy()
    X[np.ix_(val, np.setdiff1d(np.arange(N), core))] = np.nan
    truth = src[val].mean(axis=1)
    gaps = [float(np.abs(pca_reference(X, k)[val].mean(axis=1) - truth).mean()) for k in k_grid]
    return core, gaps


def test_pca_method_picks_k_by_cross_validation():
    src, tgt = source_target(n_src=40, n_tgt=8, n_items=50, seed=8)
    k_grid = (1, 2, 5, 10)
    m = make_method("pca", {"k_grid": k_grid}).fit(src, 10, np.random.default_rng(4))
    core, gaps = _pca_cv_reference(src, 10, k_grid, seed=4)
    np.testing.assert_array_equal(m.coreset_, core)
    assert m.k_ in k_grid
    assert m.k_ == k_grid[int(np.argmin(gaps))]
    assert m.cv_gap_ == pytest.approx(min(gaps), abs=1e-8)
    # estimate = mean of the imputed target rows, as the paper's predict
    est = m.estimate(Oracle(tgt, 10), None)
    stacked = np.vstack([src, np.full_like(tgt, np.nan)])
    stacked[40:, core] = tgt[:, core]
    np.testing.assert_allclose(est, pca_reference(stacked, m.k_)[40:].mean(axis=1), rtol=0, atol=1e-8)


def test_pca_single_k_skips_cv():
    src, tgt = source_target(n_items=50, seed=9)
    rng = np.random.default_rng(12)
    m = make_method("pca", {"k_grid": [2]}).fit(src, 6, rng)
    assert m.k_ == 2
    assert not hasattr(m, "cv_gap_")
    # only the core-set permutation was drawn from the rng
    ref_rng = np.random.default_rng(12)
    np.testing.assert_array_equal(m.coreset_, ref_rng.permutation(50)[:6])
    assert rng.random() == ref_rng.random()
    est = m.estimate(Oracle(tgt, 6), None)
    stacked = np.vstack([src, np.full_like(tgt, np.nan)])
    stacked[40:, m.coreset_] = tgt[:, m.coreset_]
    np.testing.assert_allclose(est, pca_reference(stacked, 2)[40:].mean(axis=1), atol=1e-8)


# --------------------------------------------------------------------------- Random-Search-Learn


def _rsl_reference(src, n, num_search, seed, train_fraction=0.75):
    rng = np.random.default_rng(seed)
    M, N = src.shape
    order = rng.permutation(M)
    tr, val = order[: int(M * train_fraction)], order[int(M * train_fraction) :]
    cands = list(random_subsets(N, n, num_search, rng))  # the candidates' sampler (tested on its own)
    y = src.mean(axis=1)
    gaps = []
    for c in cands:
        g = RidgeCV().fit(src[tr][:, c], y[tr])
        gaps.append(float(np.abs(g.predict(src[:, c])[val] - y[val]).mean()))
    return cands, np.array(gaps)


def test_random_search_learn_single_candidate():
    src, tgt = source_target(n_items=40, seed=10)
    m = make_method("random_search_learn", {"num_search": 1}).fit(src, 6, np.random.default_rng(21))
    cands, gaps = _rsl_reference(src, 6, 1, seed=21)
    np.testing.assert_array_equal(m.coreset_, cands[0])
    assert m.best_validation_gap_ == pytest.approx(gaps[0], abs=1e-10)
    ref = RidgeCV().fit(src[:, cands[0]], src.mean(axis=1))
    np.testing.assert_allclose(m.estimate(Oracle(tgt, 6), None), ref.predict(tgt[:, cands[0]]), atol=1e-10)


def test_random_search_learn_picks_lowest_validation_gap():
    src, tgt = source_target(n_items=40, seed=11)
    m = make_method("random_search_learn", {"num_search": 40, "batch_size": 16}).fit(src, 5, np.random.default_rng(8))
    cands, gaps = _rsl_reference(src, 5, 40, seed=8)
    best = int(np.argmin(gaps))
    assert np.sort(gaps)[1] - gaps[best] > 1e-9, "near-tie: test data not discriminative"
    np.testing.assert_array_equal(m.coreset_, cands[best])
    assert m.best_validation_gap_ == pytest.approx(gaps[best], abs=1e-10)
    ref = RidgeCV().fit(src[:, cands[best]], src.mean(axis=1))
    np.testing.assert_allclose(m.estimate(Oracle(tgt, 5), None), ref.predict(tgt[:, cands[best]]), atol=1e-10)


@pytest.mark.parametrize("chunk_cells", [2**22, 50])  # one chunk; many chunks of a few rows
def test_random_subsets_are_uniform_distinct_and_reproducible(chunk_cells):
    n, size, count = 12, 4, 30_000
    rows = random_subsets(n, size, count, np.random.default_rng(7), chunk_cells=chunk_cells)
    assert rows.shape == (count, size) and rows.min() >= 0 and rows.max() < n
    assert (np.sort(rows, axis=1)[:, 1:] != np.sort(rows, axis=1)[:, :-1]).all()  # no repeats in a row
    # every item at every position with probability 1/n, as rng.permutation(n)[:size]
    for pos in range(size):
        freq = np.bincount(rows[:, pos], minlength=n) / count
        assert np.abs(freq - 1 / n).max() < 5 * np.sqrt((1 / n) / count)
    pairs = np.bincount(rows[:, 0] * n + rows[:, 1], minlength=n * n).reshape(n, n) / count
    off = ~np.eye(n, dtype=bool)
    assert np.abs(pairs[off] - 1 / (n * (n - 1))).max() < 5 * np.sqrt(1 / (n * (n - 1)) / count)
    np.testing.assert_array_equal(
        rows, random_subsets(n, size, count, np.random.default_rng(7), chunk_cells=chunk_cells)
    )
    assert sorted(random_subsets(n, n, 1, np.random.default_rng(0))[0]) == list(range(n))
    with pytest.raises(ValueError, match="subset size"):
        random_subsets(n, n + 1, 1, np.random.default_rng(0))


def test_random_search_learn_independent_of_batch_size():
    src, tgt = source_target(n_items=40, seed=12)
    results = []
    for bs in (1, 7, 30, 1000):
        m = make_method("random_search_learn", {"num_search": 30, "batch_size": bs}).fit(
            src, 5, np.random.default_rng(99)
        )
        results.append((m.coreset_.copy(), m.best_validation_gap_, m.estimate(Oracle(tgt, 5), None)))
    for core, gap, est in results[1:]:
        np.testing.assert_array_equal(core, results[0][0])
        assert gap == pytest.approx(results[0][1], abs=1e-12)
        np.testing.assert_allclose(est, results[0][2], atol=1e-12)


@pytest.mark.parametrize("n_src,n_items,budget", [(40, 60, 8), (120, 150, 70), (30, 200, 90), (260, 300, 170)])
def test_random_search_learn_pruned_search_selects_the_exhaustive_searchs_subset(n_src, n_items, budget):
    """Pruning by the fixed-alpha lower bound must not change the winner (Cholesky path for Gram
    matrices >= 64 and the certified float32 path for >= FLOAT32_MIN_COLUMNS included), and it
    must actually skip candidates where it is used."""
    src, tgt = source_target(n_src=n_src, n_items=n_items, seed=n_src + budget)
    fits = {}
    for prune in (False, True):
        fits[prune] = make_method("random_search_learn", {"num_search": 300, "batch_size": 32, "prune": prune}).fit(
            src, budget, np.random.default_rng(5)
        )
    np.testing.assert_array_equal(fits[True].coreset_, fits[False].coreset_)
    assert fits[True].best_validation_gap_ == pytest.approx(fits[False].best_validation_gap_, rel=1e-12)
    assert fits[False].candidates_scored_ == 300
    assert fits[True].candidates_scored_ < 300


def test_random_search_learn_pruning_keeps_the_earliest_of_tied_candidates():
    # identical item columns make every candidate of the same size score the same gap
    src, _ = source_target(n_src=40, n_items=10, seed=3)
    src = np.repeat(src[:, :1], 10, axis=1)
    for prune in (False, True):
        m = make_method("random_search_learn", {"num_search": 50, "prune": prune}).fit(src, 3, np.random.default_rng(1))
        cands = np.random.default_rng(1)
        cands.permutation(40)
        first = random_subsets(10, 3, 50, cands)[0]
        np.testing.assert_array_equal(m.coreset_, first)


@pytest.mark.parametrize("binary", [True, False])
def test_candidate_products_equal_the_centred_products(binary):
    """0/1 data take the exact float32 route and are centred afterwards; other data are centred
    first. Both must equal the textbook centred products of each candidate's columns."""
    rng = np.random.default_rng(4)
    A = (rng.random((37, 90)) < rng.random(90)).astype(float) if binary else rng.random((37, 90))
    S, V = A[:28], A[28:]
    products = CandidateProducts(S, V)
    assert products.exact32 == binary
    cands = np.stack([rng.permutation(90)[:p] for p in [20] * 6])
    K, C = products.dual(cands)
    G = products.gram(cands)
    for b, c in enumerate(cands):
        mean = S[:, c].mean(axis=0)
        Xc, Vc = S[:, c] - mean, V[:, c] - mean
        np.testing.assert_allclose(K[b], Xc @ Xc.T, rtol=0, atol=1e-12)
        np.testing.assert_allclose(C[b], Vc @ Xc.T, rtol=0, atol=1e-12)
        np.testing.assert_allclose(G[b], Xc.T @ Xc, rtol=0, atol=1e-12)


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("m_train,p", [(30, 12), (30, 80), (100, 70)])  # primal, dual, primal
def test_ridge_validation_gaps_per_alpha_bound_ridgecv(m_train, p, binary):
    rng = np.random.default_rng(m_train + p)
    A = rng.random((m_train + 15, 120))
    A = (A < rng.random(120)).astype(float) if binary else A
    S, V = A[:m_train], A[m_train:]
    y, yv = S.mean(axis=1), V.mean(axis=1)
    cands = np.stack([rng.permutation(120)[:p] for _ in range(20)])
    per_alpha = ridge_validation_gaps_per_alpha(S, y, V, yv, cands, DEFAULT_ALPHAS, batch_size=7)
    # both forms give the same numbers whichever the cost model picks
    other = "primal" if not bound_uses_gathered_gram(m_train, p, 15) else "dual"
    np.testing.assert_allclose(
        ridge_validation_gaps_per_alpha(S, y, V, yv, cands, DEFAULT_ALPHAS, batch_size=5, form=other),
        per_alpha,
        rtol=1e-9,
        atol=1e-12,
    )
    for c, row in zip(cands, per_alpha):
        for a, gap in zip(DEFAULT_ALPHAS, row):
            ref = Ridge(alpha=a).fit(S[:, c], y)
            assert gap == pytest.approx(np.abs(ref.predict(V[:, c]) - yv).mean(), rel=1e-9, abs=1e-12)
        cv = RidgeCV(alphas=DEFAULT_ALPHAS).fit(S[:, c], y)
        cv_gap = np.abs(cv.predict(V[:, c]) - yv).mean()
        assert row.min() <= cv_gap + 1e-12 and np.isclose(row, cv_gap, rtol=1e-9, atol=1e-12).any()


@pytest.mark.parametrize("binary", [True, False])
def test_certified_float32_gaps_are_tight_lower_bounds(binary):
    """The float32 factorisation lowers each fixed-alpha gap by its certified error: never above
    the exact float64 gap, and within 1% of it (real leaderboards: the bounds of the best
    candidates spread ~20%, so the slack adds no leave-one-out fits)."""
    m_train, p = 200, FLOAT32_MIN_COLUMNS + 10
    rng = np.random.default_rng(11)
    A = rng.random((m_train + 30, 260))
    A = (A < rng.random(260)).astype(float) if binary else A
    S, V = A[:m_train], A[m_train:]
    y, yv = S.mean(axis=1), V.mean(axis=1)
    cands = np.stack([rng.permutation(260)[:p] for _ in range(10)])
    assert bound_uses_gathered_gram(m_train, p, 30)  # the primal form, where float32 applies
    exact = ridge_validation_gaps_per_alpha(S, y, V, yv, cands, DEFAULT_ALPHAS, batch_size=4)
    bound = ridge_validation_gaps_per_alpha(S, y, V, yv, cands, DEFAULT_ALPHAS, batch_size=4, certified_float32=True)
    assert (bound <= exact + 1e-13).all()
    np.testing.assert_allclose(bound, exact, rtol=1e-2)
    assert (bound < exact).any()  # the float32 path actually ran
    ref = Ridge(alpha=DEFAULT_ALPHAS[0]).fit(S[:, cands[0]], y)
    assert exact[0, 0] == pytest.approx(np.abs(ref.predict(V[:, cands[0]]) - yv).mean(), rel=1e-9)


# --------------------------------------------------------------------------- budget for every method

FAST_PARAMS = {"random_search_learn": {"num_search": 30}, "lasso": {"n_alphas": 100}, "tailoredbench": {"g_size": 3}}


def test_registry_has_the_paper_methods():
    assert {"random_sampling", "random_sampling_learn", "random_search_learn", "aipw", "lasso", "pca"} <= set(REGISTRY)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_method_respects_budget(name):
    src, tgt = source_target(n_src=40, n_tgt=10, n_items=60, seed=13)
    m = make_method(name, FAST_PARAMS.get(name))
    assert isinstance(m, Method) and m.name == name
    m.fit(src, 7, np.random.default_rng(0))
    oracle = Oracle(tgt, 7)
    est = np.asarray(m.estimate(oracle, np.random.default_rng(1)))
    assert est.shape == (10,)
    assert np.all(np.isfinite(est))
    assert np.all(oracle.spent <= 7)
    used = int(oracle.spent.max())
    if m.uses_coreset_stream or name in ("random_search_learn", "tailoredbench"):
        assert oracle.spent.tolist() == [7] * 10
    # one item less than the method uses must be refused
    if used >= 1:
        m2 = make_method(name, FAST_PARAMS.get(name)).fit(src, 7, np.random.default_rng(0))
        with pytest.raises(BudgetExceeded):
            m2.estimate(Oracle(tgt, used - 1), np.random.default_rng(1))


@pytest.mark.parametrize("name", sorted(REGISTRY))
@pytest.mark.parametrize("budget", [60, 61, 0])
def test_every_method_refuses_impossible_budget_at_fit(name, budget):
    src, _ = source_target(n_src=40, n_items=60, seed=14)
    with pytest.raises(BudgetExceeded):
        make_method(name, FAST_PARAMS.get(name)).fit(src, budget, np.random.default_rng(0))


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_method_needs_two_source_models(name):
    src, _ = source_target(n_src=40, n_items=60, seed=14)
    with pytest.raises(ConfigError):
        make_method(name, FAST_PARAMS.get(name)).fit(src[:1], 5, np.random.default_rng(0))


def test_make_method_unknown_lists_known():
    with pytest.raises(ConfigError) as info:
        make_method("nope")
    msg = str(info.value)
    assert "nope" in msg
    for name in REGISTRY:
        assert name in msg


@pytest.mark.parametrize(
    "name,params",
    [("aipw", {"bogus": 1}), ("random_sampling", {"alpha": 1.0}), ("lasso", {"n_alpha": 10}), ("pca", {"k": 2})],
)
def test_make_method_unknown_param_is_config_error(name, params):
    with pytest.raises(ConfigError) as info:
        make_method(name, params)
    assert name in str(info.value)


def test_make_method_params_round_trip():
    assert make_method("aipw", {"alpha": 3}).params() == {"alpha": 3.0}
    assert make_method("pca", {"k_grid": [2, 5]}).params()["k_grid"] == [2, 5]
    assert make_method("random_search_learn", {"num_search": 5}).params()["num_search"] == 5


def test_make_method_bad_param_value_is_config_error():
    with pytest.raises(ConfigError):
        make_method("aipw", {"alpha": "ten"})


def test_clustering_weights_its_centres_items_by_cluster_size():
    from benchcast.methods.clustering import nearest_distinct

    # two tight groups of item columns, 3 and 1 items: with 2 clusters, weights 3 and 1
    source = np.array([[1, 1, 1, 0, 0, 0], [1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1.0]])
    source = np.hstack([source, source[:, :2]])  # 8 items: columns 0-2, 6, 7 alike; 3-5 alike
    m = make_method("clustering").fit(source, 2, np.random.default_rng(0))
    assert sorted(m.weights_.tolist()) == [3.0, 5.0]
    oracle = Oracle(np.array([[1, 0, 0, 0, 0, 0, 0, 0.0]]), 2)
    est = m.estimate(oracle, None)
    picked_first_group = m.coreset_[np.argmax(m.weights_)] in (0, 1, 2, 6, 7)
    assert picked_first_group and oracle.spent.tolist() == [2]
    assert est[0] == pytest.approx(5 / 8 * float(oracle.query(m.coreset_)[0][np.argmax(m.weights_)]))
    # duplicate columns: each centre still gets its own item
    assert sorted(nearest_distinct(np.zeros((3, 2)), np.zeros((3, 2))).tolist()) == [0, 1, 2]


def test_nearest_distinct_does_not_depend_on_its_block_size():
    from benchcast.methods.clustering import nearest_distinct

    rng = np.random.default_rng(3)
    points = (rng.random((60, 7)) < 0.5).astype(np.float64)  # 0/1 columns: many exact ties
    centres = rng.random((25, 7))
    whole = nearest_distinct(points, centres, max_elements=10**9)
    assert len(set(whole.tolist())) == 25
    for block in (1, 7 * 60, 7 * 60 * 4 + 1):
        assert nearest_distinct(points, centres, max_elements=block).tolist() == whole.tolist()
