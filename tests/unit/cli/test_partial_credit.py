"""A leaderboard of partial credit (item scores in [0, 1], e.g. F1) through the command line as a
user types it: select, answer with partial scores, estimate; the 0/1-only methods and bad scores
refused in one line with nothing written."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

N_MODELS, N_ITEMS = 80, 120


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    rng = np.random.default_rng(5)
    ability, difficulty = rng.normal(size=(N_MODELS, 1)), rng.normal(size=N_ITEMS)
    p = 1 / (1 + np.exp(-(ability - difficulty)))
    scores = np.round(rng.beta(5 * p + 0.2, 5 * (1 - p) + 0.2), 3)  # three decimals, as a harness writes F1
    folder = tmp_path_factory.mktemp("board")
    table = pd.DataFrame(scores, columns=[f"q{j}" for j in range(N_ITEMS)])
    table.insert(0, "model_id", [f"m{i}" for i in range(N_MODELS)])
    table.to_csv(folder / "f1.csv", index=False)
    return folder / "f1.csv", scores


def benchcast(*args, cwd):
    return subprocess.run([sys.executable, "-m", "benchcast", *args], capture_output=True, text=True, cwd=cwd)


def test_select_answer_estimate_with_partial_credit(board, tmp_path):
    path, scores = board
    common = ["--method", "random_sampling", "--budget", "15", "--data-dir", str(tmp_path / "d"), "--folds", "4"]
    sel = benchcast("select", str(path), *common, "--out", "answers.csv", cwd=tmp_path)
    assert sel.returncode == 0, sel.stderr
    assert "write each item's score in [0, 1]" in sel.stdout, sel.stdout
    asked = pd.read_csv(tmp_path / "answers.csv")
    row = scores[3]  # model m3 answers as a new model would
    asked["score"] = [row[int(item[1:])] for item in asked.item_id]
    asked.to_csv(tmp_path / "answers.csv", index=False)
    est = benchcast("estimate", str(path), *common, "--answers", "answers.csv", "--out", "est.json", cwd=tmp_path)
    assert est.returncode == 0, est.stderr
    result = json.loads((tmp_path / "est.json").read_text())
    assert result["estimate"] == np.mean(asked.score.to_numpy())  # Random-Sampling: the answers' mean, exactly
    assert result["lower"] < result["estimate"] < result["upper"]
    assert not list((tmp_path / "d").rglob("matrix.parquet"))  # bits hold 0/1 only: nothing stored as bits


@pytest.mark.parametrize("method", ["p_irt", "gp_irt", "tinybenchmarks", "sort_and_search"])
def test_a_zero_one_method_is_refused_in_one_line_naming_those_that_take_it(board, tmp_path, method):
    path, _ = board
    proc = benchcast(
        "select", str(path), "--method", method, "--budget", "15", "--data-dir", "d", "--out", "a.csv", cwd=tmp_path
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert f"{method} is defined for 0/1 item scores only" in line and "random_sampling" in line, proc.stderr
    assert not (tmp_path / "a.csv").exists() and not list(tmp_path.rglob("fit.json"))


@pytest.mark.parametrize(
    ("cell", "says"), [("1.5", "is not a score in [0, 1]"), ("-0.2", "is not a score in [0, 1]"), ("", "not a")]
)
def test_a_score_outside_zero_one_in_the_leaderboard_is_refused(board, tmp_path, cell, says):
    path, _ = board
    lines = path.read_text().splitlines()
    first = lines[1].split(",")
    first[5] = cell
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([lines[0], ",".join(first), *lines[2:]]) + "\n")
    proc = benchcast(
        "select",
        str(bad),
        "--method",
        "random_sampling",
        "--budget",
        "15",
        "--data-dir",
        "d",
        "--out",
        "a.csv",
        cwd=tmp_path,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "bad.csv" in proc.stderr and says in proc.stderr, proc.stderr
    assert not (tmp_path / "a.csv").exists()


def test_partial_answers_against_a_zero_one_leaderboard_and_out_of_range_answers_are_refused(board, tmp_path):
    path, scores = board
    binary = tmp_path / "binary.csv"
    table = pd.read_csv(path)
    table.iloc[:, 1:] = (table.iloc[:, 1:] > 0.5).astype(int)
    table.to_csv(binary, index=False)
    common = ["--method", "random_sampling", "--budget", "15", "--data-dir", "d", "--folds", "4"]
    for board_path, score, says in ((binary, "0.5", "is not 0 or 1"), (path, "1.2", "is not in [0, 1]")):
        assert (
            benchcast("select", str(board_path), *common, "--out", "a.csv", "--overwrite", cwd=tmp_path).returncode == 0
        )
        asked = pd.read_csv(tmp_path / "a.csv")
        asked["score"] = score
        asked.to_csv(tmp_path / "a.csv", index=False)
        proc = benchcast("estimate", str(board_path), *common, "--answers", "a.csv", "--out", "e.json", cwd=tmp_path)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert says in proc.stderr and "a.csv" in proc.stderr, proc.stderr
        assert not (tmp_path / "e.json").exists()


def test_compare_two_models_of_partial_credit(board, tmp_path):
    """Two models' partial answers on one selection: a paired difference and its verdict."""
    path, scores = board
    common = ["--method", "aipw", "--budget", "20", "--data-dir", "d", "--folds", "4"]
    assert benchcast("select", str(path), *common, "--out", "items.csv", cwd=tmp_path).returncode == 0
    items = pd.read_csv(tmp_path / "items.csv")
    for name, row in (("a.csv", scores[3]), ("b.csv", scores[7])):
        items.assign(score=[row[int(i[1:])] for i in items.item_id]).to_csv(tmp_path / name, index=False)
    proc = benchcast(
        "compare", str(path), *common, "--answers", "a.csv", "--answers", "b.csv", "--out", "c.json", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "b - a = " in proc.stdout and "90% paired interval" in proc.stdout, proc.stdout
