"""A newcomer's config mistakes, run as typed (``snakemake ...`` on a tiny work folder): each ends,
before any job, in one line naming the key, the file (or --config) and the fix; download mode
without network ends in one line naming the URL, the file and the two fixes, with nothing written."""

from __future__ import annotations

import joblib
import numpy as np
import pytest
import yaml
from helpers import snakemake

pytestmark = pytest.mark.e2e

#: Snakemake's own framing of an error at parse time (its header, the .smk frames) and its start-up
#: notes; what is left is the error's substance
FRAMING = (
    "Using workflow specific profile",
    "Config file ",
    "ConfigError in file",
    "WorkflowError in file",
    "  File ",
    "Assuming unrestricted shared filesystem",
    "Building DAG of jobs",
)


def substance(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith(FRAMING)]


def one_error_line(proc) -> str:
    """The run failed with one line of substance and no traceback; that line. (Snakemake prints its
    messages on stdout when it is not a terminal, its profile note on stderr.)"""
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-2000:]
    assert "Traceback" not in out, out[-3000:]
    lines = substance(out)
    assert len(lines) == 1, out[-3000:]
    return lines[0]


def make_workdir(root, methods=None, raw_dir=None, url_template="https://example.invalid/{repository}/{path}"):
    """One toy 0/1 dataset (24 models x 60 items) in a mirror, a catalog and a config/config.yaml
    running "misses the mark" on it."""
    rng = np.random.default_rng(3)
    raw = root / "raw" / "toysrc" / "data"
    raw.mkdir(parents=True)
    joblib.dump((rng.random((24, 60)) < 0.6).astype(float), raw / "toy.jbl")
    catalog = {
        "sources": {"toysrc": {"repository": "example/toy", "commit": "0" * 40}},
        "url_template": url_template,
        "datasets": {
            "toy": {
                "title": "TOY",
                "suite": "toy",
                "kind": "item_binary",
                "source": "toysrc",
                "format": "jbl",
                "files": {"scores": {"path": "data/toy.jbl", "sha256": None}},
                "n_models": 24,
                "n_items": 60,
                "mirrored": True,
                "duplicate_model_names": "error",
                "min_accuracy": 1e-8,
                "subtasks": [],
            }
        },
    }
    (root / "config").mkdir()
    (root / "config" / "catalog.yaml").write_text(yaml.safe_dump(catalog))
    config = {
        "raw_dir": raw_dir or str(root / "raw"),
        "catalog": "config/catalog.yaml",
        "studies": ["misses_the_mark"],
        "misses_the_mark": {
            "datasets": ["toy"],
            "splits": ["interpolation"],
            "budgets": [10],
            "trials": 2,
            "methods": methods or [{"name": "random_sampling"}, {"name": "aipw", "params": {"alpha": 10.0}}],
            "figure5": {"dataset": "toy", "split": "interpolation", "bins": 3, "aipw_n": 10, "random_sampling_n": 10},
        },
    }
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    return root


def test_the_tiny_config_itself_is_accepted(tmp_path):
    work = make_workdir(tmp_path / "ok")
    proc = snakemake(work, "-n", "results/runs/misses_the_mark/toy/interpolation/aipw/n=10.parquet")
    assert "mtm_run" in proc.stdout


def test_a_misspelt_top_level_key_on_the_command_line_is_refused_in_one_line(tmp_path):
    """``--config raw_dri=...`` was accepted and the run went on with the default raw_dir."""
    work = make_workdir(tmp_path / "raw_dri")
    line = one_error_line(snakemake(work, "-n", "--config", "raw_dri=/x", check=False))
    assert line.startswith("--config: unknown config key 'raw_dri'; did you mean 'raw_dir'? Fix:"), line


