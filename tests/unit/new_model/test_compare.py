"""`benchcast compare` (benchcast.new_model.compare): the held-out pairs a fit keeps, the paired
interval and MDAD on known answers, the command as a user types it, and its bad inputs refused in
one line with nothing written."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from benchcast.new_model import select
from benchcast.new_model.compare import (
    PairedCalibration,
    compare,
    detectable_difference,
    differing_on_shared,
    paired_calibration,
    paired_interval,
    paired_quantile,
    verdict,
)
from benchcast.new_model.fits import PAIR_COLUMNS, fold_pairs

QUIET = {"log": lambda *_: None}


def pairs_table(estimate_diff, truth_diff, differing) -> pd.DataFrame:
    n = len(estimate_diff)
    return pd.DataFrame(
        {
            "fold": 0,
            "model_a": [f"a{i}" for i in range(n)],
            "model_b": [f"b{i}" for i in range(n)],
            "estimate_diff": estimate_diff,
            "truth_diff": truth_diff,
            "differing": differing,
            "shared": 50,
        }
    )[PAIR_COLUMNS]


def test_the_paired_quantile_is_the_conformal_rank_of_the_normalised_scores():
    # errors 0.01 .. 0.99 on pairs that differ on 3 items: scores error / 2
    errors = np.arange(1, 100) / 100
    pairs = pairs_table(errors, np.zeros(99), np.full(99, 3.0))
    assert paired_quantile(pairs, 0.9) == pytest.approx(0.90 / 2)  # ceil(100 * 0.9) = 90th smallest
    assert paired_quantile(pairs, 0.5) == pytest.approx(0.50 / 2)
    assert math.isinf(paired_quantile(pairs.head(10), 0.9))  # too few pairs for any interval
    # a new pair that differs on 8 items: +- q * 3
    assert paired_interval(0.05, 8, 0.01) == pytest.approx((0.02, 0.08))
    assert paired_interval(0.9, 8, 0.1) == (pytest.approx(0.6), 1.0)  # within the possible differences


def test_the_paired_quantile_is_taken_per_band_of_the_true_difference():
    # 100 pairs at each of five true differences (either sign): band errors 0.01..1.00 x 1 .. x 5
    errors = np.arange(1, 101) / 100
    size = np.repeat([0.0, 0.02, 0.05, 0.1, 0.2], 100)
    truth = size * np.where(np.arange(len(size)) % 2, 1, -1)
    e = np.concatenate([k * errors for k in range(1, 6)])
    table = pairs_table(truth + e, truth, np.full(len(e), 3.0))
    cal = paired_calibration(table, 0.9)
    assert cal.by == "truth" and len(cal.edges) == 4
    assert 0 < cal.edges[0] <= 0.02 < cal.edges[1] <= 0.05 < cal.edges[2] <= 0.1 < cal.edges[3] <= 0.2
    # each band's own conformal rank (91st smallest of 100) of its scores error / sqrt(3 + 1)
    assert cal.quantiles == pytest.approx([k * 0.91 / 2 for k in range(1, 6)])
    # fewer pairs: as many bands as hold the least each (60 spread pairs, 20 a band: three; 59: two;
    # the five values' 62 pairs of 12-13 each: two)
    spread = np.linspace(0, 0.3, 60)
    assert len(paired_calibration(pairs_table(spread, spread, np.ones(60)), 0.9, band_pairs=20).edges) == 2
    assert len(paired_calibration(pairs_table(spread[1:], spread[1:], np.ones(59)), 0.9, band_pairs=20).edges) == 1
    assert len(paired_calibration(table.iloc[::8], 0.9, band_pairs=20).edges) == 1


def test_too_few_pairs_for_bands_of_the_truth_take_bands_of_differing_answers():
    # 99 pairs each differing on 0, 8 and 24 items, true differences all 0: band errors x 1, x 3, x 5
    errors = np.arange(1, 100) / 10_000
    d = np.repeat([0.0, 8.0, 24.0], 99)
    e = np.concatenate([errors, 3 * errors, 5 * errors])
    cal = paired_calibration(pairs_table(e, np.zeros(len(e)), d), 0.9)
    assert cal.by == "differing" and len(cal.quantiles) == 3 and 0 < cal.edges[0] <= 8 < cal.edges[1] <= 24
    # each band's own conformal rank (90th smallest of 99) of its scores error / sqrt(d + 1)
    assert cal.quantiles == pytest.approx([0.0090, 3 * 0.0090 / 3, 5 * 0.0090 / 5])
    # a pair gets its band's quantile, between and beyond the calibration's values too: diff +- q sqrt(d + 1)
    assert cal.interval(0.0, 0) == pytest.approx((-0.009, 0.009))
    assert cal.interval(0.1, 8) == pytest.approx((0.1 - 0.009 * 3, 0.1 + 0.009 * 3))
    assert cal.interval(0.0, 2) == pytest.approx((-0.009 * math.sqrt(3), 0.009 * math.sqrt(3)))
    assert cal.interval(0.5, 9_999) == pytest.approx((0.5 - 0.9, 1.0))  # within the possible differences
    # 150 pairs of spread true differences: one band of the truth (of 100), three of differing
    spread = np.linspace(0, 0.3, 150)
    assert paired_calibration(pairs_table(spread, spread, np.arange(150.0)), 0.9).by == "differing"
    # too few pairs for three bands of MIN_PAIRS: one band, the global quantile
    few = pairs_table(e[::9], np.zeros(len(e[::9])), d[::9])
    assert paired_calibration(few, 0.9) == PairedCalibration((), (paired_quantile(few, 0.9),))
    # every pair alike and of one true difference: one band
    same = paired_calibration(pairs_table(errors, np.zeros(99), np.full(99, 3.0)), 0.9)
    assert same.quantiles == (pytest.approx(0.0045),)


def test_per_band_of_differing_the_paired_interval_covers_where_one_quantile_for_all_does_not():
    # a method whose error is relatively larger on close pairs than sqrt(d + 1) says, on a board too
    # small for bands of the truth: the global quantile under-covers the close pairs and over-covers
    # the far ones; per band of differing both hold
    rng = np.random.default_rng(7)
    d = rng.integers(0, 40, 6_000).astype(float)
    scale = np.where(d < 10, 0.03, 0.01) * np.sqrt(d + 1)
    err = rng.normal(0, 1, 6_000) * scale
    cal_pairs, new = pairs_table(err[:3_000], np.zeros(3_000), d[:3_000]), slice(3_000, None)
    band_cal = paired_calibration(cal_pairs, 0.9)
    one = PairedCalibration((), (paired_quantile(cal_pairs, 0.9),))
    close = d[new] < 10

    def cover(cal, m):  # the true differences are 0
        return float(np.array([lo <= 0 <= hi for lo, hi in map(cal.interval, err[new], d[new])])[m].mean())

    assert band_cal.by == "differing"
    assert cover(one, close) < 0.8 and cover(one, ~close) > 0.97
    assert 0.87 <= cover(band_cal, close) <= 0.93 and 0.87 <= cover(band_cal, ~close) <= 0.93


def test_the_paired_interval_is_the_hull_of_the_differences_each_band_admits():
    cal = PairedCalibration((0.01, 0.03), (0.001, 0.004, 0.005))  # differing 3: half-widths x 2
    # an estimated difference of 0: only the closest band admits anything (within 0.002 of 0)
    assert cal.interval(0.0, 3) == pytest.approx((-0.002, 0.002))
    # 0.05: the far band's +- 0.01; the others admit nothing there
    assert cal.interval(0.05, 3) == pytest.approx((0.04, 0.06))
    # a far band that errs widely reaches back to an estimate of 0: the interval says so
    wide = PairedCalibration((0.01, 0.03), (0.001, 0.01, 0.02))
    assert wide.interval(0.0, 3) == pytest.approx((-0.04, 0.04))
    # no quantile (too few pairs): every possible difference
    assert PairedCalibration((), (math.inf,)).interval(0.3, 3) == (-1.0, 1.0)


def test_per_band_of_the_true_difference_the_paired_interval_covers_close_and_far_pairs():
    # an estimate that shrinks differences to half (as a regression on anchors does): its error is
    # half the true difference plus noise, so one quantile for all pairs over-covers the close pairs
    # (two checkpoints) and under-covers the far ones; per band of the true difference both hold
    rng = np.random.default_rng(7)
    truth = rng.uniform(-0.2, 0.2, 8_000)
    d = rng.integers(0, 40, 8_000).astype(float)
    est = 0.5 * truth + rng.normal(0, 0.004, 8_000) * np.sqrt(d + 1)
    cal_pairs, new = pairs_table(est[:4_000], truth[:4_000], d[:4_000]), slice(4_000, None)
    band_cal = paired_calibration(cal_pairs, 0.9)
    one = PairedCalibration((), (paired_quantile(cal_pairs, 0.9),))

    def cover(cal, m):
        inside = [lo <= t <= hi for (lo, hi), t in zip(map(cal.interval, est[new], d[new]), truth[new])]
        return float(np.mean(np.array(inside)[m]))

    # the closest and the farthest fifth of pairs (the first and the last band)
    close, far = np.abs(truth[new]) < band_cal.edges[0], np.abs(truth[new]) >= band_cal.edges[-1]
    assert cover(one, close) > 0.97 and cover(one, far) < 0.8
    assert 0.85 <= cover(band_cal, close) <= 0.95 and 0.85 <= cover(band_cal, far) <= 0.95


def test_mdad_on_held_out_pairs_is_the_first_bin_ordered_correctly_often_enough():
    # 100 items; pairs with true differences 1, 2, 3 points: the 1-point pairs ordered right 50% of
    # the time, the 2-point ones 70%, the 3-point ones 90% -> MDAD 3 points (0.5-point bins, 0.8)
    truth = np.repeat([0.01, 0.02, 0.03], 10)
    right = np.concatenate([np.arange(10) < 5, np.arange(10) < 7, np.arange(10) < 9])
    est = np.where(right, truth, -truth)
    assert detectable_difference(pairs_table(est, truth, np.ones(30)), 100) == 3.0
    # negative true differences count the same; a tie of the estimates is wrong
    assert detectable_difference(pairs_table(-est, -truth, np.ones(30)), 100) == 3.0
    est[20:] = 0.0
    assert detectable_difference(pairs_table(est, truth, np.ones(30)), 100) == 50.0  # none reaches: sentinel


def test_fold_pairs_count_what_both_models_answered_differently():
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 2, size=(6, 30)).astype(float)
    answered = rng.random((6, 30)) < 0.6
    ids = [f"m{i}" for i in range(6)]
    estimates = rng.random(6)
    rows = fold_pairs(ids, scores, answered, estimates, k=3, seed=0)
    assert len(rows) == 15
    for fold, a, b, est_diff, truth_diff, differing, shared in rows:
        i, j = ids.index(a), ids.index(b)
        both = answered[i] & answered[j]
        assert (fold, i < j, shared) == (3, True, both.sum())
        assert differing == np.abs(scores[i] - scores[j])[both].sum()
        assert est_diff == estimates[j] - estimates[i] and truth_diff == pytest.approx(
            scores[j].mean() - scores[i].mean()
        )
    capped = fold_pairs(ids, scores, answered, estimates, k=3, seed=0, cap=7)
    assert len(capped) == 7 and capped == fold_pairs(ids, scores, answered, estimates, k=3, seed=0, cap=7)
    assert set(capped) <= set(rows)


def toy_board(folder, n_models=120, n_items=300, seed=2):
    rng = np.random.default_rng(seed)
    ability, difficulty = rng.normal(size=(n_models, 1)), rng.normal(size=(1, n_items))
    scores = (rng.random((n_models, n_items)) < 1 / (1 + np.exp(difficulty - ability))).astype(int)
    board = pd.DataFrame(scores, columns=[f"q{j}" for j in range(n_items)])
    board.insert(0, "model_id", [f"m{i}" for i in range(n_models)])
    board.to_csv(folder / "board.csv", index=False)
    return difficulty[0]


def answer(folder, name, selection, truth) -> None:
    """A new model's answers to the selection's items (``truth``: its score on each item)."""
    index = {f"q{j}": j for j in range(len(truth))}
    pd.DataFrame(
        {
            "item_id": selection.items["item_id"],
            "score": [int(truth[index[i]]) for i in selection.items["item_id"]],
            "selection_id": selection.items["selection_id"],
        }
    ).to_csv(folder / f"{name}.csv", index=False)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A leaderboard, a stored random_sampling fit at n=40, and the answers of three new models: a
    base model, a copy of it better on 30 items, and an unrelated one."""
    root = tmp_path_factory.mktemp("compare")
    difficulty = toy_board(root)
    rng = np.random.default_rng(7)
    base = (rng.random(300) < 1 / (1 + np.exp(difficulty - 0.2))).astype(int)
    tuned = base.copy()
    tuned[rng.choice(np.flatnonzero(base == 0), 30, replace=False)] = 1
    other = (rng.random(300) < 1 / (1 + np.exp(difficulty + 0.5))).astype(int)
    selection = select(root / "board.csv", "random_sampling", 40, data_dir=root / "res", **QUIET)
    for name, truth in (("base", base), ("tuned", tuned), ("other", other)):
        answer(root, name, selection, truth)
    return root


