"""The round trip with the real lm-evaluation-harness (``lm-eval``, pinned in requirements-lm-eval.txt):
a lab's models evaluated in the harness become a leaderboard (``benchcast leaderboard from-lm-eval``),
``benchcast select --format lm-eval`` writes the ``--samples`` file, ``lm-eval run --samples`` answers
it for a new model, and ``benchcast estimate`` reads the harness's output folder.

Everything runs offline: two local tasks this test writes (a multiple-choice task scored by
``acc_norm``; a ``generate_until`` task with two filters) and the harness's built-in ``dummy``
model, whose seeds make different models. The zoo and the adaptive rounds run through the harness's
Python API (lm_eval_driver.py: one task index for all, for speed); the new model of the main round
trip runs ``lm-eval run`` as a user types it. Without the harness
the test skips, except where ``BENCHCAST_REQUIRE_LM_EVAL=1`` (CI), where a skip is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

LM_EVAL = shutil.which("lm-eval", path=str(Path(sys.executable).parent)) or shutil.which("lm-eval")
if LM_EVAL is None:
    if os.environ.get("BENCHCAST_REQUIRE_LM_EVAL") == "1":
        raise RuntimeError("lm-eval is not installed; fix: pip install -r requirements-lm-eval.txt")
    pytest.skip("lm-eval is not installed (pip install -r requirements-lm-eval.txt)", allow_module_level=True)

pytestmark = pytest.mark.e2e
ZOO = 8
MC_DOCS, GEN_DOCS = 40, 30


def write_tasks(folder: Path) -> None:
    rng = np.random.default_rng(0)
    with open(folder / "mc.jsonl", "w") as fh:
        for i in range(MC_DOCS):
            choices = ["red", "green", "blue", "yellow"]
            fh.write(
                json.dumps(
                    {"question": f"Question {i}: which colour?", "choices": choices, "label": int(rng.integers(4))}
                )
                + "\n"
            )
    with open(folder / "gen.jsonl", "w") as fh:
        for i in range(GEN_DOCS):  # the dummy model always says "lol": the two filters score differently
            fh.write(json.dumps({"question": f"Say something ({i})", "answer": ["lol", "lo", "no"][i % 3]}) + "\n")
    mc = """\
        output_type: multiple_choice
        doc_to_text: "{{question}}"
        doc_to_choice: "{{choices}}"
        doc_to_target: label
        metric_list:
          - metric: acc
          - metric: acc_norm
        """
    gen = """\
        output_type: generate_until
        doc_to_text: "{{question}}"
        doc_to_target: answer
        generation_kwargs:
          until: ["\\n"]
        filter_list:
          - name: strict-match
            filter:
              - function: take_first
          - name: flexible-extract
            filter:
              - function: regex
                regex_pattern: "(lo)"
              - function: take_first
        metric_list:
          - metric: exact_match
        """
    for name, body in (("mc", mc), ("gen", gen)):
        head = f"task: toy_{name}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {folder / f'{name}.jsonl'}\n"
        (folder / f"{name}.yaml").write_text(head + "test_split: test\n" + textwrap.dedent(body))


def harness_env(tmp: Path) -> dict:
    return {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp / "hf")}


DRIVER = Path(__file__).with_name("lm_eval_driver.py")


def drive(tmp: Path, out: str, *models: str, samples: Path | None = None, tasks: str = "toy_mc,toy_gen", model="dummy"):
    """``model`` (the harness's ``dummy``, or lm_eval_driver.py's ``parrot``) as ``models``
    (``name=seed``), through the harness's Python API (lm_eval_driver.py)."""
    tasks = ",".join(json.loads(samples.read_text())) if samples else tasks
    extra = ["--samples", str(samples)] if samples else []
    cmd = [sys.executable, str(DRIVER), str(tmp / "tasks"), str(tmp / out), tasks, *models, *extra, "--model", model]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=harness_env(tmp), cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]


