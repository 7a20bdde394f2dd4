"""Tests of the fast multidimensional 2PL IRT (:mod:`benchcast.irt`).

References re-implemented here from tinyBenchmarks (Polo et al. 2024, ``utils/irt.py``):
``item_curve`` (per-dimension clip of ``a * theta - b`` to +-30, then the sum over dims) and
``estimate_ability_parameters`` (scipy BFGS from zeros on the Bernoulli NLL with eps=1e-10).
Data are simulated from a known multidimensional 2PL in py-irt's parameterisation
``logit = ability @ disc.T - dims * diff``.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from helpers import REPO
from scipy.optimize import minimize
from simdata import irt_responses
from threadpoolctl import threadpool_limits

from benchcast import irt

DATA = REPO / "results" / "data"


@pytest.fixture(autouse=True)
def _single_blas_thread():
    with threadpool_limits(limits=1):
        yield


# --------------------------------------------------------------------------- helpers


def simulate(n_subjects: int, n_items: int, dims: int, seed: int):
    r = irt_responses(n_subjects, n_items, seed=seed, dims=dims, disc=(0.0, 0.8), diff_sd=1.5 / dims)
    return r.scores, r.ability, r.disc, r.diff


def tb_item_curve(theta, a, b):
    """tinyBenchmarks: theta (T, D, 1), a (1, D, n), b (1, 1, n) -> (T, n)."""
    z = np.clip(a * theta - b, -30, 30).sum(axis=1)
    return 1 / (1 + np.exp(-z))


def tb_nll(x, y, disc, diff, eps=1e-10):
    """tinyBenchmarks' ``neg_log_like`` inside ``estimate_ability_parameters``."""
    D = disc.shape[1]
    P = tb_item_curve(x.reshape(1, D, 1), disc.T[None], diff[None, None, :]).squeeze(0)
    return -np.sum(y * np.log(P + eps) + (1 - y) * np.log(1 - P + eps))


def corr(a, b) -> float:
    return float(np.corrcoef(np.ravel(a), np.ravel(b))[0, 1])


@pytest.fixture(scope="module")
def recovery_fit():
    y, ability, disc, diff = simulate(300, 500, 3, seed=1)
    fit = irt.fit_mirt_2pl(y, dims=3, rng=np.random.default_rng(0))
    return y, ability, disc, diff, fit


# --------------------------------------------------------------------------- MAP fit


def test_parameter_recovery(recovery_fit):
    y, ability, disc, diff, fit = recovery_fit
    assert fit.converged and fit.disc.shape == (500, 3) and fit.diff.shape == (500,)
    assert fit.ability.shape == (300, 3) and fit.dims == 3
    assert fit.item_embedding().shape == (500, 4)
    np.testing.assert_array_equal(fit.item_embedding()[:, :3], fit.disc)
    np.testing.assert_array_equal(fit.item_embedding()[:, 3], fit.diff)
    # the intercept dims * diff is identified up to ability's mean, which both the truth
    # and the zero-mean prior put at ~0; disc / ability only up to an invertible linear map,
    # so compare rotation-invariant quantities: the logit and probability matrices
    assert corr(3 * diff, 3 * fit.diff) >= 0.95
    true_logit = ability @ disc.T - 3 * diff
    fit_logit = fit.ability @ fit.disc.T - 3 * fit.diff
    assert corr(true_logit, fit_logit) >= 0.95
    p_true = irt.response_probabilities(ability, disc, diff)
    p_fit = irt.response_probabilities(fit.ability, fit.disc, fit.diff)
    assert corr(p_true, p_fit) >= 0.95
    # the fitted subspace of item discriminations matches the true one (canonical correlations)
    q1, _ = np.linalg.qr(disc - disc.mean(0))
    q2, _ = np.linalg.qr(fit.disc - fit.disc.mean(0))
    assert np.linalg.svd(q1.T @ q2, compute_uv=False).min() >= 0.9


def test_fixed_disc_scale_and_output_gauge(recovery_fit):
    y, ability, disc, diff, fit = recovery_fit
    # abilities are returned whitened (identity second moment), dims by decreasing |disc|
    np.testing.assert_allclose(fit.ability.T @ fit.ability / 300, np.eye(3), atol=1e-10)
    norms = np.linalg.norm(fit.disc, axis=0)
    assert np.all(np.diff(norms) <= 0) and np.all(fit.disc.sum(axis=0) >= 0)
    fixed = irt.fit_mirt_2pl(y, dims=3, rng=np.random.default_rng(0), disc_scale=0.8)
    assert fixed.converged
    assert corr(ability @ disc.T, fixed.ability @ fixed.disc.T) >= 0.95
    # the re-gauging leaves the logits of the raw MAP unchanged
    A, G, b, *_ = irt._fit_map(
        y, np.ones(y.shape, bool), 3, np.random.default_rng(0), 1.0, 0.8, None, 3000, 1e-5, learn_means=True
    )
    np.testing.assert_allclose(fixed.ability @ fixed.disc.T, A @ G.T, atol=1e-9)
    np.testing.assert_array_equal(fixed.diff, b)


