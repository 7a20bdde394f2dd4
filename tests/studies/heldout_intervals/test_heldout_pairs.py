"""The held-out test of `benchcast compare`'s paired intervals (benchcast.studies.heldout_intervals.pairs):
the pairs of one held-out fold, the nearest pairs, the summary on known answers, and the held-out
rows unchanged by asking for the pairs."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from benchcast.new_model.compare import PairedCalibration, paired_quantile
from benchcast.new_model.leaderboard import load_leaderboard
from benchcast.studies.heldout_intervals.heldout import heldout
from benchcast.studies.heldout_intervals.pairs import (
    PAIR_COLUMNS,
    conformal_again,
    fold_pairs,
    nearest_pairs,
    paired_table,
    summarise_pairs,
)


def test_nearest_pairs_join_each_model_to_its_closest_one():
    truth = np.array([0.10, 0.50, 0.12, 0.90, 0.55])
    assert nearest_pairs(np.abs(truth[:, None] - truth[None, :])) == {(0, 2), (1, 4), (3, 4)}


def calibrated_fit(q_scores, halfwidth):
    """A stand-in for a stored fit whose paired quantile at 0.5 is known: pairs differing on 3 items."""
    n = len(q_scores)
    pairs = pd.DataFrame(
        {"estimate_diff": np.asarray(q_scores) * 2.0, "truth_diff": 0.0, "differing": 3.0, "shared": 10}
    )
    calibration = pd.DataFrame({"estimate": np.full(n, halfwidth), "truth": 0.0})
    return SimpleNamespace(pairs=pairs, calibration=calibration)


def test_fold_pairs_compare_every_pair_as_compare_does():
    fit = calibrated_fit(np.linspace(0.001, 0.04, 40), 0.1)  # q at 0.5: the 21st smallest score
    members = [
        {"model_id": "a", "truth": 0.40, "estimate": 0.42, "answers": {"q1": 1, "q2": 0, "q3": 1}, "row": [1, 0, 1, 0]},
        {"model_id": "b", "truth": 0.45, "estimate": 0.50, "answers": {"q1": 1, "q2": 1, "q3": 0}, "row": [1, 1, 0, 0]},
        {"model_id": "c", "truth": 0.90, "estimate": 0.80, "answers": {"q1": 0, "q2": 0, "q3": 1}, "row": [0, 0, 1, 1]},
    ]
    rows = pd.DataFrame(fold_pairs(7, fit, 0.5, members))[PAIR_COLUMNS]
    assert list(zip(rows.model_a, rows.model_b)) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert rows.differing.tolist() == [2.0, 1.0, 3.0] and rows.shared.tolist() == [3, 3, 3]
    assert rows.nearest.tolist() == [True, False, True]  # c's nearest by score is b
    assert rows.alike.tolist() == [True, True, False]  # c's answers differ least from a's (2 items, b's 3)
    q = np.sort(np.linspace(0.001, 0.04, 40))[20]
    ab = rows.iloc[0]
    assert ab.difference == pytest.approx(0.08) and ab.truth_diff == pytest.approx(0.05)
    assert (ab.lower, ab.upper) == pytest.approx((0.08 - q * math.sqrt(3), 0.08 + q * math.sqrt(3)))
    assert rows.unpaired_halfwidth.tolist() == pytest.approx([math.sqrt(2) * 0.1] * 3) and (rows.fold == 7).all()


def test_the_summary_counts_coverage_width_and_verdicts():
    pairs = pd.DataFrame(
        {
            "truth_diff": [0.05, -0.02, 0.01, 0.30],
            "difference": [0.06, 0.01, 0.02, 0.28],
            "lower": [
                0.02,
                -0.03,
                -0.02,
                0.10,
            ],  # verdicts: pair 0 (right sign), pair 3 (right); 2 covers nothing wrong
            "upper": [0.10, 0.05, 0.06, 0.20],  # pair 3's interval misses the truth 0.30
            "unpaired_halfwidth": [0.1, 0.1, 0.1, 0.1],
            "nearest": [True, False, False, True],
            "alike": [False, False, False, True],
        }
    )
    s = summarise_pairs(pairs)
    assert s["pairs"] == 4 and s["coverage"] == 0.75 and s["verdicts"] == 0.5 and s["verdict_sign_right"] == 1.0
    assert s["median_halfwidth"] == pytest.approx(np.median([0.04, 0.04, 0.04, 0.05]))
    assert s["width_ratio"] == pytest.approx(0.4)
    table = paired_table([("d", "m", 50)], [pairs])
    assert table.pairs_kind.tolist() == ["all", "nearest", "alike"] and table.pairs.tolist() == [4, 2, 1]


def write_matrix(path, scores):
    frame = pd.DataFrame(scores.astype(int), columns=[f"q{j}" for j in range(scores.shape[1])])
    frame.insert(0, "model_id", [f"m{i}" for i in range(len(scores))])
    frame.to_csv(path, index=False)
    return path


def test_the_held_out_pairs_are_every_pair_of_a_fold_and_change_no_held_out_row(tmp_path):
    rng = np.random.default_rng(3)
    ability, difficulty = rng.normal(size=(48, 1)), rng.normal(size=(1, 150))
    scores = rng.random((48, 150)) < 1 / (1 + np.exp(difficulty - ability))
    board = load_leaderboard(str(write_matrix(tmp_path / "all.csv", scores)))
    quiet = {"log": lambda s: None}
    alone = heldout(board, "random_sampling", None, 30, 0, 4, 4, 0.9, **quiet)
    pairs, calibration, rows_of_fits = [], [], []
    rows = heldout(
        board, "random_sampling", None, 30, 0, 4, 4, 0.9, pairs_out=pairs, calibration_pairs_out=calibration,
        calibration_out=rows_of_fits, **quiet,
    )  # fmt: skip
    pd.testing.assert_frame_equal(
        rows.drop(columns=["select_seconds", "estimate_seconds", "fit_seconds"]),
        alone.drop(columns=["select_seconds", "estimate_seconds", "fit_seconds"]),
    )
    pairs = pd.DataFrame(pairs)
    assert len(pairs) == 4 * math.comb(12, 2) and (pairs.shared == 30).all()
    # a pair's row holds the two models' held-out estimates and truths
    one = pairs.iloc[0]
    fold_models = rows[rows.fold == one.fold]
    assert {one.model_a, one.model_b} <= set(fold_models.model_id)
    truth = dict(zip(rows.model_id, rows.truth))
    assert one.truth_diff == pytest.approx(truth[one.model_b] - truth[one.model_a])
    est = dict(zip(rows.model_id, rows.estimate))
    assert one.difference == pytest.approx(est[one.model_b] - est[one.model_a])
    assert ((pairs.lower <= pairs.difference) & (pairs.difference <= pairs.upper)).all()
    # Random-Sampling's pairs get its own interval, as compare gives it; the conformal one beside it
    assert (pairs.lower != pairs.conformal_lower).any()
    assert ((pairs.conformal_lower <= pairs.difference) & (pairs.difference <= pairs.conformal_upper)).all()
    # each fold's fit's calibration pairs give the conformal intervals again, to the bit; another
    # calibration gives other intervals from the same pairs
    calibration = pd.concat(calibration, ignore_index=True)
    assert sorted(calibration.heldout_fold.unique()) == [0, 1, 2, 3] and len(calibration) > 4 * 20
    pd.testing.assert_frame_equal(conformal_again(pairs, calibration, 0.9), pairs)
    # each fold's fit's calibration rows: one per model of the other folds, their mean error the rows'
    # calibration_mae (what auto compares)
    rows_of_fits = pd.concat(rows_of_fits, ignore_index=True)
    for f, fit_rows in rows_of_fits.groupby("heldout_fold"):
        assert set(fit_rows.model_id) == set(rows.model_id[rows.fold != f]) and fit_rows.model_id.is_unique
        mae = (fit_rows.estimate - fit_rows.truth).abs().mean()
        assert mae == rows.calibration_mae[rows.fold == f].iloc[0]
    one_band = conformal_again(
        pairs, calibration, 0.9, lambda c, level: PairedCalibration((), (paired_quantile(c, level),))
    )
    assert not one_band.conformal_upper.equals(pairs.conformal_upper)
    assert one_band.drop(columns=["conformal_lower", "conformal_upper"]).equals(
        pairs.drop(columns=["conformal_lower", "conformal_upper"])
    )
