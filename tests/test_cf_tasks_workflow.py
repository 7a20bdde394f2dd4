"""The collaborative-filtering study end to end on two small items x models CSVs the test writes
(shared model names, one with subtasks): every table, per-task budgets, byte-identical on 1 and 2
cores, and a changed method reruns only its own jobs."""

from __future__ import annotations

import filecmp
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from test_workflow import snakemake  # the repository's Snakefile in a work folder, output on failure

pytestmark = pytest.mark.e2e

N_MODELS = 48


def make_workdir(root: Path) -> Path:
    rng = np.random.default_rng(7)
    ability = rng.normal(size=N_MODELS)
    raw = root / "raw" / "cf"
    raw.mkdir(parents=True)
    catalog = {
        "sources": {"cf": {"repository": "example/cf", "commit": "0" * 40}},
        "url_template": "https://example.invalid/{repository}/{commit}/{path}",
        "datasets": {},
    }
    for name, subtasks in (("alpha", ["a"] * 30 + ["b"] * 16), ("beta", ["c"] * 40)):
        logits = ability[None, :] - rng.normal(size=(len(subtasks), 1))
        scores = (rng.random(logits.shape) < 1 / (1 + np.exp(-logits))).astype(int)
        table = pd.DataFrame(scores, columns=[f"org__m{i}" for i in range(N_MODELS)])
        table["subset"] = subtasks
        table.to_csv(raw / f"{name}.csv", index=False)
        catalog["datasets"][name] = {
            "title": name,
            "suite": "toy",
            "kind": "item_binary",
            "source": "cf",
            "format": "csv_matrix",
            "orientation": "items_by_models",
            "item_columns": ["subset"],
            "subtask_column": "subset",
            "files": {"scores": {"path": f"{name}.csv", "sha256": None}},
            "n_models": N_MODELS,
            "n_items": len(subtasks),
            "mirrored": True,
            "min_accuracy": 0.0,
        }
    (root / "config").mkdir()
    (root / "config" / "catalog.yaml").write_text(yaml.safe_dump(catalog))
    config = {
        "raw_dir": str(root / "raw"),
        "catalog": "config/catalog.yaml",
        "seed": 0,
        "studies": ["cf_tasks"],
        "cf_tasks": {
            "matrices": {"toy": {"datasets": ["alpha", "beta"], "join": "model_id", "release": "position"}},
            "ratios": [0.2, 0.5],
            "floor": 10,
            "repeats": 2,
            "methods": [
                {"name": "cf", "params": {"n_similar": 8}},
                {"name": "random_sampling"},
                {"name": "clustering", "params": {"n_init": 2}},
            ],
            "claims": {"many_models": ["toy"], "few_models": ["toy"], "mae_at_0.1": 0.035, "below_random": 0.25},
        },
    }
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    return root


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    work = make_workdir(tmp_path_factory.mktemp("cf"))
    snakemake(work, "cf_tasks", "--cores", "2", "--quiet")
    return work


def test_tables_and_per_task_budgets(finished):
    tables = finished / "results" / "tables" / "cf_tasks"
    fig5 = pd.read_csv(tables / "figure5.csv")
    assert list(fig5.columns[:9]) == [
        "matrix", "split", "method", "ratio", "mae", "weighted_mae", "rank_mae", "weighted_rank_mae", "budget_items",
    ]  # fmt: skip
    assert len(fig5) == 2 * 3 * 2  # splits x methods x ratios
    # tasks a (30 items), b (16), c (40); floor 10: ratio 0.2 -> 10 + 10 + 10, ratio 0.5 -> 15 + 10 + 20
    assert dict(fig5.groupby("ratio").budget_items.first()) == {0.2: 30, 0.5: 45}
    assert (fig5.initial == 36).all() and (fig5.new == 12).all() and (fig5.repeats == 2).all()
    assert fig5.mae.between(0, 0.5).all() and (fig5.rank_mae >= 0).all()
    run = pd.read_parquet(finished / "results" / "runs" / "cf_tasks" / "toy" / "date" / "cf" / "ratio=0.2.parquet")
    assert (run.spent == run.budget).all() and set(run.task) == {"alpha/a", "alpha/b", "beta"}
    assert set(run.model_id) == {f"org__m{i}" for i in range(36, 48)}  # the date split: the last quarter is new
    rnd = pd.read_parquet(
        finished / "results" / "runs" / "cf_tasks" / "toy" / "random" / "random_sampling" / "ratio=0.5.parquet"
    )
    assert (rnd.spent <= rnd.budget).all()
    assert rnd.groupby("repeat").model_id.apply(frozenset).nunique() == 2  # the random split is redrawn per repeat
    assert len(pd.read_csv(tables / "table3.csv")) == len(fig5)
    assert {"recall_at_10", "ndcg_at_10"} <= set(pd.read_csv(tables / "table4.csv").columns)
    claims = pd.read_csv(tables / "paper_vs_ours.csv")
    assert set(claims.claim.str.slice(0, 12)) >= {"MAE about 3%", "no clear win"} and len(claims) == 3 * 2 + 2
    assert (finished / "results" / "figures" / "cf_tasks" / "figure5.png").stat().st_size > 10_000


def test_byte_identical_on_one_core(finished, tmp_path):
    again = make_workdir(tmp_path)
    snakemake(again, "cf_tasks", "--cores", "1", "--quiet")
    a, b = (
        finished / "results" / "runs" / "cf_tasks" / "toy" / "date" / "cf",
        again / "results" / "runs" / "cf_tasks" / "toy" / "date" / "cf",
    )
    names = sorted(p.name for p in a.iterdir() if not p.name.endswith("metrics.parquet"))  # metrics hold seconds
    _, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
    assert names and not mismatch and not errors
    fa = pd.read_csv(finished / "results" / "tables" / "cf_tasks" / "figure5.csv")
    fb = pd.read_csv(again / "results" / "tables" / "cf_tasks" / "figure5.csv")
    assert fa.equals(fb)


def test_a_changed_method_reruns_only_its_jobs(finished, tmp_path):
    work = tmp_path / "copy"
    shutil.copytree(finished, work, symlinks=True)
    cfg = yaml.safe_load((work / "config" / "config.yaml").read_text())
    cfg["cf_tasks"]["methods"][0]["params"] = {"n_similar": 6}
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    out = snakemake(work, "cf_tasks", "-n", "--quiet", "rules").stdout
    stats = out[out.index("Job stats:") : out.index("Reasons:")]
    assert re.search(r"cf_run\s+4\n", stats) and "ingest" not in stats, out
