"""benchcast select / estimate: stored fits without pickle, the replayed oracle, intervals, the
command line's contract and its errors, on small matrices the tests generate."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import REPO
from threadpoolctl import threadpool_limits

from benchcast.cli import main
from benchcast.data.item_level import ResponseMatrix
from benchcast.errors import BenchcastError, DataError
from benchcast.methods import REGISTRY, make_method
from benchcast.methods.state import FORMAT, read_state, resealed, write_state
from benchcast.new_model import estimate, select
from benchcast.new_model.fits import conformal_halfwidth
from benchcast.new_model.leaderboard import load_leaderboard
from benchcast.oracle import Oracle
from benchcast.trials.runner import run_job

#: the issue's methods, with settings small enough for a 40 x 120 matrix
METHODS = {
    "random_sampling": None,
    "aipw": None,
    "anchor_points_weighted": None,
    "gp_irt": {"irt": {"dims": 2}},
    "tailoredbench": None,
}


def toy_scores(n_models=40, n_items=120, seed=5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ability = rng.normal(size=(n_models, 1))
    difficulty = rng.normal(size=(1, n_items))
    return (rng.random((n_models, n_items)) < 1 / (1 + np.exp(difficulty - ability))).astype(np.float64)


def write_matrix(path: Path, scores: np.ndarray, prefix="m") -> Path:
    frame = pd.DataFrame(scores.astype(int), columns=[f"q{j}" for j in range(scores.shape[1])])
    frame.insert(0, "model_id", [f"{prefix}{i}" for i in range(len(scores))])
    frame.to_csv(path, index=False)
    return path


def answer(items: pd.DataFrame, row: np.ndarray) -> dict[str, float]:
    return {i: float(row[int(i[1:])]) for i in items.item_id}


def run_to_the_end(csv, method, budget, row, data_dir, params=None, folds=4, seed=0):
    """select in batches until the selection is complete, answering from ``row``."""
    answers: dict[str, float] = {}
    batches = []
    while True:
        sel = select(
            csv, method, budget, answers, params=params, data_dir=data_dir, folds=folds, seed=seed, log=lambda s: None
        )
        if sel.complete:
            return answers, batches, sel
        batches.append(len(sel.items))
        answers.update(answer(sel.items, row))


@pytest.mark.parametrize("method", sorted(METHODS))
def test_the_new_models_estimate_is_the_trial_runners_estimate_for_the_same_sources_and_seed(tmp_path, method):
    scores = toy_scores()
    target = 17
    sources = np.delete(scores, target, axis=0)
    csv = write_matrix(tmp_path / "board.csv", sources)
    answers, batches, _ = run_to_the_end(csv, method, 30, scores[target], tmp_path, METHODS[method])
    ours = estimate(csv, method, answers, params=METHODS[method], data_dir=tmp_path, folds=4, log=lambda s: None)

    ids = [f"m{i}" for i in range(len(scores))]
    matrix = ResponseMatrix("toy", scores, ids, ids, [f"q{j}" for j in range(scores.shape[1])], ["all"] * 120)
    splits = pd.DataFrame(
        {"trial": np.int32(0), "model_id": ids, "role": ["target" if i == target else "source" for i in range(40)]}
    )
    with threadpool_limits(1):  # as a workflow job runs it (the command line's fit runs one thread too)
        runner = run_job(matrix, splits, method, METHODS[method], 30, base_seed=0).estimates
    assert ours["estimate"] == runner.estimate.iloc[0]  # bit for bit
    assert ours["items_used"] == len(answers) == 30
    assert batches == ([10, 20] if method == "tailoredbench" else [30])  # TailoredBench: G-set, then N-set


@pytest.mark.parametrize("name", sorted(n for n in REGISTRY if n not in ("sort_and_search",)))
def test_every_registry_method_estimates_the_same_after_a_round_trip_through_storage(tmp_path, name):
    scores = toy_scores(30, 80)
    params = {"irt": {"dims": 2}} if name in ("p_irt", "gp_irt", "tinybenchmarks") else None
    if name == "random_search_learn":
        params = {"num_search": 50}
    method = make_method(name, params)
    budget = max(12, method.min_budget())
    kwargs = {"groups": np.arange(80) % 2} if method.uses_item_groups else {}
    method.fit(scores[:24], budget, np.random.default_rng(1), **kwargs)
    write_state(method, {"method": name}, tmp_path)
    restored, meta = read_state(tmp_path)
    assert type(restored) is type(method) and meta == {"method": name}

    def run(m):
        return m.estimate(Oracle(scores[24:], budget), np.random.default_rng(2))

    assert np.array_equal(run(restored), run(method))
    assert not list(tmp_path.glob(".*.tmp"))


def test_every_whole_leaderboard_setting_estimates_the_same_after_a_round_trip_through_storage(tmp_path):
    from benchcast.scaling.benchmark import WHOLE_LEADERBOARD

    scores = toy_scores(30, 80)
    for name, params in WHOLE_LEADERBOARD.items():
        if name in ("p_irt", "gp_irt", "tinybenchmarks"):
            params = {"irt": {**params["irt"], "dims": 2}}
        if name == "tailoredbench":
            params = {"clara": {**params["clara"], "min_items": 40, "sample": 30}}
        method = make_method(name, params)
        budget = max(12, method.min_budget())
        method.fit(scores[:24], budget, np.random.default_rng(1))
        write_state(method, {"method": name}, tmp_path / name)
        restored, _ = read_state(tmp_path / name)
        assert restored.params() == method.params()
        runs = [m.estimate(Oracle(scores[24:], budget), np.random.default_rng(2)) for m in (restored, method)]
        assert np.array_equal(*runs), name


def test_storage_refuses_classes_outside_benchcast_and_unknown_tags(tmp_path):
    class Foreign:
        pass

    with pytest.raises(DataError, match="cannot store without pickle"):
        write_state({"x": Foreign()}, {}, tmp_path)
    write_state({"a": np.arange(3)}, {}, tmp_path)
    doc = json.loads((tmp_path / "fit.json").read_text())
    doc["state"] = {"__object__": "os:system", "attrs": {}}
    (tmp_path / "fit.json").write_text(json.dumps(doc))
    with pytest.raises(DataError, match="does not match the checksum"):  # an edit is seen first
        read_state(tmp_path)
    (tmp_path / "fit.json").write_text(json.dumps(resealed(doc)))  # a crafted file with its checksum
    with pytest.raises(DataError, match="is not a benchcast class"):
        read_state(tmp_path)
    doc["state"] = {"__object__": "benchcast.seeding:rng", "attrs": {}}
    (tmp_path / "fit.json").write_text(json.dumps(resealed(doc)))
    with pytest.raises(DataError, match="is not a class"):
        read_state(tmp_path)


def test_conformal_halfwidth_is_the_ceil_m_plus_1_level_th_smallest_residual():
    cal = pd.DataFrame({"estimate": np.arange(9) / 100.0, "truth": np.zeros(9)})
    assert conformal_halfwidth(cal, 0.9) == 0.08  # ceil(10 * 0.9) = 9th of 0 .. 0.08
    assert conformal_halfwidth(cal, 0.5) == 0.04  # 5th
    assert conformal_halfwidth(cal.head(5), 0.9) == np.inf  # ceil(6 * 0.9) = 6 > 5 models
    with pytest.raises(BenchcastError):
        conformal_halfwidth(cal, 1.0)


def test_the_interval_comes_from_held_out_models_and_the_rank_from_the_leaderboard(tmp_path):
    scores = toy_scores()
    csv = write_matrix(tmp_path / "board.csv", scores[:36])
    answers, _, _ = run_to_the_end(csv, "random_sampling", 30, scores[38], tmp_path)
    r = estimate(csv, "random_sampling", answers, data_dir=tmp_path, folds=4, log=lambda s: None)
    folder = tmp_path / "models" / load_leaderboard(str(csv)).key / "random_sampling" / "n=30"
    cal = pd.read_parquet(folder / "calibration.parquet")
    assert sorted(cal.model_id) == sorted(f"m{i}" for i in range(36)) and cal.fold.nunique() == 4
    half = conformal_halfwidth(cal, 0.9)
    assert r["lower"] == pytest.approx(max(0, r["estimate"] - half)) and r["upper"] == pytest.approx(
        r["estimate"] + half
    )
    accuracy = scores[:36].mean(axis=1)
    assert r["rank"] == 1 + (accuracy > r["estimate"]).sum() and r["rank_best"] <= r["rank"] <= r["rank_worst"]
    assert "split-conformal" in r["interval"] and r["level"] == 0.9
    # a wider level, a wider interval; the stored fit is read, not rebuilt
    stamp = (folder / "fit.json").stat().st_mtime_ns
    wide = estimate(csv, "random_sampling", answers, level=0.99, data_dir=tmp_path, folds=4, log=lambda s: None)
    assert (
        wide["upper"] - wide["lower"] >= r["upper"] - r["lower"] and (folder / "fit.json").stat().st_mtime_ns == stamp
    )


def cli(*args) -> int:
    return main([str(a) for a in args])


@pytest.fixture
def board(tmp_path):
    scores = toy_scores()
    return write_matrix(tmp_path / "board.csv", scores[:36]), scores


def test_command_line_contract_select_then_estimate(tmp_path, board, capsys):
    csv, scores = board
    items = tmp_path / "out" / "items.csv"
    assert (
        cli("select", csv, "--method", "aipw", "--budget", 25, "--out", items, "--data-dir", tmp_path, "--folds", 3)
        == 0
    )
    table = pd.read_csv(items, dtype=str, keep_default_na=False)
    assert list(table.columns) == ["item_id", "subtask", "selection_id", "score"] and len(table) == 25
    table["score"] = [int(scores[39, int(i[1:])]) for i in table.item_id]
    table.to_csv(tmp_path / "answers.csv", index=False)
    out = tmp_path / "estimate.json"
    args = ("--method", "aipw", "--answers", tmp_path / "answers.csv", "--data-dir", tmp_path, "--folds", 3)
    assert cli("estimate", csv, *args, "--out", out, "--level", 0.8) == 0
    result = json.loads(out.read_text())
    assert {"estimate", "lower", "upper", "level", "method", "items_used"} <= set(result)
    assert 0 <= result["lower"] <= result["estimate"] <= result["upper"] <= 1 and result["level"] == 0.8
    assert result["method"] == "aipw" and result["items_used"] == 25
    assert "rank" in capsys.readouterr().out


def bad(capsys, *args):
    assert cli(*args) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Fix:" in err  # one line naming the fix
    return err


def test_bad_answers_stop_with_the_file_the_entry_and_the_fix_and_write_nothing(tmp_path, board, capsys):
    csv, scores = board
    common = ("--data-dir", tmp_path, "--folds", 3)
    assert (
        cli("select", csv, "--method", "random_sampling", "--budget", 10, "--out", tmp_path / "items.csv", *common) == 0
    )
    capsys.readouterr()
    items = pd.read_csv(tmp_path / "items.csv", dtype=str, keep_default_na=False)
    chosen = list(items.item_id)
    other = next(f"q{j}" for j in range(120) if f"q{j}" not in chosen)
    out = tmp_path / "est.json"

    def estimate_with(rows, *extra):
        path = tmp_path / "answers.csv"
        pd.DataFrame(rows).to_csv(path, index=False)
        err = bad(
            capsys, "estimate", csv, "--method", "random_sampling", "--answers", path, "--out", out, *common, *extra
        )
        assert not out.exists()
        return err

    good = [{"item_id": i, "score": 1} for i in chosen]
    assert "not an item of this leaderboard" in estimate_with([*good[:-1], {"item_id": "nope", "score": 1}])
    assert "line 3" in estimate_with([*good[:1], *good[:1]])  # the repeat is on the file's line 3
    assert "is not 0 or 1" in estimate_with([*good[:-1], {"item_id": chosen[-1], "score": 0.5}])
    assert "for a budget of 10" in estimate_with([*good, {"item_id": other, "score": 0}], "--budget", 10)
    assert "was not selected" in estimate_with([*good[:-1], {"item_id": other, "score": 0}])
    assert "still asks for" in estimate_with(good[:-1], "--budget", 10)
    # without --budget the selection id names it (GP-IRT may finish with fewer answers than its budget)
    with_id = [{**g, "selection_id": items.selection_id[0]} for g in good[:-1]]
    assert "at n=10 still asks for 1" in estimate_with(with_id)
    wrong_id = [{**g, "selection_id": "0123456789abcdef"} for g in good]
    assert "not the id of this selection" in estimate_with(wrong_id)
    err = bad(capsys, "select", csv, "--method", "no_such", "--budget", 5, "--out", tmp_path / "x.csv", *common)
    assert "unknown method 'no_such'" in err and not (tmp_path / "x.csv").exists()


def test_a_users_matrix_needs_model_id_first_and_scores_in_0_1(tmp_path, capsys):
    path = tmp_path / "m.csv"
    pd.DataFrame({"name": ["a", "b", "c"], "q1": [1, 0, 1], "q2": [0, 0, 1]}).to_csv(path, index=False)
    assert "make the first column `model_id`" in bad(
        capsys, "select", path, "--method", "random_sampling", "--budget", 1, "--out", tmp_path / "o.csv"
    )
    pd.DataFrame({"model_id": ["a", "b", "c"], "q1": [1, 0, 1], "q2": [0, 1.5, 1]}).to_csv(path, index=False)
    assert "is not a score in [0, 1]" in bad(
        capsys, "select", path, "--method", "random_sampling", "--budget", 1, "--out", tmp_path / "o.csv"
    )
    pd.DataFrame({"model_id": ["a", "a", "c"], "q1": [1, 0, 1], "q2": [0, 0, 1]}).to_csv(path, index=False)
    assert "repeated model ids" in bad(
        capsys, "select", path, "--method", "random_sampling", "--budget", 1, "--out", tmp_path / "o.csv"
    )


def test_the_heldout_test_plays_each_model_through_the_command_lines_functions(tmp_path):
    from benchcast.studies.heldout_intervals.heldout import heldout, summarise

    scores = toy_scores()
    ids = [f"m{i}" for i in range(40)]
    csv = write_matrix(tmp_path / "all.csv", scores)
    board = load_leaderboard(str(csv))
    rows = heldout(board, "tailoredbench", None, 20, 0, 3, 4, 0.9, log=lambda s: None)
    assert sorted(rows.model_id) == sorted(ids) and rows.fold.nunique() == 4
    # each fold is a user with its own seed: coverage is over selections as well as models
    assert rows.groupby("fold").seed.nunique().eq(1).all() and rows.seed.nunique() == 4
    assert (rows.items_used == 20).all() and (rows.batches == 2).all()  # G-set, then the tailored rest
    assert ((rows.lower <= rows.estimate) & (rows.estimate <= rows.upper)).all()
    s = summarise(rows)
    assert 0 <= s["coverage"] <= 1 and s["mae"] == pytest.approx((rows.estimate - rows.truth).abs().mean())
    # a model's held-out estimate is what the command line gives it on the leaderboard without its fold
    one = rows.iloc[5]
    others = rows.model_id[rows.fold != one.fold]
    keep = sorted(int(m[1:]) for m in others)
    sub = pd.DataFrame(scores[keep].astype(int), columns=[f"q{j}" for j in range(120)])
    sub.insert(0, "model_id", [f"m{i}" for i in keep])
    sub.to_csv(tmp_path / "sub.csv", index=False)
    target = scores[int(one.model_id[1:])]
    user = {"folds": 3, "seed": int(one.seed)}
    answers, _, _ = run_to_the_end(tmp_path / "sub.csv", "tailoredbench", 20, target, tmp_path / "cli", **user)
    folds3 = {**user, "log": lambda s: None}
    r = estimate(tmp_path / "sub.csv", "tailoredbench", answers, data_dir=tmp_path / "cli", **folds3)
    assert r["estimate"] == one.estimate and (r["lower"], r["upper"]) == (one.lower, one.upper)


def test_aipw_has_its_own_central_limit_interval_and_conformal_on_request(tmp_path, board):
    from statistics import NormalDist

    csv, scores = board
    answers, _, _ = run_to_the_end(csv, "aipw", 30, scores[38], tmp_path)
    quiet = {"data_dir": tmp_path, "folds": 4, "log": lambda s: None}
    own = estimate(csv, "aipw", answers, **quiet)
    conformal = estimate(csv, "aipw", answers, interval="conformal", **quiet)
    assert own["estimate"] == conformal["estimate"] and "own central-limit" in own["interval"]
    assert (conformal["lower"], conformal["upper"]) == (own["conformal_lower"], own["conformal_upper"])
    # by brute force: the delete-one jackknife of the whole estimator -- for each core item, AIPW
    # refitted on the core set without it (that item joining the rest) -- times 1 - n/N
    from benchcast.methods.ridge import ridge_fit

    fit = make_method("aipw").fit(scores[:36], 30, np.random.default_rng(0))
    fit.estimate(Oracle(scores[38:39], 30), None)
    core = np.asarray(fit.coreset_)
    jack = np.empty(30)
    for j in range(30):
        keep = np.delete(core, j)
        rest = np.setdiff1d(np.arange(120), keep)
        coef, intercept = ridge_fit(scores[:36, keep].T, scores[38, keep][:, None], fit.alpha)
        pred_rest, pred_keep = (scores[:36, items].T @ coef + intercept for items in (rest, keep))
        jack[j] = scores[38, keep].mean() + (pred_rest.mean() - pred_keep.mean()) / (1 + 29 / 91)
    expected = np.sqrt((1 - 30 / 120) * 29 / 30 * ((jack - jack.mean()) ** 2).sum())
    assert fit.standard_error()[0] == pytest.approx(expected, rel=1e-9)
    z = NormalDist().inv_cdf(0.95)
    se = float(own["interval"].split("standard error ")[1].rstrip(")"))
    assert own["upper"] - own["estimate"] == pytest.approx(min(z * se, 1 - own["estimate"]), abs=1e-4)


def test_the_cf_probe_splits_its_budget_over_subtasks_asks_in_rounds_and_reports_each_subtask(tmp_path):
    from benchcast.methods.collaborative_filtering import split_budget

    assert split_budget(50, np.array([250, 256, 250])).tolist() == [17, 17, 16]
    assert split_budget(10, np.array([3, 100])).tolist() == [1, 9]  # each task gets an item first
    assert split_budget(7, np.array([1, 1, 5])).tolist() == [1, 1, 5]
    scores = toy_scores()
    frame = pd.DataFrame(scores[:36].astype(int), columns=[f"q{j}" for j in range(120)])
    frame.insert(0, "model_id", [f"m{i}" for i in range(36)])
    path = tmp_path / "board.parquet"
    frame.to_parquet(path)
    board = load_leaderboard(str(path))
    board.matrix.subtasks[:] = ["a"] * 60 + ["b"] * 60  # a Parquet matrix has no subtasks: give it two
    answers, batches, _ = run_to_the_end(board, "cf_probe", 30, scores[38], tmp_path)
    assert len(batches) == 4 and sum(batches) == 30  # the initial probe and 3 rounds, each asking both subtasks at once
    r = estimate(board, "cf_probe", answers, data_dir=tmp_path, folds=4, log=lambda s: None)
    sub = r["subtasks"]
    assert set(sub) == {"a", "b"} and sub["a"]["items_used"] == sub["b"]["items_used"] == 15
    assert r["estimate"] == pytest.approx((sub["a"]["estimate"] + sub["b"]["estimate"]) / 2)


def test_the_heldout_intervals_jobs_cross_datasets_methods_and_budgets_with_a_methods_own_datasets():
    from benchcast.data.catalog import load_catalog
    from benchcast.studies.heldout_intervals.jobs import Jobs

    catalog = load_catalog(REPO / "src" / "benchcast" / "data" / "catalog.yaml")
    config = {
        "datasets": ["musr", "gsm"],
        "methods": [{"name": "random_sampling"}, {"name": "tailoredbench"}, {"name": "cf_probe", "datasets": ["musr"]}],
        "budgets": [10, 50],
    }
    cells = {(c.dataset, c.method, c.budget) for c in Jobs(config, catalog).cells}
    assert ("gsm", "cf_probe", 50) not in cells and ("musr", "cf_probe", 50) in cells
    assert ("musr", "tailoredbench", 10) not in cells  # below its 11-item minimum (the 10-item G-set and more)
    assert len(cells) == 2 * 2 + 2 * 1 + 2
    with pytest.raises(BenchcastError, match="unknown method 'nope'"):
        Jobs({**config, "methods": [{"name": "nope"}]}, catalog)


def test_a_stored_fit_of_the_format_before_0_2_is_rebuilt_and_a_newer_one_refused(tmp_path, board, capsys):
    """Stored fits carry a format version (CHANGELOG 0.2.0): today's fits without one -- whose
    classes may name modules since renamed -- are rebuilt, with a word; a newer format stops in one line."""
    csv, _ = board
    args = ("--method", "tailoredbench", "--budget", 25, "--data-dir", tmp_path, "--folds", 3)
    assert cli("select", csv, *args, "--out", tmp_path / "first.csv") == 0
    capsys.readouterr()
    (fit_json,) = (tmp_path / "models").rglob("fit.json")
    doc = json.loads(fit_json.read_text())
    assert doc["format"] == FORMAT
    old = {k: v for k, v in doc.items() if k != "format"}  # the format before 0.2.0 had no version
    fit_json.write_text(json.dumps(old))
    assert cli("select", csv, *args, "--out", tmp_path / "again.csv") == 0
    err = capsys.readouterr().err
    assert f"a fit of format 1 (this benchcast reads {FORMAT})" in err and "rebuilding" in err
    assert json.loads(fit_json.read_text())["format"] == FORMAT  # rebuilt in the current format
    assert (tmp_path / "again.csv").read_bytes() == (tmp_path / "first.csv").read_bytes()
    doc["format"] = 99
    fit_json.write_text(json.dumps(doc))
    err = bad(capsys, "select", csv, *args, "--out", tmp_path / "third.csv")
    assert f"newer than this benchcast's {FORMAT}" in err and not (tmp_path / "third.csv").exists()