def test_compare_gives_each_difference_with_a_paired_interval_and_keeps_the_fit(lab):
    given = {name: lab / f"{name}.csv" for name in ("base", "tuned", "other")}
    result = compare(lab / "board.csv", "random_sampling", given, data_dir=lab / "res", **QUIET)
    models, pairs = result["models"], {(p["first"], p["second"]): p for p in result["pairs"]}
    assert list(pairs) == [("base", "tuned"), ("base", "other"), ("tuned", "other")]
    close = pairs[("base", "tuned")]
    assert close["difference"] == models["tuned"]["estimate"] - models["base"]["estimate"]
    assert close["lower"] <= close["difference"] <= close["upper"] and close["items_shared"] == 40
    assert close["items_differing"] == differing_on_shared(*(a.scores for a in _answers(lab, "base", "tuned")))[0]
    # the close pair's interval is far narrower than the two unpaired ones combined, and than the far pair's
    width = (close["upper"] - close["lower"]) / 2
    far = pairs[("base", "other")]
    assert width < 0.5 * close["unpaired_halfwidth"] and width < (far["upper"] - far["lower"]) / 2
    assert close["verdict"].startswith("tuned - base = ")
    fit = lab / "res/models"
    (folder,) = fit.glob("*/random_sampling/n=40")
    stored = json.loads((folder / "fit.json").read_text())
    assert set(stored["files"]) == {"arrays.parquet", "calibration.parquet", "pairs.parquet"}
    kept = pd.read_parquet(folder / "pairs.parquet")
    assert list(kept.columns) == PAIR_COLUMNS and (kept.groupby("fold").size() == math.comb(12, 2)).all()