def test_learned_prior_means_recover_a_nonzero_mean():
    """Items that all load positively on a general dimension (disc mean 1.2 on dim 0) and a
    shifted difficulty mean: the learned means recover both."""
    S, I, D = 300, 400, 2
    y = irt_responses(S, I, seed=3, dims=D, disc=(np.array([1.2, 0.0]), 0.3), diff_mean=0.4, diff_sd=0.3).scores
    fit = irt.fit_mirt_2pl(y, dims=D, rng=np.random.default_rng(0))
    zero = irt.fit_mirt_2pl(y, dims=D, rng=np.random.default_rng(0), prior_means=False, diff_scale=1.0)
    assert fit.converged and zero.converged
    # the output gauge whitens abilities (truth: ~N(0, I)), so disc is the truth up to a rotation
    assert np.linalg.norm(fit.disc.mean(axis=0)) == pytest.approx(1.2, rel=0.1)
    assert fit.diff.mean() == pytest.approx(0.4, abs=0.05)
    assert fit.neg_log_posterior != zero.neg_log_posterior  # the option changes the fit
    # the raw MAP is a stationary point of the posterior with the learned means
    mask = np.ones(y.shape, bool)
    A, G, b, _, conv, f_map, scales = irt._fit_map(
        y, mask, D, np.random.default_rng(0), 1.0, None, None, 3000, 1e-10, learn_means=True
    )
    obj = irt._Objective(2 * y - 1, mask, D, 1.0, 1 / scales**2, 1.0)
    obj.mg, obj.mb = G.mean(axis=0), float(b.mean())
    f, g = obj.value_grad(np.concatenate([A.ravel(), G.ravel(), b]))
    assert np.abs(g[: S * D + I * D]).max() < 0.05  # (the learned diff scale is not returned: skip diff)


def _tiny_problem(seed=0, S=7, I=9, D=3):
    rng = np.random.default_rng(seed)
    y = (rng.random((S, I)) < 0.5).astype(float)
    mask = rng.random((S, I)) < 0.8
    signs = np.zeros((S, I))
    signs[mask] = 2 * y[mask] - 1
    pg = np.array([0.5, 2.0, 1.0])
    obj = irt._Objective(signs, mask, D, 1.3, pg, 0.7)
    x = rng.normal(size=S * D + I * D + I) * 3  # large logits: exercises the stable branches
    return y, mask, pg, obj, x


