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
from helpers import snakemake  # the repository's Snakefile in a work folder, output on failure

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
            "trials": 2,
            "tuning": {"ratio": 0.2, "grid": {"n_similar": [4, 8], "tau1": [1, 4]}},
            "methods": [
                {"name": "cf", "params": {"n_similar": 8}},
                {"name": "cf_no_ot", "method": "cf", "params": {"oversample": False}},
                {"name": "random_sampling"},
                {"name": "clustering", "params": {"n_init": 2}},
                {"name": "sort_search_dp", "method": "sort_and_search", "params": {"estimator": "threshold"}},
                {"name": "low_rank_completion"},
                {"name": "p_irt", "params": {"irt": {"dims": 2}}},
                {"name": "gp_irt", "params": {"irt": {"dims": 2}}},
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
    assert len(fig5) == 2 * 8 * 2  # splits x methods x ratios
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
    assert set(claims.claim.str.slice(0, 12)) >= {"MAE about 3%", "no clear win", "OT indispens"}
    assert len(claims) == 3 * 2 + 2 + 2  # many-model claims, few-model claim, OT claim; per split
    fig6 = pd.read_csv(tables / "figure6.csv")
    assert list(fig6.task) == ["alpha/a", "alpha/b", "beta"] and (fig6.pairs == N_MODELS * (N_MODELS - 1) // 2).all()
    assert fig6.pearson.between(-1, 1).all()
    table5 = pd.read_csv(tables / "table5.csv")
    assert set(table5.method) == {"cf", "low_rank_completion", "low_rank_completion (UCBE-LRF)"}
    assert (table5[table5.split != "paper"].ratio == 0.2).all() and len(table5) == 2 * 2 + 2
    for name in ("figure5", "figure8", "figure9"):
        assert (finished / "results" / "figures" / "cf_tasks" / f"{name}.png").stat().st_size > 10_000
    fig8 = pd.read_csv(tables / "figure8.csv")
    assert set(fig8.method) == {"cf", "cf_no_ot", "random_sampling"} and len(fig8) == 2 * 3 * 2


def test_p_irt_and_gp_irt_share_one_irt_prefit_per_split(finished):
    prefit = finished / "results" / "prefit" / "cf_tasks" / "toy"
    assert sorted(p.name for p in prefit.iterdir()) == ["date", "random"]
    trials = pd.read_parquet(prefit / "date" / "irt" / "trials.parquet")
    assert len(trials) == 2 * 3  # repeats x tasks, one fit per task under the date split
    for method in ("p_irt", "gp_irt"):
        log = (finished / "logs" / "cf_tasks" / "run" / "toy" / "date" / method / "ratio=0.5.log").read_text()
        assert "IRT prefit" in log, log


def test_tuning_reads_the_grid_once_per_date_split_and_per_repeat_otherwise(finished):
    tables = finished / "results" / "tables" / "cf_tasks"
    sweeps = pd.read_csv(tables / "figure9.csv")
    assert sorted(sweeps.groupby("split").repeat.unique().map(sorted).map(tuple).items()) == [
        ("date", (0,)), ("random", (0, 1)),
    ]  # fmt: skip
    assert len(sweeps) == 3 * (2 + 2) and (sweeps.groupby(["split", "repeat", "param"]).chosen.sum() == 1).all()
    chosen = pd.read_csv(tables / "tuning.csv")
    assert list(chosen.columns[:5]) == ["matrix", "split", "repeat", "n_similar", "tau1"] and len(chosen) == 3
    assert chosen.grid.iloc[0] == "n_similar: [4, 8]; tau1: [1, 4]"
    # cf runs with its own n_similar over the tuned one, cf_no_ot with the tuned one and no oversampling
    log = (finished / "logs" / "cf_tasks" / "run" / "toy" / "random" / "cf_no_ot" / "ratio=0.2.log").read_text()
    picked = chosen[(chosen.split == "random") & (chosen.repeat == 1)].iloc[0]
    assert f"'n_similar': {int(picked.n_similar)}" in log and "'oversample': False" in log
    assert (
        "'n_similar': 8"
        in (finished / "logs" / "cf_tasks" / "run" / "toy" / "random" / "cf" / "ratio=0.2.log").read_text()
    )


def test_byte_identical_on_one_core(finished, tmp_path):
    runs = Path("results") / "runs" / "cf_tasks" / "toy" / "date" / "cf"
    figure5 = Path("results") / "tables" / "cf_tasks" / "figure5.csv"
    a, b = finished / runs, tmp_path / runs
    names = sorted(p.name for p in a.iterdir() if not p.name.endswith("metrics.parquet"))  # metrics hold seconds
    again = make_workdir(tmp_path)
    # the compared files and every job they need (every run and tuning job): all but the figures
    snakemake(again, *(str(runs / name) for name in names), str(figure5), "--cores", "1", "--quiet")
    _, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
    assert names and not mismatch and not errors
    fa, fb = pd.read_csv(finished / figure5), pd.read_csv(again / figure5)
    assert fa.equals(fb)


def test_a_changed_method_reruns_only_its_jobs(finished, tmp_path):
    work = tmp_path / "copy"
    shutil.copytree(finished, work, symlinks=True)
    cfg = yaml.safe_load((work / "config" / "config.yaml").read_text())
    cfg["cf_tasks"]["methods"][0]["params"] = {"n_similar": 6}
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    out = snakemake(work, "cf_tasks", "-n", "--quiet", "rules").stdout
    stats = out[out.index("Job stats:") : out.index("Reasons:")]
    assert re.search(r"cf_run\s+4\n", stats) and "ingest" not in stats and "cf_tune" not in stats, out
    cfg["cf_tasks"]["tuning"]["grid"]["tau1"] = [1, 2]
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    out = snakemake(work, "cf_tasks", "-n", "--quiet", "rules").stdout
    stats = out[out.index("Job stats:") : out.index("Reasons:")]
    assert re.search(r"cf_tune\s+3\n", stats) and re.search(r"cf_run\s+8\n", stats), out
    cfg["cf_tasks"]["tuning"]["grid"]["tau1"] = [1, 4]
    cfg["cf_tasks"]["methods"][0]["params"] = {"n_similar": 8}
    cfg["cf_tasks"]["matrices"]["toy"]["skip_methods"] = ["clustering"]  # reruns the tables only
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    out = snakemake(work, "cf_tasks", "-n", "--quiet", "rules").stdout
    stats = out[out.index("Job stats:") : out.index("Reasons:")]
    assert "cf_run" not in stats and "cf_tune" not in stats and re.search(r"cf_tables\s+1\n", stats), out
