"""scripts/summarize_benchmarks.py: every benchmarked job of a grid lands in exactly one row."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml
from helpers import REPO

SCRIPT = REPO / "scripts" / "summarize_benchmarks.py"


def _load():
    spec = importlib.util.spec_from_file_location("summarize_benchmarks", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bench(path: Path, seconds: float, cpu: float, rss: float = 100.0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{seconds}\t0:00:01\t{rss}\t{cpu}\n")


def test_rows_cover_run_irt_lasso_path_and_workflow_jobs(tmp_path):
    bench = tmp_path / "benchmarks"
    mtm = bench / "misses_the_mark"
    _bench(mtm / "run/musr/interpolation/Lasso/n=50.tsv", 2.0, 1.9)
    _bench(mtm / "run/musr/interpolation/Lasso/n=100.tsv", 3.0, 2.9)
    _bench(mtm / "run/musr/interpolation/PCA/n=50.tsv", 5.0, 4.8, rss=300.0)
    _bench(mtm / "run/gsm8k/interpolation/PCA/n=50.tsv", 99.0, 99.0)  # dataset not in the config
    _bench(mtm / "prefit/musr/interpolation/irt.tsv", 7.0, 6.5)
    _bench(mtm / "prefit/musr/extrapolation/irt.tsv", 70.0, 70.0)  # split without run jobs
    _bench(mtm / "prefit/musr/interpolation/Lasso.tsv", 11.0, 10.0)
    _bench(mtm / "prefit/musr/interpolation/Lasso-other.tsv", 50.0, 50.0)  # label not in the config
    _bench(mtm / "splits/musr/interpolation.tsv", 0.5, 0.4)
    _bench(mtm / "metrics.tsv", 1.0, 0.9)
    _bench(bench / "ingest/musr.tsv", 1.5, 1.4)
    _bench(bench / "ingest/gsm8k.tsv", 40.0, 40.0)  # dataset not in the config
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "misses_the_mark": {
                    "datasets": ["musr"],
                    "splits": ["interpolation"],
                    "budgets": [50, 100],
                    "methods": [{"name": "lasso", "label": "Lasso"}, {"name": "pca", "label": "PCA"}],
                }
            }
        )
    )

    out = _load().main(str(mtm / "run"), str(config))

    assert out.loc["Lasso", "jobs"] == 2 and out.loc["Lasso", "total_seconds"] == pytest.approx(5.0)
    assert out.loc["Lasso path", "total_seconds"] == pytest.approx(11.0)
    assert out.loc["irt", "jobs"] == 1 and out.loc["irt", "cpu_seconds"] == pytest.approx(6.5)
    assert out.loc["PCA", "peak_rss_mb"] == pytest.approx(300.0)
    workflow = out.loc["workflow (ingest, splits, tables)"]
    assert workflow["jobs"] == 3 and workflow["total_seconds"] == pytest.approx(3.0)
    assert set(out.index) == {"Lasso", "Lasso path", "irt", "PCA", "workflow (ingest, splits, tables)"}
    assert out["total_seconds"].sum() == pytest.approx(31.0)
    assert out["share_of_total"].sum() == pytest.approx(1.0)


def test_empty_run_folder_is_a_clear_error(tmp_path):
    with pytest.raises(SystemExit, match="no run-job benchmark files"):
        _load().main(str(tmp_path / "benchmarks/misses_the_mark/run"))
