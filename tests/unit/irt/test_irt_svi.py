"""Tests of benchcast.irt.fit_mirt_2pl_svi: the paper's py-irt SVI fit re-implemented in numpy."""

import numpy as np
import pytest
from scipy.special import gammainc, gammaincinv
from simdata import irt_responses
from threadpoolctl import threadpool_limits

from benchcast import irt
from benchcast.errors import DataError


@pytest.fixture(autouse=True)
def _one_thread():
    with threadpool_limits(1):
        yield


def _simulate(n_subjects, n_items, dims, seed):
    r = irt_responses(n_subjects, n_items, seed=seed, dims=dims, disc=(0.8, 0.5), diff_sd=0.5)
    return r.scores, r.ability, r.disc, r.diff, r.logits


def _small(seed=0, shape=(30, 40), p_obs=0.8):
    rng = np.random.default_rng(seed)
    Y = (rng.random(shape) < 0.6).astype(float)
    mask = rng.random(shape) < p_obs
    return Y, mask


def test_recovers_a_known_2pl():
    Y, ability, disc, diff, logits = _simulate(300, 400, 2, seed=1)
    fit = irt.fit_mirt_2pl_svi(Y, dims=2, rng=np.random.default_rng(0), epochs=600)
    assert fit.disc.shape == (400, 2) and fit.diff.shape == (400,) and fit.ability.shape == (300, 2)
    assert fit.disc.dtype == np.float64 and fit.n_iter == 600 and fit.converged
    assert np.corrcoef(fit.diff, diff)[0, 1] >= 0.9
    fitted = fit.ability @ fit.disc.T - 2 * fit.diff  # rotation invariant
    assert np.corrcoef(fitted.ravel(), logits.ravel())[0, 1] >= 0.95
    assert np.isfinite(fit.neg_log_posterior)


def test_elbo_gradient_matches_finite_differences():
    """The implemented reparameterised gradient is the derivative of the one-sample -ELBO at a
    fixed noise draw (Normal eps fixed; Gamma draws fixed through their CDF value q, so that
    ``s = F^-1(q; alpha)`` moves with alpha: implicit reparameterisation)."""
    rng = np.random.default_rng(3)
    S, I, D = 6, 8, 3
    Y = (rng.random((S, I)) < 0.5).astype(float)
    mask = rng.random((S, I)) < 0.8
    lay = irt._SVILayout(S, I, D)
    data = irt._SVIData(Y, mask, D, dtype=np.float64)
    x = rng.normal(scale=0.5, size=lay.n)
    eps = rng.standard_normal(lay.n_eps)
    q = rng.uniform(0.05, 0.95, size=lay.K)

    def loss_grad(x):
        return irt._svi_loss_grad(x, lay, data, eps, gammaincinv(np.exp(x[lay.sl["ra"]]), q))

    _, g = loss_grad(x)
    h = 1e-6
    fd = np.array([(loss_grad(x + h * e)[0] - loss_grad(x - h * e)[0]) / (2 * h) for e in np.eye(lay.n)])
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-5)


def test_std_gamma_dalpha_is_the_implicit_derivative():
    alpha = np.array([0.05, 0.5, 1.0, 3.0, 40.0, 2000.0])
    q = np.array([0.3, 0.9, 0.5, 0.01, 0.7, 0.99])
    s = gammaincinv(alpha, q)
    h = 1e-6 * alpha
    fd = (gammaincinv(alpha + h, q) - gammaincinv(alpha - h, q)) / (2 * h)
    np.testing.assert_allclose(irt._std_gamma_dalpha(s, alpha), fd, rtol=1e-5)
    assert np.allclose(gammainc(alpha, s), q)