def _answers(lab, *names):
    from benchcast.data.answers import read_answers
    from benchcast.new_model.leaderboard import load_leaderboard

    items = load_leaderboard(str(lab / "board.csv"), lab / "res").matrix.item_ids
    return [read_answers(lab / f"{n}.csv", items) for n in names]


def test_two_models_that_answered_alike_differ_by_zero(lab):
    given = {"base": lab / "base.csv", "same": lab / "copy.csv"}
    (lab / "copy.csv").write_bytes((lab / "base.csv").read_bytes())
    (pair,) = compare(lab / "board.csv", "random_sampling", given, data_dir=lab / "res", **QUIET)["pairs"]
    assert pair["difference"] == 0 and pair["items_differing"] == 0 and pair["lower"] < 0 < pair["upper"]
    assert "not distinguishable" in pair["verdict"]


def test_random_samplings_pairs_get_its_own_interval_with_the_conformal_one_beside_it(lab):
    from statistics import NormalDist

    from benchcast.new_model.api import stored_fit
    from benchcast.new_model.leaderboard import load_leaderboard

    given = {name: lab / f"{name}.csv" for name in ("base", "tuned")}
    own = compare(lab / "board.csv", "random_sampling", given, data_dir=lab / "res", **QUIET)
    conformal = compare(
        lab / "board.csv", "random_sampling", given, data_dir=lab / "res", interval="conformal", **QUIET
    )
    assert own["interval"].startswith("random_sampling's own paired") and "split-conformal" in conformal["interval"]
    (p,), (c,) = own["pairs"], conformal["pairs"]
    assert (
        (p["conformal_lower"], p["conformal_upper"])
        == (c["lower"], c["upper"])
        == (c["conformal_lower"], c["conformal_upper"])
    )
    # diff +- z se, se from the two models' answer differences on the core set (Agresti-Min, Cochran)
    board = load_leaderboard(str(lab / "board.csv"), lab / "res")
    _, fit = stored_fit(board, "random_sampling", 40, None, lab / "res", 0, 10, lambda s: None, 1)
    base, tuned = _answers(lab, "base", "tuned")
    d = np.array([tuned.scores[j] - base.scores[j] for j in fit.method.coreset_])
    n, total = 40, 300
    var = (np.square(d).sum() + 1) / (n + 2) - (d.sum() / (n + 2)) ** 2
    half = NormalDist().inv_cdf(0.95) * math.sqrt((1 - n / total) * var / (n + 2))
    assert (p["lower"], p["upper"]) == pytest.approx((p["difference"] - half, p["difference"] + half), abs=1e-12)


