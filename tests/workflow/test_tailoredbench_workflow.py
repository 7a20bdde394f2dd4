"""The TailoredBench study end to end on a small npy_pair dump the test writes (source and target
files, as the paper's GSM8K): every output, all models kept, byte-identical on 1 and 2 cores, and a
changed setting reruns only its own jobs."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers import snakemake  # the repository's Snakefile in a work folder, output on failure
from simdata import irt_responses

pytestmark = pytest.mark.e2e


def make_workdir(root: Path) -> Path:
    scores = irt_responses(60, 150, rng=np.random.default_rng(3)).scores
    scores[7] = 0.0  # an all-zero model: the catalog's min_accuracy flags it, the study keeps it
    raw = root / "raw" / "tb"
    raw.mkdir(parents=True)
    np.save(raw / "source.npy", scores[:30])
    np.save(raw / "target.npy", scores[30:])
    catalog = {
        "sources": {"tb": {"repository": "example/tb", "commit": "0" * 40}},
        "url_template": "https://example.invalid/{repository}/{commit}/{path}",
        "datasets": {
            "pair": {
                "title": "PAIR",
                "suite": "toy",
                "kind": "item_binary",
                "source": "tb",
                "format": "npy_pair",
                "files": {
                    "source": {"path": "source.npy", "sha256": None},
                    "target": {"path": "target.npy", "sha256": None},
                },
                "n_models": 60,
                "n_items": 150,
                "mirrored": True,
                "min_accuracy": 1e-8,
            }
        },
    }
    (root / "config").mkdir()
    (root / "config" / "catalog.yaml").write_text(yaml.safe_dump(catalog))
    pd.DataFrame(
        [("table6", "tailoredbench", 12, "tau", 0.8), ("table8", "calibrated", 16, "mae", 0.03)],
        columns=["table", "row", "budget", "metric", "value"],
    ).to_csv(root / "paper.csv", index=False)
    config = {
        "raw_dir": str(root / "raw"),
        "catalog": "config/catalog.yaml",
        "seed": 0,
        "studies": ["tailoredbench"],
        "tailoredbench": {
            "dataset": "pair",
            "trials": 3,
            "budgets": [12, 16],
            "settings": {
                "random_sampling": {"method": "random_sampling"},
                "gp_irt": {"method": "gp_irt", "params": {"irt": {"dims_grid": [1, 2]}}},
                "tailoredbench": {"method": "tailoredbench", "params": {"g_size": 5}},
                "tb_uncalibrated": {
                    "method": "tailoredbench",
                    "params": {"g_size": 5, "calibrate": False},
                    "budgets": [16],
                },
            },
            "table6": {"random_sampling": "random_sampling", "gp_irt": "gp_irt", "tailoredbench": "tailoredbench"},
            "ablations": {
                "table8": {"budget": 16, "rows": {"non_calibrated": "tb_uncalibrated", "calibrated": "tailoredbench"}}
            },
            "figures": {"figure4": {"budget": 16, "values": [5, 10], "params": {"g_size": 5}}},
            "paper_values": "paper.csv",
        },
    }
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    return root


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    work = make_workdir(tmp_path_factory.mktemp("tb"))
    snakemake(work, "tailoredbench", "--cores", "2", "--quiet")
    return work


def test_every_output_and_all_models_kept(finished):
    tables = finished / "results" / "tables" / "tailoredbench"
    for name in ("table6", "table8", "z_test", "summary", "paper_vs_ours", "acceptance_summary"):
        assert (tables / f"{name}.csv").stat().st_size > 0
    for name in ("figure4", "figure7"):
        assert (finished / "results" / "figures" / "tailoredbench" / f"{name}.png").stat().st_size > 0
    t6 = pd.read_csv(tables / "table6.csv")
    assert list(t6.columns) == ["method", "budget", "tau", "mae", "tau_se", "mae_se", "runs"]
    assert len(t6) == 6 and (t6.runs == 3).all()
    # GP-IRT's IRT: one fit for all runs (same sources), chosen from the dimension grid
    timing = pd.read_parquet(finished / "results" / "prefit" / "tailoredbench" / "pair" / "gp_irt" / "timing.parquet")
    assert timing.shared_from.tolist() == [0, 0, 0]
    run = pd.read_parquet(finished / "results" / "runs" / "tailoredbench" / "pair" / "tailoredbench" / "n=16.parquet")
    assert run.groupby("trial").size().tolist() == [30, 30, 30]  # the target file's 30 models, zero row too
    assert (run.items_queried == 16).all()
    assert pd.read_csv(tables / "paper_vs_ours.csv").column.tolist() == ["tau@12", "mae@16"]


def test_byte_identical_on_one_core(finished, tmp_path):
    again = make_workdir(tmp_path)
    snakemake(again, "tailoredbench", "--cores", "1", "--quiet")
    for sub in (
        "results/tables/tailoredbench",
        "results/runs/tailoredbench/pair/tailoredbench",
        "results/metrics/tailoredbench",
    ):
        a, b = finished / sub, again / sub
        names = sorted(p.name for p in a.iterdir())
        assert names and names == sorted(p.name for p in b.iterdir())
        _, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
        assert not mismatch and not errors, (sub, mismatch, errors)


def test_a_changed_setting_reruns_only_its_jobs(finished, tmp_path):
    work = tmp_path / "copy"
    shutil.copytree(finished, work, symlinks=True)
    cfg = yaml.safe_load((work / "config" / "config.yaml").read_text())
    cfg["tailoredbench"]["settings"]["tb_uncalibrated"]["params"]["g_size"] = 6
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    out = snakemake(work, "tailoredbench", "-n", "--quiet", "rules").stdout
    stats = out[out.index("Job stats:") : out.index("Reasons:")]
    assert "tb_run               1" in stats and "tb_splits" not in stats, out
