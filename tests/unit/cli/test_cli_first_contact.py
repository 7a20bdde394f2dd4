"""What a newcomer meets first (issue 37): bare `benchcast`, help without docstring markup, "did you
mean" for a dataset or method, JSON from the listings, and the README's column names in the help."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from helpers import REPO

from benchcast.cli import build_parser, main
from benchcast.methods import REGISTRY

#: reStructuredText / Sphinx markup that must not reach a terminal: ``code``, :mod:`x`, `x`
MARKUP = re.compile(r"``|:\w+:`|`")


def every_parser(parser: argparse.ArgumentParser, name="benchcast"):
    """``(command, parser)`` for the parser and every subcommand below it."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, p in action.choices.items():
                yield from every_parser(p, f"{name} {sub}")


def test_bare_benchcast_prints_the_help_and_exits_0():
    proc = subprocess.run([sys.executable, "-m", "benchcast"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == ""
    assert (
        proc.stdout.startswith("usage: benchcast") and "    select" in proc.stdout and "COMMAND --help" in proc.stdout
    )


def test_no_help_text_shows_docstring_markup():
    helps = dict((name, p.format_help()) for name, p in every_parser(build_parser()))
    assert {"benchcast select", "benchcast leaderboard from-lm-eval", "benchcast methods"} <= set(helps)
    marked = {name: MARKUP.findall(text) for name, text in helps.items() if MARKUP.search(text)}
    assert not marked, f"markup in --help: {marked}"


def test_an_unknown_dataset_or_method_gets_a_did_you_mean(tmp_path, capsys):
    (tmp_path / "data" / "musr").mkdir(parents=True)
    (tmp_path / "data" / "musr" / "responses.parquet").write_bytes(b"")
    out = tmp_path / "items.csv"
    common = ["--budget", "5", "--out", str(out), "--data-dir", str(tmp_path)]
    assert main(["select", "musrr", "--method", "random_sampling", *common]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        "unknown dataset 'musrr'; did you mean 'musr'? Fix:" in err
        and "benchcast fetch NAME" in err
        and "\n" not in err
    )
    board = tmp_path / "board.csv"
    frame = pd.DataFrame(np.eye(4, dtype=int), columns=["q0", "q1", "q2", "q3"]).assign(model_id=list("abcd"))
    frame[["model_id", "q0", "q1", "q2", "q3"]].to_csv(board, index=False)
    assert main(["select", str(board), "--method", "random_samplin", *common]) == 2
    err = capsys.readouterr().err.strip()
    assert "unknown method 'random_samplin'; did you mean 'random_sampling'" in err and "\n" not in err
    assert not out.exists()


def test_the_listings_print_json_arrays_with_the_same_columns(tmp_path, capsys):
    assert main(["methods", "--out", str(tmp_path / "m.csv")]) == 0
    columns = pd.read_csv(tmp_path / "m.csv").columns.tolist()
    capsys.readouterr()
    assert main(["methods", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["method"] for r in rows] == sorted(REGISTRY) and list(rows[0]) == columns
    assert main(["datasets", "--json", "--data-dir", str(tmp_path), "--grep", "musr"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["dataset"] == "musr" and row["ingested"] == "no" and row["subtasks"] == 3
    assert isinstance(row["models"], int) and isinstance(row["items"], int)
    assert main(["methods", "--json", "--grep", "no-such-method"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_the_help_names_the_columns_the_readme_and_docs_name():
    """The README and docs/new-model.md say a user's matrix starts with `model_id`, answers are
    `item_id,score` and known scores `benchmark_id,score`: so does every --help that asks for them."""
    readme = (REPO / "README.md").read_text() + (REPO / "docs" / "new-model.md").read_text()
    helps = {name: " ".join(p.format_help().split()) for name, p in every_parser(build_parser())}
    for command in ("select", "estimate", "plan"):
        assert "first column model_id" in helps[f"benchcast {command}"], command
    assert "first column is `model_id`" in readme
    for command, columns in (
        ("estimate", "item_id,score"),
        ("select", "item_id,score"),
        ("complete", "benchmark_id,score"),
    ):
        assert columns in helps[f"benchcast {command}"] and f"`{columns}`" in readme, command
    assert (
        "`item_id, subtask, selection_id, score`" in readme
        and "item_id, subtask, selection_id and a blank score" in helps["benchcast select"]
    )
    assert not re.search(r"first column(?: is)? `?model`?\b", readme + " ".join(helps.values()))


@pytest.mark.parametrize("listing", ["datasets", "methods"])
def test_the_listings_json_is_valid_in_a_pipe(listing):
    proc = subprocess.run(
        [sys.executable, "-m", "benchcast", listing, "--json"], capture_output=True, text=True, cwd=REPO
    )
    assert proc.returncode == 0 and isinstance(json.loads(proc.stdout), list)


def test_select_will_not_overwrite_an_answers_file_with_the_next_batch(tmp_path, capsys):
    answers = tmp_path / "items.csv"
    answers.write_text("item_id,score\nq0,1\n")
    argv = ["select", "board.csv", "--method", "tailoredbench", "--budget", "20", "--answers", str(answers)]
    assert main([*argv, "--out", str(answers)]) == 2
    err = capsys.readouterr().err
    assert "is also one of --answers" in err and "--out" in err and "items.round2.csv" in err
    assert answers.read_text() == "item_id,score\nq0,1\n"