def test_loss_includes_all_constants():
    """At parameters with a single observed cell and zero noise the loss is computable by hand."""
    D = 1
    lay = irt._SVILayout(1, 1, D)
    data = irt._SVIData(np.array([[1.0]]), np.array([[True]]), D, dtype=np.float64)
    x = np.zeros(lay.n)  # locs 0, scales 1, alpha = beta = 1
    eps = np.zeros(lay.n_eps)
    s = np.ones(lay.K)  # u = 1
    loss, _ = irt._svi_loss_grad(x, lay, data, eps, s)
    c = 0.5 * np.log(2 * np.pi)
    n_normal = lay.n_eps  # theta, gamma, b, mu_b, mu_theta, mu_gamma
    obs = np.log(2.0)  # -log sigmoid(0)
    local_prior = 3 * c  # N(0, 1) at 0
    hyper_prior = 3 * (np.log(10.0) + c) + 3 * 1.0  # N(0, 10) at 0, Gamma(1, 1) at 1
    log_q = n_normal * (-c) + 3 * (-1.0)  # N(0, 1) at 0, Gamma(1, 1) at 1
    assert loss == pytest.approx(obs + local_prior + hyper_prior + log_q, rel=1e-12)


def test_first_step_is_adam_sized():
    """Adam's first step moves every parameter with a non-zero gradient by exactly lr."""
    Y, mask = _small(seed=2)
    fit = irt.fit_mirt_2pl_svi(Y, mask, dims=3, rng=np.random.default_rng(0), epochs=1, params="last", lr=0.05)
    np.testing.assert_allclose(np.abs(fit.diff), 0.05, rtol=1e-6)
    np.testing.assert_allclose(np.abs(fit.disc), 0.05, rtol=1e-6)
    np.testing.assert_allclose(np.abs(fit.ability), 0.05, rtol=1e-6)


def test_unobserved_cells_are_ignored():
    Y, mask = _small(seed=4)
    Y2 = Y.copy()
    Y2[~mask] = 1.0 - Y2[~mask]
    Y3 = Y.copy()
    Y3[~mask] = np.nan
    kw = dict(dims=3, epochs=60)
    a = irt.fit_mirt_2pl_svi(Y, mask, rng=np.random.default_rng(5), **kw)
    for other in (Y2, Y3):
        b = irt.fit_mirt_2pl_svi(other, mask, rng=np.random.default_rng(5), **kw)
        np.testing.assert_array_equal(a.disc, b.disc)
        np.testing.assert_array_equal(a.diff, b.diff)
        np.testing.assert_array_equal(a.ability, b.ability)
        assert a.neg_log_posterior == b.neg_log_posterior


def test_subjects_and_items_without_observations_are_left_out():
    """py-irt never sees a subject or item without a training cell: the fit of the others is
    that of the matrix without them; they get the hyper-mean locations (finite)."""
    Y, mask = _small(seed=6)
    mask[:, 0] = True
    mask[3] = False
    mask[:, 7] = False
    kw = dict(dims=2, epochs=50)
    fit = irt.fit_mirt_2pl_svi(Y, mask, rng=np.random.default_rng(1), **kw)
    rows, cols = np.delete(np.arange(30), 3), np.delete(np.arange(40), 7)
    sub = irt.fit_mirt_2pl_svi(Y[np.ix_(rows, cols)], mask[np.ix_(rows, cols)], rng=np.random.default_rng(1), **kw)
    np.testing.assert_array_equal(fit.ability[rows], sub.ability)
    np.testing.assert_array_equal(fit.disc[cols], sub.disc)
    np.testing.assert_array_equal(fit.diff[cols], sub.diff)
    assert np.all(np.isfinite(fit.ability[3])) and np.all(np.isfinite(fit.disc[7])) and np.isfinite(fit.diff[7])


