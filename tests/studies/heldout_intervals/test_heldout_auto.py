"""The held-out test of `--method auto` (benchcast.studies.heldout_intervals.auto) and the families the
held-out test keeps together (deal_folds, family_keys, family pairs): known answers on tables the
tests make, and auto's held-out choice equal to what `choose_method` chooses for the same user."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchcast.new_model.auto import choose_method
from benchcast.new_model.leaderboard import load_leaderboard
from benchcast.studies.heldout_intervals.auto import auto_rows, auto_table, fold_ties
from benchcast.studies.heldout_intervals.heldout import _without, deal_folds, fold_seed, heldout
from benchcast.studies.heldout_intervals.pairs import family_keys, fold_pairs, paired_table


def test_without_families_the_folds_are_dealt_as_before():
    n, outer, seed = 23, 4, 5
    from benchcast import seeding

    before = np.empty(n, dtype=np.int64)
    before[seeding.rng(seed, 0, "deploy:heldout").permutation(n)] = np.arange(n) % outer
    assert (deal_folds(n, outer, seed) == before).all()
    assert (deal_folds(n, outer, seed, [None] * n) == before).all()  # no family named: the same folds


def test_a_family_is_dealt_into_one_fold_and_the_folds_stay_balanced():
    families = [f"f{i // 3}" if i < 12 else None for i in range(40)]  # four families of three, 28 alone
    fold_of = deal_folds(40, 5, 0, families)
    for f in {k for k in families if k}:
        assert len({fold_of[i] for i, k in enumerate(families) if k == f}) == 1
    sizes = np.bincount(fold_of, minlength=5)
    assert sizes.sum() == 40 and sizes.max() - sizes.min() <= 2 * 2  # a family of 3 is one turn of the deal


def test_family_keys_name_organisation_architecture_and_size_or_nothing():
    models = pd.DataFrame(
        {
            "model_id": ["q/a-7b", "q/a-7b-chat", "q/b-7b", "r/a-7b", "q/c"],
            "organization": ["q", "q", "q", "r", "q"],
            "architecture": ["Llama", "Llama", "Mistral", "Llama", None],
            "params_b": [7.0, 7.0, 7.0, 7.0, 3.0],
        }
    )
    keys = family_keys(models, ["q/a-7b", "q/a-7b-chat", "q/b-7b", "r/a-7b", "q/c", "unknown"])
    assert keys[0] == keys[1] == "q|Llama|7" and len(set(keys[:4])) == 3 and keys[4:] == [None, None]
    assert family_keys(models.drop(columns="architecture"), ["q/a-7b"]) == [None]  # HELM's boards: no families


def test_family_pairs_are_the_pairs_of_one_named_family():
    from types import SimpleNamespace

    pairs = pd.DataFrame({"estimate_diff": np.linspace(0, 0.1, 30), "truth_diff": 0.0, "differing": 2.0, "shared": 5})
    fit = SimpleNamespace(pairs=pairs, calibration=pd.DataFrame({"estimate": [0.1] * 5, "truth": 0.0}))
    members = [
        {"model_id": m, "truth": t, "estimate": t, "answers": {"q1": 1}, "row": [1, 0], "family": f}
        for m, t, f in [("a", 0.1, "x"), ("b", 0.2, "x"), ("c", 0.3, None), ("d", 0.4, None)]
    ]
    rows = pd.DataFrame(fold_pairs(0, fit, 0.9, members))
    assert rows.family.tolist() == [True, False, False, False, False, False]  # c and d name no family
    table = paired_table([("d", "m", 50)], [rows])
    assert table.pairs_kind.tolist() == ["all", "nearest", "alike", "family"] and table.pairs.iloc[-1] == 1
    assert paired_table([("d", "m", 50)], [rows.assign(family=False)]).pairs_kind.tolist() == [
        "all",
        "nearest",
        "alike",
    ]


def held(fold, estimate, truth, calibration_mae):
    return pd.DataFrame({"fold": fold, "estimate": estimate, "truth": truth, "calibration_mae": calibration_mae})


def test_auto_takes_each_folds_lowest_calibration_error_and_is_scored_on_the_folds_models():
    truth = [0.5, 0.5, 0.5, 0.5]
    fold = [0, 0, 1, 1]
    frames = {
        # random_sampling: calibration says 0.05 in both folds; held out it errs 0.10 everywhere
        "random_sampling": held(fold, [0.6, 0.4, 0.6, 0.4], truth, [0.05, 0.05, 0.05, 0.05]),
        # aipw: calibration 0.04 in fold 0 (chosen there), 0.06 in fold 1; held out errs 0.02
        "aipw": held(fold, [0.52, 0.48, 0.52, 0.48], truth, [0.04, 0.04, 0.06, 0.06]),
        # a method of another package (not a default candidate): calibration 0.01, held out errs 0.01; the best
        "my_method": held(fold, [0.51, 0.49, 0.51, 0.49], truth, [0.01, 0.01, 0.01, 0.01]),
    }
    chosen = auto_rows(frames, ["random_sampling", "aipw"])
    assert chosen.method.tolist() == ["aipw", "aipw", "random_sampling", "random_sampling"]
    cells = [("d", m, 50) for m in frames]
    table = auto_table(cells, list(frames.values())).set_index("candidates")
    assert table.loc["default", "auto_mae"] == pytest.approx((0.02 + 0.02 + 0.1 + 0.1) / 4)
    assert table.loc["default", "chosen"] == "aipw (1 folds); random_sampling (1 folds)"
    assert table.loc["default", "best_method"] == "my_method" and table.loc["default", "best_mae"] == pytest.approx(
        0.01
    )
    assert table.loc["default", "auto_over_random_sampling"] == pytest.approx(0.06 / 0.1)
    assert table.loc["every", "auto_mae"] == pytest.approx(0.01) and table.loc[
        "every", "auto_over_best"
    ] == pytest.approx(1)
    # auto always the best (every): the bootstrap ratio is 1 in every resample
    assert (table.loc["every", "auto_over_best_lower"], table.loc["every", "auto_over_best_upper"]) == (1.0, 1.0)
    seconds = {("d", "random_sampling", 50): 1.0, ("d", "aipw", 50): 2.0, ("d", "my_method", 50): 10.0}
    added = auto_table(cells, list(frames.values()), seconds).set_index("candidates")
    assert added.loc["default", "first_fit_seconds_added"] == 2.0  # chose random_sampling once: aipw's fit added
    assert added.loc["every", "first_fit_seconds_added"] == 3.0


def test_auto_in_the_heldout_test_chooses_what_choose_method_chooses_for_that_user(tmp_path):
    rng = np.random.default_rng(4)
    ability, difficulty = rng.normal(size=(40, 1)), rng.normal(size=(1, 120))
    scores = (rng.random((40, 120)) < 1 / (1 + np.exp(difficulty - ability))).astype(int)
    frame = pd.DataFrame(scores, columns=[f"q{j}" for j in range(120)])
    frame.insert(0, "model_id", [f"m{i}" for i in range(40)])
    frame.to_csv(tmp_path / "board.csv", index=False)
    board = load_leaderboard(str(tmp_path / "board.csv"))
    quiet = {"log": lambda s: None}
    candidates = ["random_sampling", "aipw", "random_sampling_learn"]
    calibrations = {m: [] for m in candidates}
    frames = {
        m: heldout(board, m, None, 20, 0, 3, 2, 0.9, calibration_out=calibrations[m], **quiet) for m in candidates
    }
    calibrations = {m: pd.concat(c, ignore_index=True) for m, c in calibrations.items()}
    rows = auto_rows(frames, candidates)
    ties = fold_ties(calibrations, candidates)
    fold_of = deal_folds(40, 2, 0)
    for f in range(2):
        user = _without(board, np.flatnonzero(fold_of != f), f)
        choice = choose_method(user, 20, candidates, tmp_path / f"user{f}", fold_seed(0, f), 3, **quiet)
        assert rows[rows.fold == f].method.iloc[0] == choice.method
        assert ties[f] == choice.tied  # the ties the table counts are those the user is told
        mae = dict(zip(choice.table.method, choice.table.mae))
        for m in candidates:
            assert frames[m][frames[m].fold == f].calibration_mae.iloc[0] == pytest.approx(mae[m], abs=1e-12)
    cells = [("d", m, 20) for m in candidates]
    table = auto_table(cells, list(frames.values()), calibrations=list(calibrations.values()))
    assert table.tied.tolist() == [", ".join(str(len(ties[f])) for f in range(2))] * 2


def test_the_ratio_to_the_best_has_a_bootstrap_interval_that_chooses_the_best_again():
    # two methods with errors of the same spread, "b" ahead by luck: auto chose "a"; the interval
    # holds the point ratio, spans 1 (either could be the best in a resample), and is reproducible
    from benchcast.studies.heldout_intervals.auto import ratio_interval

    gen = np.random.default_rng(3)
    ids = [f"m{i}" for i in range(80)]
    a = pd.Series(np.abs(gen.normal(0, 0.03, 80)), index=ids)
    b = pd.Series(np.abs(gen.normal(0, 0.03, 80)), index=ids)
    point = a.mean() / min(a.mean(), b.mean())
    lower, upper = ratio_interval(a, {"a": a, "b": b}, seed=0, stream="t")
    assert lower <= point <= upper and lower == pytest.approx(1.0) and upper > 1.01
    assert ratio_interval(a, {"a": a, "b": b}, seed=0, stream="t") == (lower, upper)
    assert ratio_interval(a, {"a": a, "b": b}, seed=1, stream="t") != (lower, upper)
    # a clearly worse auto: the whole interval above 1
    lo, hi = ratio_interval(a + 0.05, {"a": a, "b": b}, seed=0, stream="t")
    assert 1.5 < lo < hi
