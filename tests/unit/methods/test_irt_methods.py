"""P-IRT and GP-IRT (eqs. 12-13): lambda limits, budget, prefit reuse, storage round trip."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from simdata import irt_responses

from benchcast.errors import BudgetExceeded
from benchcast.methods import make_method
from benchcast.methods.irt_methods import (
    GPIRT,
    IRTTrialFit,
    anchors_to_frame,
    choose_dims,
    fit_irt_trials,
    fit_trial_irt,
    fits_to_frames,
    frames_to_fits,
    gp_irt_lambda,
    heldout_bias,
    irt_anchors,
    trial_anchors,
)
from benchcast.oracle import Oracle
from benchcast.trials.runner import run_job


def simulated(n_models=60, n_items=150, seed=0):
    return irt_responses(n_models, n_items, seed=seed, dims=2, disc=(1.0, 0.3)).scores


@pytest.fixture(scope="module")
def data():
    return simulated()


@pytest.fixture(scope="module")
def trial_fit(data):
    return fit_trial_irt(data[:45], np.random.default_rng(1), {"dims": 2})


def test_lambda_limits():
    # no P-IRT bias -> trust P-IRT entirely; bias dominating the anchors' variance -> trust the anchors
    assert gp_irt_lambda(0.0, 0.25, 50) == 0.0
    assert gp_irt_lambda(10.0, 0.25, 50) == pytest.approx(1.0, abs=1e-4)
    # more anchors -> smaller sampling variance v -> lambda grows towards 1
    lams = [gp_irt_lambda(0.02, 0.2, n) for n in (10, 100, 1000, 100_000)]
    assert all(a < b for a, b in zip(lams, lams[1:])) and lams[-1] > 0.99 and lams[0] < 0.2
    # lambda = b^2 / (v + b^2) with v = mean_variance / (4 n): a hand-computed value
    assert gp_irt_lambda(0.05, 0.2, 50) == pytest.approx(0.0025 / (0.001 + 0.0025))
    with pytest.raises(ValueError, match="bias"):
        gp_irt_lambda(float("nan"), 0.2, 50)


def test_trial_fit_contents(trial_fit, data):
    assert trial_fit.disc.shape == (150, 2) and trial_fit.diff.shape == (150,)
    assert 0 <= trial_fit.bias < 0.2
    assert trial_fit.mean_variance == pytest.approx(np.var(data[:45], axis=1).mean())


@pytest.mark.parametrize("name", ["p_irt", "gp_irt"])
def test_budget_is_respected_and_estimates_are_sane(name, data, trial_fit):
    m = make_method(name, {"irt": {"dims": 2}})
    m.fit(data[:45], 20, np.random.default_rng(2), prefit=trial_fit)
    oracle = Oracle(data[45:], 20)
    est = m.estimate(oracle, np.random.default_rng(3))
    assert (oracle.spent <= 20).all() and est.shape == (15,)
    truth = data[45:].mean(axis=1)
    assert np.abs(est - truth).mean() < 0.08  # far better than chance on a 2-dim IRT world
    with pytest.raises(BudgetExceeded):
        make_method(name).fit(data[:45], 150, np.random.default_rng(0))


def test_p_irt_equals_eq12_by_hand(data, trial_fit):
    from benchcast import irt

    m = make_method("p_irt").fit(data[:45], 20, np.random.default_rng(2), prefit=trial_fit)
    y = data[45:][:, m.anchors_]
    theta = irt.estimate_ability(y, trial_fit.disc[m.anchors_], trial_fit.diff[m.anchors_])
    unseen = np.setdiff1d(np.arange(150), m.anchors_)
    p = irt.response_probabilities(theta, trial_fit.disc[unseen], trial_fit.diff[unseen]).mean(axis=1)
    expected = 20 / 150 * y.mean(axis=1) + (1 - 20 / 150) * p
    np.testing.assert_allclose(m.estimate(Oracle(data[45:], 20), None), expected, rtol=1e-12)


def test_gp_irt_is_the_lambda_mix_of_anchor_weighted_and_p_irt(data, trial_fit):
    p = make_method("p_irt").fit(data[:45], 20, np.random.default_rng(2), prefit=trial_fit)
    g = make_method("gp_irt").fit(data[:45], 20, np.random.default_rng(2), prefit=trial_fit)
    np.testing.assert_array_equal(p.anchors_, g.anchors_)  # same stream -> same anchors
    lam = g.lambda_()
    assert 0 < lam < 1
    anchor_weighted = data[45:][:, g.anchors_] @ g.weights_
    expected = lam * anchor_weighted + (1 - lam) * p.estimate(Oracle(data[45:], 20), None)
    np.testing.assert_allclose(g.estimate(Oracle(data[45:], 20), None), expected, rtol=1e-12)
    assert g.weights_.sum() == pytest.approx(1.0)


def test_anchors_are_kmeans_nearest_items():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0, 0.0], [5.0, 5.0, 0.0], [0.0, 5.0, 5.0]])
    sizes = [10, 20, 30]
    x = np.vstack([c + 0.01 * rng.normal(size=(s, 3)) for c, s in zip(centres, sizes)])
    anchors, weights = irt_anchors(x[:, :2], x[:, 2], 3, np.random.default_rng(1))
    groups = np.repeat([0, 1, 2], sizes)
    assert sorted(groups[anchors]) == [0, 1, 2]
    assert sorted(weights) == pytest.approx([10 / 60, 20 / 60, 30 / 60])


def test_self_fit_equals_prefit(data):
    """Without a prefit the method fits the IRT itself, with the same result as the shared job."""
    from benchcast import seeding
    from benchcast.data.item_level import ResponseMatrix
    from benchcast.trials.runner import trial_splits

    matrix = ResponseMatrix(
        "toy",
        data,
        [f"m{i}" for i in range(60)],
        [f"m{i}" for i in range(60)],
        [f"i{j}" for j in range(150)],
        ["t"] * 150,
    )
    splits = trial_splits(matrix, "interpolation", 2, 0, {"target_fraction": 0.25})
    from benchcast.trials.runner import splits_by_trial

    fits = fit_irt_trials(data, splits_by_trial(splits, matrix), 0, {"dims": 2}, with_bias=True)
    with_prefit = run_job(matrix, splits, "gp_irt", {"irt": {"dims": 2}}, 15, 0, prefit=fits).estimates
    assert with_prefit.estimate.notna().all() and (with_prefit.items_queried <= 15).all()
    # the stored fit round-trips exactly through its Parquet tables
    back = frames_to_fits(*fits_to_frames(fits))
    for t in fits:
        np.testing.assert_array_equal(back[t].disc, fits[t].disc)
        np.testing.assert_array_equal(back[t].diff, fits[t].diff)
        assert back[t].bias == fits[t].bias
    again = run_job(matrix, splits, "gp_irt", {"irt": {"dims": 2}}, 15, 0, prefit=back).estimates
    np.testing.assert_array_equal(again.estimate, with_prefit.estimate)
    assert seeding.stream_id("irt_anchors") == seeding.stream_id(GPIRT.rng_stream)
    # the IRT job's precomputed anchors (every budget, once for P-IRT and GP-IRT) are the ones
    # the methods draw themselves, and survive the Parquet round trip
    for t, f in fits.items():
        f.anchors, f.anchor_seconds = trial_anchors(f, [10, 15], 0, t)
        assert set(f.anchors) == set(f.anchor_seconds) == {10, 15} and min(f.anchor_seconds.values()) >= 0
    back = frames_to_fits(*fits_to_frames(fits), anchors_to_frame(fits))
    for method in ("gp_irt", "p_irt"):
        plain = run_job(
            matrix, splits, method, {"irt": {"dims": 2}}, 15, 0, prefit=frames_to_fits(*fits_to_frames(fits))
        )
        shared = run_job(matrix, splits, method, {"irt": {"dims": 2}}, 15, 0, prefit=back)
        pd.testing.assert_frame_equal(shared.estimates, plain.estimates)
    for t in fits:
        a, w = back[t].anchors[15]
        m = make_method("p_irt", {"irt": {"dims": 2}}).fit(
            data[splits_by_trial(splits, matrix)[t][0]], 15, seeding.rng(0, t, "irt_anchors"), prefit=fits[t]
        )
        np.testing.assert_array_equal(a, m.anchors_)
        np.testing.assert_array_equal(w, m.weights_)
    no_anchors = dataclasses.replace(back[0], anchors=None)
    m = make_method("p_irt", {"irt": {"dims": 2}}).fit(
        data[splits_by_trial(splits, matrix)[0][0]], 15, seeding.rng(0, 0, "irt_anchors"), prefit=no_anchors
    )
    np.testing.assert_array_equal(m.anchors_, back[0].anchors[15][0])


@pytest.mark.parametrize("name", ["p_irt", "gp_irt", "tinybenchmarks"])
def test_non_binary_scores_are_refused_naming_the_methods_that_take_them(data, name):
    from benchcast.errors import ConfigError

    bad = data[:45].copy()
    bad[0, 0] = 0.5
    with pytest.raises(ConfigError, match=rf"^{name} is defined for 0/1 item scores only.*random_sampling"):
        make_method(name).fit(bad, 10, np.random.default_rng(0))


def test_unknown_irt_parameter_is_a_config_error():
    from benchcast.errors import ConfigError

    with pytest.raises(ConfigError, match="do not apply to fitter 'map'"):
        make_method("gp_irt", {"irt": {"dimz": 3}})
    with pytest.raises(ConfigError, match="do not apply to fitter 'svi'"):
        make_method("gp_irt", {"irt": {"fitter": "svi", "disc_scale": 0.5}})
    with pytest.raises(ConfigError, match="unknown IRT fitter 'em'"):
        make_method("p_irt", {"irt": {"fitter": "em"}})
    with pytest.raises(ConfigError, match="do not apply to fitter 'map'"):
        make_method("p_irt", {"irt": {"epochs": 100}})  # an SVI setting


def test_dims_grid_picks_the_dimension_with_the_smallest_heldout_error(data):
    """tinyBenchmarks' validation heuristic: each candidate's held-out error is heldout_bias's, the
    smallest wins, the full fit has that many dimensions and GP-IRT's b is the winner's error."""
    src = data[:45]
    dims, errors = choose_dims(src, np.random.default_rng(3), {"dims_grid": [1, 3]})
    rng = np.random.default_rng(3)
    assert errors[1] == heldout_bias(src, rng, {"dims": 1}) and errors[3] == heldout_bias(src, rng, {"dims": 3})
    assert dims == min(errors, key=errors.get)
    fit = fit_trial_irt(src, np.random.default_rng(3), {"dims_grid": [1, 3]})
    assert fit.dims == dims and fit.bias == errors[dims]
    from benchcast.errors import ConfigError

    with pytest.raises(ConfigError, match="dims_grid"):
        make_method("gp_irt", {"irt": {"dims_grid": []}})


def test_svi_dtype_passes_through(data):
    from benchcast.errors import DataError
    from benchcast.methods.irt_methods import fit_irt

    kw = {"fitter": "svi", "dims": 2, "epochs": 20}
    a = fit_irt(data[:45], np.random.default_rng(0), {**kw, "dtype": "float32"})
    b = fit_irt(data[:45], np.random.default_rng(0), kw)
    c = fit_irt(data[:45], np.random.default_rng(0), {**kw, "dtype": "float64"})
    assert a.disc.dtype == np.float64 and not np.array_equal(a.disc, b.disc)
    np.testing.assert_array_equal(b.disc, c.disc)  # float64 is the default
    with pytest.raises(DataError, match="dtype"):
        fit_irt(data[:45], np.random.default_rng(0), {**kw, "dtype": "half"})


def test_identical_source_sets_share_one_fit(data):
    """Extrapolation-like trials (the same source models in every trial) are fitted once; a trial
    with other sources gets its own fit; switching sharing off refits every trial."""
    src_a, src_b = np.arange(0, 40), np.arange(10, 50)
    by_trial = {
        0: (src_a, np.arange(50, 60)),
        1: (src_a[::-1].copy(), np.arange(50, 60)),
        2: (src_b, np.arange(50, 60)),
        3: (src_a, np.arange(50, 60)),
    }
    fits = fit_irt_trials(data, by_trial, 0, {"dims": 2, "max_iter": 200}, with_bias=False)
    assert [fits[t].shared_from for t in range(4)] == [0, 0, 2, 0]
    assert fits[1].disc is fits[0].disc and fits[3].fit_seconds == fits[0].fit_seconds
    assert not np.array_equal(fits[2].disc, fits[0].disc)
    own = fit_irt_trials(
        data, by_trial, 0, {"dims": 2, "max_iter": 200}, with_bias=False, share_identical_sources=False
    )
    assert [own[t].shared_from for t in range(4)] == [0, 1, 2, 3]
    np.testing.assert_array_equal(own[0].disc, fits[0].disc)  # the first trial's fit is the same
    assert not np.array_equal(own[3].disc, fits[3].disc)  # a refit from trial 3's seed differs


def test_prefit_dims_mismatch_items_is_refused(data):
    fit = IRTTrialFit(disc=np.zeros((10, 2)), diff=np.zeros(10), bias=0.1, mean_variance=0.2)
    with pytest.raises(ValueError, match="items"):
        make_method("p_irt").fit(data[:45], 5, np.random.default_rng(0), prefit=fit)