def test_an_unknown_study_key_is_refused_in_one_line_not_a_schema_dump(tmp_path):
    """It printed the study's whole schema (302 lines for benchpress)."""
    work = make_workdir(tmp_path / "trails")
    cfg_path = work / "config" / "config.yaml"
    cfg = yaml.safe_load(cfg_path.read_text())
    cfg["misses_the_mark"]["trails"] = 3
    cfg_path.write_text(yaml.safe_dump(cfg))
    line = one_error_line(snakemake(work, "-n", check=False))
    assert line.startswith("config/config.yaml: unknown config key 'misses_the_mark.trails'; did you mean 'trials'?")


def test_a_misspelt_method_parameter_is_refused_before_any_job_runs(tmp_path):
    """``aipw: {alpah: 10}`` passed the dry run and failed only when its job ran."""
    methods = [{"name": "random_sampling"}, {"name": "aipw", "params": {"alpah": 10}}]
    work = make_workdir(tmp_path / "alpah", methods=methods)
    dry = snakemake(work, "-n", check=False)
    line = one_error_line(dry)
    assert "method 'aipw': unknown parameter 'alpah'; did you mean 'alpha'?" in line, line
    assert line.startswith("config/config.yaml: ")
    assert "rule " not in dry.stdout and "Job stats" not in dry.stdout  # no job planned
    run = snakemake(work, "--cores", "1", check=False)
    assert run.returncode != 0 and not (work / "results").exists()  # no job ran


def test_a_compared_method_whose_package_is_not_installed_is_one_line_naming_the_fix(tmp_path):
    """The method comparison names a method of a package that this environment lacks."""
    work = make_workdir(tmp_path / "notinstalled")
    (work / "compare.yaml").write_text(
        yaml.safe_dump(
            {
                "studies": ["method_comparison"],
                "method_comparison": {"protocols": ["misses_the_mark"], "methods": [{"name": "my_new_method"}]},
            }
        )
    )
    line = one_error_line(snakemake(work, "-n", "--configfile", "compare.yaml", check=False))
    assert line.startswith(
        f"{work / 'compare.yaml'}: config method_comparison.methods: 'my_new_method': unknown method"
    ), line
    assert line.endswith("install the package that registers it (`benchcast methods` lists what is installed)")


def test_a_missing_config_file_ends_in_a_last_line_naming_it(tmp_path):
    """Snakemake reads --configfile before the Snakefile, so the workflow cannot catch a missing one
    (docs/configuration.md says so): Snakemake's own traceback ends in a line naming the file. This
    pins that documented behaviour; a missing ``include:`` file is the workflow's and one line."""
    work = make_workdir(tmp_path / "nofile")
    proc = snakemake(work, "-n", "--configfile", "config/nope.yaml", check=False)
    assert proc.returncode != 0
    last = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip() and "profile" not in ln][-1]
    assert last.startswith("FileNotFoundError") and "config/nope.yaml" in last, proc.stdout[-1000:]
    (work / "config" / "with_include.yaml").write_text("include: [config/nope.yaml]\n")
    line = one_error_line(snakemake(work, "-n", "--configfile", "config/with_include.yaml", check=False))
    assert line == f"config include: config/nope.yaml is not a file (paths are relative to {work})"


def test_download_mode_without_network_fails_in_one_line_with_nothing_written(tmp_path):
    """raw_dir resources/raw with the files' host unreachable: it ended in two chained tracebacks
    ("unexpected URLError"), no URL, no fix."""
    work = make_workdir(
        tmp_path / "offline", raw_dir="resources/raw", url_template="http://127.0.0.1:9/{source}/{path}"
    )
    proc = snakemake(work, "results/data/toy/responses.parquet", "--cores", "1", check=False)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "unexpected" not in out, out[-3000:]
    lines = [ln for ln in out.splitlines() if ln.startswith("ERROR in rule download_raw")]
    assert len(lines) == 1, out[-3000:]
    url = "http://127.0.0.1:9/toysrc/data/toy.jbl"
    assert f"could not download {url}" in lines[0] and "resources/raw/toysrc/data/toy.jbl" in lines[0]
    assert "raw_dir" in lines[0] and "url_template" in lines[0]
    written = [p for p in (work / "resources").rglob("*") if p.is_file()] if (work / "resources").exists() else []
    assert written == [] and not (work / "results").exists()
