"""Leave-models-out calibration of `benchcast complete` (benchcast.completion.calibration)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchcast.completion.calibration import (
    build_new_model_reliability,
    check_new_models,
    check_summary,
    leave_model_out_cells,
    pick_models,
)
from benchcast.completion.complete import benchmark_scales, complete_new_model, interval_floor
from benchcast.studies.benchpress.settings import DEFAULT_GRID, PAPER_PREDICTORS, SELECTED_CONFIG

PAPER = {"predictors": PAPER_PREDICTORS}


def toy_matrix(n_models=20, n_bench=12, seed=3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n_models, 2)) @ rng.normal(size=(2, n_bench)) + rng.normal(size=n_bench)
    M = 100 / (1 + np.exp(-logits)) + rng.normal(scale=3.0, size=(n_models, n_bench))
    M = np.clip(M, 0.5, 99.5)
    M[:, -1] = 1000 + 100 * logits[:, -1]  # an Elo-like column
    M[rng.random(M.shape) < 0.25] = np.nan
    M[:, 0] = np.where(np.isnan(M[:, 0]), 50.0, M[:, 0])
    return M


def test_scales_and_floors_known_answers():
    M = np.array([[10.0, 1200.0, -3.0], [90.0, 1500.0, 4.0], [np.nan, 1000.0, 1.0]])
    pct = np.array([True, False, False])
    np.testing.assert_allclose(benchmark_scales(M, pct), [100.0, 500.0, 7.0])
    np.testing.assert_array_equal(interval_floor(M, pct), [0.0, 0.0, -np.inf])


@pytest.fixture(scope="module")
def cells():
    return leave_model_out_cells(toy_matrix(), [3, 5], **PAPER, repeats=1, groups=4, seed=1)


def test_calibration_cells_are_the_unrevealed_scores_of_removed_models(cells):
    M = toy_matrix()
    n_obs = np.isfinite(M).sum(axis=1)
    per = cells.groupby(["model", "k"]).size()
    for (i, k), n in per.items():
        assert n == n_obs[i] - k  # every observed score but the k known
    assert (cells.groupby("model").fold_id.nunique() == 1).all() and set(cells.fold_id) == {0, 1, 2, 3}
    np.testing.assert_allclose(cells.actual, M[cells.model, cells.benchmark])
    np.testing.assert_allclose(cells.abs_err, np.abs(cells.predicted - cells.actual))
    assert (cells.scale[cells.benchmark < 11] == 100).all() and (cells.scale[cells.benchmark == 11] > 100).all()


def test_a_calibration_cell_is_what_complete_new_model_predicts(cells):
    """Step 3 of the module docstring: the removed model is completed exactly as a new model."""
    M = toy_matrix()
    row = cells[(cells.model == 7) & (cells.k == 3)]
    known = np.setdiff1d(np.flatnonzero(np.isfinite(M[7])), row.benchmark)
    ids = [f"b{j}" for j in range(M.shape[1])]
    table = complete_new_model(
        np.delete(M, 7, axis=0), ids, {ids[j]: M[7, j] for j in known}, None, predictor=SELECTED_CONFIG
    )
    np.testing.assert_allclose(table.score.to_numpy()[row.benchmark], row.predicted, atol=1e-10)


def test_cells_do_not_depend_on_n_jobs_or_other_models_and_are_seeded(cells):
    some = np.array([2, 5, 11])
    again = leave_model_out_cells(toy_matrix(), [3, 5], **PAPER, repeats=1, groups=4, seed=1, models=some, n_jobs=2)
    mine = cells[cells.model.isin(some)].reset_index(drop=True)
    pd.testing.assert_frame_equal(mine.drop(columns="fold_id"), again.drop(columns="fold_id"))
    other = leave_model_out_cells(toy_matrix(), [3], **PAPER, repeats=1, groups=4, seed=2, models=some)
    assert not np.array_equal(mine[mine.k == 3].benchmark.to_numpy(), other.benchmark.to_numpy())


def test_reliability_is_calibrated_per_k_and_holds_on_held_out_models(cells):
    model, by_k = build_new_model_reliability(cells, **PAPER, grid=DEFAULT_GRID, level=0.9, seed=0)
    assert model.calibration == "new_model" and model.trust_scale == "percent_of_scale"
    assert sorted(model.by_k) == ["3", "5"] and list(by_k.k) == [3, 5]
    assert model.calibration_for(4)[0] == 3 and model.calibration_for(9)[0] == 5 and model.calibration_for(1)[0] == 3
    # fewer known scores: larger errors, so a wider interval for the same risk or a larger risk
    assert by_k.median_half_width.iloc[0] >= 0.8 * by_k.median_half_width.iloc[1]
    # new models from the same population: the check's coverage is near the nominal 90%
    big = toy_matrix(n_models=40, seed=4)
    held = pick_models(big, 10, 8, seed=0, stream="check")
    rest_cells = leave_model_out_cells(np.delete(big, held, axis=0), [5], **PAPER, repeats=1, groups=5, seed=0)
    rel, _ = build_new_model_reliability(rest_cells, **PAPER, grid=DEFAULT_GRID, level=0.9, seed=0)
    check = check_new_models(big, [f"b{j}" for j in range(big.shape[1])], held, 5, rel, draws=2, seed=0)
    summary = check_summary(check, 0.9)
    assert len(check) >= 80 and 0.8 <= summary.coverage.iloc[0] <= 0.98
    assert ((check.lower <= check.predicted) & (check.predicted <= check.upper)).all()
    assert abs(summary.stated_trust.iloc[0] - summary.observed_within.iloc[0]) < 0.15


def test_pick_models_is_a_seeded_choice_of_eligible_rows():
    M = toy_matrix()
    M[:5, 1:] = np.nan  # rows with a single score
    a = pick_models(M, 10, 4, seed=0, stream="s")
    assert len(a) == 10 and (a >= 5).all() and np.array_equal(a, np.sort(a))
    assert np.array_equal(a, pick_models(M, 10, 4, seed=0, stream="s"))
    assert np.array_equal(pick_models(M, None, 4, seed=0, stream="s"), np.arange(5, 20))
