"""The first call's fit (issue 37, item 7): the same bytes whatever the number of cores that
calibrate it, one BLAS thread per fit, no wall-clock seconds stored, and a command line that
says what it builds, about how long it takes, and the time left."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from benchcast.cli import main
from benchcast.new_model import facts, fits
from benchcast.new_model.fits import build_fit
from benchcast.new_model.leaderboard import load_leaderboard

FILES = ("fit.json", "arrays.parquet", "calibration.parquet")


@pytest.fixture(scope="module")
def board_csv(tmp_path_factory):
    rng = np.random.default_rng(11)
    ability = rng.normal(size=(60, 1))
    scores = (rng.random((60, 150)) < 1 / (1 + np.exp(rng.normal(size=(1, 150)) - ability))).astype(int)
    frame = pd.DataFrame(scores, columns=[f"q{j}" for j in range(150)])
    frame.insert(0, "model_id", [f"m{i}" for i in range(60)])
    path = tmp_path_factory.mktemp("board") / "board.csv"
    frame.to_csv(path, index=False)
    return path


def values_of(node, key: str) -> list:
    """Every value stored under ``key`` anywhere in a JSON tree."""
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == key] + [x for v in node.values() for x in values_of(v, key)]
    if isinstance(node, list):
        return [x for v in node for x in values_of(v, key)]
    return []


@pytest.mark.parametrize(
    "method,params", [("gp_irt", {"irt": {"dims": 2}}), ("tailoredbench", None), ("anchor_points_weighted", None)]
)
def test_a_fit_has_the_same_bytes_on_one_and_on_two_cores(board_csv, tmp_path, method, params, monkeypatch):
    monkeypatch.setattr(fits, "POOL_WORTH_SECONDS", 0.0)  # processes even for a fit this small
    board = load_leaderboard(str(board_csv), tmp_path)
    built = {}
    for cores in (1, 2):
        said = []
        fit = build_fit(board, method, params, 20, 0, 5, tmp_path / f"c{cores}", log=said.append, cores=cores)
        assert ("the other 4 folds on 2 processes" in "\n".join(said)) == (cores == 2)
        built[cores] = {name: (fit.folder / name).read_bytes() for name in FILES}
    assert built[1] == built[2]


def test_a_calibration_quicker_than_starting_processes_stays_in_this_one(board_csv, tmp_path):
    board = load_leaderboard(str(board_csv), tmp_path)
    said = []
    build_fit(board, "random_sampling", None, 20, 0, 5, tmp_path, log=said.append, cores=2)
    assert said[1].startswith("calibrating on 5 folds of models") and "processes" not in "\n".join(said), said


def test_a_stored_fit_holds_no_wall_clock_seconds(board_csv, tmp_path):
    """GP-IRT's fit measures its seconds (the papers' training-cost tables); the stored fit keeps
    the fields' defaults, so two builds of the same fit are the same bytes."""
    board = load_leaderboard(str(board_csv), tmp_path)
    fit = build_fit(board, "gp_irt", {"irt": {"dims": 2}}, 20, 0, 3, tmp_path, log=lambda s: None)
    assert fit.method.fit_.fit_seconds > 0  # measured in memory ...
    stored = json.loads((fit.folder / "fit.json").read_text())
    assert values_of(stored, "fit_seconds") == [0.0] and values_of(stored, "bias_seconds") == [0.0]
    assert values_of(stored, "anchor_seconds") == [None]
    again = build_fit(board, "gp_irt", {"irt": {"dims": 2}}, 20, 0, 3, tmp_path / "again", log=lambda s: None)
    assert (again.folder / "fit.json").read_bytes() == (fit.folder / "fit.json").read_bytes()


def test_the_first_select_says_what_it_builds_how_long_and_the_time_left(board_csv, tmp_path, capsys, monkeypatch):
    key = load_leaderboard(str(board_csv), tmp_path).key  # a leaderboard's name in the measured facts
    measured = {
        "provenance": None,
        "methods": {"gp_irt": {"first_fit_seconds": [{"dataset": key, "budget": 30, "seconds": 44.0}]}},
    }
    monkeypatch.setattr(facts, "load_facts", lambda: measured)
    argv = f'select {board_csv} --method gp_irt --params {{"irt":{{"dims":2}}}} --budget 20 --data-dir {tmp_path}'
    assert main([*argv.split(), "--cores", "2", "--folds", "4", "--out", str(tmp_path / "items.csv")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("building the gp_irt fit at n=20 on ")
    assert "then 4 calibration folds on up to 2 cores" in err[0]
    # the held-out test's 44 s on one core, for the fit and 4 folds two at a time: 44 * (1 + 4/2) / 5
    assert err[0].endswith("; about 26s (the held-out test's fit at n=30 took 44s on one core)"), err[0]
    folds = [line for line in err if line.startswith("calibration fold")]
    assert len(folds) == 4 and all("about" in line and "left" in line for line in folds[:-1])
    assert folds[-1].endswith("(4 done)")
    assert err[-1].startswith("built in ")


def test_the_measured_first_fit_is_the_nearest_budgets():
    doc = {
        "methods": {"m": {"first_fit_seconds": [{"dataset": "d", "budget": b, "seconds": b / 10} for b in (50, 100)]}}
    }
    assert facts.first_fit_seconds("m", "d", 90, doc) == (10.0, 100)
    assert facts.first_fit_seconds("m", "d", 75, doc) == (5.0, 50)  # a tie: the smaller budget
    assert facts.first_fit_seconds("m", "other", 50, doc) is None
    assert facts.first_fit_seconds("x", "d", 50, doc) is None