def test_deterministic_given_rng():
    Y, mask = _small(seed=7)
    kw = dict(dims=2, epochs=40)
    a = irt.fit_mirt_2pl_svi(Y, mask, rng=np.random.default_rng(11), **kw)
    b = irt.fit_mirt_2pl_svi(Y, mask, rng=np.random.default_rng(11), **kw)
    c = irt.fit_mirt_2pl_svi(Y, mask, rng=np.random.default_rng(12), **kw)
    np.testing.assert_array_equal(a.disc, b.disc)
    np.testing.assert_array_equal(a.ability, b.ability)
    np.testing.assert_array_equal(a.diff, b.diff)
    assert not np.array_equal(a.disc, c.disc)


def test_best_returns_the_lowest_loss_epoch():
    """py-irt's best_params: the export right after the step whose loss is the lowest; the
    loop consumes the rng identically per epoch, so a run of ``best_epoch + 1`` epochs
    ending there (``params='last'``) has the same parameters."""
    Y, mask = _small(seed=8, shape=(25, 30))
    epochs = 150
    res = irt._svi_run(Y, mask, 2, np.random.default_rng(3), epochs, 0.1, 0.9999)
    losses, best = res["losses"], res["best_epoch"]
    assert best == int(np.argmin(losses)) and 0 <= best < epochs - 1
    fit_best = irt.fit_mirt_2pl_svi(Y, mask, dims=2, rng=np.random.default_rng(3), epochs=epochs)
    fit_upto = irt.fit_mirt_2pl_svi(Y, mask, dims=2, rng=np.random.default_rng(3), epochs=best + 1, params="last")
    fit_last = irt.fit_mirt_2pl_svi(Y, mask, dims=2, rng=np.random.default_rng(3), epochs=epochs, params="last")
    np.testing.assert_array_equal(fit_best.disc, fit_upto.disc)
    np.testing.assert_array_equal(fit_best.diff, fit_upto.diff)
    np.testing.assert_array_equal(fit_best.ability, fit_upto.ability)
    assert fit_best.neg_log_posterior == pytest.approx(losses.min()) == fit_upto.neg_log_posterior
    assert fit_last.neg_log_posterior == pytest.approx(losses[-1])
    assert not np.array_equal(fit_best.disc, fit_last.disc)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(responses=np.zeros(5)), "responses"),
        (dict(responses=np.zeros((0, 3))), "responses"),
        (dict(responses=np.full((3, 3), 0.5)), "responses"),
        (dict(responses=np.array([[0.0, np.nan], [1.0, 0.0]])), "responses"),
        (dict(responses=np.zeros((2, 2)), observed=np.ones((2, 3), bool)), "observed"),
        (dict(responses=np.zeros((2, 2)), observed=np.zeros((2, 2), bool)), "observed"),
        (dict(responses=np.zeros((2, 2)), dims=0), "dims"),
        (dict(responses=np.zeros((2, 2)), dims=2.0), "dims"),
        (dict(responses=np.zeros((2, 2)), epochs=0), "epochs"),
        (dict(responses=np.zeros((2, 2)), lr=0.0), "lr"),
        (dict(responses=np.zeros((2, 2)), lr=float("nan")), "lr"),
        (dict(responses=np.zeros((2, 2)), lr_decay=1.5), "lr_decay"),
        (dict(responses=np.zeros((2, 2)), params="median"), "params"),
        (dict(responses=np.zeros((2, 2)), rng=0), "rng"),
        (dict(responses=np.zeros((2, 2)), dtype="float16"), "dtype"),
        (dict(responses=np.zeros((2, 2)), dtype=np.float32), "dtype"),
    ],
)
def test_bad_inputs_raise_data_error(kwargs, field):
    kwargs = {"rng": np.random.default_rng(0), "epochs": 2, **kwargs}
    responses = kwargs.pop("responses")
    with pytest.raises(DataError) as err:
        irt.fit_mirt_2pl_svi(responses, **kwargs)
    assert err.value.field == field
    assert "Fix:" in str(err.value)


# ------------------------------------------------------------------------ float32 (py-irt's precision)