def test_own_interval_asked_of_a_method_without_one_is_refused_before_any_fit(lab, tmp_path):
    proc = user_runs(
        lab,
        tmp_path,
        "compare {BOARD} --method lasso --interval own --data-dir {RES} --answers {LAB}/base.csv "
        "--answers {LAB}/tuned.csv --out cmp.json",
    )
    err = proc.stderr.strip()
    assert proc.returncode == 2 and err.count("\n") == 0 and "lasso has no paired interval of its own" in err, err
    assert "aipw, random_sampling" in err and "fix:" in err and not (tmp_path / "cmp.json").exists()
    assert not list((lab / "res/models").glob("*/lasso"))


def test_the_verdict_names_the_better_model_or_the_detectable_difference():
    assert verdict("A", "B", 0.021, 0.009, 0.033, 0.9, 4.0).endswith("B is better (90% paired interval)")
    assert verdict("A", "B", -0.05, -0.08, -0.01, 0.9, 4.0).endswith("A is better (90% paired interval)")
    tie = verdict("A", "B", 0.01, -0.02, 0.04, 0.9, 6.5)
    assert tie.startswith("B - A = +1.0 points [-2.0, +4.0]: not distinguishable") and "about 6.5 points" in tie


def test_a_fit_stored_without_pairs_is_rebuilt_once(tmp_path):
    toy_board(tmp_path, n_models=60, n_items=100)
    sel = select(tmp_path / "board.csv", "random_sampling", 20, data_dir=tmp_path / "res", **QUIET)
    (folder,) = (tmp_path / "res/models").glob("*/random_sampling/n=20")
    doc = json.loads((folder / "fit.json").read_text())
    # a fit as stored before pairs existed: no pairs file, fit.json listing none (resealed)
    from benchcast.methods.state import resealed

    (folder / "pairs.parquet").unlink()
    del doc["files"]["pairs.parquet"]
    (folder / "fit.json").write_text(json.dumps(resealed(doc), indent=1, sort_keys=True) + "\n")
    truth = np.zeros(100, int)
    answer(tmp_path, "a", sel, truth)
    answer(tmp_path, "b", sel, 1 - truth)
    said = []
    compare(
        tmp_path / "board.csv",
        "random_sampling",
        {"a": tmp_path / "a.csv", "b": tmp_path / "b.csv"},
        data_dir=tmp_path / "res",
        log=said.append,
    )
    assert any("stored without the held-out pairs" in s for s in said) and (folder / "pairs.parquet").is_file()
    said.clear()
    compare(
        tmp_path / "board.csv",
        "random_sampling",
        {"a": tmp_path / "a.csv", "b": tmp_path / "b.csv"},
        data_dir=tmp_path / "res",
        log=said.append,
    )
    assert said == []


