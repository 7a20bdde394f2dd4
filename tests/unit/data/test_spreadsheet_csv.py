"""Files typed in a spreadsheet (issue 57): a UTF-8 byte-order mark changes nothing in any reader of a
person's CSV, TRUE/FALSE scores are 1/0 where a score is 0/1, and a file separated by semicolons is
named as such. Run as a user types the commands (a process each)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from benchcast.data.aggregate import read_benchpress, write_aggregate
from benchcast.data.csv_matrix import read_csv_matrix

BOM = b"\xef\xbb\xbf"


def benchcast(line: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchcast", *line.split()], capture_output=True, text=True, cwd=cwd)


def ok(proc) -> subprocess.CompletedProcess:
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc


def refused(proc) -> str:
    err = proc.stderr.strip()
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in err, (proc.stdout, err)
    assert err.count("\n") == 0 and err.startswith("benchcast: error: ") and "Fix:" in err, err
    return err


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A 0/1 leaderboard (plain and with the mark, in two folders under one name, so that the
    dataset's name is the same), a selection of 12 items and a model's 0/1 answers to it."""
    root = tmp_path_factory.mktemp("spreadsheet")
    rng = np.random.default_rng(11)
    scores = (rng.random((40, 60)) < np.linspace(0.2, 0.8, 40)[:, None]).astype(int)
    board = pd.DataFrame(scores, columns=[f"q{j}" for j in range(60)])
    board.insert(0, "model_id", [f"m{i}" for i in range(40)])
    for folder in ("plain", "bom", "bool"):
        (root / folder).mkdir()
    board.to_csv(root / "plain/board.csv", index=False)
    (root / "bom/board.csv").write_bytes(BOM + (root / "plain/board.csv").read_bytes())
    board.replace({1: "TRUE", 0: "FALSE"}).to_csv(root / "bool/board.csv", index=False)
    ok(benchcast("select plain/board.csv --method random_sampling --budget 12 --data-dir res --out items.csv", root))
    items = pd.read_csv(root / "items.csv")
    row = dict(zip(board.columns[1:], scores[3]))
    items.assign(score=items.item_id.map(row)).to_csv(root / "answers.csv", index=False)
    return root


ESTIMATE = "estimate {BOARD} --method random_sampling --data-dir res --answers {ANSWERS} --out {OUT}"


def test_answers_with_the_mark_give_the_same_estimate_byte_for_byte(lab):
    (lab / "answers_bom.csv").write_bytes(BOM + (lab / "answers.csv").read_bytes())
    for answers, out in (("answers.csv", "plain.json"), ("answers_bom.csv", "bom.json")):
        ok(benchcast(ESTIMATE.format(BOARD="plain/board.csv", ANSWERS=answers, OUT=out), lab))
    assert (lab / "plain.json").read_bytes() == (lab / "bom.json").read_bytes()


@pytest.mark.parametrize("spelling", [("TRUE", "FALSE"), ("True", "False"), ("true", "false")])
def test_boolean_answers_give_the_estimate_of_the_0_1_file_bit_for_bit(lab, spelling):
    yes, no = spelling
    answers = pd.read_csv(lab / "answers.csv")
    answers.assign(score=answers.score.map({1: yes, 0: no})).to_csv(lab / f"answers_{yes}.csv", index=False)
    ok(benchcast(ESTIMATE.format(BOARD="plain/board.csv", ANSWERS="answers.csv", OUT="zero_one.json"), lab))
    ok(benchcast(ESTIMATE.format(BOARD="plain/board.csv", ANSWERS=f"answers_{yes}.csv", OUT=f"{yes}.json"), lab))
    assert (lab / f"{yes}.json").read_bytes() == (lab / "zero_one.json").read_bytes()


def test_other_words_are_still_refused_in_one_line(lab):
    answers = pd.read_csv(lab / "answers.csv")
    answers.assign(score=answers.score.map({1: "yes", 0: "no"})).to_csv(lab / "answers_yes.csv", index=False)
    err = refused(benchcast(ESTIMATE.format(BOARD="plain/board.csv", ANSWERS="answers_yes.csv", OUT="x.json"), lab))
    assert "is not a number" in err and not (lab / "x.json").exists()


