"""Adaptive methods on the command line, following only what it prints (issue 37, the round trap):
each `select` names the next command -- the next round's `select`, or `estimate` -- with every
round's answers file, and that command, run as printed, works."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest


def toy_scores(n_models=40, n_items=120, seed=5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ability, difficulty = rng.normal(size=(n_models, 1)), rng.normal(size=(1, n_items))
    return (rng.random((n_models, n_items)) < 1 / (1 + np.exp(difficulty - ability))).astype(np.float64)


def ingest(folder, scores, subtasks) -> None:
    """``scores`` as an ingested dataset's three tables (what the workflow's ingest writes)."""
    folder.mkdir(parents=True)
    n_models, n_items = scores.shape
    pd.DataFrame(
        {
            "model_id": [f"m{i}" for i in range(n_models)],
            "name": [f"M{i}" for i in range(n_models)],
            "excluded": False,
            "accuracy": scores.mean(axis=1),
        }
    ).to_parquet(folder / "models.parquet")
    pd.DataFrame({"item_id": [f"q{j}" for j in range(n_items)], "subtask": subtasks}).to_parquet(
        folder / "items.parquet"
    )
    mi, ii = np.divmod(np.arange(n_models * n_items), n_items)
    pd.DataFrame({"model_idx": mi, "item_idx": ii, "score": scores.ravel()}).to_parquet(folder / "responses.parquet")


def run(argv: list[str], cwd) -> subprocess.CompletedProcess:
    """A printed ``benchcast ...`` command, run as the user would (this Python's benchcast)."""
    assert argv[0] == "benchcast"
    proc = subprocess.run([sys.executable, "-m", "benchcast", *argv[1:]], capture_output=True, text=True, cwd=cwd)
    assert proc.returncode == 0, f"{shlex.join(argv)}\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr
    return proc


def follow(first: list[str], row: np.ndarray, cwd) -> tuple[dict, list[list[str]]]:
    """Run ``first``; answer each batch in the file it wrote (from ``row``), then run the command
    it printed, until that is an ``estimate``: its JSON result and every command run."""
    commands = [first]
    for _ in range(12):
        command = commands[-1]
        proc = run(command, cwd)
        if command[1] == "estimate":
            return json.loads((cwd / command[command.index("--out") + 1]).read_text()), commands
        batch = cwd / command[command.index("--out") + 1]
        items = pd.read_csv(batch, dtype=str, keep_default_na=False)
        items["score"] = [int(row[int(i[1:])]) for i in items.item_id]
        items.to_csv(batch, index=False)
        printed = [line.strip() for line in proc.stdout.splitlines() if line.strip().startswith("benchcast ")]
        assert len(printed) == 1, proc.stdout
        commands.append([*shlex.split(printed[0]), *(["--out", "estimate.json"] if " estimate " in printed[0] else [])])
    raise AssertionError(f"no estimate after {len(commands)} commands")


@pytest.mark.parametrize(
    "method,params,rounds",
    [
        ("tailoredbench", None, 2),
        ("cf_probe", {"rounds": 1}, 2),
    ],  # cf_probe: the probe + 1 round, both subtasks at once
)
def test_an_adaptive_selection_is_finished_by_following_the_printed_commands(tmp_path, method, params, rounds):
    scores = toy_scores()
    ingest(tmp_path / "res" / "data" / "toy", scores[:36], ["a"] * 60 + ["b"] * 60)
    first = ["benchcast", "select", "toy", "--method", method, "--budget", "24", "--data-dir", "res", "--folds", "3"]
    first += ["--params", json.dumps(params)] if params else []
    result, commands = follow([*first, "--out", "items.csv"], scores[38], tmp_path)
    selects = [c for c in commands if c[1] == "select"]
    assert len(selects) == rounds and result["items_used"] == 24 and result["method"] == method
    # every command after the first names every round's file so far, and the estimate all of them
    files = [c[c.index("--out") + 1] for c in selects]
    for k, command in enumerate(commands[1:], start=1):
        answers = command[command.index("--answers") + 1 :]
        assert answers[: answers.index("--out")] == files[:k]
    assert len(set(files)) == len(files)  # no round overwrites another's answers
