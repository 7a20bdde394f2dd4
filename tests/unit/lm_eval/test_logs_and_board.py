"""Harness logs in and out of ``benchcast leaderboard from-lm-eval``, ``select --format lm-eval`` and
``estimate --answers <logs>``, on logs the tests write in the harness's layout
(:mod:`benchcast.lm_eval.simulate`): the round trip, and every bad log refused in one line with
nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchcast.cli import main
from benchcast.data.harness_identity import HarnessMap, LeafTask
from benchcast.lm_eval.simulate import STAMP, write_logs

TASKS = {"quiz_a": 30, "quiz_b": 20}


def toy_map() -> HarnessMap:
    tasks = {t: LeafTask(t, "acc_norm", "none", n) for t, n in TASKS.items()}
    items = tuple((t, d) for t, n in TASKS.items() for d in range(n))
    return HarnessMap("toy", "verified", "test", tasks, items)


def toy_scores(n_models=14, seed=3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n_items = sum(TASKS.values())
    p = 1 / (1 + np.exp(rng.normal(size=(1, n_items)) - rng.normal(size=(n_models, 1))))
    return (rng.random((n_models, n_items)) < p).astype(float)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A leaderboard from the logs of 13 models, a selection for a 14th, and its logs."""
    root = tmp_path_factory.mktemp("lab")
    scores, hmap = toy_scores(), toy_map()
    for i in range(13):
        write_logs(root / "zoo", f"lab/m{i}", dict(enumerate(scores[i])), hmap, np.random.default_rng(i))
    assert main(["leaderboard", "from-lm-eval", str(root / "zoo"), "--out", str(root / "board.parquet")]) == 0
    common = ["--method", "random_sampling", "--budget", "10", "--data-dir", str(root / "fits"), "--folds", "3"]
    board = str(root / "board.parquet")
    assert main(["select", board, *common, "--format", "lm-eval", "--out", str(root / "samples.json")]) == 0
    samples = json.loads((root / "samples.json").read_text())
    index = {key: j for j, key in enumerate(hmap.items)}
    answers = {index[(t, d)]: scores[13, index[(t, d)]] for t, docs in samples.items() for d in docs}
    write_logs(root / "new", "lab/new", answers, hmap, np.random.default_rng(99))
    return {"root": root, "board": board, "common": common, "samples": samples, "answers": answers, "hmap": hmap}


def test_board_holds_every_models_logged_scores(lab):
    board = pd.read_parquet(lab["board"])
    assert board.shape == (13, 1 + 50)
    assert list(board.columns[1:4]) == ["quiz_a/0", "quiz_a/1", "quiz_a/2"]
    row = board.set_index("model_id").loc["lab/m4"].to_numpy()
    np.testing.assert_array_equal(row, toy_scores()[4])  # the decoy filter's lines are ignored


def test_select_writes_sorted_unique_documents_and_estimate_reads_the_logs_as_the_csv(lab, capsys):
    samples = lab["samples"]
    assert sum(map(len, samples.values())) == 10 and all(d == sorted(set(d)) for d in samples.values())
    root, common = lab["root"], lab["common"]
    assert (
        main(["estimate", lab["board"], *common, "--answers", str(root / "new"), "--out", str(root / "e1.json")]) == 0
    )
    hmap = lab["hmap"]
    rows = [(f"{hmap.items[j][0]}/{hmap.items[j][1]}", int(v)) for j, v in lab["answers"].items()]
    pd.DataFrame(rows, columns=["item_id", "score"]).to_csv(root / "a.csv", index=False)
    assert (
        main(["estimate", lab["board"], *common, "--answers", str(root / "a.csv"), "--out", str(root / "e2.json")]) == 0
    )
    assert (root / "e1.json").read_bytes() == (root / "e2.json").read_bytes()


def test_compare_reads_two_models_logs_as_their_csv_bit_for_bit(lab, capsys):
    root, common, hmap = lab["root"], lab["common"], lab["hmap"]
    other = {j: 1.0 - v for j, v in lab["answers"].items()}  # a second new model: every answer flipped
    write_logs(root / "new2", "lab/new2", other, hmap, np.random.default_rng(7))
    for name, answers in (("b1", lab["answers"]), ("b2", other)):
        rows = [(f"{hmap.items[j][0]}/{hmap.items[j][1]}", int(v)) for j, v in answers.items()]
        pd.DataFrame(rows, columns=["item_id", "score"]).to_csv(root / f"{name}.csv", index=False)
    names = ["--names", "first", "second"]
    logs = ["--answers", str(root / "new"), "--answers", str(root / "new2")]
    csvs = ["--answers", str(root / "b1.csv"), "--answers", str(root / "b2.csv")]
    assert main(["compare", lab["board"], *common, *logs, *names, "--out", str(root / "c1.json")]) == 0
    assert main(["compare", lab["board"], *common, *csvs, *names, "--out", str(root / "c2.json")]) == 0
    assert (root / "c1.json").read_bytes() == (root / "c2.json").read_bytes()
    (pair,) = json.loads((root / "c1.json").read_text())["pairs"]
    assert pair["items_shared"] == 10 and pair["items_differing"] == 10


