"""The Lasso method's path computation (``lasso_path_skipping``) against scikit-learn's own path.

The fast path skips the alphas at which scikit-learn's coordinate-descent kernel would return
its warm start unchanged; these tests require the result to be *bit-identical* to
``sklearn.linear_model.lasso_path`` over the whole grid, and the fitted method (alpha, core
set, coefficients) to equal a fit that uses ``lasso_path`` directly.
"""

from __future__ import annotations

import numpy as np
import pytest
from simdata import logistic_scores
from sklearn.linear_model import lasso_path
from threadpoolctl import threadpool_limits

from benchcast.errors import ConfigError
from benchcast.methods import lasso as L
from benchcast.methods import make_method
from benchcast.oracle import Oracle


@pytest.fixture(autouse=True)
def _single_blas_thread():
    with threadpool_limits(limits=1):
        yield


def centred(src):
    y = src.mean(axis=1)
    return np.asfortranarray(src - src.mean(axis=0)), np.ascontiguousarray(y - y.mean())


def reference_fit(src, n, alpha_min=1e-4, alpha_max=10.0, n_alphas=1000, max_iter=10_000, tol=1e-4):
    """LassoMethod.fit before the fast path: one lasso_path call over the whole grid."""
    y = src.mean(axis=1)
    x_mean, y_mean = src.mean(axis=0), y.mean()
    Xc = np.asfortranarray(src - x_mean)
    alphas_desc = np.logspace(np.log10(alpha_max), np.log10(alpha_min), n_alphas)
    _, coefs, _ = lasso_path(Xc, y - y_mean, alphas=alphas_desc, max_iter=max_iter, tol=tol)
    coefs = coefs[:, ::-1]
    nnz = (coefs != 0).sum(axis=0)
    ok = nnz <= n
    diff = np.where(ok, n - nnz, np.iinfo(np.int64).max)
    exact = np.flatnonzero(diff == 0)
    k = int(exact[0]) if exact.size else int(np.argmin(diff))
    coef = coefs[:, k]
    return alphas_desc[::-1][k], np.flatnonzero(coef != 0), coef, y_mean - x_mean @ coef


@pytest.mark.parametrize("n_models,n_items,seed", [(40, 120, 0), (25, 300, 1), (60, 61, 2), (12, 500, 3)])
@pytest.mark.parametrize("tol", [1e-4, 1e-7])
def test_skipping_path_is_bit_identical_to_lasso_path(n_models, n_items, seed, tol):
    X, y = centred(logistic_scores(n_models, n_items, seed))
    alphas = np.logspace(1, -4, 300)
    _, ref, _ = lasso_path(X, y, alphas=alphas, max_iter=10_000, tol=tol)
    got = L.lasso_path_skipping(X, y, alphas, 10_000, tol)
    assert got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)


def test_skipping_path_really_skips(monkeypatch):
    X, y = centred(logistic_scores(30, 200, 4))
    alphas = np.logspace(1, -4, 400)
    calls = []
    real = L.lasso_path
    monkeypatch.setattr(L, "lasso_path", lambda *a, **k: calls.append(1) or real(*a, **k))
    got = L.lasso_path_skipping(X, y, alphas, 10_000, 1e-4)
    assert 0 < len(calls) < len(alphas) // 2
    np.testing.assert_array_equal(got, real(X, y, alphas=alphas, max_iter=10_000, tol=1e-4)[1])


def test_skip_margin_never_skips_an_alpha_the_kernel_iterates_on(monkeypatch):
    # with an absurdly large margin nothing is skipped: the result must not change either
    X, y = centred(logistic_scores(20, 90, 5))
    alphas = np.logspace(1, -4, 120)
    fast = L.lasso_path_skipping(X, y, alphas, 10_000, 1e-4)
    monkeypatch.setattr(L, "_GAP_MARGIN", 1e30)
    slow = L.lasso_path_skipping(X, y, alphas, 10_000, 1e-4)
    np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("n_models,n_items,seed", [(45, 150, 0), (66, 400, 1), (80, 60, 2)])  # last: n > N
@pytest.mark.parametrize("n", [5, 20, 50])
def test_lasso_method_equals_reference_fit(n_models, n_items, seed, n):
    scores = logistic_scores(n_models + 10, n_items, seed)
    src, tgt = scores[:n_models], scores[n_models:]
    alpha, core, coef, intercept = reference_fit(src, n, n_alphas=400)
    m = make_method("lasso", {"n_alphas": 400}).fit(src, n, np.random.default_rng(0))
    assert m.alpha_ == alpha
    np.testing.assert_array_equal(m.coreset_, core)
    np.testing.assert_array_equal(m.coef_, coef[core])
    assert m.intercept_ == pytest.approx(intercept, rel=0, abs=1e-14)
    ref_est = tgt[:, core] @ coef[core] + intercept
    np.testing.assert_allclose(m.estimate(Oracle(tgt, n), None), ref_est, rtol=0, atol=1e-13)


def test_lasso_without_feasible_alpha_still_raises():
    src = logistic_scores(30, 40, 6)
    with pytest.raises(ConfigError):
        make_method("lasso", {"alpha_min": 1e-4, "alpha_max": 1e-3, "n_alphas": 5}).fit(src, 1, None)