def test_float32_is_deterministic_and_returns_float64():
    Y, mask = _small(seed=9)
    kw = dict(dims=2, epochs=60, dtype="float32")
    a = irt.fit_mirt_2pl_svi(Y, mask, rng=np.random.default_rng(4), **kw)
    b = irt.fit_mirt_2pl_svi(Y, mask, rng=np.random.default_rng(4), **kw)
    c = irt.fit_mirt_2pl_svi(Y, mask, rng=np.random.default_rng(5), **kw)
    for f in (a, b):
        assert f.disc.dtype == f.diff.dtype == f.ability.dtype == np.float64
        assert isinstance(f.neg_log_posterior, float) and f.converged and f.n_iter == 60
    np.testing.assert_array_equal(a.disc, b.disc)
    np.testing.assert_array_equal(a.diff, b.diff)
    np.testing.assert_array_equal(a.ability, b.ability)
    assert a.neg_log_posterior == b.neg_log_posterior
    assert not np.array_equal(a.disc, c.disc)


def test_float32_loss_and_gradient_match_float64_at_a_point():
    """One -ELBO evaluation in float32 (parameters, noise, guide) equals the float64 one to
    float32 rounding at the same parameters and noise."""
    rng = np.random.default_rng(6)
    S, I, D = 20, 30, 3
    Y = (rng.random((S, I)) < 0.6).astype(float)
    mask = rng.random((S, I)) < 0.9
    lay = irt._SVILayout(S, I, D)
    x = rng.normal(scale=0.3, size=lay.n)
    eps = rng.standard_normal(lay.n_eps)
    s_std = rng.standard_gamma(np.exp(x[lay.sl["ra"]]))
    x32, eps32, s32 = (v.astype(np.float32).astype(np.float64) for v in (x, eps, s_std))  # same point
    f64, g64 = irt._svi_loss_grad(x32, lay, irt._SVIData(Y, mask, D, np.float64), eps32, s32)
    f32, g32 = irt._svi_loss_grad(
        x32.astype(np.float32),
        lay,
        irt._SVIData(Y, mask, D, np.float32, np.float32),
        eps32.astype(np.float32),
        s32.astype(np.float32),
    )
    assert g32.dtype == np.float32
    assert f32 == pytest.approx(f64, rel=1e-5)
    np.testing.assert_allclose(g32, g64, rtol=2e-3, atol=2e-3 * np.abs(g64).max())


def test_float32_fit_is_statistically_equivalent_to_float64():
    """Same simulated problem, several seeds: the best losses and the fitted logits agree
    within the seed-to-seed spread (float32 draws a different random stream)."""
    Y, ability, disc, diff, logits = _simulate(40, 60, 2, seed=3)
    out = {}
    for dt in ("float64", "float32"):
        fits = [irt.fit_mirt_2pl_svi(Y, dims=2, rng=np.random.default_rng(s), epochs=1000, dtype=dt) for s in range(4)]
        out[dt] = (
            np.array([f.neg_log_posterior for f in fits]),
            np.mean([np.corrcoef((f.ability @ f.disc.T - 2 * f.diff).ravel(), logits.ravel())[0, 1] for f in fits]),
        )
    l64, l32 = out["float64"][0], out["float32"][0]
    spread = max(l64.std(ddof=1), l32.std(ddof=1), 1.0)
    assert abs(l64.mean() - l32.mean()) < 3 * spread
    assert out["float32"][1] > 0.8 and abs(out["float32"][1] - out["float64"][1]) < 0.03


def test_box_muller_normals():
    draw = irt._BoxMullerF32(10_001)
    rng = np.random.default_rng(0)
    z = np.concatenate([draw(rng).copy() for _ in range(20)])
    assert z.dtype == np.float32 and z.size == 200_020 and np.all(np.isfinite(z))
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01 and np.abs(z).max() <= 5.8
    a = draw(np.random.default_rng(1)).copy()
    np.testing.assert_array_equal(a, draw(np.random.default_rng(1)))
