"""The listing commands in one scheme: benchmarks, datasets and methods share --grep and --out."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from benchcast.cli import main
from benchcast.methods import REGISTRY


def test_methods_lists_every_registered_method_with_what_it_needs(tmp_path, capsys):
    assert main(["methods", "--out", str(tmp_path / "m.csv")]) == 0
    table = pd.read_csv(tmp_path / "m.csv", keep_default_na=False)
    assert table.method.tolist() == sorted(REGISTRY)
    row = table.set_index("method")
    assert row.loc["p_irt", "prefit"] == "irt" and row.loc["cf_probe", "subtasks"] == "yes"
    assert "``" not in "".join(table.what) and all(len(w) <= 72 for w in table.what)
    assert capsys.readouterr().out.splitlines()[0].split()[:2] == ["method", "what"]


def test_datasets_lists_the_item_level_catalog_and_what_is_ingested(tmp_path, capsys):
    (tmp_path / "data" / "musr").mkdir(parents=True)
    (tmp_path / "data" / "musr" / "responses.parquet").write_bytes(b"")
    assert main(["datasets", "--data-dir", str(tmp_path), "--grep", "MUSR"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[1].split()[0] == "musr" and lines[1].split()[-2:] == ["yes", "assumed"]
    assert lines[0].split()[-1] == "lm_eval"  # the harness identity: whether select --format lm-eval works
    assert main(["datasets", "--grep", "no-such-dataset"]) == 0
    assert "no row contains 'no-such-dataset'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["methods", "datasets"])
def test_a_listing_into_a_closed_pipe_ends_quietly(command):
    proc = subprocess.run(
        f"{sys.executable} -m benchcast.cli {command} | head -1", shell=True, capture_output=True, text=True
    )
    assert proc.stdout.count("\n") == 1 and "Traceback" not in proc.stderr


def test_the_top_level_help_is_plain_text_and_lists_every_command():
    proc = subprocess.run([sys.executable, "-m", "benchcast.cli", "--help"], capture_output=True, text=True)
    for command in ("select", "estimate", "plan", "complete", "leaderboard", "datasets", "methods", "benchmarks"):
        assert f"    {command}" in proc.stdout
    assert "``" not in proc.stdout and ":mod:" not in proc.stdout
    version = subprocess.run([sys.executable, "-m", "benchcast.cli", "--version"], capture_output=True, text=True)
    assert version.stdout.strip() == f"benchcast {__import__('benchcast').__version__}"