def test_one_path_serves_every_budget_and_round_trips_through_parquet(tmp_path):
    """Lasso's prefit (the workflow's mtm_prefit job): one path per trial gives each budget exactly the fit a
    per-budget fit makes; trials with the same sources share it; the stored tables give back
    the same selections; and the run's fit uses them instead of recomputing the path."""
    import pandas as pd

    scores = logistic_scores(70, 120, 3)
    budgets = [5, 20, 60]
    same = np.arange(40)
    by_trial = {0: (same, np.arange(40, 70)), 1: (same, np.arange(40, 70)), 2: (np.arange(10, 50), np.arange(50, 70))}
    selections, timing = L.lasso_trials(scores, by_trial, budgets, {"n_alphas": 300})
    assert timing.shared_from.tolist() == [0, 0, 2]
    assert timing.fit_seconds[1] == timing.fit_seconds[0] > 0
    fits, items = L.selections_to_frames(selections)
    fits.to_parquet(tmp_path / "fits.parquet")
    items.to_parquet(tmp_path / "items.parquet")
    loaded = L.frames_to_selections(
        pd.read_parquet(tmp_path / "fits.parquet"), pd.read_parquet(tmp_path / "items.parquet")
    )
    for trial, (src, _tgt) in by_trial.items():
        for n in budgets:
            direct = make_method("lasso", {"n_alphas": 300}).fit(scores[src], n, None)
            via = make_method("lasso", {"n_alphas": 300}).fit(scores[src], n, None, prefit=loaded[trial])
            assert via.alpha_ == direct.alpha_ and via.intercept_ == direct.intercept_
            np.testing.assert_array_equal(via.coreset_, direct.coreset_)
            np.testing.assert_array_equal(via.coef_, direct.coef_)
            assert len(direct.coreset_) <= n
    with pytest.raises(ConfigError, match="budgets"):
        make_method("lasso", {"n_alphas": 300}).fit(scores[same], 7, None, prefit=loaded[0])
    # the run uses the selection it is given: no path is computed
    fake = {5: L.LassoSelection(alpha=1.0, coreset=np.array([3]), coef=np.array([2.0]), intercept=0.5, n_items=120)}
    m = make_method("lasso").fit(scores[same], 5, None, prefit=fake)
    np.testing.assert_allclose(m.estimate(Oracle(scores[40:], 5), None), 2.0 * scores[40:, 3] + 0.5)


@pytest.mark.parametrize("max_nnz", [3, 10, 40])
def test_stopped_path_is_the_whole_paths_first_columns(max_nnz):
    X, y = centred(logistic_scores(40, 160, 7))
    alphas = np.logspace(1, -4, 300)
    whole = L.lasso_path_skipping(X, y, alphas, 10_000, 1e-4)
    nnz = (whole != 0).sum(axis=0)
    assert nnz.max() > max_nnz  # the stop is reached
    k = int(np.argmax(nnz > max_nnz)) + 1  # up to and including the first alpha over the cap
    got = L.lasso_path_skipping(X, y, alphas, 10_000, 1e-4, max_nnz=max_nnz)
    assert got.shape == (160, k)
    np.testing.assert_array_equal(got, whole[:, :k])


@pytest.mark.parametrize("shape", [(40, 160), (80, 60)])  # the skipping path and lasso_path's (n > N)
def test_method_path_with_a_cap_keeps_the_largest_alphas(shape):
    src = logistic_scores(*shape, 8)
    m = L.LassoMethod(n_alphas=200)
    coefs, alphas, *_ = m.path(src)
    short, short_alphas, *_ = m.path(src, max_nnz=10)
    k = short.shape[1]
    assert 0 < k < coefs.shape[1]
    np.testing.assert_array_equal(short, coefs[:, -k:])  # ascending order: the largest alphas are last
    np.testing.assert_array_equal(short_alphas, alphas[-k:])
    assert (short[:, 0] != 0).sum() > 10 and ((short[:, 1:] != 0).sum(axis=0) <= 10).all()


def test_stop_ratio_known_answer():
    # non-zero counts along ascending alphas: 8, 3, 12, 5, 2, 0 (from the largest alpha down: 0, 2, 5, 12, 3, 8)
    counts = [8, 3, 12, 5, 2, 0]
    coefs = np.zeros((20, len(counts)))
    for j, c in enumerate(counts):
        coefs[:c, j] = 1.0
    alphas = np.logspace(-3, 0, len(counts))
    args = (coefs, alphas, np.zeros(20), 0.0)
    assert L.LassoMethod().select(*args, budget=3).alpha == alphas[1]  # the paper's rule: the exact match
    # stop at 2 x 3 = 6: the path ends at the 12 (ascending index 2), so the exact match below it is never reached
    stopped = L.LassoMethod(stop_ratio=2).select(*args, budget=3)
    assert stopped.alpha == alphas[4] and stopped.coreset.size == 2
    assert L.LassoMethod(stop_ratio=5).select(*args, budget=3).alpha == alphas[1]  # cap 15: the whole path


def test_stop_ratio_pick_does_not_depend_on_the_other_budgets():
    src = logistic_scores(50, 200, 9)
    m = L.LassoMethod(n_alphas=300, stop_ratio=1.5)
    alone = L.lasso_selections(src, [6], m)[6]
    together = L.lasso_selections(src, [6, 40], m)
    assert together[6].alpha == alone.alpha
    np.testing.assert_array_equal(together[6].coreset, alone.coreset)
    whole = m.select(*L.LassoMethod(n_alphas=300).path(src), 6)  # the rule on the whole path: the same pick
    assert whole.alpha == alone.alpha


def test_stop_ratio_params_and_bad_values():
    assert "stop_ratio" not in L.LassoMethod().params()  # the paper's path: ids and stored fits as before
    assert L.LassoMethod(stop_ratio=2).params()["stop_ratio"] == 2.0
    for bad in (0.5, "2", True, -1):
        with pytest.raises(ConfigError, match="stop_ratio"):
            make_method("lasso", {"stop_ratio": bad})
