"""The prefit protocol (benchcast.methods.prefit): every kind's per-trial fits go through the trial runner's
generic store and come back exact; a run with the stored prefit gives the estimates the method makes
on its own; the prefit's seconds become the run's training time."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from simdata import logistic_scores

from benchcast.data.item_level import ResponseMatrix
from benchcast.methods import REGISTRY
from benchcast.methods.prefit import PREFITS
from benchcast.trials.runner import PrefitResult, read_prefit, run_job, run_prefit, trial_splits, write_prefit

CASES = {
    "irt": (
        {"irt": {"dims": 2}, "with_bias": True, "share_identical_sources": True},
        ["p_irt", "gp_irt", "tinybenchmarks"],
    ),
    "lasso": ({"n_alphas": 60}, ["lasso"]),
}


@pytest.fixture(scope="module")
def matrix() -> ResponseMatrix:
    scores = logistic_scores(48, 90, 5)
    names = [f"m{i}" for i in range(48)]
    return ResponseMatrix("toy", scores, names, names, [f"i{j}" for j in range(90)], ["t"] * 90)


def test_every_prefit_kind_is_registered_and_declared_by_its_methods():
    assert set(PREFITS) == set(CASES)
    declared = {name: cls.needs_prefit for name, cls in REGISTRY.items() if cls.needs_prefit}
    assert declared == {m: kind for kind, (_, methods) in CASES.items() for m in methods}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_stored_prefit_gives_the_methods_own_estimates(matrix, kind, tmp_path):
    settings, methods = CASES[kind]
    splits = trial_splits(matrix, "interpolation", 3, 0, {"target_fraction": 0.25})
    made = run_prefit(matrix, splits, kind, settings, [8, 12], 0)
    assert sorted(made.fits) == [0, 1, 2] and made.timing.trial.tolist() == [0, 1, 2]
    write_prefit(made, tmp_path / kind)
    stored = sorted(p.name for p in (tmp_path / kind).iterdir())
    assert "timing.parquet" in stored and all(p.endswith(".parquet") for p in stored)
    back = read_prefit(tmp_path / kind, kind)
    assert isinstance(back, PrefitResult) and sorted(back.fits) == [0, 1, 2]
    pd.testing.assert_frame_equal(back.timing, made.timing)
    for method in methods:
        params = {"irt": settings["irt"]} if kind == "irt" else settings
        for n in (8, 12):
            with_prefit = run_job(matrix, splits, method, params, n, 0, prefit=back)
            from_fits = run_job(matrix, splits, method, params, n, 0, prefit=made.fits)
            pd.testing.assert_frame_equal(with_prefit.estimates, from_fits.estimates)
            assert (with_prefit.timing.prefit_seconds > 0).all() and "prefit_seconds" not in from_fits.timing
            if kind == "lasso":  # Lasso's fit is deterministic: the stored path is the one it would make
                own = run_job(matrix, splits, method, params, n, 0)
                pd.testing.assert_frame_equal(with_prefit.estimates, own.estimates)


def test_gp_irt_is_charged_for_its_bias_refit(matrix):
    splits = trial_splits(matrix, "interpolation", 2, 0, {"target_fraction": 0.25})
    made = run_prefit(matrix, splits, "irt", CASES["irt"][0], [8], 0)
    p = run_job(matrix, splits, "p_irt", {"irt": {"dims": 2}}, 8, 0, prefit=made).timing.prefit_seconds
    gp = run_job(matrix, splits, "gp_irt", {"irt": {"dims": 2}}, 8, 0, prefit=made).timing.prefit_seconds
    t = made.timing.set_index("trial")
    np.testing.assert_allclose(gp.to_numpy() - p.to_numpy(), t.bias_seconds.to_numpy())
    np.testing.assert_allclose(p.to_numpy(), (t.fit_seconds + t.anchor_seconds_n8).to_numpy())