def test_objective_value_and_analytic_gradient():
    y, mask, pg, obj, x = _tiny_problem()
    f, g = obj.value_grad(x)
    A, G, b = obj.split(x)
    z = A @ G.T - 3 * b
    ref = np.sum(mask * (np.logaddexp(0, z) - y * z)) + 0.5 * (1.3 * np.sum(A * A) + np.sum(pg * G * G) + 0.7 * b @ b)
    assert f == pytest.approx(ref, rel=1e-12)
    h = 1e-6
    fd = np.array([(obj.value_grad(x + h * e)[0] - obj.value_grad(x - h * e)[0]) / (2 * h) for e in np.eye(x.size)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)
    # the preconditioned (optimiser's) view is the same function
    obj.set_preconditioner(*obj.gauss_newton_diag(x, mask))
    fu, gu = obj.scaled(x / obj.scale)
    assert fu * obj.norm == pytest.approx(f, rel=1e-12)
    np.testing.assert_allclose(gu * obj.norm / obj.scale, g, rtol=1e-10, atol=1e-10)


def test_float32_objective_matches_float64():
    """``dtype=float32`` does the subjects x items passes in float32 and returns float64 values and
    gradients within float32 rounding of the float64 objective's (sums accumulated in float64)."""
    y, mask, pg, obj, x = _tiny_problem(S=40, I=60)
    signs32 = obj.signs.astype(np.float32)
    obj32 = irt._Objective(signs32, mask, 3, 1.3, pg, 0.7, np.float32)
    f, g = obj.value_grad(x)
    f32, g32 = obj32.value_grad(x)
    assert obj32._z.dtype == obj32._w.dtype == np.float32 and g32.dtype == np.float64
    assert f32 == pytest.approx(f, rel=1e-6) and f32 != f
    np.testing.assert_allclose(g32, g, rtol=1e-4, atol=1e-4 * np.abs(g).max())
    for h64, h32 in zip(obj.gauss_newton_diag(x, mask), obj32.gauss_newton_diag(x, mask)):
        assert h32.dtype == np.float64
        np.testing.assert_allclose(h32, h64, rtol=1e-4)


def test_float32_fit_gives_the_float64_fits_probabilities():
    y, *_ = simulate(120, 200, 2, seed=4)
    f64 = irt.fit_mirt_2pl(y, dims=2, rng=np.random.default_rng(0))
    f32 = irt.fit_mirt_2pl(y, dims=2, rng=np.random.default_rng(0), dtype="float32")
    assert f32.disc.dtype == f32.ability.dtype == np.float64
    p64 = irt.response_probabilities(f64.ability, f64.disc, f64.diff)
    p32 = irt.response_probabilities(f32.ability, f32.disc, f32.diff)
    assert 0 < np.abs(p64 - p32).max() < 1e-3


def test_objective_residual_matches_the_masked_sigmoid():
    """The data gradient is R = (P - Y) * mask with P = sigmoid(logit), computed without a
    ``where=`` ufunc; check it against expit directly (large logits included)."""
    from scipy.special import expit

    y, mask, pg, obj, x = _tiny_problem()
    _, g = obj.value_grad(x)
    A, G, b = obj.split(x)
    R = (expit(A @ G.T - 3 * b) - y) * mask
    gA, gG, gb = obj.split(g)
    np.testing.assert_allclose(gA, R @ G + 1.3 * A, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gG, R.T @ A + pg * G, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gb, -3 * R.sum(axis=0) + 0.7 * b, rtol=1e-12, atol=1e-12)


def test_minimize_cache_gives_scipys_iterates():
    """Our one-entry (value, gradient) cache replaces scipy's MemoizeJac: identical iterates."""
    from scipy.optimize import minimize

    y, mask, pg, obj, x = _tiny_problem()
    obj.set_preconditioner(*obj.gauss_newton_diag(x, mask))
    xo, res = obj.minimize(x, 40, 1e-9)
    ref = minimize(
        obj.scaled,
        x / obj.scale,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 40, "ftol": 1e-9, "gtol": 1e-12, "maxcor": 20, "maxfun": 130},
    )
    np.testing.assert_array_equal(res.x, ref.x)
    assert res.nit == ref.nit and res.nfev == ref.nfev and res.fun == ref.fun