def test_estimate_needs_the_budget_when_several_fits_are_stored(lab, capsys):
    root, board = lab["root"], lab["board"]
    other = ["--method", "random_sampling", "--budget", "12", "--data-dir", str(root / "fits"), "--folds", "3"]
    assert main(["select", board, *other, "--out", str(root / "other.csv")]) == 0
    capsys.readouterr()
    no_budget = ["--method", "random_sampling", "--data-dir", str(root / "fits"), "--folds", "3"]
    assert main(["estimate", board, *no_budget, "--answers", str(root / "new")]) == 2
    assert "pass the --budget you ran select with" in capsys.readouterr().err


def _new_logs(lab, tmp_path) -> Path:
    """A copy of the new model's logs to break."""
    copy = tmp_path / "new"
    shutil.copytree(lab["root"] / "new", copy)
    return copy


def _file(folder: Path, task: str) -> Path:
    return folder / "lab__new" / f"samples_{task}_{STAMP}.jsonl"


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _write(path: Path, lines: list[dict]) -> None:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def _edit(fn):
    """A bad-log maker that edits the first selected task's file with ``fn(lines, lab) -> lines``."""

    def make(lab, tmp_path):
        folder = _new_logs(lab, tmp_path)
        task = next(iter(lab["samples"]))
        path = _file(folder, task)
        _write(path, fn(_lines(path), lab, task))
        return [str(folder)]

    return make


def _unselected(lines, lab, task):
    chosen = set(lab["samples"][task])
    doc = next(d for d in range(TASKS[task]) if d not in chosen)
    return [*lines, {**lines[0], "doc_id": doc}]


def _drop_one(lines, lab, task):
    doc = lab["samples"][task][0]
    return [x for x in lines if x["doc_id"] != doc]


def _disagree(lines, lab, task):
    first = next(x for x in lines if x["filter"] == "none")
    return [*lines, {**first, "acc_norm": 1.0 - first["acc_norm"]}]


def _two_models(lab, tmp_path):
    folder = _new_logs(lab, tmp_path)
    other = folder / "lab__other"
    shutil.copytree(folder / "lab__new", other)
    (other / f"results_{STAMP}.json").write_text(json.dumps({"model_name": "lab/other"}))
    return [str(folder)]


def _truncated(lab, tmp_path):
    folder = _new_logs(lab, tmp_path)
    path = _file(folder, next(iter(lab["samples"])))
    text = path.read_text()
    path.write_text(text[: len(text) - 40])
    return [str(folder)]


def _other_task(lab, tmp_path):
    folder = _new_logs(lab, tmp_path)
    src = _file(folder, next(iter(lab["samples"])))
    dst = src.with_name(f"samples_gsm8k_{STAMP}.jsonl")
    src.rename(dst)
    return [str(dst)]


def _empty_folder(lab, tmp_path):
    (tmp_path / "empty").mkdir()
    return [str(tmp_path / "empty")]