def benchcast(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "benchcast.cli", *args], capture_output=True, text=True, cwd=cwd)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def logged(folder: Path, task: str) -> list[dict]:
    (path,) = sorted(folder.rglob(f"samples_{task}_*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lm_eval")
    (tmp / "tasks").mkdir()
    write_tasks(tmp / "tasks")
    drive(tmp, "zoo", *(f"lab/model-{k}={k + 1}" for k in range(ZOO)))
    return tmp


def run_new_model(tmp: Path, samples: Path, out: str, seed: int = 99) -> Path:
    """``lm-eval run --samples`` for a new model, as a user types it (the tasks of the samples file:
    the harness runs a task the file does not list in full)."""
    tasks = ",".join(json.loads(samples.read_text()))
    cmd = [
        LM_EVAL, "run", "--model", "dummy", "--model_args", "pretrained=lab/new-model", "--tasks", tasks,
        "--include_path", str(tmp / "tasks"), "--samples", str(samples), "--log_samples", "--output_path", out,
        "--seed", str(seed),
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, env=harness_env(tmp), cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp / out


def test_harness_logs_to_leaderboard_select_run_estimate(zoo):
    tmp = zoo
    proc = benchcast(
        "leaderboard", "from-lm-eval", "zoo", "--metric", "toy_mc=acc_norm", "--out", "board.parquet", cwd=tmp
    )
    assert "toy_mc: acc_norm after filter 'none'" in proc.stdout
    assert "toy_gen: exact_match after filter 'strict-match'" in proc.stdout  # the config's first filter
    board = pd.read_parquet(tmp / "board.parquet")
    assert board.shape == (ZOO, 1 + MC_DOCS + GEN_DOCS)
    assert sorted(board.model_id) == sorted(f"lab/model-{k}" for k in range(ZOO))
    # the board holds what the harness logged: model 3's acc_norm on toy_mc, strict-match on toy_gen
    mc = {d["doc_id"]: d["acc_norm"] for d in logged(tmp / "zoo" / "lab__model-3", "toy_mc")}
    gen = {
        d["doc_id"]: d["exact_match"]
        for d in logged(tmp / "zoo" / "lab__model-3", "toy_gen")
        if d["filter"] == "strict-match"
    }
    row = board.set_index("model_id").loc["lab/model-3"]
    assert all(row[f"toy_mc/{k}"] == v for k, v in mc.items()) and all(row[f"toy_gen/{k}"] == v for k, v in gen.items())

    common = ["--method", "random_sampling", "--budget", "20", "--data-dir", "fits", "--folds", "4"]
    proc = benchcast("select", "board.parquet", *common, "--format", "lm-eval", "--out", "samples.json", cwd=tmp)
    assert (
        "lm-eval run" in proc.stdout and "--samples samples.json" in proc.stdout and "--cache_requests" in proc.stdout
    )
    samples = json.loads((tmp / "samples.json").read_text())
    assert sum(map(len, samples.values())) == 20
    assert all(docs == sorted(set(docs)) for docs in samples.values())  # harness #4084: sorted and unique

    out = run_new_model(tmp, tmp / "samples.json", "new_out")
    for task, docs in samples.items():  # the harness logged exactly the selected documents
        assert sorted({d["doc_id"] for d in logged(out, task)}) == docs
    e_logs = json.loads(
        benchcast("estimate", "board.parquet", *common, "--answers", "new_out", "--out", "e.json", cwd=tmp).stdout
        and (tmp / "e.json").read_text()
    )

    # the same answers as a CSV (read from the logs here, independently of benchcast): the same estimate, bit for bit
    rows = [
        (f"{t}/{d['doc_id']}", int(d["acc_norm" if t == "toy_mc" else "exact_match"]))
        for t in samples
        for d in logged(out, t)
        if d["filter"] in ("none", "strict-match")
    ]
    pd.DataFrame(rows, columns=["item_id", "score"]).to_csv(tmp / "answers.csv", index=False)
    benchcast("estimate", "board.parquet", *common, "--answers", "answers.csv", "--out", "e_csv.json", cwd=tmp)
    assert e_logs == json.loads((tmp / "e_csv.json").read_text())
    assert e_logs["items_used"] == 20 and 0.0 <= e_logs["lower"] <= e_logs["estimate"] <= e_logs["upper"] <= 1.0


def test_an_adaptive_selection_loops_through_the_harness_round_by_round(zoo):
    tmp = zoo
    if not (tmp / "board.parquet").exists():
        benchcast(
            "leaderboard", "from-lm-eval", "zoo", "--metric", "toy_mc=acc_norm", "--out", "board.parquet", cwd=tmp
        )
    common = [
        "--method",
        "tailoredbench",
        "--params",
        '{"g_size": 3}',
        "--budget",
        "12",
        "--data-dir",
        "fits",
        "--folds",
        "4",
    ]
    benchcast("select", "board.parquet", *common, "--format", "lm-eval", "--out", "round1.json", cwd=tmp)
    drive(tmp, "tb/round1", "lab/new-model=99", samples=tmp / "round1.json")
    proc = benchcast(
        "select",
        "board.parquet",
        *common,
        "--format",
        "lm-eval",
        "--answers",
        "tb/round1",
        "--out",
        "round2.json",
        cwd=tmp,
    )
    assert "benchcast estimate" in proc.stdout  # the last round: the printed next step is the estimate
    first, second = (json.loads((tmp / f).read_text()) for f in ("round1.json", "round2.json"))
    picked = [(t, d) for s in (first, second) for t, docs in s.items() for d in docs]
    assert len(picked) == len(set(picked)) == 12  # round 2 asks only for documents round 1 did not
    drive(tmp, "tb/round2", "lab/new-model=99", samples=tmp / "round2.json")
    proc = benchcast("estimate", "board.parquet", *common, "--answers", "tb/round1", "tb/round2", cwd=tmp)
    assert "tailoredbench from 12 items" in proc.stdout