def test_masked_cells_are_ignored():
    y, *_ = simulate(60, 80, 2, seed=3)
    mask = np.random.default_rng(4).random(y.shape) < 0.85
    clean = np.where(mask, y, 0.0)
    garbage = np.where(mask, y, np.nan)
    garbage[~mask & (np.arange(y.size).reshape(y.shape) % 2 == 0)] = 7.5
    a = irt.fit_mirt_2pl(clean, mask, dims=2, rng=np.random.default_rng(5))
    b = irt.fit_mirt_2pl(garbage, mask, dims=2, rng=np.random.default_rng(5))
    for name in ("disc", "diff", "ability"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.neg_log_posterior == b.neg_log_posterior
    # and a 0/1 mask works like a boolean one
    c = irt.fit_mirt_2pl(garbage, mask.astype(int), dims=2, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a.disc, c.disc)


def test_deterministic_given_rng():
    y, *_ = simulate(50, 70, 2, seed=6)
    a = irt.fit_mirt_2pl(y, dims=2, rng=np.random.default_rng(11))
    b = irt.fit_mirt_2pl(y, dims=2, rng=np.random.default_rng(11))
    c = irt.fit_mirt_2pl(y, dims=2, rng=np.random.default_rng(12))
    for name in ("disc", "diff", "ability"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.n_iter == b.n_iter and a.neg_log_posterior == b.neg_log_posterior
    assert not np.array_equal(a.disc, c.disc)


def test_map_is_a_stationary_point_of_the_posterior():
    y, *_ = simulate(40, 60, 2, seed=8)
    mask = np.ones(y.shape, bool)
    A, G, b, n_iter, converged, f_map, scales = irt._fit_map(
        y, mask, 2, np.random.default_rng(0), 1.0, 0.7, 1.0, 3000, 1e-12
    )
    np.testing.assert_allclose(scales, [0.7, 0.7], rtol=1e-12)
    obj = irt._Objective(2 * y - 1, mask, 2, 1.0, np.full(2, 1 / 0.7**2), 1.0)
    f, g = obj.value_grad(np.concatenate([A.ravel(), G.ravel(), b]))
    assert f == pytest.approx(f_map, rel=1e-12)
    assert np.abs(g).max() < 1e-3
    fit = irt.fit_mirt_2pl(
        y, dims=2, rng=np.random.default_rng(0), disc_scale=0.7, diff_scale=1.0, prior_means=False, tol=1e-12
    )
    assert fit.neg_log_posterior == pytest.approx(f_map, rel=1e-12)


def test_bad_inputs():
    y, *_ = simulate(10, 12, 2, seed=9)
    rng = np.random.default_rng(0)
    bad = y.copy()
    bad[0, 0] = 0.5
    with pytest.raises(ValueError, match="binary"):
        irt.fit_mirt_2pl(bad, dims=2, rng=rng)
    nan = y.copy()
    nan[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        irt.fit_mirt_2pl(nan, dims=2, rng=rng)
    mask = np.ones(y.shape, bool)
    mask[1, 1] = False
    irt.fit_mirt_2pl(nan, mask, dims=2, rng=rng, max_iter=5)  # fine when unobserved
    with pytest.raises(ValueError, match="shape"):
        irt.fit_mirt_2pl(y, mask[:, :-1], dims=2, rng=rng)
    with pytest.raises(ValueError, match="2-D"):
        irt.fit_mirt_2pl(y[0], dims=2, rng=rng)
    for dims in (0, -1, 2.5):
        with pytest.raises(ValueError, match="dims"):
            irt.fit_mirt_2pl(y, dims=dims, rng=rng)
    with pytest.raises(ValueError, match="scale"):
        irt.fit_mirt_2pl(y, dims=2, rng=rng, disc_scale=0.0)
    for dtype in ("float16", np.float32):
        with pytest.raises(ValueError, match="dtype.*'float32'"):
            irt.fit_mirt_2pl(y, dims=2, rng=rng, dtype=dtype)
    with pytest.raises(ValueError, match="binary"):
        irt.estimate_ability(bad[:, :5], np.ones((5, 2)), np.zeros(5))
    with pytest.raises(ValueError, match="NaN"):
        irt.estimate_ability(nan[:, :5], np.ones((5, 2)), np.zeros(5))
    with pytest.raises(ValueError, match="responses"):
        irt.estimate_ability(y[:, :5], np.ones((6, 2)), np.zeros(6))
    with pytest.raises(ValueError, match="diff"):
        irt.response_probabilities(np.zeros((2, 2)), np.ones((5, 2)), np.zeros(4))


# --------------------------------------------------------------------------- curves


def test_response_probabilities_equal_tinybenchmarks_item_curve():
    rng = np.random.default_rng(0)
    theta = rng.normal(size=(6, 4))
    disc = rng.normal(size=(9, 4))
    diff = rng.normal(size=9)
    disc[:3] *= 40  # some terms beyond the +-30 clip
    diff[3] = 45.0
    ref = tb_item_curve(theta[:, :, None], disc.T[None], diff[None, None, :])
    got = irt.response_probabilities(theta, disc, diff)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-15)
    # unclipped items: the plain logit ability @ disc.T - dims * diff
    z = theta @ disc[4:].T - 4 * diff[4:]
    np.testing.assert_allclose(got[:, 4:], 1 / (1 + np.exp(-z)), rtol=1e-12)
    assert irt.response_probabilities(theta[0], disc, diff).shape == (1, 9)


def test_log_likelihood():
    y = np.array([[1.0, 0.0], [np.nan, 1.0]])
    p = np.array([[0.8, 0.3], [0.5, 0.6]])
    obs = ~np.isnan(y)
    expected = np.mean(np.log([0.8, 0.7, 0.6]))
    assert irt.log_likelihood(y, p, obs) == pytest.approx(expected)
    assert np.isfinite(irt.log_likelihood(np.array([[1.0]]), np.array([[0.0]])))


# --------------------------------------------------------------------------- abilities


def _bfgs_reference(y, disc, diff):
    D = disc.shape[1]
    return np.array([minimize(tb_nll, np.zeros(D), args=(row, disc, diff), method="BFGS").x for row in y])


@pytest.mark.parametrize("dims,n_items", [(3, 60), (10, 150)])
def test_estimate_ability_matches_tinybenchmarks_bfgs(dims, n_items):
    y, ability, disc, diff = simulate(25, n_items, dims, seed=dims)
    theta = irt.estimate_ability(y, disc, diff)
    assert theta.shape == (25, dims)
    ref = _bfgs_reference(y, disc, diff)
    nll_newton = np.array([tb_nll(t, row, disc, diff) for t, row in zip(theta, y)])
    nll_bfgs = np.array([tb_nll(t, row, disc, diff) for t, row in zip(ref, y)])
    np.testing.assert_allclose(nll_newton, nll_bfgs, rtol=1e-6)
    # BFGS stops at gtol=1e-5; our optimum carries the 1e-4 ridge: both within ~1e-8 relative
    assert np.all(nll_newton <= nll_bfgs * (1 + 1e-7))
    np.testing.assert_allclose(theta, ref, atol=2e-3 * max(1.0, np.abs(ref).max()))


def test_estimate_ability_recovers_true_abilities():
    rng = np.random.default_rng(21)
    dims, n_items = 2, 3000
    disc = rng.normal(scale=1.0, size=(n_items, dims))
    diff = rng.normal(scale=0.5, size=n_items)
    ability = rng.normal(size=(40, dims))
    p = irt.response_probabilities(ability, disc, diff)
    y = (rng.random(p.shape) < p).astype(float)
    theta = irt.estimate_ability(y, disc, diff)
    assert np.abs(theta - ability).max() < 0.25
    for d in range(dims):
        assert corr(theta[:, d], ability[:, d]) > 0.99


def test_estimate_ability_separable_and_prior():
    y, ability, disc, diff = simulate(3, 30, 2, seed=2)
    disc[:, 0] = np.abs(disc[:, 0]) + 0.1  # every item rises with ability[0] ...
    y[0] = 1.0  # ... so all-correct is separable: ML at infinity, the tiny ridge keeps it finite
    theta = irt.estimate_ability(y, disc, diff)
    assert np.all(np.isfinite(theta)) and theta[0, 0] > 5
    assert tb_nll(theta[0], y[0], disc, diff) < 0.05 * tb_nll(np.zeros(2), y[0], disc, diff)
    shrunk = irt.estimate_ability(y, disc, diff, prior_scale=0.5)
    assert np.all(np.linalg.norm(shrunk, axis=1) < np.linalg.norm(theta, axis=1))
    # MAP with a prior: zero gradient of NLL + |theta|^2 / (2 s^2)
    p = irt.response_probabilities(shrunk, disc, diff)
    grad = (p - y) @ disc + shrunk / 0.5**2
    assert np.abs(grad).max() < 1e-5
    one = irt.estimate_ability(y[2], disc, diff)
    np.testing.assert_allclose(one, theta[2:3], atol=1e-10)
    assert irt.estimate_ability(np.zeros((0, 30)), disc, diff).shape == (0, 2)


# --------------------------------------------------------------------------- real data (timing)


def _load(name: str) -> np.ndarray:
    pd = pytest.importorskip("pandas")
    r = pd.read_parquet(DATA / name / "responses.parquet")
    m = pd.read_parquet(DATA / name / "models.parquet")
    y = np.zeros((r.model_idx.max() + 1, r.item_idx.max() + 1))
    y[r.model_idx, r.item_idx] = r.score
    keep = np.zeros(y.shape[0], bool)
    keep[m.model_idx[~m.excluded.astype(bool)]] = True
    return y[keep]


@pytest.mark.parametrize("name", ["musr", "qnli"])
def test_real_data_fit_time_and_heldout_loglik(name):
    """Prints the dims=10 fit time and held-out mean log-lik with 10% of cells masked."""
    if not (DATA / name / "responses.parquet").exists():
        pytest.skip(f"no ingested {name} data")
    y = _load(name)
    test = np.random.default_rng(0).random(y.shape) < 0.1
    t0 = time.perf_counter()
    fit = irt.fit_mirt_2pl(y, ~test, dims=10, rng=np.random.default_rng(1))
    seconds = time.perf_counter() - t0
    p = irt.response_probabilities(fit.ability, fit.disc, fit.diff)
    heldout = irt.log_likelihood(y, p, test)
    item_mean = np.where(test, 0.0, y).sum(0) / (~test).sum(0)
    baseline = irt.log_likelihood(y, np.broadcast_to(item_mean, y.shape), test)
    print(
        f"\n{name} {y.shape}: fit {seconds:.2f} s, {fit.n_iter} L-BFGS iterations, "
        f"held-out mean log-lik {heldout:.4f} (item-mean baseline {baseline:.4f})"
    )
    assert fit.converged
    assert heldout > baseline + 0.05
