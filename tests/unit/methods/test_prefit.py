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
from benchcast.trials.runner import (
    PrefitResult,
    merge_prefits,
    read_prefit,
    run_job,
    run_prefit,
    trial_splits,
    write_prefit,
)

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


@pytest.mark.parametrize("split", ["interpolation", "extrapolation"])
def test_a_prefit_made_in_parts_and_merged_is_the_whole_byte_for_byte(matrix, split, tmp_path):
    """Trial ranges in separate jobs (the workflow's mtm_prefit_part), merged: the same tables as one
    job's, on both splits (extrapolation's trials share one source set: a part refits the shared fit
    from the first trial's seed)."""
    settings = CASES["irt"][0]
    splits = trial_splits(matrix, split, 5, 0, {"target_fraction": 0.25})
    whole = run_prefit(matrix, splits, "irt", settings, [8, 12], 0)
    parts = [run_prefit(matrix, splits, "irt", settings, [8, 12], 0, part=(k, 3)) for k in range(3)]
    assert [sorted(p.fits) for p in parts] == [[0, 1], [2, 3], [4]]
    for k, p in enumerate(parts):  # each part through the store, as the workflow passes it
        write_prefit(p, tmp_path / f"part{k}")
    merged = merge_prefits([read_prefit(tmp_path / f"part{k}", "irt") for k in range(3)])
    write_prefit(whole, tmp_path / "whole")
    write_prefit(merged, tmp_path / "merged")
    for name in ("items", "trials", "anchors"):
        assert (tmp_path / "merged" / f"{name}.parquet").read_bytes() == (
            tmp_path / "whole" / f"{name}.parquet"
        ).read_bytes()
    assert merged.timing.trial.tolist() == [0, 1, 2, 3, 4]
    if split == "extrapolation":
        assert set(merged.timing.shared_from) == {0}


def test_a_prefit_that_cannot_be_split_or_a_part_out_of_range_is_refused(matrix):
    splits = trial_splits(matrix, "interpolation", 2, 0, {"target_fraction": 0.25})
    with pytest.raises(ValueError, match="cannot be split"):
        run_prefit(matrix, splits, "lasso", CASES["lasso"][0], [8], 0, part=(0, 2))
    with pytest.raises(ValueError, match="numbered 0 to 1"):
        run_prefit(matrix, splits, "irt", CASES["irt"][0], [8], 0, part=(2, 2))
