"""Tests for Double-Optimize (eqs. 18-19): torch-Adam port, gradients, projection, top-n, fit loop."""

from __future__ import annotations

import numpy as np
import pytest
from simdata import logistic_scores
from threadpoolctl import threadpool_limits

from benchcast.errors import BudgetExceeded, ConfigError
from benchcast.methods import REGISTRY, make_method
from benchcast.methods.double_optimize import Adam, DoubleOptimize, loss_and_grads, project_capped_simplex, top_n
from benchcast.oracle import Oracle


@pytest.fixture(autouse=True)
def _single_blas_thread():
    with threadpool_limits(limits=1):
        yield


# --------------------------------------------------------------------------- Adam


def test_adam_first_step_by_hand():
    param = np.array([1.0, -2.0, 0.5, 3.0])
    grad = np.array([0.5, -0.1, 0.0, 2e-9])
    opt = Adam(lr=0.1, weight_decay=0.01)
    opt.step(param, grad)
    g = grad + 0.01 * np.array([1.0, -2.0, 0.5, 3.0])
    # m = 0.1 g, v = 0.001 g^2; bias corrections 0.1 and 0.001: update = lr * g / (|g| + eps)
    expected = np.array([1.0, -2.0, 0.5, 3.0]) - 0.1 * g / (np.abs(g) + 1e-8)
    np.testing.assert_allclose(param, expected, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(opt.m, 0.1 * g, rtol=1e-15)
    np.testing.assert_allclose(opt.v, 0.001 * g * g, rtol=1e-15)


def test_adam_matches_reference_formulas_over_many_steps():
    """torch.optim.Adam's documented algorithm (L2 weight decay, bias-corrected moments)."""
    rng = np.random.default_rng(0)
    lr, b1, b2, eps, wd = 0.05, 0.9, 0.999, 1e-8, 1e-3
    x = rng.normal(size=7)
    ref, m, v = x.copy(), np.zeros(7), np.zeros(7)
    opt = Adam(lr, betas=(b1, b2), eps=eps, weight_decay=wd)
    for t in range(1, 41):
        grad = rng.normal(size=7) * (0.1 if t % 3 else 5.0)
        g = grad + wd * ref
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g**2
        m_hat, v_hat = m / (1 - b1**t), v / (1 - b2**t)
        ref = ref - lr * m_hat / (np.sqrt(v_hat) + eps)
        opt.step(x, grad)
        np.testing.assert_allclose(x, ref, rtol=1e-12, atol=1e-14)
    assert opt.t == 40


# --------------------------------------------------------------------------- gradients


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    S = rng.random((9, 12))
    y = S.mean(1)
    n = 4
    mask = np.zeros(12)
    mask[[1, 4, 5, 10]] = 1.0
    w = rng.normal(size=12)
    loss, g_mask, g_w = loss_and_grads(S, y, mask, w, n)

    def L(mk, ww):
        return np.mean((S @ (mk * ww) / n - y) ** 2)

    assert loss == pytest.approx(L(mask, w), rel=1e-14)
    h = 1e-6
    for j in range(12):
        e = np.zeros(12)
        e[j] = h
        np.testing.assert_allclose(g_w[j], (L(mask, w + e) - L(mask, w - e)) / (2 * h), rtol=1e-6, atol=1e-10)
        np.testing.assert_allclose(g_mask[j], (L(mask + e, w) - L(mask - e, w)) / (2 * h), rtol=1e-6, atol=1e-10)
    assert (g_w[mask == 0] == 0).all()  # only masked weights get a loss gradient


# --------------------------------------------------------------------------- projection and top-n


def exact_projection(v, k):
    """Exact projection onto {sum x = k, 0 <= x <= 1}: phi is piecewise linear between breakpoints."""
    bps = np.sort(np.concatenate([v - 1.0, v]))
    phi = np.array([np.clip(v - b, 0, 1).sum() for b in bps])  # non-increasing
    j = np.flatnonzero(phi <= k)[0]
    if phi[j] == k:
        lam = bps[j]
    else:
        lam = bps[j - 1] + (phi[j - 1] - k) / (phi[j - 1] - phi[j]) * (bps[j] - bps[j - 1])
    return np.clip(v - lam, 0, 1)


@pytest.mark.parametrize("case", ["ones", "random", "wide", "ties", "saturated"])
@pytest.mark.parametrize("N,k", [(10, 3), (50, 49), (200, 20), (7, 1)])
def test_projection_sums_to_k_in_unit_box(case, N, k):
    rng = np.random.default_rng(N + k)
    v = {
        "ones": np.ones(N),
        "random": rng.random(N),
        "wide": rng.normal(scale=3, size=N),
        "ties": np.repeat(rng.random(N // 2 + 1), 2)[:N],
        "saturated": np.r_[np.full(k, 5.0), np.full(N - k, -5.0)],
    }[case]
    x = project_capped_simplex(v, k)
    assert (x >= 0).all() and (x <= 1).all()
    assert abs(x.sum() - k) <= N * 1e-6
    np.testing.assert_allclose(x, exact_projection(v, k), rtol=0, atol=1e-6)
    # order-preserving, so ties stay ties
    assert (np.diff(x[np.argsort(v, kind="stable")]) >= 0).all()


def test_projection_of_ones_is_uniform():
    x = project_capped_simplex(np.ones(5463), 50)
    assert np.ptp(x) == 0 and x[0] == pytest.approx(50 / 5463, abs=1e-6)


@pytest.mark.parametrize("N,n", [(10, 3), (10, 9), (100, 1), (100, 99), (37, 20)])
def test_top_n_equals_stable_argsort_with_ties(N, n):
    rng = np.random.default_rng(N * n)
    for p in (rng.random(N), np.full(N, 0.3), rng.integers(0, 3, N).astype(float), np.zeros(N)):
        idx = top_n(p, n)
        np.testing.assert_array_equal(idx, np.sort(np.argsort(-p, kind="stable")[:n]))
        assert idx.size == n and np.unique(idx).size == n
    np.testing.assert_array_equal(top_n(np.full(N, 0.5), n), np.arange(n))


# --------------------------------------------------------------------------- the method


@pytest.mark.parametrize("N,n", [(30, 5), (30, 29), (12, 11), (40, 1), (25, 12)])
def test_coreset_has_exactly_n_distinct_items_and_budget_holds(N, n):
    S = logistic_scores(32, N, seed=N + n)
    src, tgt = S[:24], S[24:]
    m = make_method("double_optimize", {"max_steps": 60}).fit(src, n, np.random.default_rng(n))
    assert m.coreset_.size == n and np.unique(m.coreset_).size == n
    oracle = Oracle(tgt, n)
    est = m.estimate(oracle, None)
    assert (oracle.spent == n).all()
    np.testing.assert_allclose(est, (tgt[:, m.coreset_] * m.weights_).mean(1), rtol=0, atol=1e-14)
    if n > 1:
        with pytest.raises(BudgetExceeded):
            m.estimate(Oracle(tgt, n - 1), None)


def test_early_stopping_when_validation_loss_is_flat():
    S = logistic_scores(20, 30, seed=0)
    m = DoubleOptimize(lr_w=0.0, lr_p=0.0, patience=7, max_steps=1000).fit(S, 5, np.random.default_rng(0))
    # step 0 sets the best; steps 1..8 do not improve; the 8th non-improvement (> patience) stops
    assert m.stopped_early_ and m.n_steps_ == 9 and m.best_step_ == 0
    np.testing.assert_array_equal(m.coreset_, np.arange(5))  # all-equal p: stable tie-break


def test_early_stopping_on_overfitting_keeps_best_validation_step():
    S = logistic_scores(15, 400, seed=3)  # few models, many items
    m = DoubleOptimize(patience=10).fit(S, 30, np.random.default_rng(1))
    assert m.stopped_early_ and m.n_steps_ < 1000
    val = m.history_[:, 1]
    assert m.best_step_ == int(np.argmin(val)) and m.best_loss_ == val.min()
    assert m.n_steps_ == m.best_step_ + m.patience + 2
    assert m.history_[m.best_step_ + 1 :, 1].min() >= m.best_loss_


def test_no_early_stopping_runs_max_steps_and_training_loss_drops():
    S = logistic_scores(60, 40, seed=5)
    m = DoubleOptimize(max_steps=80, patience=1000).fit(S, 10, np.random.default_rng(2))
    assert not m.stopped_early_ and m.n_steps_ == 80
    assert m.history_[-1, 0] < m.history_[0, 0]


def test_fit_matches_straightforward_reference_loop():
    """A direct transcription of the paper's loop (dense mask, stable argsort, textbook Adam)."""
    S = logistic_scores(30, 25, seed=9)
    n, steps = 6, 40
    m = DoubleOptimize(max_steps=steps, patience=steps).fit(S, n, np.random.default_rng(4))

    rng = np.random.default_rng(4)
    M, N = S.shape
    y = S.mean(1)
    p = project_capped_simplex(np.ones(N), n)
    w = rng.standard_normal(N)
    order = rng.permutation(M)
    tr, va = order[: int(0.8 * M)], order[int(0.8 * M) :]
    state = {k: [np.zeros(N), np.zeros(N)] for k in "wp"}

    def adam(x, g, key, lr, t, wd=1e-4):
        g = g + wd * x
        mm, vv = state[key]
        mm[:] = 0.9 * mm + 0.1 * g
        vv[:] = 0.999 * vv + 0.001 * g * g
        return x - lr * (mm / (1 - 0.9**t)) / (np.sqrt(vv / (1 - 0.999**t)) + 1e-8)

    best, best_w, best_p = np.inf, None, None
    for t in range(1, steps + 1):
        mask = np.zeros(N)
        mask[np.argsort(-p, kind="stable")[:n]] = 1
        pred = (S * mask * w).sum(1) / n
        lv = np.mean((pred[va] - y[va]) ** 2)
        if lv < best:
            best, best_w, best_p = lv, w.copy(), p.copy()
        r = 2 * (pred[tr] - y[tr]) / len(tr)
        h = (S[tr] * r[:, None]).sum(0) / n
        w, p = adam(w, h * mask, "w", 0.1, t), adam(p, h * w, "p", 0.001, t)
        p = project_capped_simplex(p, n)
    core = np.flatnonzero(np.isin(np.arange(N), np.argsort(-best_p, kind="stable")[:n]))
    np.testing.assert_array_equal(m.coreset_, core)
    np.testing.assert_allclose(m.weights_, best_w[core], rtol=1e-9, atol=1e-12)
    assert m.best_loss_ == pytest.approx(best, rel=1e-9)


def test_registration_params_and_determinism():
    assert "double_optimize" in REGISTRY
    m = make_method("double_optimize")
    assert m.name == "double_optimize" and not m.deterministic_fit and not m.uses_coreset_stream
    assert m.params() == {
        "lr_w": 0.1,
        "lr_p": 0.001,
        "weight_decay": 1e-4,
        "max_steps": 1000,
        "patience": 100,
        "train_fraction": 0.8,
    }
    with pytest.raises(ConfigError):
        make_method("double_optimize", {"train_fraction": 1.5})
    S = logistic_scores(40, 60, seed=2)
    src, tgt = S[:30], S[30:]
    a = make_method("double_optimize", {"max_steps": 100}).fit(src, 8, np.random.default_rng(7))
    b = make_method("double_optimize", {"max_steps": 100}).fit(src, 8, np.random.default_rng(7))
    np.testing.assert_array_equal(a.coreset_, b.coreset_)
    np.testing.assert_array_equal(a.weights_, b.weights_)
    np.testing.assert_array_equal(a.estimate(Oracle(tgt, 8), None), b.estimate(Oracle(tgt, 8), None))
    with pytest.raises(BudgetExceeded):
        make_method("double_optimize").fit(src, 60, np.random.default_rng(0))