def _not_a_log(lab, tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text('{"doc_id": 0}\n')
    return [str(path)]


BAD = {
    "a document that was not selected": (_edit(_unselected), "was not selected"),
    "a selected document missing": (_edit(_drop_one), "still asks for 1 unanswered items, e.g. ['quiz_"),
    "a task of another dataset": (_other_task, "task 'gsm8k' is not a task of"),
    "the metric absent": (
        _edit(lambda ls, lab, t: [{k: v for k, v in x.items() if k != "acc_norm"} for x in ls]),
        "has no 'acc_norm'",
    ),
    "the metric partial credit against a 0/1 leaderboard": (
        _edit(lambda ls, lab, t: [{**x, "acc_norm": 0.5} for x in ls]),
        "score 0.5 is not 0 or 1",
    ),
    "the metric outside [0, 1]": (
        _edit(lambda ls, lab, t: [{**x, "acc_norm": 1.5} for x in ls]),
        "acc_norm is 1.5, not a score in [0, 1]",
    ),
    "two lines that disagree": (_edit(_disagree), "is logged again with another acc_norm"),
    "two models in one folder": (_two_models, "logs of 2 models"),
    "a truncated line": (_truncated, "is not a JSON object (a truncated or cut line?)"),
    "the filter absent": (
        _edit(lambda ls, lab, t: [{**x, "filter": "strict-match"} for x in ls]),
        "no line has filter 'none'",
    ),
    "a document the task does not have": (_edit(lambda ls, lab, t: [*ls, {**ls[0], "doc_id": 999}]), "document 999 of"),
    "a doc_id that is not an index": (
        _edit(lambda ls, lab, t: [*ls, {**ls[0], "doc_id": "7"}]),
        "doc_id is '7', not a document index",
    ),
    "a path that does not exist": (lambda lab, tmp_path: [str(tmp_path / "nowhere")], "does not exist"),
    "a folder without logs": (_empty_folder, "holds no samples_*.jsonl file"),
    "a file that is not a harness log": (_not_a_log, "is not a harness per-item log"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_harness_log_is_refused_in_one_line_and_nothing_is_written(lab, tmp_path, capsys, case):
    make, message = BAD[case]
    answers = make(lab, tmp_path)
    out = tmp_path / "estimate.json"
    capsys.readouterr()
    code = main(["estimate", lab["board"], *lab["common"], "--answers", *answers, "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and err.count("\n") == 0 and err.startswith("benchcast: error: ")
    assert "Fix:" in err or "fix:" in err
    assert not out.exists()


def test_select_format_lm_eval_refuses_a_matrix_without_harness_identity(lab, tmp_path, capsys):
    board = pd.read_parquet(lab["board"])
    board.to_csv(tmp_path / "plain.csv", index=False)
    out = tmp_path / "s.json"
    code = main(["select", str(tmp_path / "plain.csv"), *lab["common"], "--format", "lm-eval", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "has no lm-evaluation-harness identity" in err and err.count("\n") == 0
    assert not out.exists() and not (tmp_path / "fits").exists()  # refused before any fit is built


def test_board_missing_items_are_refused_or_dropped_as_asked(tmp_path, capsys):
    scores, hmap = toy_scores(n_models=6), toy_map()
    for i in range(6):
        answers = dict(enumerate(scores[i]))
        if i == 2:  # model 2 never ran quiz_b
            answers = {j: v for j, v in answers.items() if hmap.items[j][0] == "quiz_a"}
        write_logs(tmp_path / "zoo", f"m{i}", answers, hmap, np.random.default_rng(i))
    out = tmp_path / "b.parquet"
    assert main(["leaderboard", "from-lm-eval", str(tmp_path / "zoo"), "--out", str(out)]) == 2
    assert "1 of 6 models miss some of the 50 items, e.g. m2 (20 missing)" in capsys.readouterr().err
    assert not out.exists()
    assert (
        main(["leaderboard", "from-lm-eval", str(tmp_path / "zoo"), "--out", str(out), "--missing", "drop-models"]) == 0
    )
    assert pd.read_parquet(out).shape == (5, 51)
    assert (
        main(["leaderboard", "from-lm-eval", str(tmp_path / "zoo"), "--out", str(out), "--missing", "drop-items"]) == 0
    )
    assert pd.read_parquet(out).shape == (6, 31)


def test_board_refuses_a_model_in_two_folders_and_a_metric_outside_0_1(tmp_path, capsys):
    scores, hmap = toy_scores(n_models=3), toy_map()
    for i in range(3):
        write_logs(tmp_path / "zoo", f"m{i}", dict(enumerate(scores[i])), hmap, np.random.default_rng(i))
    shutil.copytree(tmp_path / "zoo" / "m0", tmp_path / "again" / "m0")
    assert (
        main(
            [
                "leaderboard",
                "from-lm-eval",
                str(tmp_path / "zoo"),
                str(tmp_path / "again"),
                "--out",
                str(tmp_path / "b.parquet"),
            ]
        )
        == 2
    )
    assert "model 'm0' is also in" in capsys.readouterr().err
    path = tmp_path / "zoo" / "m1" / f"samples_quiz_a_{STAMP}.jsonl"
    _write(path, [{**x, "acc_norm": 1.25} for x in _lines(path)])
    assert main(["leaderboard", "from-lm-eval", str(tmp_path / "zoo"), "--out", str(tmp_path / "b.parquet")]) == 2
    assert "acc_norm is 1.25, not a score in [0, 1]" in capsys.readouterr().err
    assert not (tmp_path / "b.parquet").exists()
    _write(path, [{**x, "acc_norm": 0.25} for x in _lines(path)])  # partial credit: a board of it
    assert main(["leaderboard", "from-lm-eval", str(tmp_path / "zoo"), "--out", str(tmp_path / "b.parquet")]) == 0
    board = pd.read_parquet(tmp_path / "b.parquet")
    m1 = board.set_index("model_id").loc["m1"]
    assert (m1[[c for c in m1.index if c.startswith("quiz_a/")]] == 0.25).all()


def test_metric_and_filter_options_choose_what_counts(tmp_path, capsys):
    scores, hmap = toy_scores(n_models=4), toy_map()
    for i in range(4):
        write_logs(tmp_path / "zoo", f"m{i}", dict(enumerate(scores[i])), hmap, np.random.default_rng(i))
    out = tmp_path / "b.parquet"
    assert (
        main(
            [
                "leaderboard",
                "from-lm-eval",
                str(tmp_path / "zoo"),
                "--out",
                str(out),
                "--filter",
                "quiz_b=benchcast-decoy",
            ]
        )
        == 0
    )
    assert "quiz_b: acc_norm after filter 'benchcast-decoy'" in capsys.readouterr().out
    board = pd.read_parquet(out).set_index("model_id")
    np.testing.assert_array_equal(board.loc["m1"].to_numpy()[30:], 1 - scores[1, 30:])  # the decoy holds 1 - score
    assert (
        main(["leaderboard", "from-lm-eval", str(tmp_path / "zoo"), "--out", str(out), "--metric", "quiz_c=acc"]) == 2
    )
    assert "name tasks no log has: ['quiz_c']" in capsys.readouterr().err
