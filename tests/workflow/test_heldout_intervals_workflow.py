"""The heldout_intervals study end to end on a small items x models CSV the test writes: the stored fits the
command line then reads as they are, the held-out test's tables, and a changed method reruns only its
own jobs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers import snakemake  # the repository's Snakefile in a work folder, output on failure

pytestmark = pytest.mark.e2e


def make_workdir(root: Path) -> Path:
    rng = np.random.default_rng(3)
    ability, difficulty = rng.normal(size=(1, 40)), rng.normal(size=(90, 1))
    scores = (rng.random((90, 40)) < 1 / (1 + np.exp(difficulty - ability))).astype(int)
    (root / "raw" / "toy").mkdir(parents=True)
    table = pd.DataFrame(scores, columns=[f"org__m{i}" for i in range(40)])
    table["subset"] = ["a"] * 50 + ["b"] * 40
    table.to_csv(root / "raw" / "toy" / "toy.csv", index=False)
    spec = {"title": "toy", "suite": "toy", "kind": "item_binary", "source": "toy", "format": "csv_matrix"}
    spec.update(orientation="items_by_models", item_columns=["subset"], subtask_column="subset", mirrored=True)
    spec.update(files={"scores": {"path": "toy.csv", "sha256": None}}, n_models=40, n_items=90, min_accuracy=0.0)
    catalog = {
        "sources": {"toy": {"repository": "example/toy", "commit": "0" * 40}},
        "url_template": "https://example.invalid/{repository}/{commit}/{path}",
        "datasets": {"toy": spec},
    }
    (root / "config").mkdir()
    (root / "config" / "catalog.yaml").write_text(yaml.safe_dump(catalog))
    study = {"datasets": ["toy"], "methods": [{"name": "random_sampling"}, {"name": "tailoredbench"}]}
    study.update(budgets=[20], folds=3, heldout_folds=4)
    config = {
        "raw_dir": str(root / "raw"),
        "catalog": "config/catalog.yaml",
        "seed": 0,
        "studies": ["heldout_intervals"],
    }
    (root / "config" / "config.yaml").write_text(yaml.safe_dump({**config, "heldout_intervals": study}))
    return root


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    work = make_workdir(tmp_path_factory.mktemp("heldout_intervals"))
    snakemake(work, "heldout_intervals", "--cores", "2", "--quiet")
    return work


def test_heldout_tables_and_the_command_lines_seconds(finished):
    tables = finished / "results" / "tables" / "heldout_intervals"
    held = pd.read_csv(tables / "heldout.csv")
    assert list(held.columns) == [
        "dataset", "method", "budget", "models", "coverage", "mean_width", "conformal_coverage", "conformal_width", "mae",
    ]  # fmt: skip
    assert sorted(held.method) == ["random_sampling", "tailoredbench"] and (held.models == 40).all()
    assert held.coverage.between(0, 1).all() and (held.mean_width > 0).all()
    speed = pd.read_csv(tables / "speed.csv")
    assert (speed.cli_select_seconds > 0).all() and (speed.cli_estimate_seconds > 0).all()
    assert dict(zip(speed.method, speed.cli_select_calls)) == {"random_sampling": 2, "tailoredbench": 3}
    rows = pd.read_parquet(
        finished / "results" / "runs" / "heldout_intervals" / "toy" / "tailoredbench" / "n=20.parquet"
    )
    assert (rows.batches == 2).all() and "select_seconds" not in rows.columns  # timings kept apart
    auto = pd.read_csv(tables / "auto.csv")  # --method auto held out of its own choice
    assert auto.candidates.tolist() == ["default", "every"] and (auto.models == 40).all()
    assert (auto.auto_mae >= auto.best_mae).all() and set(auto.best_method) <= {"random_sampling", "tailoredbench"}
    # each held-out fold's number of candidates tied with its choice (of the other one at most)
    assert all(len(t.split(", ")) == 4 and set(t.split(", ")) <= {"0", "1"} for t in auto.tied.astype(str))
    added = pd.read_csv(tables / "auto_speed.csv")
    assert (added.first_fit_seconds_added >= 0).all() and "first_fit_seconds_added" not in auto.columns


def test_the_command_line_reads_the_workflows_fit_as_it_is(finished):
    fit = finished / "results" / "models" / "toy" / "random_sampling" / "n=20" / "fit.json"
    stamp = fit.stat().st_mtime_ns
    items = finished / "items.csv"
    cmd = [sys.executable, "-m", "benchcast.cli", "select", "toy", "--method", "random_sampling", "--budget", "20"]
    proc = subprocess.run([*cmd, "--out", str(items), "--folds", "3"], cwd=finished, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "building" not in proc.stderr and fit.stat().st_mtime_ns == stamp
    assert len(pd.read_csv(items)) == 20 and json.loads(fit.read_text())["meta"]["folds"] == 3


def test_a_changed_method_reruns_only_its_own_jobs(finished):
    config = yaml.safe_load((finished / "config" / "config.yaml").read_text())
    config["heldout_intervals"]["methods"][1]["params"] = {"g_size": 8}
    (finished / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    dry = snakemake(finished, "heldout_intervals", "-n", "--quiet", "rules").stdout
    counts = dict(re.findall(r"^(hi_\w+|heldout_intervals)\s+(\d+)$", dry, re.M))
    assert counts == {"hi_fit": "1", "hi_test": "1", "hi_tables": "1", "heldout_intervals": "1"}