@pytest.mark.parametrize("folder", ["bom", "bool"])
def test_a_leaderboard_with_the_mark_or_booleans_gives_the_same_selection_and_estimate(lab, folder):
    """The same name in another folder: the dataset's name is the file's, its fit the matrix's."""
    for name in ("plain", folder):
        ok(
            benchcast(
                f"select {name}/board.csv --method random_sampling --budget 12 --data-dir {name}_res "
                f"--out {name}_items.csv",
                lab,
            )
        )
        ok(
            benchcast(
                ESTIMATE.format(BOARD=f"{name}/board.csv", ANSWERS="answers.csv", OUT=f"{name}_est.json").replace(
                    "--data-dir res", f"--data-dir {name}_res"
                ),
                lab,
            )
        )
    assert (lab / f"{folder}_items.csv").read_bytes() == (lab / "plain_items.csv").read_bytes()
    assert (lab / f"{folder}_est.json").read_bytes() == (lab / "plain_est.json").read_bytes()


def test_known_scores_with_the_mark_give_the_same_completion(lab):
    doc = {
        "models": [{"id": f"m{i}", "name": f"M{i}"} for i in range(6)],
        "benchmarks": [{"id": f"b{j}", "name": f"B{j}"} for j in range(4)],
        "observed": [[float(10 * i + j) for j in range(4)] for i in range(6)],
        "sources": [[None] * 4 for _ in range(6)],
    }
    (lab / "bp.json").write_text(json.dumps(doc))
    write_aggregate(read_benchpress(lab / "bp.json"), lab / "bp")
    (lab / "known.csv").write_text("benchmark_id,score\nb0,25\nb1,31\n")
    (lab / "known_bom.csv").write_bytes(BOM + (lab / "known.csv").read_bytes())
    for known, out in (("known.csv", "c_plain.csv"), ("known_bom.csv", "c_bom.csv")):
        ok(benchcast(f"complete {known} --data bp --no-intervals --out {out}", lab))
    assert (lab / "c_bom.csv").read_bytes() == (lab / "c_plain.csv").read_bytes()
    (lab / "known_semi.csv").write_text("benchmark_id;score\nb0;25,5\n")
    assert "separated by semicolons" in refused(benchcast("complete known_semi.csv --data bp --no-intervals", lab))


def test_a_catalog_csv_matrix_with_the_mark_reads_the_same(tmp_path):
    text = "item,subtask,model_a,model_b\ni1,s1,1,0\ni2,s2,0,1\ni3,s1,1,1\n"
    (tmp_path / "plain.csv").write_text(text)
    (tmp_path / "bom.csv").write_bytes(BOM + text.encode())
    options = {"orientation": "items_by_models", "item_columns": ["item", "subtask"], "subtask_column": "subtask"}
    plain, bom = read_csv_matrix(tmp_path / "plain.csv", **options), read_csv_matrix(tmp_path / "bom.csv", **options)
    assert np.array_equal(plain.scores, bom.scores) and (plain.model_names, plain.subtasks) == (
        bom.model_names,
        bom.subtasks,
    )


@pytest.mark.parametrize("what", ["answers", "leaderboard"])
def test_a_file_separated_by_semicolons_is_named_as_such(lab, what):
    if what == "answers":
        (lab / "answers_semi.csv").write_text((lab / "answers.csv").read_text().replace(",", ";"))
        line = ESTIMATE.format(BOARD="plain/board.csv", ANSWERS="answers_semi.csv", OUT="semi.json")
    else:
        (lab / "semi").mkdir(exist_ok=True)
        (lab / "semi/board.csv").write_text((lab / "plain/board.csv").read_text().replace(",", ";"))
        line = "select semi/board.csv --method random_sampling --budget 12 --data-dir semi_res --out semi.csv"
    err = refused(benchcast(line, lab))
    assert "separated by semicolons" in err and "save it as CSV with commas" in err
    assert not (lab / "semi.json").exists() and not (lab / "semi.csv").exists()
