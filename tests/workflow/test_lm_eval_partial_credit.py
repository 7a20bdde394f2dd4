"""Partial credit from the real lm-evaluation-harness: a generative task scored per document by the
harness's own DROP F1 (``lm_eval.tasks.drop.utils.process_results``), answered by the ``parrot``
model (lm_eval_driver.py: it repeats some of its prompt's words), becomes a leaderboard of scores in
[0, 1] (``benchcast leaderboard from-lm-eval --metric toy_f1=f1``); Random-Sampling's estimate of a
new model from its harness logs is the mean of its logged F1 over the selected documents, exactly,
and a method defined for 0/1 scores is refused in one line naming those that take them."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_lm_eval_e2e import benchcast, drive, logged  # skips there without the harness

pytestmark = pytest.mark.e2e
ZOO, DOCS = 24, 80
VOCAB = "red green blue yellow cat dog sun moon tree river stone cloud bird fish lamp door".split()


def write_f1_task(folder: Path, docs: int = DOCS) -> None:
    """The task ``toy_f1`` in ``folder``: ``docs`` documents "Repeat: <2-13 words>", scored by DROP's F1."""
    rng = np.random.default_rng(0)
    with open(folder / "f1.jsonl", "w") as fh:
        for _ in range(docs):
            words = " ".join(rng.choice(VOCAB, int(rng.integers(2, 14))))
            fh.write(json.dumps({"question": f"Repeat: {words}", "answers": [[words]]}) + "\n")
    # the harness's own per-document F1 (DROP's), as its drop task scores generations
    (folder / "utils.py").write_text("from lm_eval.tasks.drop.utils import process_results  # noqa: F401\n")
    body = """\
        test_split: test
        output_type: generate_until
        doc_to_text: "{{question}}"
        doc_to_target: "{{answers[0][0]}}"
        process_results: !function utils.process_results
        generation_kwargs:
          until: ["\\n"]
        metric_list:
          - metric: f1
            aggregation: mean
            higher_is_better: true
          - metric: em
            aggregation: mean
            higher_is_better: true
        """
    head = f"task: toy_f1\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {folder / 'f1.jsonl'}\n"
    (folder / "f1.yaml").write_text(head + textwrap.dedent(body))


@pytest.fixture(scope="module")
def f1_zoo(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lm_eval_f1")
    (tmp / "tasks").mkdir()
    write_f1_task(tmp / "tasks")
    drive(tmp, "zoo", *(f"lab/parrot-{k}={k + 1}" for k in range(ZOO)), tasks="toy_f1", model="parrot")
    proc = benchcast("leaderboard", "from-lm-eval", "zoo", "--metric", "toy_f1=f1", "--out", "board.parquet", cwd=tmp)
    assert "toy_f1: f1" in proc.stdout
    return tmp


def test_the_harness_f1_board_holds_what_the_harness_logged_in_0_1(f1_zoo):
    board = pd.read_parquet(f1_zoo / "board.parquet").set_index("model_id")
    assert board.shape == (ZOO, DOCS)
    values = board.to_numpy(float)
    assert ((values > 0) & (values < 1)).mean() > 0.3  # partial credit, not 0/1
    f1 = {d["doc_id"]: d["f1"] for d in logged(f1_zoo / "zoo" / "lab__parrot-3", "toy_f1")}
    row = board.loc[next(i for i in board.index if i.endswith("parrot-3"))]
    assert all(row[f"toy_f1/{k}"] == v for k, v in f1.items())


def test_random_sampling_on_harness_f1_is_the_logged_mean_exactly(f1_zoo):
    tmp = f1_zoo
    common = ["--method", "random_sampling", "--budget", "20", "--data-dir", "res"]
    benchcast("select", "board.parquet", *common, "--out", "items.csv", cwd=tmp)
    benchcast("select", "board.parquet", *common, "--format", "lm-eval", "--out", "samples.json", cwd=tmp)
    drive(tmp, "new", "lab/new-parrot=99", samples=tmp / "samples.json", model="parrot")
    f1 = {f"toy_f1/{d['doc_id']}": d["f1"] for d in logged(tmp / "new" / "lab__new-parrot", "toy_f1")}
    items = pd.read_csv(tmp / "items.csv")
    assert len(f1) == 20 and set(items.item_id) == set(f1)
    answers = items.assign(score=[f1[i] for i in items.item_id])
    answers[["item_id", "score", "selection_id"]].to_csv(tmp / "answers.csv", index=False)
    benchcast("estimate", "board.parquet", *common, "--answers", "answers.csv", "--out", "csv.json", cwd=tmp)
    benchcast("estimate", "board.parquet", *common, "--answers", "new", "--out", "logs.json", cwd=tmp)
    from_csv, from_logs = (json.loads((tmp / f).read_text()) for f in ("csv.json", "logs.json"))
    assert from_csv["estimate"] == np.mean(answers.score.to_numpy())  # the answers' mean, exactly
    assert from_logs["estimate"] == from_csv["estimate"] and from_logs["lower"] == from_csv["lower"]
    assert 0 < from_csv["estimate"] < 1


def test_a_method_for_0_1_scores_is_refused_on_harness_f1_in_one_line(f1_zoo):
    proc = subprocess.run(
        [sys.executable, "-m", "benchcast", "select", "board.parquet", "--method", "p_irt", "--budget", "20"]
        + ["--data-dir", "res", "--out", "p.csv"],
        capture_output=True,
        text=True,
        cwd=f1_zoo,
    )
    err = proc.stderr.strip()
    assert proc.returncode == 2 and err.count("\n") == 0 and "Traceback" not in err, err
    assert "p_irt is defined for 0/1 item scores only" in err and "random_sampling" in err and "fix:" in err
    assert not (f1_zoo / "p.csv").exists()