def user_runs(lab, work, argv: str) -> subprocess.CompletedProcess:
    line = argv.format(BOARD=lab / "board.csv", RES=lab / "res", LAB=lab)
    return subprocess.run([sys.executable, "-m", "benchcast", *line.split()], capture_output=True, text=True, cwd=work)


def test_the_command_prints_each_verdict_and_writes_the_json(lab, tmp_path):
    proc = user_runs(
        lab,
        tmp_path,
        "compare {BOARD} --method random_sampling --data-dir {RES} --answers {LAB}/base.csv "
        "--answers {LAB}/tuned.csv --out cmp.json",
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1].startswith("  base: ") and lines[2].startswith("  tuned: ")
    assert lines[3].startswith("tuned - base = ")
    assert lines[4].startswith("paired interval: random_sampling's own paired central-limit interval")
    written = json.loads((tmp_path / "cmp.json").read_text())
    assert written["pairs"][0]["verdict"] == lines[3]


BAD = {
    "one model": ("--answers {LAB}/base.csv", "at least two models"),
    "a model twice": ("--answers {LAB}/base.csv --answers {LAB}/base.csv --names a b", "the same model twice"),
    "two selections": ("--answers {LAB}/base.csv --answers {WORK}/elsewhere.csv", "did not answer one selection"),
    "items missing": ("--answers {LAB}/base.csv --answers {WORK}/short.csv", "unanswered items"),
    "an item not selected": ("--answers {LAB}/base.csv --answers {WORK}/extra.csv", "was not selected"),
    "more answers than the budget": (
        "--answers {LAB}/base.csv --answers {WORK}/more.csv",
        "41 answers for a budget of 40",
    ),
    "names twice": ("--answers {LAB}/base.csv --answers {LAB}/tuned.csv --names x x", "--names gives 'x' twice"),
    "names short": ("--answers {LAB}/base.csv --answers {LAB}/tuned.csv --names x", "gives 1 names for 2 models"),
    "one name for two files": ("--answers {LAB}/base.csv --answers {WORK}/copy/base.csv", "two models are named"),
    "out a folder": ("--answers {LAB}/base.csv --answers {LAB}/tuned.csv --out {WORK}", "is a folder"),
    "no answers": ("--answers {LAB}/base.csv --answers {WORK}/empty.csv", "empty"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_inputs_are_refused_in_one_line_and_nothing_is_written(lab, tmp_path, case):
    work = tmp_path / "work"
    (work / "copy").mkdir(parents=True)
    base = pd.read_csv(lab / "base.csv")
    base.to_csv(work / "copy/base.csv", index=False)
    pd.read_csv(lab / "tuned.csv").assign(selection_id="0123456789abcdef").to_csv(work / "elsewhere.csv", index=False)
    base.head(30).to_csv(work / "short.csv", index=False)
    selected = set(base["item_id"])
    spare = next(f"q{j}" for j in range(300) if f"q{j}" not in selected)
    base.assign(item_id=[*base["item_id"][:-1], spare]).to_csv(work / "extra.csv", index=False)
    pd.concat([base, base.head(1).assign(item_id=spare)]).to_csv(work / "more.csv", index=False)
    (work / "empty.csv").write_text("")
    before = sorted(p for p in work.rglob("*"))
    argv, says = BAD[case]
    line = "compare {BOARD} --method random_sampling --data-dir {RES} " + argv.replace("{WORK}", str(work))
    proc = user_runs(lab, work, line)
    err = proc.stderr.strip()
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in err, (proc.stdout, err)
    assert err.count("\n") == 0 and err.startswith("benchcast: error: ") and says in err, err
    assert "Fix:" in err or "fix:" in err, err
    assert sorted(p for p in work.rglob("*")) == before
