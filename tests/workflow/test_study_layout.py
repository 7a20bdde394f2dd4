"""The study architecture: every registered study is a complete unit, loads alone, and every target
rule of every selection resolves (a dry run on the repository's own config and the real mirror).

Before the layout was checked this way, ``snakemake -n irt_validation --config 'studies=["benchpress"]'``
failed with a NameError: one study's rules called a helper defined in another's.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import MIRROR, REPO

from benchcast.studies import registry

STUDIES = list(registry())


def test_registry_finds_the_studies_from_their_folders():
    """Every folder with a study.py is a study, none other, in the order of their positions."""
    folders = sorted(p.parent.name for p in (REPO / "src" / "benchcast" / "studies").glob("*/study.py"))
    assert sorted(STUDIES) == folders and len(folders) >= 5
    assert STUDIES == sorted(STUDIES, key=lambda name: (registry()[name].position, name))


@pytest.mark.parametrize("study", STUDIES)
def test_a_study_is_one_unit_per_layer(study):
    rules = REPO / "workflow" / "rules" / f"{study}.smk"
    assert rules.is_file()
    assert (REPO / "workflow" / "schemas" / f"{study}.schema.yaml").is_file()
    assert (REPO / "workflow" / "scripts" / study).is_dir()
    assert (REPO / "workflow" / "report" / study).is_dir()
    assert (REPO / "src" / "benchcast" / "studies" / study / "study.py").is_file()
    config_file = registry()[study].config_path()
    assert config_file is None or (REPO / config_file).is_file()
    text = rules.read_text()
    assert re.search(rf"^rule {study}:$", text, re.M), f"{rules} has no target rule named {study}"
    # its own schema validates its key, and its declaration registers its outputs, datasets and index
    assert f'load_study("{study}")' in text
    assert "STUDY_OUTPUTS[" not in text and "STUDY_INDEX[" not in text, "the declaration (study.py) says these"
    # its scripts and captions are its own
    for ref in re.findall(r'"\.\./(scripts|report)/([^"]+)"', text):
        assert ref[1].startswith(f"{study}/"), f"{rules} uses {ref[0]}/{ref[1]} of another study"
    assert not re.search(r"^def ", text, re.M), "helpers belong in the library (benchcast.studies.<study>)"


def workdir(tmp_path: Path, studies: list[str]) -> Path:
    """The repository's default config (and so the shipped catalog) in a fresh folder, reading the real mirror."""
    (tmp_path / "config").mkdir()
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config.update(raw_dir=str(MIRROR), studies=studies)
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    (tmp_path / "resources").symlink_to(REPO / "resources")
    return tmp_path


def snakemake(work: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(work), *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=work)


def target_rules(work: Path) -> list[str]:
    proc = snakemake(work, "--list-target-rules")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [m.group(1) for m in re.finditer(r"^([a-z_0-9]+)(?: \(|$)", proc.stdout, re.M)]  # "name (docstring)"


@pytest.mark.skipif(not MIRROR.is_dir(), reason="needs the raw mirror ../shared/raw beside the repository")
@pytest.mark.parametrize("studies", [[s] for s in STUDIES] + [STUDIES], ids=lambda s: "+".join(s))
def test_every_target_of_every_selection_dry_runs(tmp_path, studies):
    work = workdir(tmp_path, studies)
    targets = target_rules(work)
    assert set(studies) <= set(targets) and "all" in targets
    # a selected study's rules load, and those of the studies it asks to run methods under their
    # protocols (method_comparison: its default protocols); no other study's
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "method_comparison.schema.yaml").read_text())
    asked = set(schema["properties"]["protocols"]["default"]) if "method_comparison" in studies else set()
    others = set(STUDIES) - set(studies) - asked
    assert not others & set(targets), "an unselected study's rules were loaded"
    assert asked <= set(targets)
    proc = snakemake(work, *targets, "-n", "--quiet", "rules")
    assert proc.returncode == 0, f"dry run of {targets} failed:\n{proc.stderr[-4000:]}"


def test_an_unknown_study_is_refused_by_name(tmp_path):
    proc = snakemake(workdir(tmp_path, ["misses_the_mark", "tailored"]), "-n")
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "config studies: unknown study 'tailored'" in out and "irt_validation" in out


def job_counts(dry_run: str) -> dict[str, int]:
    table = dry_run[dry_run.index("Job stats:") :]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^([a-z_0-9]+)\s+(\d+)$", table, re.M)}


@pytest.mark.skipif(not MIRROR.is_dir(), reason="needs the raw mirror ../shared/raw beside the repository")
def test_all_papers_is_every_study_config_in_one_run():
    """config/all_papers.yaml includes each study's own config: its plan is their union, plus the
    index and the performance table, and nothing of the quick default config leaks in."""

    def plan(*configfiles: str) -> dict[str, int]:
        cmd = [sys.executable, "-m", "snakemake", "-n", "--forceall", "--configfile", *configfiles]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return job_counts(proc.stdout)

    both = plan("config/all_papers.yaml")
    mtm = plan("config/misses_the_mark.yaml")
    assert both["mtm_run"] == mtm["mtm_run"] == 936  # 12 datasets x 2 splits x 3 budgets x 13 methods
    assert both["mtm_prefit"] == mtm["mtm_prefit"] and both["mtm_splits"] == mtm["mtm_splits"]
    assert both["bp_grid"] == 84  # the full 7 x 12 grid of config/benchpress.yaml, not the quick 2 x 4
    # TailoredBench: 12 methods x 5 inference counts + 8 ablation variants + 18 figure points, at 30
    assert both["tb_run"] == plan("config/tailoredbench.yaml")["tb_run"] == 60 + 8 + 18
    assert both["tb_prefit"] == 2  # GP-IRT's and P-IRT's IRT, each one fit for every run and inference count
    mdad, cf = plan("config/mdad.yaml"), plan("config/cf_tasks.yaml")
    for rule in ("mdad_run", "mdad_percent_run", "mdad_same_size_run"):
        assert both[rule] == mdad[rule] > 0
    assert both["mdad_run"] == 370  # 13 datasets' selector grids and the cross-paper methods
    for rule in ("cf_run", "cf_tune", "cf_prefit"):
        assert both[rule] == cf[rule] > 0
    # 5 matrix-splits (GLUE: random only) x 5 ratios x 20 methods, less TailoredBench on GLUE
    assert both["cf_run"] == 495
    assert both["index"] == 1 and both["performance"] == 1 and both["all"] == 1
